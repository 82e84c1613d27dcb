"""What the user's git config names as commands (an fsmonitor, a pager, an ssh command) is never run by our
own git commands: a whole run, review, land, discard (twice) and clean in a repo whose config points each at a
script that leaves a marker; none is left."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.cli.main import main
from tests.graph.harness import Workflow, plan, task
from tests.graph.test_landing import FILES, SUB, VERIFY

pytestmark = pytest.mark.heavy


def test_commands_in_the_users_git_config_never_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("A"), verify=VERIFY))
    marks = tmp_path / "marks"
    script = tmp_path / "mark.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marks}\ncat\n')
    script.chmod(0o755)
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "user.email", "dev@example.com")
    for key in ("core.fsmonitor", "core.pager", "core.sshCommand"):
        git(repo, "config", key, str(script))
    # An ssh remote: any fetch or push of ours to it would start core.sshCommand (none of these commands contacts it).
    git(repo, "remote", "add", "origin", "ssh://git@autobuild.invalid/repo.git")
    db = tmp_path / "db.sqlite"
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

    async def run() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
            await Workflow(repo, ScriptedAgents({"player": writes(SUB), "coach": approve()}),
                           checkpointer=saver).run(max_turns=1)

    asyncio.run(run())
    for command in (["status", "FEAT-001"], ["review", "FEAT-001"], ["land", "FEAT-001"], ["discard", "FEAT-001"],
                    ["discard", "FEAT-001"], ["clean"]):
        code = main([*command, "--repo", str(repo), *([] if command[0] == "discard" else ["--db", str(db)])])
        out, err = capsys.readouterr()
        assert code in (0, 1), (command, code, out, err)
        assert "Traceback" not in err
    assert (repo / "calc" / "sub.py").is_file(), "landed"
    assert not marks.exists(), marks.read_text()


def test_a_filter_driver_of_the_user_never_runs_in_our_worktrees(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A smudge/clean filter (`.gitattributes` + the repo's config) runs on checkouts and adds: `worktree add`,
    `reset --hard`, `add -A` in ours would start it. Only land, writing as the user, runs it."""
    files = {**FILES, ".gitattributes": "*.py filter=evil\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("A"), verify=VERIFY))
    marks = tmp_path / "marks"
    for key in ("smudge", "clean"):
        git(repo, "config", f"filter.evil.{key}", f"sh -c 'echo {key} >> {marks}; cat'")
    db = tmp_path / "db.sqlite"
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

    async def run() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
            await Workflow(repo, ScriptedAgents({"player": writes(SUB), "coach": approve()}),
                           checkpointer=saver).run(max_turns=1)

    marks.unlink(missing_ok=True)  # the sample repo's own commit was the user's
    asyncio.run(run())
    for command in (["status", "FEAT-001", "--db", str(db)], ["review", "FEAT-001", "--db", str(db)],
                    ["clean", "--db", str(db)]):
        assert main([*command, "--repo", str(repo)]) in (0, 1), capsys.readouterr()
    assert not marks.exists(), marks.read_text()
