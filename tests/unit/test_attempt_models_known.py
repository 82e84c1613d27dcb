"""`attempt_models` naming a model the endpoint does not know (issue 40, item 6): one line, exit 2, nothing written,
no session; the CLI's aliases and a listed model's dateless name are known."""

from __future__ import annotations

import copy
from pathlib import Path

from agents.credentials import unknown_models
from agents.testing.repos import DEMO_PLAN, make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.cli_in_process import cli_in_process


def test_aliases_listed_ids_and_their_dateless_names_are_known() -> None:
    listed = ("claude-sonnet-4-5-20250929", "claude-opus-4-1")
    names = ["sonnet", "opus[1m]", "claude-sonnet-4-5", "claude-opus-4-1", "gpt-4o", "claude-sonet-4-5", "claude"]
    assert unknown_models(names, listed) == ["gpt-4o", "claude-sonet-4-5", "claude"]
    assert unknown_models(["gpt-4o"], None) == [], "no listing (a gateway): the names are not judged"


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if ".git" not in p.parts}


def test_an_unknown_attempt_model_is_one_line_exit_2_nothing_written(tmp_path: Path) -> None:
    plan = copy.deepcopy(DEMO_PLAN) | {"attempts": 2, "attempt_models": ["claude-sonnet-4-5", "gpt-4o"]}
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    before = _files(repo)
    with ScriptedModel({"sessions": []}) as model:
        done = cli_in_process(tmp_path, "run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"),
                              "--autonomous", model=model)
        assert model.requests == [], "no session"
    assert (done.returncode, done.stderr.count("\n")) == (2, 1), done.stderr
    assert "'gpt-4o'" in done.stderr and "claude-sonnet-4-5" in done.stderr and "Traceback" not in done.stderr
    assert _files(repo) == before
    assert not (tmp_path / "db.sqlite").exists()
