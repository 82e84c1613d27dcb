"""Faults in the stores and in the state around a run: refused with one line and exit 2, or stopped with an
error, and the user's repository untouched either way."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.cli.main import main
from orchestrator.errors import StoreError
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from tests.graph.harness import CALC_FILES, Workflow, plan, task
from tests.graph.test_safety import user_view
from tests.postgres import postgres_server


def cli_process(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as its own process (~2 CPU-s of start-up each): kept for one case, what a person sees whole."""
    return subprocess.run([sys.executable, "-m", "orchestrator", *args, "--repo", str(repo)], capture_output=True,
                          text=True, check=False, stdin=subprocess.DEVNULL)


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI's `main` in this process, its output captured: the same refusals without a process per call."""
    argv = [*args, "--repo", str(repo)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own refusals
            code = exit_.code if isinstance(exit_.code, int) else 2
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def repo_with(tmp_path: Path, *tasks: dict[str, Any]) -> Path:
    return make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(*tasks, verify=None))


@pytest.mark.parametrize("db", ["mysql://user:s3cret@db.example/x", "{tmp}", "{tmp}/afile/db.sqlite",
                                "postgresql://user:s3cret@127.0.0.1:1/x", "/proc/autobuild-nowhere.sqlite"])
def test_unusable_stores_are_one_line_user_errors_with_credentials_masked(tmp_path: Path, db: str) -> None:
    repo = repo_with(tmp_path, task("A"))
    (tmp_path / "afile").write_text("not a folder\n")
    before = (user_view(repo), sorted(p.name for p in repo.iterdir()))
    call = cli_process if db.startswith("mysql") else cli  # one case as a whole process: nothing else printed
    for command in (["run", "FEAT-001"], ["status"]):
        result = call(repo, *command, "--db", db.format(tmp=tmp_path))
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
        assert "s3cret" not in result.stderr + result.stdout
    assert (user_view(repo), sorted(p.name for p in repo.iterdir())) == before, "nothing written"


def test_a_feature_branch_this_db_does_not_know_is_refused(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"))
    git(repo, "branch", "autobuild/FEAT-001")
    result = cli(repo, "run", "FEAT-001", "--db", str(tmp_path / "new.sqlite"))
    assert result.returncode == 2 and "has no run of FEAT-001" in result.stderr and "--fresh" in result.stderr
    assert not (tmp_path / "new.sqlite").exists()


async def test_a_plan_changed_since_the_run_started_is_refused_on_resume(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"), task("B", "A"))
    agents = ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}, question="Which one?"), "coach": approve()})
    db = tmp_path / "db.sqlite"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        paused = await Workflow(repo, agents, checkpointer=saver, options={"interactive": True}).run()
    assert paused.interrupts
    path = repo / ".autobuild/features/FEAT-001.yaml"
    changed = yaml.safe_load(path.read_text())
    changed["tasks"][1]["name"] = "something else entirely"
    path.write_text(yaml.safe_dump(changed))
    result = await asyncio.to_thread(cli, repo, "resume", "FEAT-001", "--db", str(db))
    assert result.returncode == 2 and "changed since its run started" in result.stderr, result.stderr
    single = await asyncio.to_thread(cli, repo, "run", "A", "--db", str(db), "--ignore-deps")
    assert single.returncode == 2 and "unfinished in FEAT-001" in single.stderr, single.stderr


async def test_a_checkpoint_db_deleted_mid_run_stops_it_with_an_error(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"), task("B", "A"))
    db = tmp_path / "db.sqlite"
    agents = ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}, delay_s=1.5), "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=agents, interactive=False)
    run_plan = runner.prepare(settings)
    asyncio.get_running_loop().call_later(0.8, db.unlink)
    with pytest.raises(StoreError, match="deleted or replaced"):
        await runner.execute(run_plan, lambda event: None)


async def test_a_checkpoint_db_locked_by_another_process_is_waited_for_then_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_with(tmp_path, task("A"))
    db = tmp_path / "db.sqlite"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        await saver.setup()
    monkeypatch.setenv("ORCHESTRATOR_DB_LOCK_TIMEOUT", "0.5")
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), interactive=False,
                           agents=ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}), "coach": approve()}))
    run_plan = runner.prepare(settings)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked"):
            await runner.execute(run_plan, lambda event: None)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    summary = await runner.execute(run_plan, lambda event: None)
    assert summary.results["A"]["status"] == "approved-unverified", "once the lock is gone the run works"


async def test_fresh_with_a_db_that_does_not_know_the_feature_starts_from_the_base_keeping_a_backup(
        tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"))
    agents = ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}), "coach": approve()})
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "first.sqlite")) as saver:
        await Workflow(repo, agents, checkpointer=saver).run()
    old_tip, base = git(repo, "rev-parse", "autobuild/FEAT-001").strip(), git(repo, "rev-parse", "main").strip()
    assert old_tip != base, "the first run merged work into the feature branch"
    events: list[dict[str, Any]] = []
    again = ScriptedAgents({"player": writes({"calc/a.py": "A = 2\n"}), "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "other.sqlite"), agents=again,
                           interactive=False, fresh=True)
    summary = await runner.execute(runner.prepare(settings), events.append)
    assert summary.results["A"]["status"] == "approved-unverified"
    aside = [e for e in events if e["event"] == "branch_set_aside"]
    assert len(aside) == 1 and git(repo, "rev-parse", aside[0]["backup"]).strip() == old_tip, "the backup is kept"
    new_tip = git(repo, "rev-parse", "autobuild/FEAT-001").strip()
    assert git(repo, "merge-base", new_tip, old_tip).strip() == base, "the new run started from the base"


@pytest.mark.usefixtures("answering_endpoint")
def test_a_refusal_after_the_run_started_leaves_no_thread_no_db_json_and_nothing_else(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"))
    db = tmp_path / "db.sqlite"
    listing = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if ".git/objects" not in str(p))
    before = (user_view(repo), git(repo, "for-each-ref"), listing)
    result = cli(repo, "run", "FEAT-001", "--db", str(db), "--verify", "no-such-gate-command-xyz")
    assert result.returncode == 2 and "can't run on the base" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert not db.exists() and not (repo / ".autobuild/db.json").exists(), "no thread, no db.json"
    listing = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if ".git/objects" not in str(p))
    assert (user_view(repo), git(repo, "for-each-ref")) == before[:2], "no branch"
    assert set(listing) ^ set(before[2]) == set(), "no worktree, report or lock file"
    status = cli(repo, "status", "--db", str(db))
    assert "in progress" not in status.stdout


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("finished")
    repo = make_sample_repo(root / "repo", files=CALC_FILES, plan=plan(task("A"), verify=None))

    async def run() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(root / "db.sqlite")) as saver:
            agents = ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}), "coach": approve()})
            await Workflow(repo, agents, checkpointer=saver).run()

    asyncio.run(run())
    return root


@pytest.mark.heavy
@pytest.mark.usefixtures("answering_endpoint")
@pytest.mark.parametrize("damage", ["UPDATE checkpoints SET checkpoint = X'c1ff00ee'",
                                    "UPDATE writes SET value = X'c1ff00ee'",
                                    "UPDATE checkpoints SET metadata = X'c1ff00ee'"], ids=["blobs", "writes", "meta"])
def test_a_damaged_checkpoint_db_is_one_line_from_every_read_command_and_resume(
        finished_run: Path, tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(finished_run, tmp_path / "copy")
    repo, db = tmp_path / "copy" / "repo", tmp_path / "copy" / "db.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute(damage)
    damaged = 0
    for command in (["status"], ["status", "FEAT-001"], ["history", "FEAT-001"], ["show", "FEAT-001"],
                    ["show", "FEAT-001", "A"], ["review", "FEAT-001"], ["resume", "FEAT-001"],
                    ["history", "FEAT-001", "--json"], ["resume", "FEAT-001", "--json"]):
        code = main([*command, "--repo", str(repo), "--db", str(db)])
        out, err = capsys.readouterr()
        if code == 0:
            continue
        damaged += 1
        assert code == 2 and err.count("\n") == 1 and "is damaged" in err, (command, err)
        if "--json" in command:
            assert json.loads(out)["exit_code"] == 2
    assert damaged >= 3, "the damage is seen (the commands that read only the run's reports need not see it)"


@pytest.mark.heavy  # a PostgreSQL server of its own
async def test_a_postgres_store_lost_mid_run_stops_it_with_our_error_not_the_drivers(tmp_path: Path) -> None:
    """The server ends the run's connection (a restart, a failover, an admin's pg_terminate_backend): the run stops
    with a StoreError naming the store (exit 1), never psycopg's own exception and its traceback."""
    import psycopg  # noqa: PLC0415 - the postgres extra, installed by make install

    repo = repo_with(tmp_path, task("A"), task("B", "A"))
    with postgres_server() as url:
        agents = ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}, delay_s=1.5), "coach": approve()})
        run_plan = runner.prepare(RunSettings(repo=repo, target="FEAT-001", db=url, agents=agents, interactive=False))

        def end_the_runs_connections() -> None:
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                              " WHERE datname = current_database() AND pid <> pg_backend_pid()")

        asyncio.get_running_loop().call_later(0.8, end_the_runs_connections)
        with pytest.raises(StoreError, match=r"checkpoint DB postgresql://.*127\.0\.0\.1") as raised:
            await runner.execute(run_plan, lambda event: None)
        assert not isinstance(raised.value.__cause__, psycopg.Error) or raised.value.__suppress_context__


@pytest.mark.heavy  # a PostgreSQL server of its own
def test_a_postgres_store_another_program_made_is_one_line_from_the_read_commands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Tables of the right names and the wrong shape (another program's, or a damaged migration): the read
    commands end with one line naming the store (exit 2), never psycopg's traceback."""
    import psycopg  # noqa: PLC0415 - the postgres extra, installed by make install

    repo = repo_with(tmp_path, task("A"))
    with postgres_server() as url:
        with psycopg.connect(url, autocommit=True) as admin:
            for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs"):
                admin.execute(f"CREATE TABLE {table} (other text)")
        for command in (["status"], ["status", "FEAT-001"], ["history", "FEAT-001"]):
            code = main([*command, "--repo", str(repo), "--db", url])
            _, err = capsys.readouterr()
            assert code == 2 and err.count("\n") == 1 and "checkpoint DB postgresql://" in err, (command, err)
