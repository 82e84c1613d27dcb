"""Completion and blocker markers: only the agent's own prose counts."""

from __future__ import annotations

from agents.markers import has_promise, parse_blocker

BLOCKER = """Work stopped.
<blocker>
description: the payment API needs a sandbox key
action: add PAYMENTS_KEY to .env
resume: rerun the task
</blocker>"""


def test_promise_in_prose_counts() -> None:
    assert has_promise("All done.\n<promise>COMPLETE</promise>")


def test_promise_in_code_block_or_inline_or_quote_does_not_count() -> None:
    assert not has_promise("Example:\n```\n<promise>COMPLETE</promise>\n```\n")
    assert not has_promise("The prompt says to print `<promise>COMPLETE</promise>` at the end.")
    assert not has_promise("> <promise>COMPLETE</promise>\nquoted from the prompt")
    assert not has_promise("I will not say <promise>COMPLETE</promise> yet because tests fail")


def test_blocker_parsed_and_hashed_stably() -> None:
    blocker = parse_blocker(BLOCKER)
    assert blocker is not None
    assert blocker.description == "the payment API needs a sandbox key"
    assert len(blocker.hash) == 8
    assert parse_blocker(BLOCKER.upper().lower()).hash == blocker.hash  # type: ignore[union-attr]


def test_blocker_template_echo_and_code_do_not_count() -> None:
    template = "<blocker>\ndescription: what blocks the work\naction: what a person must do\n" \
               "resume: how the work continues afterwards\n</blocker>"
    assert parse_blocker(template) is None
    assert parse_blocker(f"```\n{BLOCKER}\n```") is None
    assert parse_blocker("<blocker>\ndescription: x\n</blocker>") is None


def test_a_spec_test_conflict_blocker_names_the_test_and_the_requirement() -> None:
    text = ("I can't do both.\n<blocker>\ndescription: the test expects the old rounding\naction: decide which is"
            " right\nresume: run the task again\nkind: spec-test-conflict\ntest: tests/test_x.py::test_round\n"
            "requirement: round half to even\n</blocker>")
    found = parse_blocker(text)
    assert found is not None
    assert (found.kind, found.test, found.requirement) == ("spec-test-conflict", "tests/test_x.py::test_round",
                                                            "round half to even")
    plain = parse_blocker(text.replace("kind: spec-test-conflict\n", ""))
    assert plain is not None and plain.kind == "" and plain.hash == found.hash
