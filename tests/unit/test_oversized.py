"""The gate never reads a file whole when the task can make it any size: a sparse file of 64 GB (or a link to one)
reads as too large at once, a FIFO swapped in never blocks, and a file of ordinary size reads as before."""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.gate.spec import oversized
from orchestrator.gate.spec.code_screen import _read as screen_read
from orchestrator.gate.spec.spec_check import read_texts


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)  # no block written: costs nothing on disk, 64 GB to whoever reads it whole
    return path


def test_a_sparse_file_a_link_to_one_and_a_fifo_read_as_nothing_and_an_ordinary_file_reads(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "calc").mkdir(parents=True)
    huge = _sparse(tmp_path / "elsewhere.py", 64 * 2**30)
    (tree / "calc" / "big.py").symlink_to(huge)
    _sparse(tree / "calc" / "wide.py", oversized.MAX_BYTES + 1)
    os.mkfifo(tree / "calc" / "pipe.py")
    (tree / "calc" / "ok.py").write_text("def add(a, b):\n    return a + b\n")
    (tree / "calc" / "edge.py").write_bytes(b"#" * oversized.MAX_BYTES)
    paths = ["calc/big.py", "calc/wide.py", "calc/pipe.py", "calc/ok.py", "calc/edge.py", "calc/missing.py"]
    for read in (read_texts, screen_read):
        assert sorted(read(tree, paths)) == ["calc/edge.py", "calc/ok.py"]
    assert oversized.bounded_text(tree / "calc" / "ok.py") == "def add(a, b):\n    return a + b\n"

    found = oversized.changes(tree, paths)
    assert [(change["test"], change["fate"], change["accepted"]) for change in found] == [
        ("calc/big.py", "too large to judge", None), ("calc/wide.py", "too large to judge", None)]
    assert "68,719,476,736 bytes, over the 4,000,000" in found[0]["detail"]
