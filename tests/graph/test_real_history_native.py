"""The real-history bench's Go and Rust pairs (Debian's releases, fetched by `make install`) through the real gate
in-process: a Go release whose package still builds without its fix, its FAIL_TO_PASS tests skipped by the player
(`t.Skip`), refused by a blind coach; and every Go and Rust case yields every variant."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from benchmarks.real_history.bench import case_id, run_variant, selected
from benchmarks.real_history.releases import Release, tree
from benchmarks.real_history.variants import CHEATS, variants

NATIVE = selected([], ("go", "rust"))


def test_the_manifest_names_go_and_rust_history() -> None:
    assert len(NATIVE) >= 8
    assert len({case["package"] for case in NATIVE if case["ecosystem"] == "go"}) >= 3
    assert len({case["package"] for case in NATIVE if case["ecosystem"] == "rust"}) >= 3


@pytest.mark.heavy  # each case's two .debs read and bent
@pytest.mark.parametrize("case", NATIVE, ids=case_id)
def test_every_native_case_yields_every_variant(case: dict[str, Any]) -> None:
    old, new = (tree(Release("debian", case["package"], case[which])) for which in ("old", "new"))
    found = {variant.name for variant in variants(old, new, case["fail_to_pass"])}
    assert {"gold", "tests-only", "the fix reverted", *CHEATS} <= found


@pytest.mark.heavy  # a real `go test` gate run, base and task: about a minute on a busy machine
@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
async def test_a_go_release_with_its_failing_tests_skipped_is_refused(tmp_path: Path) -> None:
    case = selected(["golang-github-huandu-xstrings-dev 1.2.1-1 -> 1.3.3-1"])[0]
    old, new = (tree(Release("debian", case["package"], case[which])) for which in ("old", "new"))
    variant = next(v for v in variants(old, new, case["fail_to_pass"]) if v.name == "the failing tests skipped")
    verdict = await run_variant(tmp_path / "repo", case, variant)
    assert not verdict.wrong and "skipped" in verdict.reason, verdict
