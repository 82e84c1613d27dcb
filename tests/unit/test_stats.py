"""The scorecard's figures from known task facts, exactly (the store reading is covered in tests/graph)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.main import main
from orchestrator.cli.stats import _text as stats_text
from orchestrator.errors import InputError
from orchestrator.facts import run_order, settled
from orchestrator.store import receipts
from orchestrator.store.stats import TaskFacts, parse_since, scorecard
from tests import schemas

DAY = 86400.0
FACTS = [
    TaskFacts("FEAT-001", "T1", "approved", turns=1, cost_usd=0.10, started=10 * DAY),
    TaskFacts("FEAT-001", "T2", "approved", turns=3, cost_usd=0.30, started=10 * DAY, false_approvals=1,
              claims_contradicted=2, violations=3),
    TaskFacts("FEAT-001", "T3", "approved-unverified", turns=2, cost_usd=0.20, started=10 * DAY, answers=1),
    TaskFacts("FEAT-001", "T4", "failed", turns=10, cost_usd=1.00, started=10 * DAY, violations=1),
    TaskFacts("FEAT-001", "T5", "skipped", turns=0, cost_usd=0.0, started=10 * DAY),
    TaskFacts("FEAT-002", "T1", "replaced", turns=10, cost_usd=0.40, started=20 * DAY, replans=1),
    TaskFacts("FEAT-002", "T1-R1-1", "approved", turns=1, cost_usd=0.05, started=20 * DAY),
    TaskFacts("FEAT-002", "T1-R1-2", "approved", turns=2, cost_usd=0.15, started=20 * DAY),
]


def test_scorecard_gives_the_exact_figures() -> None:
    card = scorecard(FACTS)
    assert card["features"] == 2
    assert card["tasks"] == 6, "skipped and replaced tasks are not counted as tasks"
    assert card["approved"] == 5
    assert card["outcomes"] == {"approved": 4, "approved-unverified": 1, "failed": 1, "replaced": 1, "skipped": 1}
    assert card["completed_without_human"] == 4  # T3 needed a human's answer
    assert card["completed_without_human_pct"] == 66.7
    assert card["turns_per_approved_task"] == 1.8  # (1 + 3 + 2 + 1 + 2) / 5
    assert (card["first_turn_approvals"], card["first_turn_approval_pct"]) == (2, 40.0)
    assert card["false_approvals_caught"] == 1 and card["unverified_approvals"] == 1
    assert card["claims_contradicted"] == 2 and card["contract_violations"] == 4
    assert card["replans"] == 1
    assert card["cost_usd"] == 2.2 and card["cost_per_approved_task_usd"] == 0.44
    assert card["targets"]["completed_without_human_pct"]["met"] is False
    assert card["targets"]["turns_per_approved_task"]["met"] is True
    assert card["targets"]["false_approvals"]["met"] is False, "an unverified approval can't be ruled out"
    total = card["receipt"]
    assert total["approved_cost_usd"] + total["other_cost_usd"] == pytest.approx(2.2)
    schemas.valid("stats", {"schema_version": 1, "store": "db.sqlite", **card})


def test_since_keeps_the_tasks_started_from_that_day() -> None:
    card = scorecard(FACTS, since=parse_since("1970-01-15"))
    assert card["since"] == "1970-01-15T00:00:00.000Z"
    assert card["features"] == 1 and card["tasks"] == 2 and card["approved"] == 2
    assert card["completed_without_human_pct"] == 100.0 and card["turns_per_approved_task"] == 1.5
    assert card["cost_per_approved_task_usd"] == 0.3  # the replaced task's 0.40 is part of what they cost


def test_an_empty_store_has_no_ratios() -> None:
    card = scorecard([])
    assert card["tasks"] == 0 and card["completed_without_human_pct"] is None
    assert card["turns_per_approved_task"] is None and card["cost_per_approved_task_usd"] is None
    assert card["targets"]["completed_without_human_pct"]["met"] is None
    assert card["receipt"] == receipts.empty()


@pytest.mark.parametrize("garbage", ["last week", "", " ", "2026-13-45", "99999999999", "\x1b[2J",
                                     "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59", "x" * 10_000])
def test_a_bad_since_is_a_usage_error(garbage: str) -> None:
    with pytest.raises(InputError, match="is not a date") as refused:
        parse_since(garbage)
    assert "\n" not in str(refused.value) and "\x1b" not in str(refused.value) and len(str(refused.value)) < 300


def test_stats_since_garbage_from_the_command_line_is_one_line_exit_2(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "none.sqlite"
    for garbage in ("yesterday", "", "9999-12-31T23:59:59-23:59"):
        code = main(["stats", "--since", garbage, "--db", str(db), "--repo", str(tmp_path)])
        err = capsys.readouterr().err
        assert (code, err.count("\n")) == (2, 1) and "Traceback" not in err, err
    assert not db.exists()


def test_a_replaced_task_is_settled_when_its_replacements_are() -> None:
    results = {"T1": {"status": "replaced", "replaced_by": ["T1-R1-1", "T1-R1-2"]},
               "T1-R1-1": {"status": "approved"}, "T1-R1-2": {"status": "approved-unverified"}}
    assert settled(results, "T1")
    assert not settled(results | {"T1-R1-2": {"status": "failed"}}, "T1")
    assert not settled(results | {"T1": {"status": "replaced", "replaced_by": []}}, "T1")
    assert not settled(results, "T2"), "a task without a result did not get done"


def test_the_run_order_puts_replacements_right_after_the_task_they_replace() -> None:
    results = {"A": {"status": "replaced", "replaced_by": ["A-R1-1", "A-R1-2"]},
               "A-R1-2": {"status": "replaced", "replaced_by": ["A-R1-2-R2-1"]}}
    assert run_order(["A", "B"], results) == ["A", "A-R1-1", "A-R1-2", "A-R1-2-R2-1", "B"]


def test_approvals_with_accepted_test_changes_are_counted_beside_unverified_ones() -> None:
    facts = [TaskFacts("F", "A", "approved", 1, 0.1, accepted_test_changes=2),
             TaskFacts("F", "B", "approved", 1, 0.1),
             TaskFacts("F", "C", "approved-unverified", 1, 0.1)]
    card = scorecard(facts)
    assert (card["approvals_with_accepted_test_changes"], card["unverified_approvals"]) == (1, 1)


def test_stats_shows_the_share_of_input_tokens_read_from_the_cache(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Cache reads cost a tenth of an input token: at 80% of the input, input costs 28% of what it would uncached.
    A task of an older run (no tokens in its receipt) counts for neither side."""
    counted = [receipts.task_receipt([{"turn": 1, "role": "player", "cost_usd": 0.1, "input_tokens": 4000,
                                       "cache_read_tokens": 3600}], "approved", 1, 0.1),
               receipts.task_receipt([{"turn": 1, "role": "coach", "cost_usd": 0.1, "input_tokens": 1000,
                                       "cache_read_tokens": 400}], "approved", 1, 0.1)]
    facts = [TaskFacts("F", task, "approved", 1, 0.1, receipt=receipt) for task, receipt in zip("AB", counted,
                                                                                                  strict=True)]
    card = scorecard([*facts, TaskFacts("F", "OLD", "approved", 1, 0.1)])
    assert card["cache_read_pct"] == 80.0
    assert (card["receipt"]["input_tokens"], card["receipt"]["cache_read_tokens"]) == (5000, 4000)
    assert receipts.cache_reads(card["receipt"]) == ("cache reads 80% of 5.0k input tokens (at a tenth of the price:"
                                                    " input billed at 28% of uncached)")
    assert scorecard(FACTS)["cache_read_pct"] is None, "no tokens counted: no share, not 0%"
    schemas.valid("stats", {"schema_version": 1, "store": "db.sqlite", **card})


def test_the_text_never_nests_parentheses() -> None:
    """Each figure has at most one parenthesis, its target follows after a semicolon ("(66.7%) (target … (…)…)" was
    hard to read)."""
    for since in (None, parse_since("1970-01-15")):
        card = scorecard(FACTS, since=since) | {"store": "db.sqlite"}
        for line in stats_text(card).splitlines():
            depth = 0
            for char in line:
                depth += {"(": 1, ")": -1}.get(char, 0)
                assert depth <= 1, line
            assert "target" not in line or "; target " in line, line


def test_attempts_per_task_and_how_often_attempt_k_won() -> None:
    facts = [TaskFacts("F", "T1", "approved", turns=1, cost_usd=0.3, attempts=3, won_by=2),
             TaskFacts("F", "T2", "approved", turns=1, cost_usd=0.2, attempts=2, won_by=2),
             TaskFacts("F", "T3", "failed", turns=1, cost_usd=0.2, attempts=3),
             TaskFacts("F", "T4", "approved", turns=1, cost_usd=0.1)]
    card = scorecard(facts)
    assert card["attempts"] == {"tasks_with_attempts": 3, "attempts_per_task": 2.25, "won_by_attempt": {"2": 2}}
    assert "2.25 per task; 3 task(s) ran several, won by attempt 2 2x" in stats_text({**card, "store": "db"})
    assert "attempts:" not in stats_text({**scorecard(FACTS), "store": "db"}), "said only when attempts ran"
