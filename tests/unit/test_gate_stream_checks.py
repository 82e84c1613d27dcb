"""The channel's accounts for go, cargo, vitest and mocha (issue 38 item 3), from real captured output: `go test`'s
events taken by the gate's `go` (go 1.19's test2json: a test binary's fake `--- PASS:` line naming another test and
a fake `ok` package line, tests/fixtures/gate/go/channel-cheats.go.txt), cargo's test binaries against
their `test result:` lines and cargo's word on their exit, vitest's and mocha's printed summaries."""

from __future__ import annotations

from pathlib import Path

from orchestrator.gate.observe.channel import parse
from orchestrator.gate.observe.crosscheck import check
from orchestrator.gate.observe.runners.channel_reports import channel_observed
from orchestrator.gate.observe.runners.native import go_test
from orchestrator.gate.observe.stream_checks import cargo_findings
from orchestrator.gate.observe.summaries import go_packages, mocha_summaries, vitest_summaries

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gate"
GO = FIXTURES / "go" / "channel-cheats"  # go 1.19
CARGO = (FIXTURES / "cargo" / "crosscheck_1.95.txt").read_text()


def test_go_s_events_on_the_channel_give_the_ids_its_verbose_output_gives() -> None:
    received = parse(GO.with_suffix(".jsonl").read_bytes())
    heard = channel_observed(received, Path("."))["go test"]
    printed = go_test(GO.with_suffix(".out").read_text())
    assert printed is not None
    assert heard.failing == ["example.com/m/a.TestBad", "example.com/m/b [build failed]"] == printed.failing
    assert heard.skipped_ids == ["example.com/m/a.TestSub/two"] == printed.skipped_ids
    assert heard.skipped == ["example.com/m/a.TestSub/two (why)"]  # its own log line, even after its parent's end
    assert received.sessions[0].ended and received.sessions[0].status == 2


def test_a_go_test_binary_s_fake_lines_are_tampering() -> None:
    received = parse(GO.with_suffix(".jsonl").read_bytes())
    output = GO.with_suffix(".out").read_text()
    found = check(received, output, 2, False, channel_observed(received, Path(".")))
    assert found == ["go test stream: example.com/m/a.TestOther reported `pass` without being started (a line its"
                     " test binary printed, not its runner's)",
                     "go test summary: the output has package result line(s) the gate's channel did not hear:"
                     " ok example.com/m/a"]
    assert go_packages(output).count(("ok", "example.com/m/a")) == 1


def test_a_go_test_left_mid_run_in_a_package_that_passed_is_tampering() -> None:
    lines = [line for line in GO.with_suffix(".jsonl").read_text().splitlines()
             if '"example.com/m/c"' not in line or '"TestC", "action": "pass"' not in line]
    received = parse("\n".join(lines).encode())
    found = check(received, GO.with_suffix(".out").read_text(), 2, False, {})
    assert "go test end: example.com/m/c.TestC started and never ended, yet its package passed (its test binary" \
           " left in the middle of it)" in found


def test_cargo_s_real_output_agrees_with_itself() -> None:
    assert cargo_findings(CARGO, timed_out=False) == []
    for name in ("green", "red-no-fail-fast", "red-fail-fast", "doctests-shared-name", "compile-error"):
        assert cargo_findings((FIXTURES / "cargo" / f"{name}.out").read_text(), timed_out=False) == [], name


def test_a_cargo_test_binary_that_leaves_or_prints_a_fake_result_is_tampering() -> None:
    left = CARGO.replace("test fake ... ok\ntest outside ... ok\n\ntest result: ok. 2 passed; 0 failed; 0 ignored;"
                         " 0 measured; 0 filtered out; finished in 0.01s\n", "test fake ... ok\n")
    assert cargo_findings(left, timed_out=False) == [
        "cargo test end: tests/it.rs printed 0 `test result:` lines (its test binary left before its end, or a test"
        " printed one)"]
    assert cargo_findings(left, timed_out=True) == []
    fake = CARGO.replace("test fake ... ok\n", "test fake ... ok\ntest result: ok. 9 passed; 0 failed; 0 ignored;"
                         " 0 measured; 0 filtered out; finished in 0.01s\n")
    assert cargo_findings(fake, timed_out=False)[0].startswith("cargo test end: tests/it.rs printed 2")
    said_ok = CARGO.replace("test result: FAILED. 1 passed; 1 failed", "test result: ok. 1 passed; 1 failed")
    assert cargo_findings(said_ok, timed_out=False) == [
        "cargo test status: src/lib.rs: its `test result:` says ok with 1 failed; cargo says its test binary failed"]
    fewer = CARGO.replace("test outside ... ok\n", "")
    assert cargo_findings(fewer, timed_out=False) == [
        "cargo test summary: tests/it.rs: its `test result:` says 2 passed, 0 failed, 0 ignored; its tests' lines"
        " say 1 ok, 0 FAILED, 0 ignored"]


def test_vitest_s_and_mocha_s_printed_summaries_are_read_as_counts() -> None:
    assert vitest_summaries((FIXTURES / "vitest" / "skips.out").read_text()) == [
        {"failed": 1, "passed": 1, "skipped": 3, "todo": 1, "total": 6}]
    coloured = "\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[32m4 passed\x1b[39m\x1b[22m\x1b[90m (4)\x1b[39m"
    assert vitest_summaries(coloured) == [{"failed": 0, "passed": 4, "skipped": 0, "todo": 0, "total": 4}]
    assert mocha_summaries((FIXTURES / "mocha" / "skips.out").read_text()) == [
        {"passing": 2, "pending": 3, "failing": 2}]
    assert mocha_summaries((FIXTURES / "mocha" / "green.out").read_text())[0]["failing"] == 0
