"""A repo's own venv with a package installed editable by a real pip, made once per layout and pip arguments (in the
system's tmp, shared by every xdist worker and later sessions) and copied into each test's repo.

`pip install -e` (pip and setuptools starting, the editable build) cost ~2 CPU-s a test; the copy a tenth of that.
What pip and the build wrote (the venv, the egg-info beside the sources) names the folder it was made in (the
`.pth` line or the finder's mapping, `direct_url.json`, the activate scripts): in the copy every such mention names
the test's repo instead, so the copy is what pip would have written there (the tests check the install style on
the copy: `editables()` reads it as pip left it)."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

MADE_AT = "made-at"
"""In a template: the path its repo had when pip wrote the install."""


def _made(layout: dict[str, str], pip_args: tuple[str, ...]) -> Path:
    """The template: `<tmp>/autobuild-tests-editable-<key>/repo/` with the package's files and its `.venv`."""
    deps = sysconfig.get_paths()["purelib"]
    key = hashlib.sha256(repr((sorted(layout.items()), pip_args, sys.version, sys.executable, deps)).encode())
    place = Path(tempfile.gettempdir()) / f"autobuild-tests-editable-{key.hexdigest()[:16]}"
    if (place / MADE_AT).is_file():
        return place
    making = Path(tempfile.mkdtemp(prefix=f"{place.name}.", dir=place.parent))
    try:
        repo = making / "repo"
        for name, text in layout.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
        venv = repo / ".venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = next((venv / "lib").glob("python*/site-packages"))
        # pytest, pip and setuptools from this interpreter's environment: nothing is downloaded.
        (site / "_deps.pth").write_text(deps + "\n")
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
                        "--no-build-isolation", "--no-index", "-e", "pkg", *pip_args], cwd=repo, check=True,
                       capture_output=True)
        for cache in list(repo.rglob("__pycache__")):  # compiled with the template's path in them
            shutil.rmtree(cache)
        (making / MADE_AT).write_text(str(repo))  # the path pip wrote: renamed into place at once after
        with contextlib.suppress(OSError):  # another worker made it first: theirs is the same
            making.rename(place)
    finally:
        shutil.rmtree(making, ignore_errors=True)
    return place


def install_editable(repo: Path, layout: dict[str, str], pip_args: tuple[str, ...] = ()) -> None:
    """`repo/.venv`: a venv of its own with `pkg/` (the `layout`'s package, already in `repo`) installed editable
    by this interpreter's pip with `pip_args`, and what the build left beside the sources, as
    `pip install -e pkg` run in `repo` would make them."""
    template = _made(layout, pip_args)
    old, new = (template / MADE_AT).read_text().encode(), str(repo).encode()

    def copy_new(source: str, target: str) -> str:
        """A file pip or the build made, naming `repo`; the repo's own files (the same text) are left alone."""
        if not Path(target).exists():
            data = Path(source).read_bytes()
            Path(target).write_bytes(data.replace(old, new))
            shutil.copystat(source, target)
        return target

    shutil.copytree(template / "repo", repo, symlinks=True, dirs_exist_ok=True, copy_function=copy_new)
