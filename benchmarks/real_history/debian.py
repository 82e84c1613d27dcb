"""The real-history bench's Go and Rust releases: Debian's -dev packages of Go modules and Rust crates (their
sources with their tests), fetched by apt-get under a private configuration (its own sources.list, state and
cache in releases/apt: the machine's apt is never touched) and read as trees of text files, offline.

Consecutive Debian releases of one library (bullseye, bookworm, bookworm-backports, trixie, sid) are consecutive
upstream releases as Debian packaged them: each pair's diff is one or more upstream releases."""

from __future__ import annotations

import io
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MIRROR = "http://deb.debian.org/debian"
SUITES = ("bullseye", "bookworm", "bookworm-backports", "trixie", "sid")
APT = Path(__file__).resolve().parent / "releases" / "apt"
DEBS = "debian"
"""The .deb files' folder under releases/ (the manifest's `file` is relative to releases/)."""
_PACKAGING = (".cargo-checksum.json", ".cargo_vcs_info.json", "debian/")
"""What Debian's packaging adds to a crate's or module's folder: not the project's history."""


class ArchiveUnreachable(RuntimeError):
    """Debian's archive could not be reached (or does not serve the package): said in one line, never a trace."""


@dataclass(frozen=True)
class Archive:
    """Debian's archive as apt-get sees it under the private configuration in `apt` (sources, lists, cache and an
    empty dpkg status of its own)."""

    mirror: str = MIRROR
    apt: Path = APT

    def _options(self) -> list[str]:
        return ["-o", f"Dir::Etc::SourceList={self.apt / 'sources.list'}", "-o", "Dir::Etc::SourceParts=/dev/null",
                "-o", f"Dir::State={self.apt / 'state'}", "-o", f"Dir::State::status={self.apt / 'state' / 'status'}",
                "-o", f"Dir::Cache={self.apt / 'cache'}", "-o", "APT::Architecture=amd64",
                "-o", "Acquire::Languages=none", "-o", "Debug::NoLocking=1", "-q"]

    def _configure(self) -> None:
        (self.apt / "state" / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        (self.apt / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
        (self.apt / "state" / "status").touch()
        keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
        (self.apt / "sources.list").write_text("".join(f"deb [signed-by={keyring}] {self.mirror} {suite} main\n"
                                                       for suite in SUITES), encoding="utf-8")

    def _run(self, *arguments: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["apt-get", *self._options(), *arguments], cwd=cwd, capture_output=True, text=True,
                              timeout=900, check=False)

    def update(self) -> None:
        """The private package lists of every suite, fetched from the archive (a few tens of MB, once)."""
        self._configure()
        done = self._run("update")
        failed = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith(("Err:", "E:"))]
        if done.returncode != 0 or failed:
            raise ArchiveUnreachable(f"Debian's archive ({self.mirror}) could not be reached for the real-history"
                                     f" bench's Go and Rust releases ({failed[0] if failed else 'apt-get update'}):"
                                     " check the network and run `make install` again")

    def download(self, package: str, version: str, folder: Path) -> Path:
        """The package's .deb (into `folder`/debian); already there, it is not fetched again."""
        target = folder / DEBS
        target.mkdir(parents=True, exist_ok=True)
        path = target / deb_name(package, version)
        if path.is_file():
            return path
        if not any((self.apt / "state" / "lists").glob("*Packages*")):
            self.update()
        done = self._run("download", f"{package}={version}", cwd=target)
        if done.returncode != 0:
            self.update()  # the lists are old (a suite moved on): once more with fresh ones
            done = self._run("download", f"{package}={version}", cwd=target)
        if done.returncode != 0 or not path.is_file():
            said = (done.stderr or done.stdout).strip().splitlines() or ["no file"]
            raise ArchiveUnreachable(f"{package}={version}: apt-get download failed ({said[-1]}):"
                                     f" is {self.mirror} reachable, and does a suite still serve this version?")
        return path


def deb_name(package: str, version: str) -> str:
    """The file apt-get download writes for the package (an epoch's colon is written as %3a)."""
    architecture = "all" if package.startswith("golang-") else "amd64"
    return f"{package}_{version.replace(':', '%3a')}_{architecture}.deb"


def download(package: str, version: str, folder: Path) -> Path:
    """The package's .deb from Debian's archive, by apt-get under the bench's private configuration."""
    return Archive().download(package, version, folder)


def tree(path: Path, root: str) -> dict[str, str]:
    """The text files under `root` (the module's or crate's folder in the package) by path relative to it."""
    files: dict[str, str] = {}
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(path)], capture_output=True, check=True,
                          timeout=300).stdout
    prefix = PurePosixPath(root)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            name = PurePosixPath(member.name.removeprefix("./"))
            if not member.isfile() or not name.is_relative_to(prefix):
                continue
            relative = name.relative_to(prefix).as_posix()
            if any(relative == mark or relative.startswith(mark) for mark in _PACKAGING):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            try:
                files[relative] = io.TextIOWrapper(handle, encoding="utf-8", newline="").read()
            except UnicodeDecodeError:
                continue  # binary test data: none of the cases' code or tests
    return files
