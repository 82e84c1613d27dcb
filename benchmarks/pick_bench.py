"""How often the pick is right (issue 40): real-history tasks whose candidates all pass the gate and the visible
tests but differ in correctness, run as three attempts through the task graph (policy `best`: the real gate, the
selection's keys and cross-tests, a scripted selector blind to correctness), judged by an oracle neither the gate
nor the selection sees: the new release's changed test files and the base test files held back from the task's repo
(benchmarks/pick_oracle.py; the tasks and candidates in benchmarks/pick_cases/).

Mixtures of three: one right candidate with two wrong ones, two right with one wrong, the right ones rotated through
the attempt numbers (attempts run one at a time, so the first approved is attempt 1: falling back to it is as good
as random); and three candidates the gate refuses, which must end with nothing approved. Outside the goal's
mixtures, a case's extra candidates (`EXTRA`: a plausible wrong generalisation no sibling's tests catch) run beside
the release's change and the partial fix, each of the two first in turn, and are reported on their own. A task's
mixtures run one after another in one repository, each a feature of its own, so the gate's cache serves a
candidate's tree again (benchmarks/pick_report.py tallies and writes the section).

`python -m benchmarks.pick_bench [--json] [PACKAGE ...]` prints the section `make bench` writes into
docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.pick_cases import Candidate, Change, PickCase, cases
from benchmarks.pick_oracle import CaseError, Trees, base_files, candidate_files, deletable_test, oracle, trees
from benchmarks.pick_report import APPROVED, report_lines
from benchmarks.pick_selector import blind_pick
from benchmarks.real_history import npm
from orchestrator.graph.workflow import build_feature_workflow
from orchestrator.settings import RunOptions


def mixtures(case: PickCase) -> list[tuple[str, list[Candidate]]]:
    """The case's mixtures of three (`one` right, `two` right), each right candidate rotated to another attempt
    number."""
    right = [c for c in case.candidates if c.right]
    wrong = [c for c in case.candidates if not c.right and not c.extra]
    found = [("one", _rotated([right[0], *pair], index)) for index, pair in enumerate(itertools.combinations(wrong, 2))]
    if len(right) > 1:
        found += [("two", _rotated([right[0], right[1], one], index)) for index, one in enumerate(wrong)]
    return found


def extras(case: PickCase) -> list[tuple[str, list[Candidate]]]:
    """Each extra candidate with the release's change and the partial fix, the extra one first and then the
    release's change first (the keys' fallback is the first approved: both orders show what position decides)."""
    real, partial = case.of_kind("real"), case.of_kind("partial")
    if real is None or partial is None:
        return []
    return [(extra.kind, group) for extra in case.candidates if extra.extra
            for group in ([extra, real, partial], [real, extra, partial])]


def padded(case: PickCase, copies: int = 3) -> Candidate:
    """The special-cased fix with its tests padded: the visible tests copied `copies` times more (a cheat's cheap
    way to show more new tests failing on the base's code)."""
    special = case.of_kind("special")
    if special is None:
        raise CaseError(f"{case.case}: a case needs a special candidate")
    extra: dict[str, str] = {}
    for n in range(1, copies + 1):
        extra |= _renamed(case.visible, f"pad{n}")
    return Candidate("padded", special.code, {**special.tests, **extra}, "the special-cased fix, its tests padded")


def _rotated(group: list[Candidate], by: int) -> list[Candidate]:
    shift = by % len(group)
    return group[-shift:] + group[:-shift] if shift else group


def refused(case: PickCase, releases: Trees) -> list[Candidate]:
    """Three candidates the gate must refuse: the visible tests with no fix; the release's fix with a base test
    file deleted; the special-cased fix with both right candidates' tests, which it fails."""
    real, alt, special = case.of_kind("real"), case.of_kind("alt"), case.of_kind("special")
    if real is None or special is None:
        raise CaseError(f"{case.case}: a case needs a real and a special candidate")
    deleted = deletable_test(case, releases)
    return [Candidate("tests-only", {}, {}, "the visible tests, no fix"),
            Candidate("test-deleted", {**real.code, deleted: Change(gone=True)}, real.tests,
                      f"the release's fix, {deleted} deleted"),
            Candidate("fails-own-tests", special.code, {**real.tests, **_renamed(alt.tests if alt else {}, "alt")},
                      "the special-cased fix with the right candidates' tests")]


def _renamed(tests: Mapping[str, str], tag: str) -> dict[str, str]:
    """Test files under other names (and, in Go, other test functions), to sit beside a sibling's."""
    renamed: dict[str, str] = {}
    for path, text in tests.items():
        stem, dot, ext = path.rpartition(".")
        named = f"{stem.removesuffix('_test')}_{tag}{'_test' if stem.endswith('_test') else ''}{dot}{ext}"
        renamed[named] = text.replace("func Test", f"func Test{tag.title()}") if ext == "go" else text
    return renamed


def _plan(case: PickCase, feature: str) -> dict[str, Any]:
    return {"id": feature, "name": f"{case.case} ({feature})", "verify": "", "tasks": [
        {"id": "TASK-001", "name": case.case, "complexity": 3,
         "requirements": [case.requirement or f"what {case.case} changed"]}]}


async def run_mixture(repo: Path, case: PickCase, releases: Trees, feature: str,
                      group: Sequence[Candidate]) -> dict[str, Any]:
    """One mixture as three attempts of one task (policy best): each attempt's verdict, the pick, what the keys and
    cross-tests alone would pick (the selector's fallback), and how it was decided."""
    plan = _plan(case, feature) | {"verify": str(releases.entry["verify"])}
    (repo / ".autobuild" / "features" / f"{feature}.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))
    script: dict[Any, Any] = {"coach": approve(), "selector": blind_pick}
    for attempt, candidate in enumerate(group, start=1):
        script[("player", f"TASK-001.a{attempt}")] = writes(candidate_files(case, candidate, releases))
    options = RunOptions(agents=ScriptedAgents(script), interactive=False, max_turns=1, replan=0, parallel=1,
                         attempts=3, attempts_policy="best")
    graph = build_feature_workflow(None)
    out = await graph.ainvoke({"repo": str(repo), "target": feature}, {"configurable": {"thread_id": feature}},
                              context=options)
    result: dict[str, Any] = dict((out.get("results") or {}).get("TASK-001") or {})
    record = result.get("selection") or {}
    statuses = {int(a["attempt"]): str(a.get("status")) for a in result.get("attempts") or []}
    picked = result.get("picked") if result.get("status") in APPROVED else None
    return {"kinds": [c.kind for c in group], "statuses": [statuses.get(k, "?") for k in range(1, len(group) + 1)],
            "picked": picked, "keys_pick": _keys_pick(record, picked), "by": record.get("by", ""),
            "confirmed": record.get("confirmed") or {}, "status": result.get("status")}


def _keys_pick(record: dict[str, Any], picked: int | None) -> int | None:
    """What the keys, cross-tests and consensus alone pick: the selector's pick undone (the first approved of the
    leaders it chose among)."""
    if record.get("by") != "selector":
        return picked
    confirmed = {int(a): n for a, n in (record.get("confirmed") or {}).items()}
    lone = {int(a): n for a, n in (record.get("unshared") or {}).items()}
    tied = [int(a) for a in record.get("tied") or []]
    best = max((confirmed.get(a, 0) for a in tied), default=0)
    leaders = [a for a in tied if confirmed.get(a, 0) == best]
    fewest = min((lone.get(a, 0) for a in leaders), default=0)
    return next((a for a in leaders if lone.get(a, 0) == fewest), picked)


def case_repo(folder: Path, case: PickCase, releases: Trees) -> Path:
    """The task's repository: the old release without its held-back tests, its dependencies in place."""
    python = releases.entry.get("ecosystem", "python") == "python"
    repo = make_sample_repo(folder, files=base_files(case, releases), plan=None, venv=python)
    (repo / ".autobuild" / "features").mkdir(parents=True, exist_ok=True)
    if releases.entry["registry"] == "npm":
        npm.write_node_modules(repo, releases.entry)
    return repo


async def measure_case(folder: Path, case: PickCase) -> dict[str, Any]:
    """A task's oracle verdicts, its mixtures and its refused trio, in one repository."""
    releases = trees(case)
    verdicts = {c.kind: await asyncio.to_thread(oracle, case, c, releases) for c in case.candidates}
    repo = case_repo(folder, case, releases)
    cheat = padded(case)
    verdicts["padded"] = verdicts["special"]
    runs = []
    partial = [c for c in case.candidates if c.kind == "partial"]
    # The cheat first: the first approved, which the keys fall back to.
    groups = [*mixtures(case), ("padded", [cheat, case.candidates[0], *partial]), ("none", refused(case, releases)),
              *extras(case)]
    for index, (mix, group) in enumerate(groups):
        found = await run_mixture(repo, case, releases, f"FEAT-{index + 1:03d}", group)
        kinds = found["kinds"]
        oracle_of = {k: verdicts[kinds[k - 1]][0] if kinds[k - 1] in verdicts else False for k in range(1, 4)}
        found |= {"mix": mix, "right": [oracle_of[k] for k in range(1, 4)],
                  "pick_right": found["picked"] is not None and oracle_of[found["picked"]],
                  "keys_right": found["keys_pick"] is not None and oracle_of[found["keys_pick"]]}
        print(f"{case.case}: {mix}: {kinds} {found['statuses']} picked {found['picked']} ({found['by']}),"
              f" keys {found['keys_pick']}", file=sys.stderr, flush=True)
        runs.append(found)
    return {"case": case.case, "oracle": {k: {"passes": v[0], "said": v[1]} for k, v in verdicts.items()},
            "runs": runs}


async def _measure_all(folder: Path, chosen: Sequence[PickCase], jobs: int) -> list[dict[str, Any]]:
    slots = asyncio.Semaphore(jobs)

    async def one(index: int, case: PickCase) -> dict[str, Any]:
        async with slots:
            return await measure_case(folder / f"case-{index}", case)

    return list(await asyncio.gather(*(one(index, case) for index, case in enumerate(chosen))))


def measure(only: Sequence[str] = (), jobs: int = 2) -> dict[str, Any]:
    """The tasks named in `only` (all when empty), `jobs` tasks at a time."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # as the real-history bench: the releases need no plugin
    chosen = [c for c in cases() if not only or c.package in only or c.case in only]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pick-bench-") as tmp:
        found = asyncio.run(_measure_all(Path(tmp), chosen, jobs))
    return {"cases": found, "seconds": round(time.monotonic() - started, 1)}


if __name__ == "__main__":
    if "--help" in sys.argv[1:] or "-h" in sys.argv[1:]:
        print(__doc__)
        sys.exit(0)
    words = [a for a in sys.argv[1:] if not a.startswith("--")]
    known = {c.package for c in cases()} | {c.case for c in cases()}
    unknown = [w for w in words if w not in known] + [a for a in sys.argv[1:] if a.startswith("-") and a != "--json"
                                                      and not a.startswith("--jobs=")]
    if unknown:
        packages = ", ".join(sorted({c.package for c in cases()}))
        print(f"error: {', '.join(unknown)}: not a package of the pick bench ({packages})"
              " nor an option (--json, --help)", file=sys.stderr)
        sys.exit(2)
    try:
        measured = measure(words, next((int(a.split("=", 1)[1]) for a in sys.argv[1:]
                                        if a.startswith("--jobs=") and a.split("=", 1)[1].isdigit()), 2))
    except CaseError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(measured, indent=1) if "--json" in sys.argv else "\n".join(report_lines(measured)))
