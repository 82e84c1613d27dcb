"""A served run that refuses its input is readable: its final value (and so the thread's state) carries
`refused`, one line saying why, where an InputError raised left the thread without a value (the engine's HTTP
500). Hostile inputs from the issue's list, in process; nothing is written outside the worker's clone."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents
from orchestrator.errors import InputError
from orchestrator.graph.by_url import check_served
from orchestrator.graph.workflow import build_feature_workflow
from orchestrator.settings import RunOptions
from tests.conftest import git
from tests.graph.harness import stream_run, task
from tests.graph.test_by_url import bare_remote, workspace

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(20))


async def _served(graph_input: Any, **options: Any) -> dict[str, Any]:
    graph = build_feature_workflow(InMemorySaver(), served=True)
    config: Any = {"configurable": {"thread_id": "hostile"}}
    context = RunOptions(agents=ScriptedAgents({}), **{"interactive": False, **options})
    run = await stream_run(graph, graph_input, config, context)
    values = run.state.values
    assert isinstance(values, dict), "the thread has a value to read"
    return values


@pytest.mark.parametrize(("graph_input", "options", "message"), [
    ({"repo": "/", "target": "FEAT-001"}, {}, "not a git repository"),
    ({"repo": "relative/path", "target": "FEAT-001"}, {}, "must be an absolute path"),
    ({"repo_url": 5, "target": "FEAT-001"}, {}, "repo_url must be a string"),
    ({"repo_url": "{url}", "repo": "/tmp", "target": "FEAT-001"}, {}, "both repo and repo_url"),
    ({"repo_url": "{url}", "target": "FEAT-001", "extra": 1}, {}, "unknown input key"),
    ({"repo_url": "{url}", "target": "FEAT-001"}, {"parallel": 100000}, "--parallel must be between 1 and 64"),
    ({"repo_url": "{url}", "target": "FEAT-001", "plan_files": {".git/hooks/post-checkout": "#!/bin/sh\n"}}, {},
     "inside the repository's .git"),
    ({"repo_url": "{url}", "target": "FEAT-001", "plan_files": {"big.md": "x" * 6_000_000}}, {}, "byte limit"),
    ({"repo_url": "{url}", "plan_yaml": BOMB}, {}, "too large to be a plan"),
    ({"repo_url": "{url}", "plan_yaml": "x" * 5_000_000}, {}, "byte limit"),
    ({"repo_url": "{url}", "target": "../../etc"}, {}, "invalid target id"),
    ({"repo_url": "{url}", "base": "*", "target": "FEAT-001"}, {}, "not a valid branch name"),
])
async def test_a_refused_served_run_says_why_in_its_state(graph_input: dict[str, Any], options: dict[str, Any],
                                                          message: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    url = bare_remote(tmp_path, task("A"))
    workspace(monkeypatch, tmp_path / "worker")
    hostile = {key: value.replace("{url}", url) if isinstance(value, str) else value
               for key, value in graph_input.items()}
    values = await _served(hostile, **options)
    assert values["results"] == {} and message in values["refused"], values
    assert "\n" not in values["refused"]
    for clone in (tmp_path / "worker" / "clones").glob("*"):
        assert sorted(os.listdir(clone / ".git" / "hooks")) == sorted(
            name for name in os.listdir(clone / ".git" / "hooks") if name.endswith(".sample"))


async def test_a_symlink_in_the_repository_cannot_carry_plan_files_out(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's finding: a repository committing `docs -> <folder>` and plan_files `docs/pwned.md`."""
    outside = tmp_path / "outside"
    outside.mkdir()
    url = bare_remote(tmp_path, task("A"), links={"docs": str(outside)})
    workspace(monkeypatch, tmp_path / "worker")
    values = await _served({"repo_url": url, "target": "FEAT-001", "plan_files": {"docs/pwned.md": "pwned"}})
    assert "resolves outside the repository" in values["refused"]
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(("plan_path", "message"), [("/etc/passwd", "resolves outside the repo"),
                                                    ("link.yaml", "resolves outside the repo")])
async def test_a_served_plan_path_may_not_lead_out_of_the_repo(plan_path: str, message: str, tmp_path: Path) -> None:
    """A plan path symlinked to a secret must not be read into a thread's state."""
    repo = make_sample_repo(tmp_path / "repo", venv=False)
    (tmp_path / "secret").write_text("id: SECRET\n")
    (repo / "link.yaml").symlink_to(tmp_path / "secret")
    values = await _served({"repo": str(repo), "plan": plan_path})
    assert message in values["refused"] and "SECRET" not in str(values)


@pytest.mark.parametrize("where", ["outside", "linked", "the serve dir itself"])
async def test_a_served_repo_outside_the_serve_dir_is_refused_before_git_runs_in_it(
        where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker beyond loopback names its serve dir (ORCHESTRATOR_SERVED_REPOS_UNDER): a `repo` worked in place lies
    below it, symlinks followed."""
    serve = tmp_path / "serve"
    serve.mkdir()
    repo = make_sample_repo(tmp_path / "elsewhere", plan={"id": "FEAT-001", "name": "F", "tasks": [task("A")]},
                            venv=False)
    (serve / "linked").symlink_to(repo, target_is_directory=True)
    monkeypatch.setenv("ORCHESTRATOR_SERVED_REPOS_UNDER", str(serve))
    named = {"outside": repo, "linked": serve / "linked", "the serve dir itself": serve}[where]
    branches = git(repo, "for-each-ref", "--format=%(refname)")
    values = await _served({"repo": str(named), "target": "FEAT-001"})
    assert values["results"] == {} and "the only folder this server works on in place" in values["refused"], values
    assert "\n" not in values["refused"]
    assert not (repo / ".autobuild" / "runs").exists() and git(repo, "for-each-ref", "--format=%(refname)") == branches


async def test_a_served_repo_below_the_serve_dir_passes_that_check(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    serve = tmp_path / "serve"
    repo = make_sample_repo(serve / "repos" / "project", venv=False)
    monkeypatch.setenv("ORCHESTRATOR_SERVED_REPOS_UNDER", str(serve))
    check_served({"repo": str(repo), "target": "FEAT-001"}, RunOptions())  # the plan is checked later, by the run
    with pytest.raises(InputError, match="invalid target id"):
        check_served({"repo": str(repo), "target": "../../etc"}, RunOptions())


async def test_a_url_with_a_branch_named_autobuild_is_refused_before_any_work(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every push of autobuild/… to it would fail (`refs/heads/autobuild` exists): the first one used to be a git
    error after a task's work, with no value in the thread."""
    url = bare_remote(tmp_path, task("A"))
    git(Path(url.removeprefix("file://")), "branch", "autobuild", "main")
    workspace(monkeypatch, tmp_path / "worker")
    values = await _served({"repo_url": url, "target": "FEAT-001"})
    assert values["results"] == {} and "has a branch named `autobuild`" in values["refused"], values
    assert "autobuild/FEAT-001" not in git(Path(url.removeprefix("file://")), "branch")
