"""The real-history bench: each case's variants run through our real gate in-process (the task graph, scripted
player and coach, the case's real test runner), counted as false approvals and false rejections.

`python -m benchmarks.real_history.bench [--jobs=N] [--ecosystem=python,javascript,go,rust] [PACKAGE or CASE
...]` prints the section `make bench` writes into docs/benchmarks.md; `--json` prints the raw verdicts
(schema_version, ISO-8601 UTC times)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.cheat_corpus import _run as run_task
from benchmarks.real_history import npm
from benchmarks.real_history.releases import SCHEMA_VERSION, Release, manifest, tree
from benchmarks.real_history.variants import Variant, variants

APPROVED = ("approved", "approved-unverified")


@dataclass(frozen=True)
class Verdict:
    """One variant's run: what the gate and coach made of it, against what it must be."""

    case: str
    variant: str
    must_approve: bool
    status: str
    reason: str

    @property
    def approved(self) -> bool:
        return self.status in APPROVED

    @property
    def wrong(self) -> bool:
        return self.approved != self.must_approve


def case_id(case: dict[str, Any]) -> str:
    return f"{case['package']} {case['old']} -> {case['new']}"


def verify_command(case: dict[str, Any]) -> str:
    """The case's gate, from the manifest: its runner, with the package's folder on the path (not installed)."""
    return str(case["verify"])


async def run_variant(folder: Path, case: dict[str, Any], variant: Variant) -> Verdict:
    plan: dict[str, object] = {"id": "FEAT-001", "name": case_id(case), "verify": verify_command(case), "tasks": [
        {"id": "TASK-001", "name": f"{case['package']} {case['new']}", "complexity": 3,
         "requirements": [f"what {case['package']} {case['new']} changed"]}]}
    python = case.get("ecosystem", "python") == "python"
    repo = make_sample_repo(folder, files=_with_ignores(case, variant.base), plan=plan, venv=python)
    if case["registry"] == "npm":
        npm.write_node_modules(repo, case)
    coach = approve(accepts={path: f"{case['package']} {case['new']} changed it" for path in variant.accepts})
    result = await run_task(repo, ScriptedAgents({"player": writes(variant.writes), "coach": coach}), 1)
    return Verdict(case_id(case), variant.name, variant.must_approve, str(result.get("status")),
                   _gate_said(repo) or str(result.get("reason", ""))[:600])


def _with_ignores(case: dict[str, Any], files: dict[str, str]) -> dict[str, str]:
    """A crate's tree with cargo's build output git-ignored, as a crate's repository has it (a published crate,
    as Debian ships it, has no .gitignore): `target/` and the Cargo.lock a library's tests generate."""
    if case.get("ecosystem") != "rust":
        return files
    ignores = files.get(".gitignore", "")
    return {**files, ".gitignore": ignores + ("" if ignores.endswith("\n") or not ignores else "\n")
            + "/target/\n/Cargo.lock\n"}


def _gate_said(repo: Path) -> str:
    """The task's last gate verdict, from its run's trace (the task's result says only "max turns reached")."""
    said = ""
    for trace in (repo / ".autobuild" / "runs" / "FEAT-001").glob("TASK-*/trace.jsonl"):
        for line in trace.read_text(encoding="utf-8").splitlines():
            event = json.loads(line) if line.strip() else {}
            if event.get("event") == "gate":
                said = str(event.get("summary", ""))[:600]
    return said


async def measure_async(folder: Path, cases: list[dict[str, Any]], only_variants: tuple[str, ...] = (),
                        jobs: int = 2) -> list[Verdict]:
    """Every variant of every case, `jobs` at a time (each its own repository), in the cases' order."""
    runs: list[tuple[Path, dict[str, Any], Variant]] = []
    for index, case in enumerate(cases):
        registry = case["registry"]
        old, new = tree(Release(registry, case["package"], case["old"])), tree(
            Release(registry, case["package"], case["new"]))
        of_registry = npm.variants if registry == "npm" else variants
        chosen = of_registry(old, new, case["fail_to_pass"],
                             (lambda name: name in only_variants) if only_variants else lambda _: True)
        runs += [(folder / f"{index}-{number}", case, variant) for number, variant in enumerate(chosen)]
    slots = asyncio.Semaphore(jobs)

    async def one(repo: Path, case: dict[str, Any], variant: Variant) -> Verdict:
        async with slots:
            verdict = await run_variant(repo, case, variant)
        print(f"{verdict.case}: {variant.name}: {verdict.status}{' (WRONG)' if verdict.wrong else ''}",
              file=sys.stderr, flush=True)
        return verdict

    return list(await asyncio.gather(*(one(*run) for run in runs)))


def selected(names: list[str], ecosystems: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = manifest()["cases"]
    return [case for case in cases if (not names or case_id(case) in names or case["package"] in names)
            and (not ecosystems or case.get("ecosystem", "python") in ecosystems)]


def measure(names: list[str] | None = None, only_variants: tuple[str, ...] = (), jobs: int = 2,
            ecosystems: tuple[str, ...] = ()) -> dict[str, Any]:
    # The cases' pytest runs under this venv: without this it loads every plugin our own dev dependencies register.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    cases = selected(names or [], ecosystems)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        verdicts = asyncio.run(measure_async(Path(tmp), cases, only_variants, jobs))
    return {"schema_version": SCHEMA_VERSION, "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "seconds": round(time.monotonic() - started, 1), "cases": cases,
            "verdicts": [vars(v) for v in verdicts]}


def _rate(part: int, whole: int) -> str:
    return f"{part} / {whole} ({100 * part / whole:.1f}%)" if whole else "0 / 0"


def _outcomes(runs: list[Verdict]) -> str:
    counts: dict[str, int] = {}
    for verdict in runs:
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    return ", ".join(f"{status} {count}" for status, count in sorted(counts.items()))


def _by_ecosystem(cases: list[dict[str, Any]], verdicts: list[Verdict]) -> list[str]:
    """One row per ecosystem (Python from PyPI, Go and Rust from Debian, ...): its pairs and its two rates."""
    ecosystem_of = {case_id(case): str(case.get("ecosystem", "python")) for case in cases}
    lines = ["", "| ecosystem | pairs | libraries | false approvals | false rejections |", "|---|---|---|---|---|"]
    for ecosystem in sorted(set(ecosystem_of.values())):
        mine = [v for v in verdicts if ecosystem_of.get(v.case) == ecosystem]
        gold, rejects = [v for v in mine if v.must_approve], [v for v in mine if not v.must_approve]
        libraries = {case["package"] for case in cases if case.get("ecosystem", "python") == ecosystem}
        lines.append(f"| {ecosystem} | {sum(1 for e in ecosystem_of.values() if e == ecosystem)} | {len(libraries)} |"
                     f" {_rate(sum(v.approved for v in rejects), len(rejects))} |"
                     f" {_rate(sum(not v.approved for v in gold), len(gold))} |")
    return lines


def report_lines(found: dict[str, Any]) -> list[str]:
    verdicts = [Verdict(**v) for v in found["verdicts"]]
    cases = found["cases"]
    explained: dict[str, str] = manifest().get("explained", {})
    gold = [v for v in verdicts if v.must_approve]
    rejects = [v for v in verdicts if not v.must_approve]
    false_rejections = [v for v in gold if not v.approved]
    false_approvals = [v for v in rejects if v.approved]
    packages = sorted({(c["package"], c["ecosystem"], c["runner"]) for c in cases})
    lines = [
        "## Real history: consecutive releases replayed through the gate (issue 31; SWE-bench's FAIL_TO_PASS)",
        "",
        f"{len(cases)} release pairs of {len(packages)} packages"
        f" ({', '.join(f'{name} ({runner})' for name, _, runner in packages)}), fetched once from the registries"
        " (`benchmarks/real_history/manifest.json`: versions, sha256, licence, the command), run offline in"
        f" {found['seconds']:.0f} s. Per pair: *gold* (the release's diff; the coach accepts exactly the base test"
        " files it changed) must be approved; *tests-only* (its tests without the fix) must not; on the new release,"
        " the fix reverted, and the fix reverted with its FAIL_TO_PASS tests deleted, skipped, weakened or given back"
        " their old expectation, each with a blind coach (approves, accepts nothing), must not. A release's diff is"
        " one or more upstream commits. The cheats bend the new release's tests because there they are base tests:"
        " on the old release a player that deletes the new test it wrote leaves the base unchanged, which no"
        " accounting of base tests can tell from a task that wrote none (that is what hidden acceptance tests are"
        " for).",
        "",
        f"- False approvals: **{_rate(len(false_approvals), len(rejects))}** (goal: 0)",
        f"- False rejections: **{_rate(len(false_rejections), len(gold))}** (goal: under 2%, each explained)",
    ]
    lines += _by_ecosystem(cases, verdicts)
    by_variant: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        by_variant.setdefault(verdict.variant, []).append(verdict)
    lines += ["", "| variant | runs | must be | wrong | outcomes |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {len(runs)} | {'approved' if runs[0].must_approve else 'refused'} |"
              f" {sum(v.wrong for v in runs)} | {_outcomes(runs)} |" for name, runs in by_variant.items()]
    for verdict in [*false_approvals, *false_rejections]:
        key = f"{verdict.case}: {verdict.variant}"
        why = explained.get(key, "NOT YET EXPLAINED")
        lines.append(f"- {key}: {verdict.status} ({why}); the gate said: {verdict.reason[:300]}")
    return [*lines, ""]


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--json" and not a.startswith(("--jobs=", "--ecosystem="))]
    jobs = next((int(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--jobs=")), 2)
    only = tuple(e for a in sys.argv[1:] if a.startswith("--ecosystem=") for e in a.split("=", 1)[1].split(","))
    if not selected(arguments, only):
        print(f"error: no case of the manifest matches {' '.join(sys.argv[1:])}: name a case, a package or"
              " --ecosystem=python,javascript,go,rust", file=sys.stderr)
        sys.exit(2)
    measured = measure(arguments, jobs=jobs, ecosystems=only)
    print(json.dumps(measured, indent=1) if "--json" in sys.argv else "\n".join(report_lines(measured)))
