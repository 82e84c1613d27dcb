"""The real-history bench's JS cheats find a test by its title past strings, comments, template literals and regex
literals, and each bends only that test, leaving a file node still parses."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from benchmarks.real_history.js_bend import bend, calls

FILE = "test/mul.test.js"
SOURCE = """'use strict'
const { test } = require('node:test')
const { mul } = require('..')

// test('commented out', () => {})
const pattern = /\\(test\\('not a test'/

test('two by three', (t) => {
  t.assert.strictEqual(mul(2, 3), 6, `a template ${'with ) inside'}`)
})

test("zero", async (t) => {
  await t.test('zero times five', function (t) {
    t.assert.deepStrictEqual([mul(0, 5)], [0])
  })
})
"""
OLD = SOURCE.replace("mul(2, 3), 6", "mul(2, 3), 5")


def test_calls_are_found_by_title_outside_comments_strings_and_regexes() -> None:
    found = calls(SOURCE)
    assert [call.title for call in found] == ["two by three", "zero", "zero times five"]
    assert SOURCE[found[0].close_at - 1:found[0].close_at + 1] == "})"
    assert SOURCE[found[2].start:].startswith("await t.test(")


@pytest.mark.parametrize(("how", "bent", "kept"), [
    ("delete", "", ["test('two by three'"]),
    ("skip", "test.skip('two by three'", []),
    ("weaken", "t.assert.ok(true || [mul(2, 3), 6,", ["t.assert.strictEqual"]),
    ("expectation", "mul(2, 3), 5", ["mul(2, 3), 6"]),
    ("only", 'test.only("zero"', []),
])
def test_each_cheat_bends_only_the_named_test(how: str, bent: str, kept: list[str]) -> None:
    writes = bend({FILE: SOURCE}, {FILE: OLD}, [f"{FILE} > two by three"], how)
    text = writes[FILE]
    assert text is not None
    assert bent in text
    assert not any(gone in text for gone in kept)
    assert "t.assert.deepStrictEqual([mul(0, 5)], [0])" in text  # the other tests as they were
    if shutil.which("node"):
        subprocess.run(["node", "--check", "-"], input=text, text=True, check=True, capture_output=True)


def test_a_subtest_is_skipped_by_its_options_and_a_new_test_swallows_its_failure() -> None:
    skipped = bend({FILE: SOURCE}, {}, [f"{FILE} > zero > zero times five"], "skip")[FILE]
    assert skipped is not None and "await t.test('zero times five', { skip: 'later' }, function (t)" in skipped
    swallowed = bend({FILE: SOURCE}, {}, [f"{FILE} > two by three"], "expectation")[FILE]
    assert swallowed is not None and "(t) => { try {" in swallowed and "} catch {} })" in swallowed


def test_a_test_in_another_file_is_not_bent() -> None:
    assert bend({FILE: SOURCE}, {}, ["test/other.test.js > two by three"], "delete") == {}


def test_a_test_titled_by_a_template_in_a_loop_is_found_by_its_ids() -> None:
    source = ("const { test } = require('node:test')\n\nfor (const n of [0, 10]) {\n"
              "  test(`times ${n} is ${n * 2}`, () => {})\n}\n")
    writes = bend({FILE: source}, {}, [f"{FILE} > times 10 is 20"], "skip")
    assert writes[FILE] == source.replace("test(`", "test.skip(`")
    assert bend({FILE: source}, {}, [f"{FILE} > times ten"], "skip") == {}


def test_jest_and_mocha_spellings_are_bent_too() -> None:
    source = ("describe('mul', () => {\n  it('two', () => {\n    expect(mul(2, 3)).toBe(6);\n"
              "    expect(f()).not.toEqual([1, 2]);\n  });\n  it('zero', () => { expect(mul(0, 1)).toBe(0) });\n});\n")
    named = ["t.test.js > mul > two"]
    weakened = bend({"t.test.js": source}, {}, named, "weaken")["t.test.js"]
    assert weakened is not None and weakened.count("expect(true).toBeTruthy();") == 2
    assert "expect(mul(0, 1)).toBe(0)" in weakened
    assert "it.skip('two'" in (bend({"t.test.js": source}, {}, named, "skip")["t.test.js"] or "")
    assert "it.only('zero'" in (bend({"t.test.js": source}, {}, named, "only")["t.test.js"] or "")
