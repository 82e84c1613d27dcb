"""Runs by URL, in process: a bare repository under tmp_path is the remote (`file://`), the worker's workspace is
a folder of the test's; a run pushes every task commit and the feature branch there, a run resumed from another
workspace (no clone) takes over from what was pushed, and the base branch never moves."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from orchestrator.errors import GitError, InputError
from orchestrator.graph.workflow import build_feature_workflow
from orchestrator.repo import remote
from orchestrator.settings import RunOptions
from tests.graph.harness import CALC_FILES, Run, plan, stream_run, task


def bare_remote(tmp_path: Path, *tasks: dict[str, Any], with_plan: bool = True,
                links: dict[str, str] | None = None) -> str:
    """A project pushed to a bare repository (the plan committed on main, or not; with `links`, symlinks committed
    too: path -> target); its file:// URL."""
    work = make_sample_repo(tmp_path / "work", files=CALC_FILES, plan=plan(*tasks, verify=None) if with_plan else None,
                            venv=False)
    for name, target in (links or {}).items():
        (work / name).symlink_to(target)
        git(work, "add", name)
    if with_plan:
        git(work, "add", ".autobuild")
        git(work, "-c", "user.name=Me", "-c", "user.email=me@localhost", "commit", "-qm", "plan FEAT-001")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(origin)], check=True)
    return f"file://{origin}"


def remote_refs(url: str) -> dict[str, str]:
    out = subprocess.run(["git", "ls-remote", url], capture_output=True, text=True, check=True).stdout
    return {ref: sha for sha, ref in (line.split("\t") for line in out.splitlines())}


def show(url: str, rev: str) -> str:
    return git(Path(url.removeprefix("file://")), "show", rev)


def files_on(url: str, rev: str) -> list[str]:
    return git(Path(url.removeprefix("file://")), "ls-tree", "-r", "--name-only", rev).split()


async def run_by_url(checkpointer: BaseCheckpointSaver[Any], agents: ScriptedAgents, graph_input: Any,
                     **options: Any) -> Run:
    graph = build_feature_workflow(checkpointer)
    config: Any = {"configurable": {"thread_id": "FEAT-001"}}
    context = RunOptions(agents=agents, **{"interactive": False, **options})
    return await stream_run(graph, graph_input, config, context)


def workspace(monkeypatch: pytest.MonkeyPatch, path: Path) -> Path:
    monkeypatch.setenv("ORCHESTRATOR_WORKSPACE", str(path))
    return path


async def test_a_run_taken_over_by_another_workspace_goes_on_from_the_pushed_branches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = bare_remote(tmp_path, task("A"), task("B", "A"))
    main_before = remote_refs(url)["refs/heads/main"]
    seen_turn_one: list[bool] = []
    crash = Turn(raises=OSError("the worker died"))
    resumed = writes({"calc/b2.py": "B2 = 2\n"}, effect=lambda wt: seen_turn_one.append((wt / "calc/b.py").exists()))
    agents = ScriptedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}),
                             ("player", "B", 1): writes({"calc/b.py": "B = 1\n"}),
                             ("coach", "B", 1): feedback(("calc/b.py", 1, "add b2 too")),
                             ("player", "B", 2): [crash, resumed],
                             "coach": approve()})
    saver = InMemorySaver()
    first_space = workspace(monkeypatch, tmp_path / "worker-a")
    first = await run_by_url(saver, agents, {"repo_url": url, "base": "main", "target": "FEAT-001"})
    assert first.output is None and "task_error" in first.kinds("B"), "stopped in the middle of task B"
    refs = remote_refs(url)
    assert refs["refs/heads/main"] == main_before
    assert show(url, "autobuild/FEAT-001:calc/a.py") == "A = 1\n", "A merged, and pushed before B began"
    assert show(url, "autobuild/FEAT-001.B:calc/b.py") == "B = 1\n", "B's turn-1 commit is on the remote"
    assert len(list((first_space / "clones").iterdir())) == 1
    calls_before = len(agents.calls)

    shutil.rmtree(first_space)  # the first worker is gone, with its clone and worktrees
    second_space = workspace(monkeypatch, tmp_path / "worker-b")
    second = await run_by_url(saver, agents, None)
    assert second.status("A") == "approved-unverified" and second.status("B") == "approved-unverified"
    again = [(call.role, call.task, call.turn) for call in agents.calls[calls_before:]]
    assert again == [("player", "B", 2), ("coach", "B", 2)], "A never redone, B resumed at its interrupted turn"
    assert seen_turn_one == [True], "B's worktree was recreated at its checkpointed commit"
    assert str(agents.calls[-1].input.worktree).startswith(str(second_space))
    refs = remote_refs(url)
    assert refs["refs/heads/main"] == main_before, "the base never moves"
    assert set(refs) == {"HEAD", "refs/heads/main", "refs/heads/autobuild/FEAT-001",
                         "refs/heads/autobuild/FEAT-001.A", "refs/heads/autobuild/FEAT-001.B",
                         "refs/heads/autobuild/FEAT-001.AUTO-RUN.md"}
    on_feature = files_on(url, "autobuild/FEAT-001")
    assert {"calc/a.py", "calc/b.py", "calc/b2.py"} <= set(on_feature)
    assert not [name for name in on_feature if name.startswith(".autobuild/runs/")], "no report on the proposed branch"
    reports = files_on(url, "autobuild/FEAT-001.AUTO-RUN.md")
    assert {".autobuild/runs/FEAT-001/A/AUTO-RUN.md", ".autobuild/runs/FEAT-001/B/AUTO-RUN.md",
            ".autobuild/runs/FEAT-001/AUTO-RUN.md"} <= set(reports), "A's (first worker) and B's (second) reports"
    assert second.results["B"]["sha"] == refs["refs/heads/autobuild/FEAT-001.B"]


def fake_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `gh` first on PATH that records its argv (one per line) and prints a PR URL."""
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "gh-argv"
    script = folder / "gh"
    script.write_text(f"#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > {log}\n"
                      "echo https://example.invalid/pull/7\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


async def test_a_plan_sent_in_the_input_runs_and_opens_a_pull_request(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    url = bare_remote(tmp_path, with_plan=False)
    main_before = remote_refs(url)["refs/heads/main"]
    log = fake_gh(tmp_path, monkeypatch)
    workspace(monkeypatch, tmp_path / "worker")
    sent = yaml.safe_dump(plan(task("A", file_path="docs/tasks/A.md"), verify=None))
    agents = ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}), "coach": approve()})
    run = await run_by_url(InMemorySaver(), agents, {
        "repo_url": url, "target": "FEAT-001", "plan_yaml": sent,
        "plan_files": {"docs/tasks/A.md": "Use the word PINEAPPLE in a comment.\n"}}, pr=True)
    assert run.status("A") == "approved-unverified"
    assert any("PINEAPPLE" in line for line in agents.prompts_of("player", "A")[0].brief.requirements)
    assert show(url, "autobuild/FEAT-001:calc/a.py") == "A = 1\n"
    assert remote_refs(url)["refs/heads/main"] == main_before
    argv = log.read_text().splitlines()
    assert argv[:6] == ["pr", "create", "--head", "autobuild/FEAT-001", "--base", "main"]
    title, body = argv[argv.index("--title") + 1], Path(argv[argv.index("--body-file") + 1]).read_text()
    assert title == "FEAT-001 — Feature" and "# AUTO-RUN: FEAT-001" in body and "Tasks approved:** 1 of 1" in body
    opened = [e for e in run.events if e["event"] == "pull_request"]
    assert opened and opened[-1]["opened"] and opened[-1]["url"] == "https://example.invalid/pull/7"


async def test_a_url_carrying_a_credential_is_refused_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    space = workspace(monkeypatch, tmp_path / "worker")
    agents = ScriptedAgents({})
    with pytest.raises(InputError, match=r"carries a credential") as refused:
        await run_by_url(InMemorySaver(), agents, {"repo_url": "https://me:ghp_SECRET@example.invalid/x.git",
                                                   "target": "FEAT-001"})
    assert "ghp_SECRET" not in str(refused.value)
    assert not space.exists() and agents.calls == []


async def test_the_base_branch_is_never_pushed(tmp_path: Path) -> None:
    url = bare_remote(tmp_path, task("A"))
    clone = await remote.ensure_clone(tmp_path / "worker", url)
    await remote.refresh(clone, url, "main")
    with pytest.raises(GitError, match="never the base"):
        await remote.push(clone, url, "main", branches=("main",))
    with pytest.raises(GitError, match="never the base"):
        await remote.push(clone, url, "autobuild/x", moved_back=("autobuild/x",))
    (clone.root / ".git" / "kept").write_text("fetched, never cloned again\n")
    again = await remote.ensure_clone(tmp_path / "worker", url)
    await remote.refresh(again, url, "main")
    assert (again.root / ".git" / "kept").exists() and len(list((tmp_path / "worker" / "clones").iterdir())) == 1


async def test_an_input_naming_both_a_repo_and_a_url_is_refused(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    space = workspace(monkeypatch, tmp_path / "worker")
    with pytest.raises(InputError, match="both repo and repo_url"):
        await run_by_url(InMemorySaver(), ScriptedAgents({}), {"repo": str(tmp_path), "repo_url": "file:///x.git"})
    with pytest.raises(InputError, match="must be a path inside the repository"):
        await run_by_url(InMemorySaver(), ScriptedAgents({}), {"repo_url": bare_remote(tmp_path, task("A")),
                                                                "plan_files": {"../escape.md": "x"}})
    assert not (tmp_path / "escape.md").exists() and not (space / "escape.md").exists()


async def test_a_base_the_url_lacks_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = bare_remote(tmp_path, task("A"))
    workspace(monkeypatch, tmp_path / "worker")
    with pytest.raises(InputError, match=r"can't fetch branch 'nope' from file://"):
        await run_by_url(InMemorySaver(), ScriptedAgents({}), {"repo_url": url, "base": "nope", "target": "FEAT-001"})
    assert "refs/heads/autobuild/FEAT-001" not in remote_refs(url)


async def test_a_plan_naming_its_own_base_starts_from_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = bare_remote(tmp_path, task("A"), with_plan=False)
    work = tmp_path / "work"
    git(work, "checkout", "-q", "-b", "develop")
    (work / "calc" / "dev.py").write_text("DEV = 1\n")
    git(work, "add", "-A")
    git(work, "-c", "user.name=Me", "-c", "user.email=me@localhost", "commit", "-qm", "develop work")
    git(work, "push", "-q", url.removeprefix("file://"), "develop")
    before = remote_refs(url)
    workspace(monkeypatch, tmp_path / "worker")
    log = fake_gh(tmp_path, monkeypatch)
    sent = yaml.safe_dump(plan(task("A"), verify=None, base_branch="develop"))
    agents = ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}), "coach": approve()})
    run = await run_by_url(InMemorySaver(), agents, {"repo_url": url, "target": "FEAT-001", "plan_yaml": sent},
                           pr=True)
    assert log.read_text().splitlines()[2:6] == ["--head", "autobuild/FEAT-001", "--base", "develop"]
    assert run.status("A") == "approved-unverified"
    assert {"calc/dev.py", "calc/a.py"} <= set(files_on(url, "autobuild/FEAT-001"))
    after = remote_refs(url)
    assert all(after[ref] == sha for ref, sha in before.items()), "neither main nor develop moved"


async def test_parallel_tasks_by_url_all_land_on_the_remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = bare_remote(tmp_path, task("A"), task("B"), task("C"))
    clone = remote.clone_path(workspace(monkeypatch, tmp_path / "worker"), url)
    agents = ScriptedAgents({(("player", name)): writes({f"calc/{name.lower()}.py": f"{name} = 1\n"}, delay_s=0.05)
                             for name in "ABC"} | {"coach": approve()})
    run = await run_by_url(InMemorySaver(), agents, {"repo_url": url, "target": "FEAT-001"}, parallel=3)
    assert [run.status(name) for name in "ABC"] == ["approved-unverified"] * 3
    assert {"calc/a.py", "calc/b.py", "calc/c.py"} <= set(files_on(url, "autobuild/FEAT-001"))
    refs = remote_refs(url)
    assert refs["refs/heads/autobuild/FEAT-001"] == git(clone, "rev-parse", "autobuild/FEAT-001").strip()
    origin = Path(url.removeprefix("file://"))
    reports = files_on(url, "autobuild/FEAT-001.AUTO-RUN.md")
    for name in "ABC":  # each task's branch as its last node left it, and landed from there; its report beside
        git(origin, "merge-base", "--is-ancestor", f"autobuild/FEAT-001.{name}", "autobuild/FEAT-001")
        git(origin, "merge-base", "--is-ancestor", run.results[name]["sha"], "autobuild/FEAT-001")
        assert f".autobuild/runs/FEAT-001/{name}/AUTO-RUN.md" in reports
        assert f".autobuild/runs/FEAT-001/{name}/AUTO-RUN.md" not in files_on(url, f"autobuild/FEAT-001.{name}")


async def test_a_question_asked_on_one_worker_is_answered_on_another(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    url = bare_remote(tmp_path, task("A"))
    agents = ScriptedAgents({("player", "A"): [Turn(question="Which database?"), writes({"calc/a.py": "A = 1\n"})],
                             "coach": approve()})
    saver = InMemorySaver()
    first_space = workspace(monkeypatch, tmp_path / "worker-a")
    asked = await run_by_url(saver, agents, {"repo_url": url, "target": "FEAT-001"}, interactive=True)
    assert asked.output is None and [i.value["question"] for i in asked.interrupts] == ["Which database?"]
    shutil.rmtree(first_space)
    workspace(monkeypatch, tmp_path / "worker-b")
    answered = await run_by_url(saver, agents, Command(resume="Postgres"), interactive=True)
    assert answered.status("A") == "approved-unverified"
    last = agents.prompts_of("player", "A")[-1]
    assert last.answers == {"Which database?": "Postgres"} and str(last.worktree).startswith(str(tmp_path / "worker-b"))
    assert show(url, "autobuild/FEAT-001:calc/a.py") == "A = 1\n"


async def test_a_worker_coming_back_to_its_stale_clone_goes_on_from_what_others_pushed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = bare_remote(tmp_path, task("A"), task("B", "A"), task("C", "B"))
    crash = Turn(raises=OSError("the worker died"))
    agents = ScriptedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}),
                             ("player", "B"): [crash, writes({"calc/b.py": "B = 1\n"})],
                             ("player", "C"): [crash, writes({"calc/c.py": "C = 1\n"})],
                             "coach": approve()})
    saver = InMemorySaver()
    workspace(monkeypatch, tmp_path / "worker-a")
    assert (await run_by_url(saver, agents, {"repo_url": url, "target": "FEAT-001"})).output is None  # B died
    workspace(monkeypatch, tmp_path / "worker-b")
    assert (await run_by_url(saver, agents, None)).output is None  # B landed there, then C died
    done_before = len(agents.calls)
    workspace(monkeypatch, tmp_path / "worker-a")  # back on the first worker: its clone knows only A's landing
    last = await run_by_url(saver, agents, None)
    assert [last.status(name) for name in "ABC"] == ["approved-unverified"] * 3
    assert [(call.role, call.task) for call in agents.calls[done_before:]] == [("player", "C"), ("coach", "C")]
    assert {"calc/a.py", "calc/b.py", "calc/c.py"} <= set(files_on(url, "autobuild/FEAT-001"))


@pytest.mark.parametrize(("graph_input", "message"), [
    ({"base": "*", "target": "FEAT-001"}, "not a valid branch name"),
    ({"base": "autobuild/FEAT-001", "target": "FEAT-001"}, "an autobuild/ branch is a run's"),
    ({"target": "../../etc"}, "invalid target id"),
    ({"target": "FEAT-001", "plan_files": ["x"]}, "plan_files must map"),
])
async def test_the_worker_checks_the_input_again_before_it_clones(graph_input: dict[str, Any], message: str,
                                                                  tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The API needs no client of ours: what `submit` refuses, the worker refuses too (a base `*` was the refspec
    `+refs/heads/*:refs/heads/*`, force-updating every branch of the clone)."""
    url = bare_remote(tmp_path, task("A"))
    space = workspace(monkeypatch, tmp_path / "worker")
    with pytest.raises(InputError, match=message):
        await run_by_url(InMemorySaver(), ScriptedAgents({}), {"repo_url": url, **graph_input})
    assert "refs/heads/autobuild/FEAT-001" not in remote_refs(url)
    if "plan_files" not in graph_input:
        assert not (space / "clones").exists()
