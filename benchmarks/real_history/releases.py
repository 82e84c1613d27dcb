"""The real-history bench's releases: fetched once from the package registries (pip, npm) into a git-ignored
folder, checked against the manifest's sha256, and read as trees of text files, offline."""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from benchmarks.real_history import debian

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
RELEASES = HERE / "releases"
SMOKE = HERE / "smoke"
"""The few archives `make test`'s smoke test replays, kept in the tree: `make test` fetches nothing."""
SCHEMA_VERSION = 1
BACKENDS = ("setuptools", "setuptools-scm", "wheel", "flit_core", "hatchling", "hatch-vcs")
_GENERATED = ("PKG-INFO", ".egg-info/")
"""What an sdist's build writes (its metadata): not the project's history."""


@dataclass(frozen=True)
class Release:
    """One release of one package in one registry."""

    registry: str  # "pypi", "npm" or "debian" (Go modules and Rust crates: benchmarks/real_history/debian.py)
    package: str
    version: str

    @property
    def key(self) -> str:
        return f"{self.registry}:{self.package}=={self.version}"


def manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return data


def _download(release: Release, folder: Path) -> Path:
    """The release's source archive from its registry, by the registry's own client."""
    folder.mkdir(parents=True, exist_ok=True)
    if release.registry == "debian":  # Go modules and Rust crates, as Debian's archive ships them
        return debian.download(release.package, release.version, folder)
    if release.registry == "pypi":
        # --no-build-isolation, with the build backends installed once: pip builds each sdist's metadata, in seconds
        # this way, in half a minute in an isolated environment of its own
        command = [str(_builder() / "bin" / "python"), "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
                   ":all:", "--no-build-isolation", "-d", str(folder), f"{release.package}=={release.version}"]
    else:
        command = ["npm", "pack", "--silent", "--pack-destination", str(folder), f"{release.package}@{release.version}"]
    before = set(folder.iterdir())
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
    new = sorted(set(folder.iterdir()) - before)
    if len(new) != 1:
        raise RuntimeError(f"{release.key}: expected one archive from the registry, got {[p.name for p in new]}")
    return new[0]


def _builder() -> Path:
    """A venv with the build backends the cases' sdists name, for pip to read their metadata."""
    venv = RELEASES / ".builder"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *BACKENDS], check=True,
                       capture_output=True, timeout=600)
    return venv


def archive(release: Release) -> Path:
    """The release's archive on disk (fetched when missing), its sha256 checked against the manifest."""
    entry = manifest()["releases"].get(release.key)
    if entry is not None and (RELEASES / entry["file"]).is_file():
        path = RELEASES / str(entry["file"])
    elif entry is not None and (SMOKE / entry["file"]).is_file():
        path = SMOKE / str(entry["file"])
    else:
        path = _on_disk(release) or _download(release, RELEASES)
    if entry is not None and sha256(path) != entry["sha256"]:
        raise RuntimeError(f"{path.name}: sha256 differs from the manifest's ({release.key}): delete it and refetch")
    return path


def _on_disk(release: Release) -> Path | None:
    """An archive fetched before the manifest named it (while choosing cases)."""
    stem = re.sub(r"[-_.]+", "_", release.package.lstrip("@").replace("/", "-")).lower()
    names = {f"{stem}-{release.version}.tar.gz", f"{stem}-{release.version}.tgz"}
    found = [p for p in RELEASES.glob("*") if re.sub(r"[-.]+", "_", p.name.lower()) in
             {re.sub(r"[-.]+", "_", name) for name in names}]
    return found[0] if found else None


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(release: Release) -> dict[str, str]:
    """The release's text files by path (its top folder stripped), without what the sdist build generated."""
    if release.registry == "debian":  # a .deb: the module's or crate's folder in it, named by the manifest
        return debian.tree(archive(release), str(manifest()["releases"][release.key]["root"]))
    files: dict[str, str] = {}
    with tarfile.open(archive(release)) as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts[1:]
            path = "/".join(parts)
            if not member.isfile() or not parts or any(mark in path or path == mark for mark in _GENERATED):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            try:
                files[path] = io.TextIOWrapper(handle, encoding="utf-8", newline="").read()
            except UnicodeDecodeError:
                continue  # binary files: none of the cases' code or tests
    return files


def fetch_all() -> int:
    """Every release the manifest names, fetched when missing (`make install` runs this); the number fetched."""
    fetched = 0
    for key in manifest()["releases"]:
        registry, rest = key.split(":", 1)
        package, version = rest.split("==")
        entry = manifest()["releases"][key]
        if not (RELEASES / entry["file"]).is_file():
            archive(Release(registry, package, version))
            fetched += 1
    return fetched


def main() -> int:
    """`make install`'s step: the releases fetched, or one line saying which registry failed and what to do."""
    try:
        print(f"real-history releases: {fetch_all()} fetched into {RELEASES}")
    except debian.ArchiveUnreachable as error:  # one line saying what to do, not a trace
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (OSError, subprocess.SubprocessError) as error:
        stderr = getattr(error, "stderr", "") or ""
        said = (stderr.decode(errors="replace") if isinstance(stderr, bytes) else str(stderr)).strip().splitlines()
        command = " ".join(map(str, getattr(error, "cmd", []) or []))[:160]
        why = f"{command} failed{': ' + said[-1] if said else ''}" if command else str(error)
        print(f"error: a real-history release could not be fetched ({why}):"
              " PyPI, npm and Debian's archive must be reachable once (pip, npm and apt-get on PATH); run make"
              " install again when they are", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
