"""The pick bench's report (issue 40): its tallies over the mixtures and the section `make bench` writes into
docs/benchmarks.md (benchmarks/pick_bench.py measures)."""

from __future__ import annotations

from typing import Any

from benchmarks.pick_cases import EXTRA

APPROVED = ("approved", "approved-unverified")


def tally(found: dict[str, Any], mix: str) -> dict[str, int]:
    """Over a kind of mixture: the mixtures whose three candidates the gate all approved, those where a right one
    could be picked, and the picks right and wrong (with the selector, and by the keys alone)."""
    runs = [run for case in found["cases"] for run in case["runs"] if run["mix"] == mix]
    judged = [run for run in runs if all(s in APPROVED for s in run["statuses"])]
    could = [run for run in judged if any(run["right"])]
    return {"mixtures": len(runs), "all_approved": len(judged), "could": len(could),
            "right": sum(run["pick_right"] for run in could), "keys_right": sum(run["keys_right"] for run in could),
            "wrong": sum(run["picked"] is not None and not run["pick_right"] for run in could),
            "keys_wrong": sum(run["keys_pick"] is not None and not run["keys_right"] for run in could),
            "selector_ran": sum(run["by"] in ("selector", "fallback") for run in could)}


def _ratio(part: int, whole: int) -> str:
    return f"{part} / {whole} ({part / whole:.2f})" if whole else "0 / 0"


def report_lines(found: dict[str, Any]) -> list[str]:
    one, two, cheat = tally(found, "one"), tally(found, "two"), tally(found, "padded")
    none = [run for case in found["cases"] for run in case["runs"] if run["mix"] == "none"]
    empty = sum(run["picked"] is None and not any(s in APPROVED for s in run["statuses"]) for run in none)
    bad = [f"{case['case']}: {kind} ({'passes' if v['passes'] else 'fails'})" for case in found["cases"]
           for kind, v in case["oracle"].items() if v["passes"] != (kind in ("real", "alt"))]
    unapproved = [f"{case['case']}: {run['kinds']} -> {run['statuses']}" for case in found["cases"]
                  for run in case["runs"] if run["mix"] != "none" and not all(s in APPROVED for s in run["statuses"])]
    lines = [
        "## How often the pick is right (issue 40; in-process, real releases, the real gate and selection)",
        "",
        f"{len(found['cases'])} tasks from the real-history release pairs ({_libraries(found)} libraries;"
        " `benchmarks/pick_cases/`), each with the release's change, a fix special-casing the visible test's inputs,"
        " a partial fix and a fix breaking what no visible test covers (and a second right one), each with tests of"
        " its own. Every mixture runs as 3 attempts (`--attempts 3 --attempts-policy best`, a blind coach), judged"
        " by an oracle neither the gate nor the selection sees (the new release's changed tests and the base tests"
        " held back from the task's repo). The scripted selector picks by a blind rule (the most added test lines,"
        " then the smaller code change). Right: the pick passes the oracle, over mixtures the gate approved all"
        f" three of and where one could. Run in {found['seconds']:.0f} s.",
        "",
        "| mixture | approved / mixtures | keys alone right | with the selector right | random | wrong picks (keys;"
        " selector) (goal 0) |",
        "|---|---|---|---|---|---|",
        f"| one right of three | {one['all_approved']} / {one['mixtures']} | {_ratio(one['keys_right'], one['could'])}"
        f" | {_ratio(one['right'], one['could'])} | 0.33 | {one['keys_wrong']}; {one['wrong']} |",
        f"| two right of three | {two['all_approved']} / {two['mixtures']} | {_ratio(two['keys_right'], two['could'])}"
        f" | {_ratio(two['right'], two['could'])} | 0.67 | {two['keys_wrong']}; {two['wrong']} |",
        f"| one right, a cheat padding its tests | {cheat['all_approved']} / {cheat['mixtures']} |"
        f" {_ratio(cheat['keys_right'], cheat['could'])} | {_ratio(cheat['right'], cheat['could'])} | 0.33 |"
        f" {cheat['keys_wrong']}; {cheat['wrong']} |",
        "",
        f"- Goal: ≥ 0.95 right, 0 wrong. The selector ran (the keys and cross-tests left a tie) in"
        f" {one['selector_ran'] + two['selector_ran']} of {one['could'] + two['could']} mixtures. The cheat: the"
        " special-cased fix with the visible tests copied three times more (more new tests failing on the base's"
        " code, the third key). Published"
        " verifier-picked / best-possible (DeepSWE 59.0 / 71.0 = 0.83) is context, not a like-for-like target",
        f"- Three candidates the gate refuses (the visible tests alone; the fix with a base test module deleted; the"
        f" special-cased fix with both right candidates' tests): nothing approved in {_ratio(empty, len(none))} tasks"
        " (goal: all)",
    ]
    lines += ["", "| task | one right: right picks | two right | padded cheat | decided by |", "|---|---|---|---|---|"]
    lines += [_case_row(case) for case in found["cases"]]
    lines += ["", *_extra_lines(found)]
    lines += [f"- Case data off: {entry} by the oracle (its kind says otherwise)" for entry in bad]
    lines += [f"- Not all approved (left out of the rates): {entry}" for entry in unapproved]
    return [*lines, ""]


def _case_row(case: dict[str, Any]) -> str:
    """A task's mixtures: right picks over those the gate approved all three of, and what decided."""
    def rights(mix: str) -> str:
        runs = [r for r in case["runs"] if r["mix"] == mix and all(s in APPROVED for s in r["statuses"])]
        return f"{sum(r['pick_right'] for r in runs)} / {len(runs)}" + (
            f" (picked: {', '.join(r['kinds'][r['picked'] - 1] for r in runs if not r['pick_right'] and r['picked'])})"
            if any(not r["pick_right"] for r in runs) else "")

    decided: dict[str, int] = {}
    for run in case["runs"]:
        if run["mix"] in ("one", "two", "padded"):
            decided[run["by"] or "-"] = decided.get(run["by"] or "-", 0) + 1
    by = ", ".join(f"{name} {n}" for name, n in sorted(decided.items()))
    return f"| {case['case']} | {rights('one')} | {rights('two')} | {rights('padded')} | {by} |"


def _extra_lines(found: dict[str, Any]) -> list[str]:
    """The extra candidates, outside the goal: how the keys alone and the scripted selector do on them."""
    lines = []
    for kind in EXTRA:
        counted = tally(found, kind)
        if not counted["mixtures"]:
            continue
        tasks = [case["case"] for case in found["cases"] if any(run["mix"] == kind for run in case["runs"])]
        lines.append(
            f"- Outside the goal, a plausible wrong generalisation no sibling's tests catch ({', '.join(tasks)}),"
            " beside the release's change and the partial fix, each of the two first in turn: approved"
            f" {counted['all_approved']} / {counted['mixtures']}; keys alone right"
            f" {_ratio(counted['keys_right'], counted['could'])}, with the selector right"
            f" {_ratio(counted['right'], counted['could'])}; wrong picks {counted['keys_wrong']}; {counted['wrong']};"
            f" the selector ran in {counted['selector_ran']}")
    return lines


def _libraries(found: dict[str, Any]) -> int:
    return len({case["case"].split(" ", 1)[0] for case in found["cases"]})
