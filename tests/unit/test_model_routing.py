"""Model routing by a task's complexity (`models:` in `.autobuild/config.yaml`): checked like every setting (one
line naming the problem, exit 2, nothing written), off unless configured, the flags win, and `--dry-run` shows each
task's models and what they are expected to cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from orchestrator.cli.main import main
from orchestrator.errors import InputError
from orchestrator.graph import runner
from orchestrator.graph.estimate import estimate
from orchestrator.settings import CONFIG_FILE, RunSettings, load_settings, session_model
from tests.schemas import valid

ROUTING = """models:
  by_complexity:
    "1-2": claude-haiku-4-5
    "3-7": claude-sonnet-4-5
    8-10: claude-opus-4-1
  session_usd:
    claude-haiku-4-5: 0.05
    claude-opus-4-1: 1.5
"""


def _config(repo: Path, text: str) -> Path:
    (repo / CONFIG_FILE).parent.mkdir(parents=True, exist_ok=True)
    (repo / CONFIG_FILE).write_text(text)
    return repo


def test_routing_is_off_unless_configured_and_the_flags_win(tmp_path: Path) -> None:
    plain = load_settings(RunSettings, tmp_path, target="FEAT-001")
    assert plain.models is None
    assert session_model("player", 9, model=None, coach_model=None, precheck_model=None, routing=None) is None
    routing = load_settings(RunSettings, _config(tmp_path, ROUTING), target="FEAT-001").models
    assert routing is not None
    pick = {(role, complexity): session_model(role, complexity, model=None, coach_model=None, precheck_model=None,
                                              routing=routing)
            for role in ("player", "coach", "planner") for complexity in (1, 2, 3, 7, 8, 10)}
    assert [pick["player", c] for c in (1, 2, 3, 7, 8, 10)] == ["claude-haiku-4-5"] * 2 + ["claude-sonnet-4-5"] * 2 \
        + ["claude-opus-4-1"] * 2
    assert pick["coach", 8] == "claude-opus-4-1" and pick["planner", 8] is None
    assert session_model("player", 9, model="m", coach_model=None, precheck_model=None, routing=routing) == "m"
    assert session_model("coach", 9, model="m", coach_model="c", precheck_model=None, routing=routing) == "c"
    assert session_model("coach", 1, model=None, coach_model="c", precheck_model=None, routing=routing) == "c"
    assert session_model("player", 1, model=None, coach_model="c", precheck_model=None, routing=routing) \
        == "claude-haiku-4-5"


@pytest.mark.parametrize(("text", "message"), [
    ("models: claude-opus-4-1\n", "must be a mapping with `by_complexity`"),
    ("models:\n  by_complexity: {\"1-5\": a-model}\n", "no model for complexity 6, 7, 8, 9, 10"),
    ("models:\n  by_complexity: {\"1-5\": a, \"5-10\": b}\n", "complexity 5 is in two ranges"),
    ("models:\n  by_complexity: {\"0-10\": a}\n", "'0-10' is not a range of complexities"),
    ("models:\n  by_complexity: {\"7-3\": a}\n", "'7-3' is not a range"),
    ("models:\n  by_complexity: {\"1-10\": \"rm -rf /\"}\n", "must be a model name"),
    ("models:\n  by_complexity: {\"1-10\": a}\n  session_usd: {a: -1}\n", "session_usd of a must be dollars"),
    ("models:\n  by_complexit: {\"1-10\": a}\n", "unknown key 'by_complexit'"),
    ("model: x\nmodels:\n  by_complexity: {\"1-10\": a}\n", "or `models` .routing by complexity., not both"),
])
def test_a_bad_routing_is_one_line_naming_it(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as caught:
        load_settings(RunSettings, _config(tmp_path, text), target="FEAT-001")
    assert "\n" not in str(caught.value)


def test_a_bad_routing_exits_2_with_one_line_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _config(make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN), "models:\n  by_complexity: {\"1-9\": a}\n")
    before = sorted(path.name for path in (repo / ".autobuild").iterdir())
    assert main(["run", "FEAT-001", "--repo", str(repo), "--autonomous"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no model for complexity 10" in err, err
    assert sorted(path.name for path in (repo / ".autobuild").iterdir()) == before


def test_the_dry_run_shows_each_task_s_models_and_their_estimate(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo = _config(make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN), ROUTING)  # complexities 2, 2, 4, 1
    settings = load_settings(RunSettings, repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), interactive=False,
                             max_turns=3, est_session_usd=0.5)
    expected = estimate(runner.prepare(settings))
    assert [(row["task"], row["model"], row["cost_usd_expected"]) for row in expected.rows] == [
        ("TASK-001", "claude-haiku-4-5", 0.1), ("TASK-003", "claude-haiku-4-5", 0.1),
        ("TASK-002", "claude-sonnet-4-5", 1.0), ("TASK-004", "claude-haiku-4-5", 0.1)]
    assert expected.cost_usd_expected == 1.3, "a haiku session at its own price, sonnet's at est_session_usd"
    assert main(["run", "FEAT-001", "--repo", str(repo), "--dry-run", "--coach-model", "judge", "--json"]) == 0
    document = valid("dry-run", capsys.readouterr().out)
    assert {(row["task"], row["model"], row["coach_model"]) for row in document["tasks"]} == {
        ("TASK-001", "claude-haiku-4-5", "judge"), ("TASK-003", "claude-haiku-4-5", "judge"),
        ("TASK-002", "claude-sonnet-4-5", "judge"), ("TASK-004", "claude-haiku-4-5", "judge")}
    assert main(["run", "FEAT-001", "--repo", str(repo), "--dry-run", "--model", "mine"]) == 0
    text = capsys.readouterr().out
    assert "haiku" not in text and text.count("    model mine, ~$") == 4, text
    assert main(["run", "FEAT-001", "--repo", str(_config(repo, "parallel: 1\n")), "--dry-run"]) == 0
    assert capsys.readouterr().out.count("    default model, ~$0.50") == 4, "no routing: the CLI's default, as before"
    assert json.loads(json.dumps(expected.document()))["cost_usd_expected"] == 1.3
