"""The real-history bench's Debian releases: a package's module or crate folder read as a tree without Debian's
packaging files (a real .deb built by dpkg-deb), and an unreachable archive said in one line naming what to do
(apt-get against a closed port on 127.0.0.1, in a private configuration under tmp_path)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from benchmarks.real_history.debian import Archive, ArchiveUnreachable, deb_name, tree

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None or shutil.which("apt-get") is None,
                                reason="needs dpkg-deb and apt-get")


def test_a_crate_is_read_from_its_folder_without_debians_files(tmp_path: Path) -> None:
    crate = tmp_path / "pkg" / "usr" / "share" / "cargo" / "registry" / "calc-0.1.0"
    (crate / "tests").mkdir(parents=True)
    (crate / "Cargo.toml").write_text("[package]\nname = \"calc\"\n")
    (crate / "tests" / "mul.rs").write_text("#[test]\nfn t() {}\n")
    (crate / ".cargo-checksum.json").write_text("{\"package\": \"\", \"files\": {}}")
    (crate / "debian").mkdir()
    (crate / "debian" / "patches").write_text("a Debian patch series\n")
    (crate / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    (tmp_path / "pkg" / "DEBIAN").mkdir()
    (tmp_path / "pkg" / "DEBIAN" / "control").write_text(
        "Package: librust-calc-dev\nVersion: 0.1.0-1\nArchitecture: amd64\nMaintainer: t <t@localhost>\n"
        "Description: a test crate\n")
    deb = tmp_path / deb_name("librust-calc-dev", "0.1.0-1")
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(tmp_path / "pkg"), str(deb)],
                   check=True, capture_output=True)
    assert tree(deb, "usr/share/cargo/registry/calc-0.1.0") == {
        "Cargo.toml": "[package]\nname = \"calc\"\n", "tests/mul.rs": "#[test]\nfn t() {}\n"}


@pytest.mark.heavy  # apt-get's own retries against a closed port: ~7 s
def test_an_unreachable_archive_is_one_line_naming_what_to_do(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on: bound, never listening
        closed.bind(("127.0.0.1", 0))
        archive = Archive(mirror=f"http://127.0.0.1:{closed.getsockname()[1]}/debian", apt=tmp_path / "apt")
        with pytest.raises(ArchiveUnreachable) as raised:
            archive.download("librust-calc-dev", "0.1.0-1", tmp_path / "releases")
    said = str(raised.value)
    assert "could not be reached" in said and "make install" in said and "\n" not in said, said
    assert not list((tmp_path / "releases").rglob("*.deb"))
