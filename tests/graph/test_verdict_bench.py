"""The verdict bench's plumbing on real runs (issue 38 item 8): a cell of the matrix goes through the task graph with
a blind coach and comes back refused, named by the gate; a legitimate setup the coach accepts by name is approved.
The whole matrix runs in `make bench` (benchmarks/verdict_bench.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.verdict_bench import available, cells, legitimate, run_cell
from benchmarks.verdict_cases import Cell
from benchmarks.verdict_js import NODE
from benchmarks.verdict_more import more_cells


def _one(found: list[Cell], runner: str, family: str, name: str = "") -> Cell:
    return next(cell for cell in found if cell.runner == runner and cell.family == family and name in cell.name)


async def test_a_lying_result_in_the_matrix_is_refused_and_named(tmp_path: Path) -> None:
    found = await run_cell(tmp_path / "lie", _one(cells(), "pytest", "lie"))
    assert not found["approved"], found
    assert found["files"] == ["calc/mul.py"]
    assert "calc/mul.py:2: answers without looking at what it is compared with" in found["said"], found["said"]


@pytest.mark.heavy  # a pytest tree and its clean room
async def test_a_setup_the_coach_accepts_by_name_is_approved(tmp_path: Path) -> None:
    cell = _one(legitimate(), "pytest", "infra", "conftest")
    found = await run_cell(tmp_path / "legit", cell)
    assert found["status"] == "approved", found


@pytest.mark.parametrize(("name", "line", "said"), [
    ("node:assert's equal", 2, "changes `assert.equal` of the tests' assertion library `node:assert`"),
    ("with a fake", 3, "changes how modules load (`Module._load`)"),
])
async def test_code_that_changes_node_assert_is_refused_though_every_test_passes(
        tmp_path: Path, name: str, line: int, said: str) -> None:
    """node --test's base tests assert with node:assert: mul.js breaks mul and makes `assert.equal` pass anything
    (or answers the tests' `require` of it with a fake), so node reports every test passed; the code screen names
    the line and the blind approval is refused."""
    found = await run_cell(tmp_path / "cell", _one(more_cells(), NODE, "knows", name))
    assert not found["approved"], found
    assert f"mul.js:{line}: touches the test runner or its output: {said}" in found["said"], found["said"]


@pytest.mark.heavy  # jest's run
async def test_code_that_overrides_jests_matchers_is_refused_though_every_test_passes(tmp_path: Path) -> None:
    """mul.js breaks mul and, through the `expect` package, overrides `toBe` for every test of the run: jest reports
    every test passed; the code screen names the call and the blind approval is refused."""
    cell = _one(more_cells(), "jest", "knows", "through the expect package")
    if not available(cell.runner):
        pytest.skip("jest from make install")
    found = await run_cell(tmp_path / "cell", cell)
    assert not found["approved"], found
    assert "mul.js:2: touches the test runner or its output: adds to or overrides the tests' assertion library" \
           " `expect` (`expect.extend`)" in found["said"], found["said"]


async def test_a_finder_that_fakes_the_tests_helper_is_refused_though_every_test_passes(tmp_path: Path) -> None:
    """calc/__init__.py breaks nothing the tests name but puts a finder on sys.meta_path that answers the tests' import
    of their own helper (tests/helpers.py, the base's, put back in the clean room) with a fake whose `equal` passes:
    pytest reports every test passed; the screen names the line and the blind approval is refused."""
    found = await run_cell(tmp_path / "cell", _one(more_cells(), "pytest", "infra", "a finder"))
    assert not found["approved"], found
    assert "calc/__init__.py:19: touches the test runner or its output: changes how modules load" \
           " (`sys.meta_path.insert`)" in found["said"], found["said"]
