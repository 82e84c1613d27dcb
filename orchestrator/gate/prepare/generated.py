"""Files the user's install generated into the source tree that the build configuration names (hatch-vcs's
`version-file`, setuptools-scm's `write_to`/`version_file`, versioningit's and pdm-backend's), git-ignored so every
worktree lacks them: a src layout whose package imports its `_version.py` fails every test module's import without
it. Such a file is copied from the main checkout into a new worktree; no other ignored file is ever copied (never
`.env`, keys or anything the configuration doesn't name as a version file)."""

from __future__ import annotations

import ast
import asyncio
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from orchestrator.errors import InputError
from orchestrator.repo import confined
from orchestrator.repo.git import GitRepo

_LIMIT = 64 * 1024
_KINDS = (".py", ".pyi", ".txt", ".json")
"""What a version file is written as; anything else named there is not copied."""


def _table(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        found = data.get(key)
        data = found if isinstance(found, dict) else {}
    return data


def _pyproject(root: Path) -> list[str]:
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    pdm = _table(data, "tool", "pdm", "version")
    names = [_table(data, "tool", "hatch", "build", "hooks", "vcs").get("version-file"),
             _table(data, "tool", "setuptools_scm").get("write_to"),
             _table(data, "tool", "setuptools_scm").get("version_file"),
             _table(data, "tool", "versioningit", "write").get("file"),
             pdm.get("write_to") if pdm.get("source") == "scm" else None]
    found = [str(name) for name in names if isinstance(name, str)]
    if isinstance(pdm.get("write_to"), str) and pdm.get("source") == "scm":  # pdm-backend: relative to the package
        found.append(f"src/{pdm['write_to']}")  # folder, which is src/ in a src layout
    return found


def _setup_py(root: Path) -> list[str]:
    """`setup(use_scm_version={"write_to": ...})` in setup.py, read without running it."""
    try:
        tree = ast.parse((root / "setup.py").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "use_scm_version" and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if (isinstance(key, ast.Constant) and key.value in ("write_to", "version_file")
                        and isinstance(value, ast.Constant) and isinstance(value.value, str)):
                    found.append(value.value)
    return found


def named_generated(root: Path) -> list[str]:
    """The generated files the repo's build configuration names, relative to its top (only plain relative paths
    to a file of a version file's kind, no dotfile)."""
    names = []
    for name in dict.fromkeys([*_pyproject(root), *_setup_py(root)]):
        path = PurePosixPath(name)
        if (not path.is_absolute() and ".." not in path.parts and path.suffix in _KINDS
                and not any(part.startswith(".") for part in path.parts)):
            names.append(str(path))
    return names


async def copy_generated(repo: GitRepo, worktree: Path) -> list[str]:
    """Copy into `worktree` the generated files the build configuration names that the main checkout has, git
    ignores and the worktree lacks; the paths copied."""
    copied = []
    for name in await asyncio.to_thread(named_generated, repo.root):
        if await asyncio.to_thread((worktree / name).exists):
            continue
        ignored = await repo.git("check-ignore", "-q", name, cwd=repo.root, check=False)
        if not ignored.ok:
            continue  # tracked (the worktree has it) or not ignored: not what an install generated
        try:
            data = await asyncio.to_thread(confined.read_under, repo.root, name, "a generated file", limit=_LIMIT)
            if len(data) > _LIMIT:
                continue
            await asyncio.to_thread(confined.write_under, worktree, name, data, "a generated file")
        except (InputError, OSError):
            continue  # absent, a link out of the checkout, or a folder: nothing copied
        copied.append(name)
    return copied
