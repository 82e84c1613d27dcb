"""An id that is not one, on any command that takes one: `FEAT-001\\n` (Python's `$` matches before a final
newline) and a 251-character id (past a file name's 255 bytes with `.yaml`) are refused in one line, exit 2,
before anything is read or written; the plan model and every other check agree (ids.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from orchestrator.cli.main import main
from orchestrator.errors import PlanError
from orchestrator.plan.ids import MAX_ID_LENGTH, check_id, is_id
from orchestrator.plan.model import parse_plan

_SERVER = "http://127.0.0.1:9"  # nothing listens: a request that got out would fail otherwise
_COMMANDS = [["run", "{id}"], ["run", "{id}", "--dry-run"], ["resume", "{id}"], ["resume", "FEAT-001", "{id}"],
             ["answer", "{id}", "q1", "yes"], ["plan", "a feature", "--id", "{id}"], ["validate", "{id}"],
             ["status", "{id}"], ["status", "{id}", "--server", _SERVER], ["history", "{id}"],
             ["history", "FEAT-001", "--task", "{id}"], ["show", "{id}"], ["show", "FEAT-001", "{id}"],
             ["clean", "{id}"], ["graph", "{id}"], ["review", "{id}"], ["land", "{id}"], ["discard", "{id}"],
             ["pr", "{id}"], ["pick", "{id}", "TASK-001", "a2"], ["pick", "FEAT-001", "{id}", "a2"],
             ["submit", "{id}", "--repo-url", "{repo}", "--server", _SERVER]]
_BAD_IDS = {"newline": "FEAT-001\n", "long": "F" * 251}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repository for every refusal: none may write to it (each test checks)."""
    return make_sample_repo(tmp_path_factory.mktemp("ids") / "repo", plan=DEMO_PLAN)


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if ".git" not in p.parts}


@pytest.mark.parametrize("bad", _BAD_IDS.values(), ids=_BAD_IDS.keys())
@pytest.mark.parametrize("command", _COMMANDS, ids=[" ".join(c[:2]).replace("{id}", "ID") for c in _COMMANDS])
def test_a_bad_id_is_refused_in_one_line_with_nothing_written(command: list[str], bad: str, repo: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    argv = [part.format(id=bad, repo=repo) for part in command]
    if "--server" not in argv:
        argv += ["--repo", str(repo)]
    before = _files(repo)
    code = main(argv)
    err = capsys.readouterr().err
    assert (code, err.count("\n"), err.startswith("error: invalid")) == (2, 1, True), err
    assert "Traceback" not in err and _files(repo) == before


def test_the_json_form_of_the_refusal_is_one_document(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "F" * 251, "--json", "--repo", str(repo)]) == 2
    assert "at most 64" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["FEAT-001\n", "FEAT-001\r", "\nFEAT-001", "F" * (MAX_ID_LENGTH + 1), "", "a b"])
def test_check_id_matches_the_whole_id(value: str) -> None:
    assert not is_id(value)
    with pytest.raises(PlanError) as refused:
        check_id("feature", value)
    assert "\n" not in str(refused.value)


def test_the_longest_id_is_an_id() -> None:
    assert check_id("feature", "F" * MAX_ID_LENGTH) == "F" * MAX_ID_LENGTH


def test_the_plan_model_refuses_a_final_newline_in_an_id() -> None:
    data = {"id": "FEAT-001\n", "name": "x", "tasks": [{"id": "TASK-001", "name": "t"}]}
    with pytest.raises(PlanError, match="id"):
        parse_plan(data, "plan.yaml")
