"""Accepted test changes are listed wherever a run's outcome is read: `status`, `review` and `land`'s summary,
text and `--json` (validated against the shipped schemas): "1 base test changed, accepted by the coach: ...".

A real in-process run on a throwaway repo: the task removes `mul` and its tests, the coach accepts the test file
with a reason, the run is approved; then the CLI reads it and lands it."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.cheat_corpus import LEGITIMATE, PY_FILES
from orchestrator.cli.main import main
from tests.graph.harness import Workflow, built_once, plan, task
from tests.graph.test_landing import Repo

LINE = ("4 base tests changed, accepted by the coach: TASK-001: tests.test_mul::test_mul: gone"
        " (mul is removed by the task)")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_once(tmp_path_factory, "accepted", _accepted_run)


@pytest.fixture
def accepted_run(template: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the finished run, for each test to land."""
    copy = Repo(template, tmp_path / "copy")
    return copy.root, copy.db


def _accepted_run(root: Path) -> None:
    repo = make_sample_repo(root / "repo", files=PY_FILES,
                            plan=plan(task("TASK-001"), verify="python -m pytest -q"))
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "user.email", "dev@example.com")
    files, accepts = LEGITIMATE["the task removes a function and its tests"]
    db = root / "db.sqlite"

    async def run() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
            agents = ScriptedAgents({"player": writes(files), "coach": approve(accepts=accepts)})
            await Workflow(repo, agents, checkpointer=saver).run(max_turns=1)

    asyncio.run(run())


def cli(capsys: pytest.CaptureFixture[str], repo: Path, db: Path, *args: str) -> tuple[int, str]:
    code = main([*args, "--repo", str(repo), "--db", str(db)])
    return code, capsys.readouterr().out


def valid(document: str, schema: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(document)
    text = (resources.files("orchestrator.schemas") / f"{schema}.schema.json").read_text()
    jsonschema.Draft202012Validator(json.loads(text), format_checker=jsonschema.FormatChecker()).validate(data)
    return data


def test_status_review_and_land_list_the_accepted_changes(accepted_run: tuple[Path, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = accepted_run
    entry = {"task": "TASK-001", "test": "tests.test_mul::test_mul", "fate": "gone",
             "reason": "mul is removed by the task"}
    for command in ("status", "review"):
        code, out = cli(capsys, repo, db, command, "FEAT-001")
        assert code == 0 and f"{LINE};" in out, out
        code, out = cli(capsys, repo, db, command, "FEAT-001", "--json")
        changes = valid(out, command)["accepted_test_changes"]
        assert {key: changes[0][key] for key in entry} == entry and len(changes) == 4, changes
    code, out = cli(capsys, repo, db, "land", "FEAT-001", "--json")
    assert code == 0, out
    landed = valid(out, "land")
    assert landed["landed"] and [c["test"] for c in landed["accepted_test_changes"]][:1] == [entry["test"]]


def test_lands_text_summary_says_what_the_coach_accepted(accepted_run: tuple[Path, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = accepted_run
    code, out = cli(capsys, repo, db, "land", "FEAT-001")
    assert code == 0 and "4 base tests changed, accepted by the coach: TASK-001: tests.test_mul::test_mul" in out, out
