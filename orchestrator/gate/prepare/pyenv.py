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
import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agents.bounded import CONFIG_FILE, read_text_bounded
from orchestrator.repo import confined

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


def _text(file: Path) -> str:
    """A venv's path file or finder (the agents' own layer can hold any of them made a FIFO or a sparse file): ""
    when it can't be read whole within the bound."""
    try:
        return read_text_bounded(file, CONFIG_FILE)
    except OSError:
        return ""


def _entries(venv: Path) -> list[Editable]:
    """Every path entry (`.pth` lines, `.egg-link`s) and editable finder mapping of `venv`, wherever it points."""
    site = site_packages(venv)
    if site is None:
        return []
    found: list[Editable] = []
    for pth in sorted(site.glob("*.pth")):
        for raw in _text(pth).splitlines():
            line = raw.strip()
            if line and not line.startswith(("#", "import ", "import\t")):
                found.append(Editable(pth.name, "path", _resolved(line, site)))
    for link in sorted(site.glob("*.egg-link")):
        lines = _text(link).splitlines()
        if lines and lines[0].strip():
            found.append(Editable(link.name, "path", _resolved(lines[0].strip(), site)))
    finders = [(f, _finder_mapping(_text(f)))
               for f in sorted(site.glob("__editable__*finder.py"))]
    # hatchling's exact mode (the `editables` library): `F.map_module('calc', '/repo/src/calc/__init__.py')`.
    finders += [(f, {m: (t.removesuffix("/__init__.py")) for m, t in _MAP_MODULE.findall(_text(f))})
                for f in sorted(site.glob("_editable_impl_*.py"))]
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
    symlinks named by each finder's module to the worktree's copy) first, then each path entry's worktree copy.
    `folder` is under `root`'s `.autobuild/worktrees/<FEATURE>` and rebuilt through descriptors (a link planted in
    its place, as an agent can in its own layer, is removed: nothing is deleted or made through it)."""
    finders = [e for e in found if e.kind == "finder"]
    inside = root.resolve()
    entries: list[str] = []
    if finders:
        parent = confined.own_folder(root, folder.parent.relative_to(root).parts)
        try:
            confined.remove_at(parent, folder.name)
        finally:
            os.close(parent)
        made = confined.own_folder(root, folder.relative_to(root).parts)
        try:
            for entry in finders:
                copy = worktree / entry.relative(inside)
                name = f"{entry.module}{copy.suffix}" if copy.suffix == ".py" else str(entry.module)
                with contextlib.suppress(FileExistsError):  # the user's install and setup's of one module: one copy
                    os.symlink(copy, name, dir_fd=made)
        finally:
            os.close(made)
        entries.append(str(folder))
    for entry in found:
        copy = worktree / entry.relative(inside)
        if entry.kind == "path" and copy.is_dir():
            entries.append(str(copy))
    return entries


def layered_venv(user_venv: Path, folder: Path, root: Path) -> Path:
    """The run's own virtualenv at `folder`, layered over the user's: same interpreter, its own site-packages
    first (installs go there), then the user's (its `.pth` files processed, so its packages stay importable).
    Written file by file (no subprocess, no pip): pyvenv.cfg, bin/python, a .pth. Idempotent.

    `folder` is under `root`'s `.autobuild/worktrees/<FEATURE>`, and the agents' layer is in their Bash's reach:
    every level is opened without following a link (one planted there, say `_env/venv -> ~/repo/.venv`, is
    removed, so nothing of the user's is written through it), and each link and file is replaced in one step, so
    tasks building it at once all succeed and a gate run never finds it half made."""
    user_site = site_packages(user_venv)
    version = user_site.parent.name if user_site else "python3"
    cfg = _read_cfg(user_venv / "pyvenv.cfg")
    python = (user_venv / "bin" / "python").resolve()
    wanted = (f"home = {cfg.get('home', str(python.parent))}\n"
              f"include-system-site-packages = {cfg.get('include-system-site-packages', 'false')}\n"
              f"version = {cfg.get('version', cfg.get('version_info', ''))}\n"
              f"autobuild-layered-over = {user_venv}\n")
    parts = folder.relative_to(root).parts
    top = confined.own_folder(root, parts)
    try:
        if confined.read_at(top, "pyvenv.cfg") == wanted and _runs(top):
            return folder
        bin_folder = confined.own_folder(root, (*parts, "bin"))
        try:
            for name in ("python", "python3", version):
                confined.link_at(bin_folder, name, python)
        finally:
            os.close(bin_folder)
        site = confined.own_folder(root, (*parts, "lib", version, "site-packages"))
        try:
            if user_site is not None:
                # addsitedir, not a plain path line: the user's .pth files (editable installs) must be processed.
                confined.replace_at(site, "zz-autobuild-user-venv.pth",
                                    f"import site; site.addsitedir({str(user_site)!r})\n")
        finally:
            os.close(site)
        confined.replace_at(top, "pyvenv.cfg", wanted)  # last: it says the layer is whole
    finally:
        os.close(top)
    return folder


def _runs(venv: int) -> bool:
    """Whether the open venv folder's own `bin/python` (not one through a planted link) reaches an interpreter."""
    try:
        folder = os.open("bin", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=venv)
    except OSError:
        return False
    try:
        os.stat("python", dir_fd=folder)
    except OSError:
        return False
    finally:
        os.close(folder)
    return True


def _read_cfg(path: Path) -> dict[str, str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    return {k.strip(): v.strip() for k, _, v in (line.partition("=") for line in lines) if v}
