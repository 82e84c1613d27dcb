"""The pick bench's path end to end on its in-tree case (issue 40): three candidates of @fastify/error 4.3.0 that
all pass the gate, run as three attempts through the task graph, the release's change picked and the oracle
agreeing; the three the gate must refuse leave nothing approved. Heavy: six real gate runs and the cross-tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.pick_bench import case_repo, refused, run_mixture
from benchmarks.pick_cases.js_cases import FASTIFY_ERROR
from benchmarks.pick_oracle import oracle, trees

pytestmark = [pytest.mark.heavy, pytest.mark.skipif(shutil.which("node") is None, reason="node --test runs it")]


async def test_the_release_s_change_is_picked_among_a_special_cased_and_a_partial_fix(tmp_path: Path) -> None:
    releases = trees(FASTIFY_ERROR)
    kinds = ("special", "real", "partial")
    group = [candidate for kind in kinds if (candidate := FASTIFY_ERROR.of_kind(kind)) is not None]
    assert [oracle(FASTIFY_ERROR, candidate, releases)[0] for candidate in group] == [False, True, False]
    repo = case_repo(tmp_path / "repo", FASTIFY_ERROR, releases)
    found = await run_mixture(repo, FASTIFY_ERROR, releases, "FEAT-001", group)
    assert found["statuses"] == ["approved"] * 3, "every candidate passes the gate: the pick is the selection's"
    assert found["picked"] == 2 and found["by"] == "cross-tests"
    nothing = await run_mixture(repo, FASTIFY_ERROR, releases, "FEAT-002", refused(FASTIFY_ERROR, releases))
    assert nothing["picked"] is None and "approved" not in nothing["statuses"]
