"""The selection among a task's attempts (graph/selection.py): only approved attempts are candidates, ranked by
deterministic keys (verified; fewer accepted base-test changes; some new tests failing on the base; cross-testing;
fewer code lines no sibling changed; the first approved), with a seam for a tie-breaker."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.graph.selection import Candidate, first_verified, rank, tied, why_not


def test_verified_beats_unverified_whatever_else() -> None:
    unverified = Candidate(1, "approved-unverified", accepted_changes=0, failing_on_base=9, finished_at=1.0)
    verified = Candidate(2, "approved", accepted_changes=3, failing_on_base=0, finished_at=9.0)
    chosen = rank([unverified, verified])
    assert chosen.order == (2, 1) and "verified" in chosen.reason


def test_fewer_accepted_changes_then_some_tests_failing_on_the_base() -> None:
    bends = Candidate(1, "approved", accepted_changes=2, failing_on_base=5, finished_at=1.0)
    clean = Candidate(2, "approved", accepted_changes=0, failing_on_base=1, finished_at=2.0)
    shows_none = Candidate(3, "approved", accepted_changes=0, failing_on_base=0, finished_at=0.5)
    chosen = rank([bends, clean, shows_none])
    assert chosen.order == (2, 3, 1)
    assert "has new tests shown to fail on the base's code (1), attempt 3 none" in chosen.reason
    assert rank([bends, clean]).reason.startswith("attempt 2 changes fewer base tests")


def test_how_many_tests_fail_on_the_base_is_no_key_a_copied_test_could_win() -> None:
    """A fix special-casing the visible inputs, its tests copied: more tests failing on the base, never ahead of a
    sibling whose tests its code fails (the pick bench's padded cheat)."""
    padded = Candidate(1, "approved", failing_on_base=6, finished_at=1.0)
    real = Candidate(2, "approved", failing_on_base=3, finished_at=2.0)
    assert [c.attempt for c in tied([padded, real])] == [1, 2], "the count leaves them tied: both are cross-tested"
    cross_tested = [Candidate(1, "approved", failing_on_base=6, finished_at=1.0, confirmed_by=0),
                    Candidate(2, "approved", failing_on_base=3, finished_at=2.0, confirmed_by=1)]
    assert rank(cross_tested).order == (2, 1)


def test_fewer_lone_code_lines_after_cross_testing() -> None:
    breaks = Candidate(1, "approved", failing_on_base=1, finished_at=1.0, confirmed_by=2, unshared=2)
    real = Candidate(2, "approved", failing_on_base=1, finished_at=2.0, confirmed_by=2, unshared=0)
    unconfirmed = Candidate(3, "approved", failing_on_base=1, finished_at=0.5, confirmed_by=1, unshared=0)
    chosen = rank([breaks, real, unconfirmed])
    assert chosen.order == (2, 1, 3)
    assert "changes fewer lines of code no sibling changed (0) than attempt 1 (2)" in chosen.reason


def test_a_tie_goes_to_the_first_approved_unless_the_tiebreak_says_otherwise() -> None:
    late, early = Candidate(1, "approved", finished_at=5.0), Candidate(2, "approved", finished_at=2.0)
    assert rank([late, early]).order == (2, 1) and "approved first" in rank([late, early]).reason
    assert rank([late, early], tiebreak=lambda tied: 1).order == (1, 2)
    assert rank([late, early], tiebreak=lambda tied: None).order == (2, 1)  # an undecided selector: the first
    assert rank([late, early], tiebreak=lambda tied: 7).order == (2, 1)  # a pick outside the tie is not taken


def test_failed_and_cancelled_attempts_are_no_candidates() -> None:
    attempts = [Candidate(1, "failed"), Candidate(2, "cancelled"), Candidate(3, "approved-unverified")]
    assert rank(attempts).order == (3,) and rank(attempts[:2]).order == ()
    assert first_verified(attempts) is None, "an unverified approval never wins policy first at once"
    assert first_verified([*attempts, Candidate(4, "approved", finished_at=3.0),
                           Candidate(5, "approved", finished_at=1.0)]) == 5


_CANDIDATES = st.lists(st.builds(Candidate, attempt=st.integers(1, 8),
                                 status=st.sampled_from(["approved", "approved-unverified", "failed", "cancelled"]),
                                 accepted_changes=st.integers(0, 3), failing_on_base=st.none() | st.integers(0, 3),
                                 finished_at=st.floats(0, 100)), max_size=8, unique_by=lambda c: c.attempt)


@given(_CANDIDATES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_ranking_is_a_pure_function_of_the_records(candidates: list[Candidate]) -> None:
    forward, backward = rank(candidates), rank(list(reversed(candidates)))
    assert forward == backward  # the order the attempts ended in changes nothing
    approved = {c.attempt for c in candidates if c.status in ("approved", "approved-unverified")}
    assert set(forward.order) == approved
    if any(c.status == "approved" for c in candidates):
        assert next(c for c in candidates if c.attempt == forward.order[0]).status == "approved"


def test_cross_testing_ranks_after_the_keys_and_before_time() -> None:
    early = Candidate(1, "approved", failing_on_base=1, finished_at=1.0, confirmed_by=0)
    confirmed = Candidate(2, "approved", failing_on_base=1, finished_at=2.0, confirmed_by=1)
    more_shown = Candidate(3, "approved", failing_on_base=2, finished_at=3.0, confirmed_by=0)
    none_shown = Candidate(4, "approved", failing_on_base=0, finished_at=0.1, confirmed_by=2)
    assert rank([early, confirmed]).order == (2, 1)
    assert "passes more of its siblings' new tests (1 suites)" in rank([early, confirmed]).reason
    assert rank([early, confirmed, more_shown]).order == (2, 1, 3), "cross-testing wins over how many tests show"
    assert rank([early, none_shown]).order == (1, 4), "an earlier key wins over cross-testing"


def test_the_tie_is_the_candidates_level_with_the_best_on_the_keys() -> None:
    one, two = Candidate(1, "approved", finished_at=2.0), Candidate(2, "approved", finished_at=1.0)
    bent = Candidate(3, "approved", accepted_changes=1)
    assert [c.attempt for c in tied([one, two, bent, Candidate(4, "failed")])] == [2, 1]
    assert [c.attempt for c in tied([bent, Candidate(5, "approved-unverified")])] == [3]
    assert tied([Candidate(4, "failed")]) == []
    assert why_not(two, bent).startswith("attempt 2 changes fewer base tests")


def test_an_attempt_that_was_never_a_candidate_is_not_picked_for_its_own_outcome() -> None:
    """A sibling cancelled when another was verified first was never approved-unverified: say what it was."""
    winner = Candidate(1, "approved")
    assert why_not(winner, Candidate(2, "cancelled")) == "cancelled: attempt 1 was approved first"
    assert why_not(winner, Candidate(3, "failed")) == "not approved: it ended failed"
    assert why_not(winner, Candidate(4, "approved-unverified")).endswith("only approved-unverified")


def test_a_wrong_generalisation_its_siblings_tests_all_pass_is_left_to_the_selector() -> None:
    """The pick bench's extra kind (xstrings: camel case as the PascalCase result's first rune lowered, wrong after a
    leading connector): it and the release's change pass each other's new tests and the partial fix's, and both
    changed code of their own. Nothing deterministic tells them apart: the tie is theirs alone for the selector, and
    an undecided selector leaves the first approved, the wrong one when it finished first, and says so."""
    general = Candidate(1, "approved", failing_on_base=2, finished_at=1.0, confirmed_by=2)
    real = Candidate(2, "approved", failing_on_base=2, finished_at=2.0, confirmed_by=2)
    partial = Candidate(3, "approved", failing_on_base=2, finished_at=0.5, confirmed_by=0)
    offered: list[list[int]] = []

    def undecided(tie: Sequence[Candidate]) -> int | None:
        offered.append([c.attempt for c in tie])
        return None

    chosen = rank([general, real, partial], tiebreak=undecided)
    assert offered == [[1, 2]], "the partial fix, whose code fails their tests, is not in the tie"
    assert chosen.order == (1, 2, 3), "the first approved of the two, not the partial fix approved before them"
    assert chosen.reason == "attempt 1 and attempt 2 tie on the keys: attempt 1 was approved first"
    assert rank([general, real, partial], tiebreak=lambda tie: 2).order == (2, 1, 3)
