"""Assertions that can't fail, per runner (gate/spec/vacuous.py through the tamper screen): each vacuous form the task
adds is a hit, the real assertion beside it is not."""

from __future__ import annotations

import pytest

from orchestrator.gate.spec.screen import screen

PY_BASE = "import os\nimport unittest\n\n\nclass TestA(unittest.TestCase):\n    def test_a(self):\n        x = f()\n"


def whats(path: str, base: str | None, text: str) -> list[tuple[str | None, str]]:
    return [(hit.test, hit.what) for hit in screen(path, base, text)]


@pytest.mark.parametrize("line", ["self.assertTrue(True)", "self.assertEqual(x, x)", "assert True",
                                  "self.assertIsNotNone(1)", "self.assertIsNone(None)", "self.assertFalse(0)",
                                  "self.assertEqual(f(2), f(2))", "assert x or True", "self.assertTrue(x or 1)",
                                  "assert not False", "self.assertFalse(x and False)"])
def test_python_assertions_that_cant_fail(line: str) -> None:
    text = PY_BASE + f"        {line}\n"
    assert ("test_a", "an assertion that can't fail") in whats("tests/test_a.py", PY_BASE, text)


@pytest.mark.parametrize("line", ["self.assertTrue(x)", "self.assertEqual(x, 3)", "assert x == 3",
                                  "self.assertIsNotNone(x)", "self.assertFalse(x.closed)", "self.assertNotEqual(x, x)"])
def test_python_real_assertions_are_no_hit(line: str) -> None:
    assert whats("tests/test_a.py", PY_BASE, PY_BASE + f"        {line}\n") == []


@pytest.mark.parametrize(("block", "why"), [
    ("if False:\n            self.assertEqual(x, 3)", "behind a condition that is always false"),
    ("if 0:\n            assert x == 3", "behind a condition that is always false"),
    ("if SLOW and x:\n            assert x == 3", "behind a condition that is always false"),
    ("return\n        self.assertEqual(x, 3)", "after a `return`"),
    ("if os.environ.get('CHECK'):\n            self.assertEqual(x, 3)", "behind an environment check"),
    ("if not os.getenv('SKIP_IT'):\n            pass\n        else:\n            assert x == 3",
     "behind an environment check"),
    ("if True:\n            pass\n        else:\n            assert x == 3",
     "in the else of a condition that is always true"),
    ("try:\n            assert x == 3\n        except AssertionError:\n            pass",
     None),
    ("try:\n            self.assertEqual(x, 3)\n        except:\n            print('no')",
     None),
])
def test_python_assertions_that_never_run(block: str, why: str | None) -> None:
    base = "SLOW = False\n" + PY_BASE
    text = base + f"        {block}\n"
    what = f"an assertion that never runs ({why})" if why else \
        "an assertion that never fails (its failure caught and dropped)"
    assert ("test_a", what) in whats("tests/test_a.py", base, text)


def test_python_live_branches_are_no_hit() -> None:
    text = PY_BASE + "        if x:\n            assert x == 3\n        if True:\n            assert x == 3\n" \
        "        try:\n            assert x == 3\n        except ValueError:\n            pass\n" \
        "        try:\n            assert x == 3\n        except AssertionError:\n            raise\n" \
        "        return\n"
    assert whats("tests/test_a.py", PY_BASE, text) == []


JS_BASE = "const assert = require('node:assert');\ntest('a', () => {\n  const x = f();\n"


@pytest.mark.parametrize("line", ["assert.ok(true);", "assert(true);", "expect(true).toBe(true);",
                                  "expect(1).toBe(1);", "assert.strictEqual(x, x);", "expect(x).toEqual(x);",
                                  "expect(true).toBeTruthy();"])
def test_js_assertions_that_cant_fail(line: str) -> None:
    text = JS_BASE + f"  {line}\n}});\n"
    assert (None, "an assertion that can't fail") in whats("test/a.test.js", JS_BASE + "});\n", text)


@pytest.mark.parametrize("line", ["assert.ok(x);", "assert(x > 1);", "expect(x).toBe(1);",
                                  "assert.strictEqual(x, 3);", "assert.ok(truex);", "expect(x).toBeTruthy();",
                                  "if (x) { assert.ok(x); }", "// assert.ok(true);", "const s = 'assert(true)';"])
def test_js_real_assertions_are_no_hit(line: str) -> None:
    assert whats("test/a.test.js", JS_BASE + "});\n", JS_BASE + f"  {line}\n}});\n") == []


@pytest.mark.parametrize("line", ["if (false) { assert.strictEqual(x, 3); }",
                                  "if (0) {\n    expect(x).toBe(3);\n  }",
                                  "if (process.env.CHECK) { assert.equal(x, 3); }"])
def test_js_assertions_that_never_run(line: str) -> None:
    text = JS_BASE + f"  {line}\n}});\n"
    assert (None, "an assertion that never runs (behind a condition that is always false)") in whats(
        "test/a.test.js", JS_BASE + "});\n", text)


def test_js_an_assertion_whose_failure_is_caught() -> None:
    caught = JS_BASE + "  try { assert.strictEqual(x, 3); } catch (e) {}\n});\n"
    assert whats("test/a.test.js", JS_BASE + "});\n", caught) == [
        (None, "an assertion that never fails (its failure caught and dropped)")]
    handled = JS_BASE + "  try { assert.strictEqual(x, 3); } catch (e) { throw e; }\n});\n"
    assert whats("test/a.test.js", JS_BASE + "});\n", handled) == []


GO = ("package calc\n\nfunc TestMul(t *testing.T) {\n\tif got := Mul(2, 3); got != 6 {\n"
      "\t\tt.Errorf(\"Mul(2, 3) = %d\", got)\n\t}\n\tif Mul(0, 1) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n")


def test_go_failure_calls_turned_into_log_calls() -> None:
    logged = GO.replace("t.Errorf(", "t.Logf(")
    assert whats("calc/mul_test.go", GO, logged) == [
        ("TestMul", "1 failure call(s) turned into log calls (t.Log/t.Logf)")]
    both = logged.replace("t.Fatal(", "t.Log(")
    assert whats("calc/mul_test.go", GO, both) == [
        ("TestMul", "2 failure call(s) turned into log calls (t.Log/t.Logf)")]
    assert screen("calc/mul_test.go", GO, logged)[0].line == 3


def test_go_a_log_call_added_beside_the_failure_calls_is_no_hit() -> None:
    more = GO.replace("\tif Mul(0, 1)", "\tt.Logf(\"checking zero\")\n\tif Mul(0, 1)")
    assert whats("calc/mul_test.go", GO, more) == []
    assert whats("calc/mul_test.go", None, GO.replace("t.Errorf(", "t.Logf(")) == [], "a new file has no base test"


def test_go_failure_call_behind_false() -> None:
    dead = GO.replace("\tif Mul(0, 1) != 0 {", "\tif false {")
    assert (None, "an assertion that never runs (behind a condition that is always false)") in whats(
        "calc/mul_test.go", GO, dead)
    assert whats("calc/mul_test.go", GO, GO.replace("Mul(0, 1) != 0", "Mul(0, 1) != 1")) == []


RUST = "#[test]\nfn adds() {\n    let x = add(1, 2);\n"


@pytest.mark.parametrize("line", ["assert!(true);", "assert_eq!(x, x);", "assert!(x == x);",
                                  "assert_eq!(add(1, 2), add(1, 2));"])
def test_rust_assertions_that_cant_fail(line: str) -> None:
    found = whats("tests/add.rs", RUST + "}\n", RUST + f"    {line}\n}}\n")
    if "add(1, 2), add" in line:  # a call compared with itself: beyond a tokenizer, as the screen says
        assert found == []
    else:
        assert found == [(None, "an assertion that can't fail")]


@pytest.mark.parametrize("line", ["assert_eq!(x, 3);", "assert!(x > 2);", "assert_eq!(xs, x);",
                                  "if x > 2 { assert!(x == 3); }"])
def test_rust_real_assertions_are_no_hit(line: str) -> None:
    assert whats("tests/add.rs", RUST + "}\n", RUST + f"    {line}\n}}\n") == []


def test_rust_assertion_behind_false() -> None:
    found = whats("tests/add.rs", RUST + "}\n", RUST + "    if false { assert_eq!(x, 3); }\n}\n")
    assert found == [(None, "an assertion that never runs (behind a condition that is always false)")]
