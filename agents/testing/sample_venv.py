"""The sample repositories' own virtualenv: pytest, its usual plugins, pip and setuptools, linked from this
interpreter's environment, and nothing else, as a project's own venv holds only what the project needs.

Linking the sample repos to AutoBuild's whole environment made every gate run's pytest load every plugin installed
there: langsmith's alone costs ~1 CPU-s per run (its client and pydantic models), ~1.7 CPU-s of the ~2 a run of
the sample suite took, and the graph tests run the gate hundreds of times. Built once per environment and user,
in the system's temp folder, by file links (no subprocess, no pip); reused by every test process.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path

try:  # pytest's own requirement: here whenever pytest is (the demo's environment may have neither)
    from packaging.requirements import Requirement
except ImportError:  # pragma: no cover - then the sample repos link this environment, as before
    Requirement = None  # type: ignore[assignment,misc]

KEPT = ("pytest", "pip", "setuptools", "wheel", "pytest-xdist", "pytest-timeout", "pytest-asyncio")
"""What the sample repos' runs use (with what these require): `pip install -e .` needs pip and setuptools."""
_LAYOUT = "1"
"""Bumped when what is built here changes: a new folder, never an old one rewritten."""


@functools.cache
def sample_venv() -> Path:
    """The lean venv (built on first use); this interpreter's environment when it can't be built here."""
    dists = _closure(KEPT) if Requirement is not None else []
    if "pytest" not in {_name(dist) for dist in dists}:
        return Path(sys.prefix)
    stamp = "\0".join([_LAYOUT, sys.prefix, sys.executable, *sorted(f"{_name(d)}={d.version}" for d in dists)])
    digest = hashlib.sha256(stamp.encode()).hexdigest()[:12]
    final = Path(tempfile.gettempdir()) / f"autobuild-sample-venv-{os.getuid()}-{digest}"
    if (final / "pyvenv.cfg").is_file():
        return final
    building = Path(tempfile.mkdtemp(prefix=final.name + ".", dir=final.parent))
    try:
        _build(building, final, dists)
        os.rename(building, final)  # atomic: a concurrent test process may have won, then its venv is used
    except OSError:
        shutil.rmtree(building, ignore_errors=True)
        if not (final / "pyvenv.cfg").is_file():
            return Path(sys.prefix)
    return final


def _name(dist: metadata.Distribution) -> str:
    return str(dist.metadata["Name"]).lower().replace("_", "-")


def _closure(names: tuple[str, ...]) -> list[metadata.Distribution]:
    """The installed distributions named and everything they require here (markers evaluated, no extras)."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[name] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return list(found.values())


def _build(folder: Path, final: Path, dists: list[metadata.Distribution]) -> None:
    """pyvenv.cfg, bin/python, site-packages of links to each distribution's top-level files, and its console
    scripts (their first line names `final`, where the folder is renamed to)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = folder / "lib" / version / "site-packages"
    site.mkdir(parents=True)
    (folder / "bin").mkdir()
    python = Path(sys.executable).resolve()
    for name in ("python", "python3", version):
        (folder / "bin" / name).symlink_to(python)
    for dist in dists:
        tops = {Path(str(file)).parts[0] for file in dist.files or [] if not str(file).startswith("..")}
        for top in sorted(tops - {"__pycache__"}):
            source = Path(str(dist.locate_file(top)))
            if source.exists() and not (site / top).exists():
                (site / top).symlink_to(source)
        for script in dist.entry_points.select(group="console_scripts"):
            module, _, attr = script.value.partition(":")
            head = attr.split(".")[0] or "main"
            (folder / "bin" / script.name).write_text(
                f"#!{final}/bin/python\nimport sys\nfrom {module.strip()} import {head}\n"
                f"sys.exit({attr.strip() or head}())\n")
            (folder / "bin" / script.name).chmod(0o755)
    (folder / "pyvenv.cfg").write_text(f"home = {python.parent}\ninclude-system-site-packages = false\n"
                                       f"version = {sys.version_info.major}.{sys.version_info.minor}."
                                       f"{sys.version_info.micro}\n")
