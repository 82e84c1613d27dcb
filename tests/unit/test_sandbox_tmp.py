"""A sandboxed command sees of the host's /tmp only the entries it can need: each is a mount, and a busy /tmp made
every gate run slow to start. What it names (its folder, repo, command line, PATH's venvs and their base Python)
stays visible; anything else is absent; nothing is shown read-only over what the sandbox makes writable."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator import sandbox, sandbox_tmp


@pytest.fixture
def host_tmp() -> Iterator[Path]:
    """A top-level entry of the host's /tmp of this test's own (tmp_path lives in pytest's one entry)."""
    entry = Path("/tmp") / f"autobuild-test-{uuid.uuid4().hex[:8]}"
    entry.mkdir()
    yield entry
    shutil.rmtree(entry)


def _venv(where: Path, home: Path = Path("/usr/bin")) -> Path:
    (where / "bin").mkdir(parents=True)
    (where / "pyvenv.cfg").write_text(f"home = {home}\ninclude-system-site-packages = false\n")
    return where


def test_an_entry_nothing_names_is_not_shown(tmp_path: Path, host_tmp: Path) -> None:
    shown = sandbox_tmp.shown(tmp_path, (), {"PATH": "/usr/bin:/bin", "HOME": "/root"}, ["bash", "-c", "true"])
    assert host_tmp not in shown
    assert all(path.exists() for path in shown)


def test_a_venv_on_path_its_base_python_and_a_named_file_are_shown(tmp_path: Path, host_tmp: Path) -> None:
    base = host_tmp / "python"  # a venv's base interpreter under /tmp: its `python` links there
    base.mkdir()
    venv = _venv(host_tmp / "venv", home=base / "bin")
    assert sandbox_tmp.shown(tmp_path, (), {"PATH": f"{venv}/bin:/usr/bin"}, ["true"]).count(host_tmp) == 1
    other = _venv(tmp_path / "venv", home=base / "bin")  # only the home names host_tmp
    assert host_tmp in sandbox_tmp.shown(Path("/"), (), {"PATH": f"{other}/bin"}, ["true"])
    assert host_tmp in sandbox_tmp.shown(Path("/"), (), {}, ["bash", "-c", f"cat {host_tmp}/data.txt"])
    link = tmp_path / "tools"  # a PATH entry that is a link into the entry
    link.symlink_to(host_tmp)
    assert host_tmp in sandbox_tmp.shown(Path("/"), (), {"PATH": str(link)}, ["true"])


def test_writable_paths_and_the_private_tmpdir_are_never_shown_read_only(host_tmp: Path) -> None:
    env = {"TMPDIR": sandbox.OWN_TMPDIR, "REPORTS": str(host_tmp)}
    shown = sandbox_tmp.shown(Path("/"), (), env, ["true"], hidden=(Path(sandbox.OWN_TMPDIR), host_tmp))
    assert host_tmp not in shown and Path(sandbox.OWN_TMPDIR) not in shown


def test_a_repo_inside_a_shown_entry_is_not_bound_twice(tmp_path: Path, host_tmp: Path) -> None:
    repo = host_tmp / "repo"
    repo.mkdir()
    assert sandbox_tmp.shown(repo, (repo,), {}, ["true"]).count(host_tmp) == 1
    assert repo not in sandbox_tmp.shown(repo, (repo,), {}, ["true"])


@pytest.mark.skipif(not sandbox.available(), reason="bwrap can't start a sandbox here")
def test_inside_the_sandbox_the_needed_entry_is_there_and_the_other_is_not(tmp_path: Path, host_tmp: Path) -> None:
    venv = _venv(host_tmp / "venv")
    (venv / "bin/tool").write_text("#!/bin/sh\necho tool ran\n")
    (venv / "bin/tool").chmod(0o755)
    unneeded = Path("/tmp") / f"autobuild-test-{uuid.uuid4().hex[:8]}"
    unneeded.mkdir()
    try:
        work = tmp_path / "work"
        box = sandbox.Sandbox(writable=(work,), tmp=tmp_path / "private-tmp")
        env = {"PATH": f"{venv}/bin:/usr/bin:/bin"}
        argv = sandbox.wrap(["sh", "-c", "tool && ls -a /tmp"], work, box, env)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    finally:
        unneeded.rmdir()
    assert done.returncode == 0, done.stderr
    listed = done.stdout.split()
    assert listed[:2] == ["tool", "ran"] and host_tmp.name in listed and unneeded.name not in listed


@pytest.mark.skipif(not sandbox.available(), reason="bwrap can't start a sandbox here")
@pytest.mark.parametrize("named", ["/tmp/../etc/hostname", "/tmp/./x"])
def test_a_dot_entry_named_never_covers_the_private_tmp(tmp_path: Path, named: str) -> None:
    """bwrap binds `/tmp/..` onto the sandbox's `/tmp/..`: its root, the host's mounted read-only over the private
    tmp (and `/tmp/.` the host's /tmp over it)."""
    assert not {Path("/tmp/.."), Path("/tmp/.")} & set(sandbox_tmp.shown(Path("/"), (), {}, ["cat", named]))
    work = tmp_path / "work"
    box = sandbox.Sandbox(writable=(work,), tmp=tmp_path / "private-tmp")
    env = {"PATH": "/usr/bin:/bin"}
    argv = sandbox.wrap(["sh", "-c", f": {named}; echo kept > /tmp/mine && cat /tmp/mine"], work, box, env)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "kept\n"), done.stderr
    assert (tmp_path / "private-tmp" / "mine").read_text() == "kept\n"
