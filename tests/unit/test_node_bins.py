"""A worktree's commands find the main checkout's `node_modules/.bin` tools the way npm's runner does by walking
up: yarn v1's and pnpm's runners look only in the package's own `.bin`, which a worktree has none of, so a yarn
project's `yarn test` said `jest: not found` while `validate` said no setup was needed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from orchestrator.gate import choose_gate, gate_document, gate_lines
from orchestrator.gate.prepare.environment import gate_env


def tool(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("#!/bin/sh\nexit 0\n")
    (folder / name).chmod(0o755)
    return folder / name


def test_a_worktree_finds_the_main_checkouts_tools_nearest_package_first(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    worktree = root / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    (worktree / "packages" / "b").mkdir(parents=True)
    jest = tool(root / "node_modules" / ".bin", "jest")
    own = tool(root / "packages" / "b" / "node_modules" / ".bin", "jest")
    tool(root / "node_modules" / ".bin", "tsc")
    path = gate_env(root, worktree, package="packages/b")["PATH"]
    assert shutil.which("jest", path=path) == str(own)  # the package's own, as its runner would pick
    assert shutil.which("tsc", path=path) == str(root / "node_modules" / ".bin" / "tsc")
    assert shutil.which("jest", path=gate_env(root, worktree)["PATH"]) == str(jest)
    # The main checkout's own runs find them on their own: nothing added there.
    assert str(root / "node_modules" / ".bin") not in gate_env(root, root)["PATH"].split(":")


def test_validate_says_what_a_worktree_takes_from_the_main_checkout(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "package.json").write_text(json.dumps({"scripts": {"test": "jest"}, "devDependencies": {"jest": "30"}}))
    (root / "yarn.lock").write_text("# yarn lockfile v1\n")
    tool(root / "node_modules" / ".bin", "jest")
    gate = choose_gate(root, None, None)
    document = gate_document(root, gate, None, None)
    text = "\n".join(gate_lines(document, gate.describe()))
    assert document["setup"] is None and "none needed" not in text, text
    assert "worktree setup: none: the main checkout's node_modules, read-only" in text
