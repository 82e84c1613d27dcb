"""`autobuild pr` on repos left by real (in-process) runs, against a fake forge on 127.0.0.1 (git's smart HTTP) and a
`gh` stand-in on PATH: refused as `land` refuses with nothing pushed; else only the feature branch is pushed (no
ref of the user's moves, not even a remote-tracking one) and the pull request is opened with the feature report,
the receipts and the base tests the coach accepted changing; without `gh`, the page to open it answers and the
body is in a file. Our reports are never committed: not on the pushed branch, not in what `land` lands."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from tests.forge import FakeForge
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_by_url import run_by_url
from tests.graph.test_landing import CHEAP_FILES, Repo, finished_runs, valid
from tests.graph.test_safety import lock_holder


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The finished runs `land`'s tests use (A and C approved; A approved and B failed, its test failing the
    gate), built once per session. What `pr` proves needs a gate that passes and fails as the tests do, not
    pytest's ids: the cheap one, as the templates run about sixteen gates."""
    return finished_runs(tmp_path_factory, "pr", CHEAP_FILES)


@pytest.fixture
def done(templates: dict[str, Path], tmp_path: Path) -> Repo:
    return Repo(templates["done"], tmp_path / "done")


@pytest.fixture
def partial(templates: dict[str, Path], tmp_path: Path) -> Repo:
    return Repo(templates["partial"], tmp_path / "partial")


def fake_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `gh` first on PATH that records its argv (one per line) and a copy of the body it was given."""
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "gh-argv"
    script = folder / "gh"
    script.write_text(f"#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > {log}\n"
                      "echo 'Creating pull request for autobuild/FEAT-001 into main'\n"
                      "echo https://forge.invalid/team/calc/pull/12\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def without_gh(monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH without any folder that holds a `gh`."""
    kept = [d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "gh").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))


@pytest.fixture
def forge(tmp_path: Path) -> Iterator[FakeForge]:
    (tmp_path / "forge").mkdir()
    with FakeForge(tmp_path / "forge") as server:
        yield server


def with_origin(repo: Repo, forge: FakeForge) -> str:
    url = forge.repository("calc", repo.root, "main")
    repo.git("remote", "add", "origin", url)
    return url


def accepted_change(repo: Repo, task_id: str) -> None:
    """What the coach's `record_decision` with `test_changes_accepted` leaves in the task's trace."""
    trace = repo.root / ".autobuild/runs/FEAT-001" / task_id / "trace.jsonl"
    event = {"event": "coach_decision", "task": task_id, "decision": {"decision": "approve", "test_changes_accepted": [
        {"test": "tests/test_add.py::test_add", "reason": "REQ-2 changes what add returns for negatives"}]}}
    with trace.open("a") as out:
        out.write(json.dumps(event) + "\n")


def test_pr_pushes_only_the_feature_branch_and_opens_the_pull_request_with_gh(
        done: Repo, forge: FakeForge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    with_origin(done, forge)
    log = fake_gh(tmp_path, monkeypatch)
    accepted_change(done, "A")
    before = done.user_view()
    feature = done.sha("autobuild/FEAT-001")
    code, out, err = done.cli(capsys, "pr", "FEAT-001", "--json")
    assert code == 0, err
    document = valid(out, "pr")
    assert document["pushed"] and document["opened"] and document["remote"] == "origin"
    assert document["pull_request_url"] == "https://forge.invalid/team/calc/pull/12"
    assert document["tasks_proposed"] == ["A", "C"] and document["tasks_left_out"] == {}
    assert forge.refs("calc") == {"refs/heads/main": done.sha("main"), "refs/heads/autobuild/FEAT-001": feature}
    assert done.user_view() == before, "no ref, file or remote-tracking ref of the user's moved"
    argv = log.read_text().splitlines()
    assert argv[:6] == ["pr", "create", "--head", "autobuild/FEAT-001", "--base", "main"]
    assert argv[argv.index("--title") + 1] == "FEAT-001 — Feature"
    body = Path(argv[argv.index("--body-file") + 1]).read_text()
    assert body.startswith("Built by AutoBuild: 2 approved task(s) (A, C)")
    assert "| A | `tests/test_add.py::test_add` | REQ-2 changes what add returns for negatives |" in body
    assert "# AUTO-RUN: FEAT-001" in body and "**Receipt:** approved attempt $" in body
    assert body.count("```mermaid") == 2, "the plan and the timeline, which the forge draws"
    pushed = done.git("log", "--format=", "--name-only", "main..autobuild/FEAT-001").split()
    assert pushed and not [name for name in pushed if name.startswith(".autobuild/")], "no report is proposed"


def test_pr_without_gh_prints_the_page_to_open_and_writes_the_body(
        done: Repo, forge: FakeForge, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    url = with_origin(done, forge)
    without_gh(monkeypatch)
    code, out, err = done.cli(capsys, "pr", "FEAT-001")
    assert code == 0, err
    page = url.removesuffix(".git") + "/compare/main...autobuild/FEAT-001?expand=1"
    assert f"no pull request opened (`gh` is not on PATH): open it at {page}" in out
    body = done.root / ".autobuild/runs/FEAT-001/PULL-REQUEST.md"
    assert f"is in {body}" in out and "None: no approval recorded a change" in body.read_text()
    with urllib.request.urlopen(page, timeout=30) as answer:  # the forge has the branch: the page opens
        assert answer.status == 200 and b"autobuild/FEAT-001 into main" in answer.read()


def test_pr_again_names_the_pull_request_already_open(done: Repo, forge: FakeForge, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with_origin(done, forge)
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "gh").write_text("#!/bin/sh\necho 'a pull request for branch \"autobuild/FEAT-001\" into branch"
                               " \"main\" already exists:' >&2\necho https://forge.invalid/team/calc/pull/12 >&2\n"
                               "exit 1\n")
    (folder / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    code, out, err = done.cli(capsys, "pr", "FEAT-001")
    assert code == 0, err
    assert ("pull request: https://forge.invalid/team/calc/pull/12 (a pull request from this branch is already"
            " open: it now shows the pushed commits)") in out


def test_pr_is_refused_as_land_is_and_pushes_nothing(partial: Repo, forge: FakeForge, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with_origin(partial, forge)
    log = fake_gh(tmp_path, monkeypatch)
    code, _, err = partial.cli(capsys, "pr", "FEAT-001")
    assert code == 2 and "not every task is approved (B failed)" in err and "--partial" in err
    assert "Nothing was pushed." in err and "Traceback" not in err
    holder = lock_holder(partial.root)
    try:
        code, _, err = partial.cli(capsys, "pr", "FEAT-001", "--partial")
        assert code == 2 and f"already being run by pid {holder.pid}" in err
    finally:
        holder.kill()
        holder.wait()
    tip = partial.sha("autobuild/FEAT-001")
    mine = partial.git("commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m", "an edit of my own").strip()
    partial.git("update-ref", "refs/heads/autobuild/FEAT-001", mine, tip)
    code, _, err = partial.cli(capsys, "pr", "FEAT-001", "--partial")
    assert code == 2 and "commits no task's approval covers" in err
    assert set(forge.refs("calc")) == {"refs/heads/main"} and not log.exists(), "nothing pushed, nothing opened"


def test_pr_without_a_remote_says_how_to_add_one(done: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = done.cli(capsys, "pr", "FEAT-001", "--json")
    error = valid(out, "error")
    assert code == 2 and "has no remote to push to: add one (`git remote add origin URL`)" in error["error"]
    assert not (done.root / ".autobuild/runs/FEAT-001/PULL-REQUEST.md").exists(), "nothing written"


def test_pr_partial_proposes_the_approved_tasks_and_names_the_rest(
        partial: Repo, forge: FakeForge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    with_origin(partial, forge)
    log = fake_gh(tmp_path, monkeypatch)
    (partial.root / "calc/add.py").write_text("# edited, not committed\n")  # land refuses this; pr lands nothing
    code, out, err = partial.cli(capsys, "pr", "FEAT-001", "--partial")
    assert code == 0, err
    assert "left out (not approved): B (failed)" in out
    body = Path(log.read_text().splitlines()[-1]).read_text()
    assert "**Left out (not approved):**\n- B: failed" in body
    assert "refs/heads/autobuild/FEAT-001" in forge.refs("calc")


def test_land_puts_no_report_commit_on_the_users_branch(done: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = done.cli(capsys, "land", "FEAT-001")
    assert code == 0, err
    landed = done.git("log", "--format=%s", "main").splitlines()
    assert not [subject for subject in landed if "AUTO-RUN" in subject], landed
    touched = done.git("log", "--format=", "--name-only", "main").split()
    assert not [name for name in touched if name.startswith(".autobuild/runs/")]
    assert (done.root / ".autobuild/runs/FEAT-001/A/AUTO-RUN.md").is_file(), "the report stays in the run's folder"


async def test_a_run_by_url_over_http_proposes_through_the_same_path(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The served `--pr`: the worker clones and pushes over HTTP, the reports go to their own branch, and `gh`
    gets the same body `autobuild pr` writes (repo/forge.py, views/pr_body.py)."""
    source = make_sample_repo(tmp_path / "work", files=CALC_FILES, plan=plan(task("A"), task("B"), verify=None),
                              venv=False)
    git(source, "add", ".autobuild")
    git(source, "-c", "user.name=Me", "-c", "user.email=me@localhost", "commit", "-qm", "plan FEAT-001")
    log = fake_gh(tmp_path, monkeypatch)
    monkeypatch.setenv("ORCHESTRATOR_WORKSPACE", str(tmp_path / "worker"))
    agents = ScriptedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}), ("player", "B"): Turn(),
                             "coach": approve()})
    (tmp_path / "forge").mkdir()
    with FakeForge(tmp_path / "forge") as forge:
        url = forge.repository("calc", source, "main")
        run = await run_by_url(InMemorySaver(), agents, {"repo_url": url, "target": "FEAT-001"}, pr=True,
                               max_turns=1)
        refs = forge.refs("calc")
    assert run.status("A") == "approved-unverified" and run.status("B") == "failed"
    assert set(refs) == {"refs/heads/main", "refs/heads/autobuild/FEAT-001", "refs/heads/autobuild/FEAT-001.A",
                         "refs/heads/autobuild/FEAT-001.B", "refs/heads/autobuild/FEAT-001.AUTO-RUN.md"}
    argv = log.read_text().splitlines()
    assert argv[:6] == ["pr", "create", "--head", "autobuild/FEAT-001", "--base", "main"]
    body = Path(argv[argv.index("--body-file") + 1]).read_text()
    assert body.startswith("Built by AutoBuild: 1 approved task(s) (A)") and "- B: failed" in body
    assert "# AUTO-RUN: FEAT-001" in body and "## Base tests changed, with the coach's reasons" in body
    assert any(method == "POST" and path.endswith("/git-receive-pack") for method, path in forge.requests)
