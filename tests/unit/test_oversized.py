"""The gate never reads a file whole when the task can make it any size: a sparse file of 64 GB (or a link to one)
reads as too large at once, a FIFO swapped in never blocks, and a file of ordinary size reads as before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.gate.observe.bounded import report_text
from orchestrator.gate.observe.reads import pytest_reads
from orchestrator.gate.observe.runners.ctest import ctest_junit
from orchestrator.gate.observe.runners.js_report import js_reports
from orchestrator.gate.observe.runners.junit import pytest_junit
from orchestrator.gate.observe.runners.node import node_report
from orchestrator.gate.observe.runners.python import unittest_report
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


def test_a_runner_report_made_huge_by_the_tests_reads_as_no_report(tmp_path: Path) -> None:
    """The reports' paths are in the tests' environment (PYTEST_ADDOPTS, AUTOBUILD_UNITTEST_REPORT, …), so a test can
    make its report 64 GB at exit: each reader takes it as a report it can't read (the gate's channel and the other
    accounts then disagree with the run: gate/observe/crosscheck.py), never as one to read whole."""
    huge = 64 * 2**30
    for name in ("junit.xml", "unittest.jsonl", "node.jsonl", "jest.json", "reads-1.json", "ctest-1.xml"):
        _sparse(tmp_path / name, huge)
    assert pytest_junit(tmp_path / "junit.xml") is None
    assert unittest_report(tmp_path / "unittest.jsonl") is None
    assert node_report(tmp_path / "node.jsonl") is None
    assert js_reports(tmp_path, tmp_path) == []
    assert pytest_reads(tmp_path) == {}
    assert ctest_junit(tmp_path) is None
    with pytest.raises(OSError, match="larger than the 100,000,000 bytes"):
        report_text(tmp_path / "junit.xml")
    (tmp_path / "ok.jsonl").write_text('{"event": "run"}\n')
    assert report_text(tmp_path / "ok.jsonl") == '{"event": "run"}\n'
