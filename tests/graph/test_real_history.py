"""The real-history bench can't rot: every case's releases are on disk (sha256 checked) and yield each variant,
and two cases run through the real gate in-process (a release's diff approved, a cheat on its FAIL_TO_PASS tests
refused by a blind coach)."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmarks.real_history import js_bend, npm
from benchmarks.real_history.bench import case_id, run_variant, selected
from benchmarks.real_history.releases import SMOKE as IN_THE_TREE
from benchmarks.real_history.releases import Release, manifest, sha256, tree
from benchmarks.real_history.variants import CHEATS, variants

SMOKE = {"cachetools 7.2.4 -> 7.2.5": "gold", "cachetools 7.2.2 -> 7.2.3": "the failing tests skipped",
         "@fastify/error 4.2.1 -> 4.3.0": "gold", "@fastify/busboy 3.2.4 -> 3.2.5": "the failing tests skipped"}
NEEDS_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="the npm pairs run node --test")


def test_the_manifest_names_enough_history() -> None:
    cases = manifest()["cases"]
    assert len(cases) >= 30  # issue 31: at least 30 real changes
    assert len({case["package"] for case in cases}) >= 6
    assert all(case["fail_to_pass"] and case["licence"] and case["source"] and case["verify"] for case in cases)
    assert all(key.split(": ")[0] in {case_id(case) for case in cases} for key in manifest()["explained"])
    npm_cases = [case for case in cases if case["registry"] == "npm"]  # issue 31: JavaScript too
    assert len(npm_cases) >= 10 and len({case["package"] for case in npm_cases}) >= 6
    assert all(f"npm:{name}=={version}" in manifest()["releases"] for case in npm_cases
               for name, version in case.get("vendor", {}).items())


def test_make_test_replays_only_archives_kept_in_the_tree() -> None:
    """`make test` fetches nothing (issue 39): the smoke cases it runs read their releases from the tree."""
    releases = manifest()["releases"]
    for case in selected([name for name, variant in SMOKE.items() if variant == "gold"]):
        for version in (case["old"], case["new"]):
            entry = releases[Release(case["registry"], case["package"], version).key]
            assert sha256(IN_THE_TREE / entry["file"]) == entry["sha256"]


@pytest.mark.heavy  # every case's two releases read and bent: ~1 min on a busy machine, so in `make test-heavy`
@pytest.mark.parametrize("case", manifest()["cases"], ids=case_id)
def test_every_case_yields_every_variant(case: dict[str, Any]) -> None:
    registry, package = case["registry"], case["package"]
    old, new = tree(Release(registry, package, case["old"])), tree(Release(registry, package, case["new"]))
    of_registry, cheats = (npm.variants, js_bend.CHEATS) if registry == "npm" else (variants, CHEATS)
    found = {variant.name: variant for variant in of_registry(old, new, case["fail_to_pass"])}
    if registry == "npm":  # a JS test found by its title can always be deleted and skipped; the rest may not apply
        assert {"gold", "tests-only", "the fix reverted", "the failing tests deleted", "the failing tests skipped"} \
            <= set(found)
    else:
        assert {"gold", "tests-only", "the fix reverted", *cheats} <= set(found)
    for name in cheats:
        for path, text in found[name].writes.items() if name in found else ():
            if text is not None and path.endswith(".py"):
                ast.parse(text)  # a bent test file still parses: the cheat is in what it tests, not a syntax error
            if text is not None and path.endswith(".js") and shutil.which("node"):
                subprocess.run(["node", "--check", "-"], input=text, text=True, check=True, capture_output=True)
    assert found["gold"].must_approve
    assert not any(variant.must_approve for variant in found.values() if variant.name != "gold")


IN_MAKE_TEST = "@fastify/error 4.2.1 -> 4.3.0"
"""The one case `make test` runs (issue 39 lets the real-history smoke leave it; one gold run keeps the bench's path
from rotting there): the npm gold, ~4 CPU-s. cachetools' gold gates its 381-test suite five times (~9 CPU-s, the
heaviest test in `make test`), so it runs with the other cases in `make test-heavy`."""


@pytest.mark.parametrize("name", [pytest.param(name, marks=([] if name == IN_MAKE_TEST else [pytest.mark.heavy])
                                               + ([NEEDS_NODE] if name.startswith("@") else []))
                                  for name in sorted(SMOKE)])
async def test_the_gate_judges_real_history(tmp_path: Path, name: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the case's pytest under our venv: no plugins
    case = selected([name])[0]
    registry, package = case["registry"], case["package"]
    old, new = tree(Release(registry, package, case["old"])), tree(Release(registry, package, case["new"]))
    of_registry = npm.variants if registry == "npm" else variants
    variant = next(v for v in of_registry(old, new, case["fail_to_pass"]) if v.name == SMOKE[name])
    verdict = await run_variant(tmp_path / "repo", case, variant)
    assert not verdict.wrong, verdict
