"""An approved-unverified task is merged into the feature branch but doesn't reach the user's branch without the
person's word (issue 38 item 5): a real (in-process) run whose fix task's new test passes on the code it started
from, its coach accepting that (`new-tests-on-base`); `land` lists it and refuses (exit 2, naming the flag,
nothing moved) unless `--accept-unverified`; `pr` opens a draft listing it first; `run` says so last."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.landing.unverified import last_line
from tests.forge import FakeForge
from tests.graph.harness import Workflow, built_once, plan, task
from tests.graph.test_landing import FILES, VERIFY, Repo, valid
from tests.graph.test_pull_request import fake_gh, with_origin

# A fix whose new test passes on the old code too: add() already handles it.
FIX = {"calc/add.py": "def add(a, b):\n    \"\"\"The sum.\"\"\"\n    return a + b\n",
       "tests/test_add_more.py": "from calc.add import add\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n"}
REASON = "the docstring is the fix: no test can fail without it"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_once(tmp_path_factory, "unverified", _finished_run)


def _finished_run(root: Path) -> Path:
    repo = make_sample_repo(root / "repo", files=FILES, plan=plan(task("A", kind="fix"), verify=VERIFY))
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "user.email", "dev@example.com")
    agents = ScriptedAgents({("player", "A"): writes(FIX), "coach": approve(accepts={"new-tests-on-base": REASON})})

    async def run() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(root / "db.sqlite")) as saver:
            await Workflow(repo, agents, checkpointer=saver).run(max_turns=1)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        asyncio.run(run())
    return root


@pytest.fixture
def held(template: Path, tmp_path: Path) -> Repo:
    return Repo(template, tmp_path / "held")


@pytest.fixture
def forge(tmp_path: Path) -> Iterator[FakeForge]:
    (tmp_path / "forge").mkdir()
    with FakeForge(tmp_path / "forge") as server:
        yield server


def test_land_lists_an_unverified_task_and_refuses_it_unless_accepted(held: Repo,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    before = held.user_view()
    code, out, err = held.cli(capsys, "land", "FEAT-001")
    assert code == 2 and err.count("\n") == 1 and "--accept-unverified" in err and "(A)" in err, err
    assert "approved-unverified: A: " in out and "fails on the code it started from" in out and REASON in out, out
    assert held.user_view() == before and held.land_worktree_gone()
    code, out, err = held.cli(capsys, "land", "FEAT-001", "--accept-unverified", "--json")
    assert code == 0, err
    document = valid(out, "land")
    assert document["landed"] and document["accepted_unverified"] == ["A"]
    assert (held.root / "tests/test_add_more.py").is_file()


@pytest.mark.heavy  # `make test` keeps land's refusal above; pr's draft is its other side
def test_pr_opens_a_draft_listing_the_unverified_task_first(held: Repo, forge: FakeForge, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    with_origin(held, forge)
    log = fake_gh(tmp_path, monkeypatch)
    code, out, err = held.cli(capsys, "pr", "FEAT-001", "--json")
    assert code == 0, err
    assert valid(out, "pr")["unverified"].keys() == {"A"}
    argv = log.read_text().splitlines()
    assert "--draft" in argv
    body = Path(argv[argv.index("--body-file") + 1]).read_text()
    assert body.startswith("**Approved but not verified by the gate (1)"), body[:300]
    assert body.splitlines()[1].startswith("- A: ") and REASON in body.splitlines()[1]


def test_runs_last_line_says_the_unverified_tasks_wont_land_without_the_flag() -> None:
    results = {"A": {"status": "approved-unverified", "reason": "approved by the coach, but …"},
               "B": {"status": "approved", "reason": "approved"},
               "C": {"status": "approved-unverified", "reason": "approved by the coach; no verify command could"
                                                                " check it"}}
    assert last_line(results, "FEAT-001") == [
        "1 task(s) approved-unverified (A): they won't land without `autobuild land FEAT-001 --accept-unverified`"]
    assert last_line({"B": results["B"]}, "FEAT-001") == []
