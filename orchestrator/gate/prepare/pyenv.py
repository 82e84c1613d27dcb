"""Where the repo's Python environment reaches into the main checkout (editable installs and path entries), and
the run's own virtualenv layered over it, so the gate and the agents import the worktree's code, not the user's.

Measured with pip 26 / setuptools 84 (and 65): `pip install -e` of a src-layout package writes a plain path line
(`__editable__.calc-0.1.pth`: `/repo/pkg/src`), as do `editable_mode=compat`, `setup.py develop` (`easy-install.pth`
+ `calc.egg-link`), hatch and pdm; a layout setuptools can't express as a path (a `package-dir` mapping) gets a
meta-path finder (`__editable___mathx_0_1_finder.py`, `MAPPING = {'mathx': '/repo/weird/lib/mathx'}`) that
`install()` APPENDS to `sys.meta_path`, after the PathFinder (as hatchling's exact mode, `_editable_impl_*.py`,
does with `map_module`). So a PYTHONPATH entry wins over both: the worktree's
copy of a path entry, and a folder of symlinks to the worktree's copies of a finder's packages. (Strict mode's link
tree under `build/` is not redirected.)"""

from __future__ import annotations

import ast
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

_MAP_MODULE = re.compile(r"map_module\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"]([^'\"]+)['\"]")


@dataclass(frozen=True)
class Editable:
    """One entry of the repo's environment that points into the main checkout."""

    source: str
    """The file in site-packages that says so (`__editable__.calc-0.1.pth`, `calc.egg-link`, a finder module)."""
    kind: Literal["path", "finder"]
    target: Path
    """Path entries: the folder put on sys.path. Finders: the package folder (or module file) mapped."""
    module: str | None = None
    """Finders: the top-level name the finder maps to `target`."""

    def relative(self, root: Path) -> Path:
        return self.target.relative_to(root)


def site_packages(venv: Path) -> Path | None:
    found = sorted((venv / "lib").glob("python*/site-packages"))
    return found[0] if found else None


def _inside(path: Path, root: Path, venv: Path) -> bool:
    """In the main checkout, but not its virtualenv nor our own folder."""
    return (path.is_relative_to(root) and not path.is_relative_to(venv)
            and not path.is_relative_to(root / ".autobuild"))


def _resolved(line: str, site: Path) -> Path:
    path = Path(line)
    return Path(os.path.normpath(path if path.is_absolute() else site / path))


def _finder_mapping(text: str) -> dict[str, str]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(
            node, "target", None)
        if isinstance(target, ast.Name) and target.id == "MAPPING" and getattr(node, "value", None) is not None:
            try:
                value = ast.literal_eval(node.value)  # type: ignore[attr-defined]
            except ValueError:
                return {}
            return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
    return {}


def _entries(venv: Path) -> list[Editable]:
    """Every path entry (`.pth` lines, `.egg-link`s) and editable finder mapping of `venv`, wherever it points."""
    site = site_packages(venv)
    if site is None:
        return []
    found: list[Editable] = []
    for pth in sorted(site.glob("*.pth")):
        for raw in pth.read_text(encoding="utf-8", errors="replace").splitlines():
            line = raw.strip()
            if line and not line.startswith(("#", "import ", "import\t")):
                found.append(Editable(pth.name, "path", _resolved(line, site)))
    for link in sorted(site.glob("*.egg-link")):
        lines = link.read_text(encoding="utf-8", errors="replace").splitlines()
        if lines and lines[0].strip():
            found.append(Editable(link.name, "path", _resolved(lines[0].strip(), site)))
    finders = [(f, _finder_mapping(f.read_text(encoding="utf-8", errors="replace")))
               for f in sorted(site.glob("__editable__*finder.py"))]
    # hatchling's exact mode (the `editables` library): `F.map_module('calc', '/repo/src/calc/__init__.py')`.
    finders += [(f, {m: (t.removesuffix("/__init__.py")) for m, t in _MAP_MODULE.findall(f.read_text(
        encoding="utf-8", errors="replace"))}) for f in sorted(site.glob("_editable_impl_*.py"))]
    found += [Editable(finder.name, "finder", Path(os.path.normpath(target)), module)
              for finder, mapping in finders for module, target in mapping.items() if "." not in module]
    return found


def editables(root: Path, venv: Path) -> list[Editable]:
    """Every path entry and editable finder of `venv` that points into the main checkout at `root`."""
    root, venv = root.resolve(), venv.resolve()
    found: dict[tuple[str, Path], Editable] = {}
    for entry in _entries(venv):
        if _inside(entry.target, root, venv):
            found.setdefault((entry.kind, entry.target), entry)
    return list(found.values())


def worktree_editables(root: Path, venv: Path, worktrees: Path) -> list[Editable]:
    """Every path entry and editable finder of the run's own `venv` (setup's installs, or an agent's) that points
    into one of the run's worktrees in `worktrees` (a feature's folder), said as if it pointed into the main
    checkout at `root` (the same path inside): `overlay` then gives each worktree its own copy. An editable
    install is tied to the worktree it was made in, and a task's attempts share one setup (shared_setup.py)."""
    root, worktrees = root.resolve(), worktrees.resolve()
    found: dict[tuple[str, Path], Editable] = {}
    for entry in _entries(venv):
        if not entry.target.is_relative_to(worktrees):
            continue
        parts = entry.target.relative_to(worktrees).parts
        if len(parts) > 1 and not parts[0].startswith("_"):  # a task's worktree, not the gate's own folders
            moved = Editable(entry.source, entry.kind, root.joinpath(*parts[1:]), entry.module)
            found.setdefault((moved.kind, moved.target), moved)
    return list(found.values())


def overlay(root: Path, worktree: Path, found: list[Editable], folder: Path) -> list[str]:
    """The PYTHONPATH entries that put the worktree's copies ahead of the main checkout's: `folder` (rebuilt:
    symlinks named by each finder's module to the worktree's copy) first, then each path entry's worktree copy."""
    root = root.resolve()
    finders = [e for e in found if e.kind == "finder"]
    entries: list[str] = []
    if finders:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for entry in finders:
            copy = worktree / entry.relative(root)
            name = f"{entry.module}{copy.suffix}" if copy.suffix == ".py" else str(entry.module)
            link = folder / name
            if not link.is_symlink():  # the user's install and setup's of the same module: one worktree copy
                link.symlink_to(copy)
        entries.append(str(folder))
    for entry in found:
        if entry.kind == "path" and (worktree / entry.relative(root)).is_dir():
            entries.append(str(worktree / entry.relative(root)))
    return entries


def layered_venv(user_venv: Path, folder: Path) -> Path:
    """The run's own virtualenv at `folder`, layered over the user's: same interpreter, its own site-packages
    first (installs go there), then the user's (its `.pth` files processed, so its packages stay importable).
    Written file by file (no subprocess, no pip): pyvenv.cfg, bin/python, a .pth. Idempotent."""
    user_site = site_packages(user_venv)
    version = user_site.parent.name if user_site else "python3"
    site = folder / "lib" / version / "site-packages"
    cfg = _read_cfg(user_venv / "pyvenv.cfg")
    python = (user_venv / "bin" / "python").resolve()
    marker = folder / "pyvenv.cfg"
    wanted = (f"home = {cfg.get('home', str(python.parent))}\n"
              f"include-system-site-packages = {cfg.get('include-system-site-packages', 'false')}\n"
              f"version = {cfg.get('version', cfg.get('version_info', ''))}\n"
              f"autobuild-layered-over = {user_venv}\n")
    if marker.is_file() and marker.read_text(encoding="utf-8") == wanted and (folder / "bin" / "python").exists():
        return folder
    (folder / "bin").mkdir(parents=True, exist_ok=True)
    site.mkdir(parents=True, exist_ok=True)
    for name in ("python", "python3", version):
        link = folder / "bin" / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(python)
    if user_site is not None:
        # addsitedir, not a plain path line: the user's .pth files (editable installs) must be processed too.
        (site / "zz-autobuild-user-venv.pth").write_text(f"import site; site.addsitedir({str(user_site)!r})\n")
    marker.write_text(wanted, encoding="utf-8")
    return folder


def _read_cfg(path: Path) -> dict[str, str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    return {k.strip(): v.strip() for k, _, v in (line.partition("=") for line in lines) if v}
