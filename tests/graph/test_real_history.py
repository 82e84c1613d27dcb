"""The real-history bench can't rot: every case's releases are on disk (sha256 checked) and yield each variant,
and two cases run through the real gate in-process (a release's diff approved, a cheat on its FAIL_TO_PASS tests
refused by a blind coach)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from benchmarks.real_history.bench import case_id, run_variant, selected
from benchmarks.real_history.releases import Release, manifest, tree
from benchmarks.real_history.variants import CHEATS, variants

SMOKE = {"cachetools 7.2.4 -> 7.2.5": "gold", "cachetools 7.2.2 -> 7.2.3": "the failing tests skipped"}


def test_the_manifest_names_enough_history() -> None:
    cases = manifest()["cases"]
    assert len(cases) >= 30  # issue 31: at least 30 real changes
    assert len({case["package"] for case in cases}) >= 6
    assert all(case["fail_to_pass"] and case["licence"] and case["source"] and case["verify"] for case in cases)
    assert all(key.split(": ")[0] in {case_id(case) for case in cases} for key in manifest()["explained"])


@pytest.mark.heavy  # every case's two releases read and bent: ~1 min on a busy machine, so in `make test-heavy`
@pytest.mark.parametrize("case", manifest()["cases"], ids=case_id)
def test_every_case_yields_every_variant(case: dict[str, Any]) -> None:
    registry, package = case["registry"], case["package"]
    old, new = tree(Release(registry, package, case["old"])), tree(Release(registry, package, case["new"]))
    found = {variant.name: variant for variant in variants(old, new, case["fail_to_pass"])}
    assert {"gold", "tests-only", "the fix reverted", *CHEATS} <= set(found)
    for name in CHEATS:
        for path, text in found[name].writes.items():
            if text is not None and path.endswith(".py"):
                ast.parse(text)  # a bent test file still parses: the cheat is in what it tests, not a syntax error
    assert found["gold"].must_approve
    assert not any(variant.must_approve for variant in found.values() if variant.name != "gold")


@pytest.mark.parametrize("name", [pytest.param(name, marks=[] if SMOKE[name] == "gold" else [pytest.mark.heavy])
                                  for name in sorted(SMOKE)])  # one real gate run in `make test`, both in heavy
async def test_the_gate_judges_real_history(tmp_path: Path, name: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the case's pytest under our venv: no plugins
    case = selected([name])[0]
    registry, package = case["registry"], case["package"]
    old, new = tree(Release(registry, package, case["old"])), tree(Release(registry, package, case["new"]))
    variant = next(v for v in variants(old, new, case["fail_to_pass"]) if v.name == SMOKE[name])
    verdict = await run_variant(tmp_path / "repo", case, variant)
    assert not verdict.wrong, verdict
