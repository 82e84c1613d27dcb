"""The pick bench's own logic (issue 40): its mixtures rotate the right candidate through the attempt numbers, an
extra candidate (a wrong generalisation no sibling's tests catch) stays out of the goal's mixtures and is reported on
its own, what the keys alone would pick is the selector's pick undone, the scripted selector is blind to
correctness, and the in-tree case's candidates all build from its releases (the archives `make test` has)."""

from __future__ import annotations

from benchmarks.pick_bench import _keys_pick, extras, mixtures, refused
from benchmarks.pick_cases import Candidate, PickCase
from benchmarks.pick_cases.js_cases import FASTIFY_ERROR
from benchmarks.pick_oracle import candidate_files, trees
from benchmarks.pick_report import _extra_lines, tally
from benchmarks.pick_selector import _added_lines


def _case(*more: str) -> PickCase:
    kinds = ("real", "alt", "special", "partial", "break", *more)
    return PickCase("x 1 -> 2", {}, tuple(Candidate(kind, {}) for kind in kinds))


def test_each_mixture_holds_three_and_the_right_one_moves_through_the_attempts() -> None:
    found = mixtures(_case())
    one = [group for mix, group in found if mix == "one"]
    two = [group for mix, group in found if mix == "two"]
    assert len(one) == 3 and len(two) == 3 and all(len(group) == 3 for _, group in found)
    assert sorted(next(i for i, c in enumerate(group) if c.kind == "real") for group in one) == [0, 1, 2]
    assert all(sum(c.right for c in group) == 2 for group in two)


def test_an_extra_candidate_stays_out_of_the_goal_s_mixtures_and_runs_first_then_second() -> None:
    case = _case("general")
    assert [[c.kind for c in group] for _, group in mixtures(case)] == [
        [c.kind for c in group] for _, group in mixtures(_case())], "the goal's mixtures are as without it"
    assert [(mix, [c.kind for c in group]) for mix, group in extras(case)] == [
        ("general", ["general", "real", "partial"]), ("general", ["real", "general", "partial"])]
    assert extras(_case()) == []


def test_the_extra_kind_is_reported_apart_with_its_wrong_picks() -> None:
    run = {"mix": "general", "statuses": ["approved"] * 3, "by": "selector"}
    runs = [{**run, "right": [False, True, False], "picked": 1, "pick_right": False, "keys_pick": 1,
             "keys_right": False},
            {**run, "right": [True, False, False], "picked": 2, "pick_right": False, "keys_pick": 1,
             "keys_right": True}]
    found = {"cases": [{"case": "x 1 -> 2", "runs": runs}]}
    assert tally(found, "one")["mixtures"] == 0, "not counted in the goal's mixtures"
    [line] = _extra_lines(found)
    assert "(x 1 -> 2)" in line and "keys alone right 1 / 2 (0.50), with the selector right 0 / 2 (0.00)" in line
    assert "wrong picks 1; 2; the selector ran in 2" in line
    assert _extra_lines({"cases": [{"case": "y", "runs": []}]}) == []


def test_the_keys_alone_pick_the_first_approved_of_the_cross_tests_leaders() -> None:
    record = {"by": "selector", "tied": [2, 1, 3], "confirmed": {"1": 2, "2": 2, "3": 0}}
    assert _keys_pick(record, 1) == 2
    assert _keys_pick({"by": "cross-tests", "tied": [2, 1]}, 1) == 1
    consensus = {**record, "unshared": {"1": 0, "2": 3}}
    assert _keys_pick(consensus, 2) == 1


def test_a_wrong_pick_counts_only_where_a_right_one_was_there_to_pick() -> None:
    runs = [{"mix": "one", "statuses": ["approved"] * 3, "right": [True, False, False], "picked": 2,
             "pick_right": False, "keys_pick": 1, "keys_right": True, "by": "selector"},
            {"mix": "one", "statuses": ["approved"] * 3, "right": [False, False, False], "picked": 1,
             "pick_right": False, "keys_pick": 1, "keys_right": False, "by": "keys"},
            {"mix": "one", "statuses": ["approved", "failed", "approved"], "right": [True, False, False],
             "picked": 3, "pick_right": False, "keys_pick": 3, "keys_right": False, "by": "keys"}]
    counted = tally({"cases": [{"runs": runs}]}, "one")
    assert counted == {"mixtures": 3, "all_approved": 2, "could": 1, "right": 0, "keys_right": 1, "wrong": 1,
                       "keys_wrong": 0, "selector_ran": 1}


def test_the_scripted_selector_counts_added_lines_by_side() -> None:
    diff = ("+++ b/index.js\n+a\n+b\n-c\n+++ b/test/x.test.js\n+t\n--- a/test/y.test.js\n+++ b/test/y.test.js\n"
            "+u\n+v\n")
    assert _added_lines(diff) == (3, 2)


def test_the_in_tree_case_builds_every_candidate_and_the_refused_trio() -> None:
    releases = trees(FASTIFY_ERROR)
    for candidate in (*FASTIFY_ERROR.candidates, *refused(FASTIFY_ERROR, releases)):
        files = candidate_files(FASTIFY_ERROR, candidate, releases)
        assert set(FASTIFY_ERROR.visible) <= set(files)
    special = FASTIFY_ERROR.of_kind("special")
    assert special is not None
    assert "createRFC9457Error" in str(candidate_files(FASTIFY_ERROR, special, releases)["index.js"])
