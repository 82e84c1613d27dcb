"""The verdict bench can't rot (issue 38 item 8): every family has a case in every runner or says why it can't
apply, every runner has legitimate test infrastructure, the cases are well-formed, the figures name each approved
cheat, the real-history variants of the new tests without their fix are made, and a gate run's kind is read from
where it ran. The matrix itself runs in `make bench` (benchmarks/verdict_bench.py)."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

from benchmarks.gate_runs_bench import kind_of
from benchmarks.real_history.bench import selected
from benchmarks.real_history.npm import variants as npm_variants
from benchmarks.real_history.releases import SMOKE, Release, manifest, tree
from benchmarks.real_history.unfixed import UNFIXED
from benchmarks.real_history.variants import variants
from benchmarks.verdict_bench import RUNNERS, cells, legitimate, report_lines
from benchmarks.verdict_cases import FAMILIES, bytecode
from benchmarks.verdict_native import NOT_APPLICABLE


def test_every_family_has_a_case_in_every_runner_or_a_reason_it_cannot_apply() -> None:
    found = {(cell.runner, cell.family) for cell in cells()}
    for runner in RUNNERS:
        for family in FAMILIES:
            assert ((runner, family) in found) != ((runner, family) in NOT_APPLICABLE), (runner, family)
    assert {cell.runner for cell in legitimate() if cell.accepts} == set(RUNNERS)  # the coach accepts a setup
    assert {cell.runner for cell in legitimate() if not cell.accepts} == set(RUNNERS)  # a helper, nothing to accept


def test_the_cases_are_well_formed() -> None:
    for cell in [*cells(), *legitimate()]:
        for path, text in cell.writes.items():
            if text is not None and path.endswith(".py"):
                ast.parse(text, path)
            if text is not None and path.endswith(".json"):
                json.loads(text)
        assert not cell.accepts or set(cell.accepts) <= set(cell.writes), cell.name
    compiled = [cell for cell in cells() if cell.compiled]
    assert compiled and all(path.endswith(".pyc") and "__pycache__/" in path
                            for cell in compiled for path in bytecode(cell.compiled))


def _case(runner: str, family: str, status: str) -> dict[str, Any]:
    return {"runner": runner, "family": family, "name": f"{family} case", "status": status,
            "approved": status.startswith("approved"), "files": ["mul.js", "fix.cjs"], "said": "the gate said"}


def test_the_figures_name_each_approved_cheat_and_each_refused_legitimate_change() -> None:
    found = {"cheats": [_case("mocha", "report", "approved"), _case("mocha", "infra", "failed"),
                        _case("jest", "xfail", "approved-unverified")],
             "legitimate": [_case("mocha", "infra", "approved"), _case("jest", "infra", "failed")],
             "seconds": 1.0, "missing": ["cargo test"], "not_applicable": [["go test", "build", "no hook"]]}
    text = "\n".join(report_lines(found))
    assert "False approvals: **2 / 3**" in text
    assert "| the report | " in text and "**0/1**" in text and "**0/1** (1 unverified)" in text
    assert "| added test infrastructure | – | – | – | – | – | 1/1 | – |" in text  # mocha's column; no cargo's
    assert "APPROVED (approved): mocha, the report: report case (the player wrote mul.js, fix.cjs)" in text
    assert "Refused, legitimate: jest: infra case: the gate said" in text
    assert "n/a: go test, the build: no hook" in text


def test_a_gate_runs_kind_is_where_it_ran() -> None:
    assert [kind_of(where) for where in ("_baseline", "_overlay-T1", "_newtests-T1", "T1")] == [
        "base", "clean room", "new tests on the base's code", "task's tree"]


@pytest.mark.parametrize("package", ["cachetools", "@fastify/error"])
def test_the_release_tests_without_their_fix_are_bent_as_each_ecosystem_spells_it(package: str) -> None:
    """On the smoke pairs kept in the tree: the new tests weakened, and marked to fail (pytest's xfail, node's
    todo), written over the old release with nothing of the fix."""
    entries = manifest()["releases"]
    case = next(case for case in selected([package])
                if all((SMOKE / entries[Release(case["registry"], package, version).key]["file"]).is_file()
                       for version in (case["old"], case["new"])))
    old, new = (tree(Release(case["registry"], package, case[version])) for version in ("old", "new"))
    made = {variant.name: variant for variant in (npm_variants if case["registry"] == "npm" else variants)(
        old, new, case["fail_to_pass"]) if variant.name in UNFIXED}
    assert set(made) == set(UNFIXED)
    for variant in made.values():
        assert variant.base == old and not variant.must_approve and not variant.accepts
        assert all(new.get(path) != old.get(path) or text != new.get(path) for path, text in variant.writes.items())
    marked = "\n".join(text or "" for text in made["the release's new tests marked to fail, the fix missing"]
                       .writes.values())
    assert ("mark.xfail" in marked) if case["registry"] == "pypi" else ("todo: 'later'" in marked or ".todo(" in marked)
