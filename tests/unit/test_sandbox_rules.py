"""What the sandboxes allow, from the files alone: the agent sandbox's settings for a worktree, what the watch
counts as the user's change (and what it doesn't), and the bwrap command line."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from claude_agent_sdk import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage

from agents.request import SessionRequest
from agents.sandbox import refusals as sandbox_refusals
from agents.sandbox import settings as sandbox_settings
from agents.stream import Collector
from agents.types import AgentResult
from orchestrator import sandbox
from orchestrator.repo import sandbox_stubs, watch
from orchestrator.repo.git import EXCLUDE_LINES


def fake_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A main checkout's .git and one linked worktree of ours, laid out as git does."""
    root = tmp_path / "repo"
    common = root / ".git"
    for folder in ("refs/heads", "objects", "hooks", "info", "worktrees/A"):
        (common / folder).mkdir(parents=True)
    (common / "HEAD").write_text("ref: refs/heads/main\n")
    (common / "config").write_text("[core]\n\tbare = false\n")
    (common / "index").write_bytes(b"DIRC")
    (common / "info" / "exclude").write_text("# mine\n")
    worktree = root / ".autobuild/worktrees/FEAT-001/A"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {common / 'worktrees/A'}\n")
    (common / "worktrees/A/commondir").write_text("../..\n")
    return root, worktree


def test_the_agent_sandbox_writes_the_worktree_git_admin_and_objects_and_denies_the_users_refs(
        tmp_path: Path) -> None:
    root, worktree = fake_repo(tmp_path)
    extra = worktree.parent / "_env"
    settings = sandbox_settings(worktree, (extra,))
    assert settings["enabled"] is True and settings["allowUnsandboxedCommands"] is False
    assert settings["failIfUnavailable"] is True
    filesystem = settings["filesystem"]
    assert isinstance(filesystem, dict)
    common = (root / ".git").resolve()
    assert set(filesystem["allowWrite"]) == {str(extra), str(common / "worktrees/A"), str(common / "objects")}
    denied = set(filesystem["denyWrite"])
    assert {str(common / name) for name in ("refs", "HEAD", "index", "config", "hooks", "info")} <= denied
    assert str(common / "packed-refs") not in denied, "a missing path is not denied (it would become unreadable)"
    assert not any(path.startswith(str(common / "objects")) for path in denied)


def test_outside_a_worktree_the_agent_sandbox_only_adds_what_it_is_given(tmp_path: Path) -> None:
    settings = sandbox_settings(tmp_path, ())
    assert settings["filesystem"] == {"allowWrite": [], "denyWrite": []}


def test_sandbox_refusals_are_read_from_a_tool_result() -> None:
    content = [{"type": "text", "text": "ok\n/bin/bash: line 1: ../../README.md: Read-only file system\nrc=1"}]
    assert sandbox_refusals("Bash: printf x >> ../../README.md", content) == [
        "Bash: sandbox refused a write: /bin/bash: line 1: ../../README.md: Read-only file system"]
    assert sandbox_refusals("Bash: ls", "all fine") == []


def test_sandbox_refusals_are_read_in_any_shells_wording() -> None:
    # As the CLI printed them under zsh (CI, stop 37) and node's fs error: lower case, no "/bin/bash: line 1:".
    zsh = "Exit code 1\n/w/T-1\n(eval):1: read-only file system: /w/repo/README.md\n"
    assert sandbox_refusals("Bash", zsh) == ["Bash: sandbox refused a write: (eval):1: read-only file system: "
                                             "/w/repo/README.md"]
    node = "Error: EROFS: read-only file system, open '/w/repo/out.txt'"
    assert sandbox_refusals("Bash", node) == [f"Bash: sandbox refused a write: {node}"]


def test_the_watch_sees_the_users_config_and_hooks_but_not_our_exclude_lines(tmp_path: Path) -> None:
    root, _ = fake_repo(tmp_path)
    before = watch.snapshot(root)
    with (root / ".git/info/exclude").open("a") as exclude:
        exclude.write("\n".join(EXCLUDE_LINES) + "\n")
    assert watch.differences(before, watch.snapshot(root)) == [], "the exclude lines we own are not a change"
    (root / ".git/config").write_text("[core]\n\tbare = false\n\thooksPath = .husky/_\n")
    (root / ".git/hooks/pre-commit").write_text("#!/bin/sh\n")
    assert watch.differences(before, watch.snapshot(root)) == [
        ".git/config changed: +hooksPath = .husky/_", ".git/hooks changed"]


def test_the_watch_digests_a_venv_listing_and_skips_bytecode(tmp_path: Path) -> None:
    root, _ = fake_repo(tmp_path)
    site = root / ".venv/lib/python3.11/site-packages"
    site.mkdir(parents=True)
    (root / ".venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    (site / "__editable__.calc-1.0.pth").write_text(str(root) + "\n")
    before = watch.snapshot(root)
    (site / "__pycache__").mkdir()
    (site / "__pycache__/x.cpython-311.pyc").write_bytes(b"\0")
    assert watch.differences(before, watch.snapshot(root)) == []
    (site / "__editable__.calc-1.0.pth").write_text("/somewhere/else/entirely\n")
    assert watch.differences(before, watch.snapshot(root)) == [".venv (your virtualenv) changed"]


def test_a_worktrees_bwrap_sandbox_binds_only_the_runs_paths_writable(tmp_path: Path) -> None:
    root, worktree = fake_repo(tmp_path)
    box = sandbox.for_worktree(worktree)
    common = (root / ".git").resolve()
    feature = worktree.parent
    assert set(box.writable) == {worktree, common / "worktrees/A", common / "objects", feature / "_gate-own"}
    assert box.tmp == feature / "_gate-own/tmp"
    assert box.env["HUSKY"] == "0" and box.env["PIP_TARGET"] == str(feature / "_gate-own/env/site-packages")
    assert all(not value.startswith(str(Path.home())) for value in box.env.values()), "no cache in the user's home"
    if sandbox.available():
        argv = sandbox.wrap(["true"], worktree, box)
        assert argv[:5] == [str(sandbox.bwrap()), "--ro-bind", "/", "/", "--dev"]
        binds = {argv[i + 1] for i, arg in enumerate(argv) if arg == "--bind"}
        assert binds == {str(box.tmp), *(str(path.resolve()) for path in box.writable)}
        assert str(root / ".git/refs") not in binds


def test_only_empty_stubs_the_sandbox_left_where_nothing_was_are_removed(tmp_path: Path) -> None:
    root, _ = fake_repo(tmp_path)
    common = root / ".git"
    (common / "branches").mkdir()  # the user's own, from an older `git init`: never ours to remove
    absent = sandbox_stubs.absent_stubs(root)
    assert common / "branches" not in absent and common / "NOTES_MERGE_WORKTREE" in absent
    for folder in ("NOTES_MERGE_WORKTREE", "info/.claude-sandbox-noreplace", "remotes"):
        (common / folder).mkdir()
    (common / "config.worktree").write_text("")
    (common / "config.lock").write_text("")
    (common / "config.lock").chmod(0o444)  # the sandbox's: empty and read-only (git's own lock is writable)
    (common / "objects/info").mkdir()
    (common / "objects/info/alternates").write_text("/elsewhere/objects\n")  # content: not a stub
    (common / "remotes/origin").write_text("URL: x\n")  # not empty: not a stub
    removed = sandbox_stubs.remove_stubs(absent)
    assert sorted(Path(path).name for path in removed) == [
        ".claude-sandbox-noreplace", "NOTES_MERGE_WORKTREE", "config.lock", "config.worktree"]
    assert (common / "branches").is_dir() and (common / "remotes/origin").is_file()
    assert (common / "objects/info/alternates").read_text() == "/elsewhere/objects\n"


def test_the_shallow_watch_sees_installs_and_uninstalls_in_a_venv_and_node_modules(tmp_path: Path) -> None:
    root, _ = fake_repo(tmp_path)
    site = root / ".venv/lib/python3.12/site-packages"
    (site / "attrs").mkdir(parents=True)
    (site / "attrs/__init__.py").write_text("x = 1\n")
    (root / ".venv/bin").mkdir()
    (root / ".venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "node_modules/@scope/left-pad").mkdir(parents=True)

    def changed(step: Callable[[], object]) -> list[str]:
        before = watch.snapshot(root, deep=False)
        time.sleep(0.01)  # a folder's mtime must be able to tell
        step()
        return watch.differences(before, watch.snapshot(root, deep=False))

    assert changed((site / "attrs-24.2.dist-info").mkdir) == [".venv (your virtualenv) changed"]
    assert changed(lambda: shutil.rmtree(site / "attrs")) == [".venv (your virtualenv) changed"]
    assert changed(lambda: (root / ".venv/bin/attrs-cli").write_text("#!/bin/sh\n")) == [
        ".venv (your virtualenv) changed"]
    assert changed((root / "node_modules/@scope/right-pad").mkdir) == ["node_modules changed"]
    assert changed((site / "attrs-24.2.dist-info/__pycache__").mkdir) == [], "bytecode is no change"
    # What the shallow listing leaves out (the sandbox makes it unwritable to the run): a file rewritten in place.
    (site / "six.py").write_text("a\n")
    assert changed(lambda: (site / "six.py").write_text("b\n")) == []
    before = watch.snapshot(root)
    (site / "six.py").write_text("bb\n")
    assert watch.differences(before, watch.snapshot(root)) == [".venv (your virtualenv) changed"], "deep sees it"


def test_a_refused_write_in_a_sessions_stream_is_a_typed_refusal_and_a_denial(tmp_path: Path) -> None:
    """The graph reports what the sandbox refused from `AgentResult.sandbox_refusals`, never by matching the
    denials' text (issue 34: typed causes)."""
    request = SessionRequest(role="player", task_id="T", turn=1, cwd=tmp_path, system_prompt="", prompt="", tools=[])
    result = AgentResult(role="player", status="success")
    collector = Collector(request, result)
    collector.take(AssistantMessage(content=[ToolUseBlock(id="t1", name="Bash",
                                                          input={"command": "printf x >> ../../README.md"})],
                                    model="claude-sonnet-4-5"))
    collector.take(UserMessage(content=[ToolResultBlock(
        tool_use_id="t1", content="/bin/bash: line 1: ../../README.md: Read-only file system", is_error=True)]))
    assert result.sandbox_refusals == [
        "Bash: sandbox refused a write: /bin/bash: line 1: ../../README.md: Read-only file system"]
    assert result.permission_denials == result.sandbox_refusals


def test_the_gates_tmp_and_build_caches_are_out_of_the_agents_reach(tmp_path: Path) -> None:
    """An agent writes the run's environment and its own caches (`_env`, `_sandbox`): a cargo config, a Go build
    cache entry, a jest transform, a module edited in Go's module cache or a wheel in pip's cache it planted there
    would steer the gate's run, so every cache of the gate is its own, download caches included; the agents'
    Go reads what setup downloaded through a proxy folder, verified as any download."""
    _, worktree = fake_repo(tmp_path)
    box, feature = sandbox.for_worktree(worktree), worktree.parent
    agents = (feature / sandbox.ENV_FOLDER, feature / sandbox.SANDBOX_FOLDER)
    caches = ("CARGO_HOME", "GOCACHE", "XDG_CACHE_HOME", "PIP_CACHE_DIR", "npm_config_cache", "YARN_CACHE_FOLDER",
              "PNPM_HOME", "GOMODCACHE")
    own = {name: Path(box.env[name]) for name in caches}
    assert all(path.is_relative_to(feature / sandbox.GATE_FOLDER) for path in own.values()), own
    assert not any(box.tmp.is_relative_to(folder) for folder in agents)
    assert not any(path.is_relative_to(folder) for path in box.writable for folder in agents), box.writable
    assert not any(Path(box.env["PIP_TARGET"]).is_relative_to(folder) for folder in agents), "setup's installs"
    agent = sandbox.agent_env(worktree)
    assert agent["GOPROXY"].startswith(f"file://{own['GOMODCACHE'] / 'cache' / 'download'},")
    assert Path(agent["GOMODCACHE"]).is_relative_to(agents[1])


def test_setup_writes_the_gates_environment_and_a_gate_run_only_reads_it(tmp_path: Path) -> None:
    """What the code under test planted in the gate's venv in one run (a `.pth` line, a `sitecustomize.py`) would
    be imported by every later run, the clean room's included: only setup installs there."""
    _, worktree = fake_repo(tmp_path)
    setup, feature = sandbox.for_worktree(worktree), worktree.parent
    gate_env = feature / sandbox.GATE_FOLDER / sandbox.GATE_ENV
    run = setup.with_writable(tmp_path / "scratch").for_run()
    assert run.read_only == (gate_env,) and not setup.read_only
    assert run.writable[-1] == tmp_path / "scratch" and run.env == setup.env, "the rest is the same sandbox"
    if not sandbox.available():
        return
    argv = sandbox.wrap(["true"], worktree, run)
    bind = argv.index(str((feature / sandbox.GATE_FOLDER).resolve()))
    assert argv[argv.index(str(gate_env.resolve())) - 1] == "--ro-bind" and argv.index(str(gate_env.resolve())) > bind
    plant = f"printf x > {gate_env}/zz.pth; printf x > {feature / sandbox.GATE_FOLDER}/cache-entry"
    planted = subprocess.run(sandbox.wrap(["bash", "-c", plant], worktree, run), capture_output=True, text=True,
                             check=False)
    assert "read-only file system" in planted.stderr.lower() and not (gate_env / "zz.pth").exists()
    assert (feature / sandbox.GATE_FOLDER / "cache-entry").exists(), "the gate's caches stay writable"
    subprocess.run(sandbox.wrap(["bash", "-c", plant], worktree, setup), check=True)
    assert (gate_env / "zz.pth").exists(), "setup installs there"
