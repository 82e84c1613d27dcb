"""The run's layered virtualenvs are written only where they are (gate/prepare/pyenv.py): a link an agent plants in
its own layer (`_env/venv -> ~/repo/.venv`) is removed, never written through, so the user's venv stays as it was;
and tasks building a layer at the same moment all succeed (three attempts of one task once stopped on
`FileExistsError` from `bin/python`). Real files and threads, no subprocess."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from pathlib import Path

from orchestrator.gate.prepare.environment import gate_env_dir, run_env_dir, session_env
from orchestrator.gate.prepare.pyenv import Editable, layered_venv, overlay

VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"


def user_venv(root: Path) -> Path:
    """A venv as `python -m venv` leaves it: pyvenv.cfg, bin/python (a link), an empty site-packages."""
    venv = root / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib" / VERSION / "site-packages").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\nversion = 3\nexecutable = x\n")
    return venv


def digest(folder: Path) -> str:
    """Every entry under `folder` with its link target or contents: what "unchanged" means."""
    lines = []
    for path in sorted(folder.rglob("*")):
        kind = f"-> {os.readlink(path)}" if path.is_symlink() else ("dir" if path.is_dir() else path.read_bytes())
        lines.append(f"{path.relative_to(folder)} {kind!r}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def test_a_link_planted_in_the_agents_layer_is_removed_and_the_users_venv_is_untouched(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    venv = user_venv(root)
    worktree = root / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    worktree.mkdir(parents=True)
    session_env(root, worktree)
    before = digest(venv)
    layer = run_env_dir(root, "FEAT-001") / "venv"
    for planted in (layer, layer / "bin", layer / "lib" / VERSION / "site-packages"):
        (layer / "pyvenv.cfg").unlink(missing_ok=True)  # the marker gone too: the layer is written again
        target = venv / planted.relative_to(layer)
        if planted.is_dir() and not planted.is_symlink():
            for path in sorted(planted.rglob("*"), reverse=True):
                path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
            planted.rmdir()
        planted.symlink_to(target)
        env = session_env(root, worktree)
        assert digest(venv) == before, f"a link at {planted.relative_to(root)} wrote through into the user's venv"
        assert not planted.is_symlink() and (layer / "pyvenv.cfg").is_file(), "the layer was made again, its own"
        assert env["VIRTUAL_ENV"] == str(layer)


def test_a_link_planted_at_the_agents_overlay_folder_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    worktree = root / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    (worktree / "calc").mkdir(parents=True)
    users = tmp_path / "users-folder"
    (users / "TASK-001").mkdir(parents=True)
    (users / "TASK-001" / "keep.txt").write_text("mine\n")
    folder = run_env_dir(root, "FEAT-001") / "overlay"
    folder.parent.mkdir(parents=True)
    folder.symlink_to(users)
    finder = Editable("__editable___calc_finder.py", "finder", root / "calc", "calc")
    entries = overlay(root, worktree, [finder], folder / "TASK-001")
    assert (users / "TASK-001" / "keep.txt").read_text() == "mine\n" and len(list(users.rglob("*"))) == 2
    assert not folder.is_symlink() and os.readlink(folder / "TASK-001" / "calc") == str(worktree / "calc")
    assert entries == [str(folder / "TASK-001")]


def test_tasks_building_one_layer_at_once_all_succeed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    venv = user_venv(root)
    for round_ in range(24):  # the old code failed about one round in four
        folder = gate_env_dir(root, f"FEAT-{round_:03d}") / "venv"
        start = threading.Barrier(6)
        failures: list[BaseException] = []

        def build(folder: Path = folder, start: threading.Barrier = start,
                  failures: list[BaseException] = failures) -> None:
            start.wait()
            try:
                layered_venv(venv, folder, root)
            except BaseException as exc:  # noqa: BLE001 - collected and asserted on below
                failures.append(exc)

        threads = [threading.Thread(target=build) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures, failures
        assert (folder / "bin" / "python").resolve() == Path(sys.executable).resolve()
        assert not [p.name for p in folder.rglob(".*.tmp")], "no temporary link or file is left"


def test_a_checkout_reached_through_a_link_gets_its_layers(tmp_path: Path) -> None:
    """The repository's own path may be a link (`~/proj -> /data/proj`): only the run's folders below it must not be."""
    real = tmp_path / "real"
    user_venv(real)
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    root = tmp_path / "linked"
    worktree = root / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    worktree.mkdir(parents=True)
    env = session_env(root, worktree)
    assert env["VIRTUAL_ENV"] == str(run_env_dir(root, "FEAT-001") / "venv")
    assert (real / ".autobuild" / "worktrees" / "FEAT-001" / "_env" / "venv" / "pyvenv.cfg").is_file()
