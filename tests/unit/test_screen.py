"""The tamper screen (gate/spec/screen.py) on real snippets: only what the task's version adds counts, aliases and
module-level marks included, and a marker inside a string or a comment never does."""

from __future__ import annotations

from orchestrator.gate.spec.screen import screen

BASE = "import pytest\n\n\ndef test_a():\n    assert 1 + 1 == 2\n"


def whats(path: str, base: str | None, text: str) -> list[tuple[str | None, str]]:
    return [(hit.test, hit.what) for hit in screen(path, base, text)]


def test_python_markers_aliases_and_module_marks() -> None:
    alias = BASE + "\n\nlater = pytest.mark.skip\n\n\n@later\ndef test_b():\n    assert True\n"
    assert whats("tests/test_x.py", BASE, alias) == [("test_b", "a later marker"),
                                                     ("test_b", "an assertion that can't fail")]
    module = BASE.replace("import pytest\n", "import pytest\n\npytestmark = [pytest.mark.xfail]\n")
    assert whats("tests/test_x.py", BASE, module) == [(None, "a module-level skip/xfail mark (pytestmark)")]
    same = BASE.replace("assert 1 + 1 == 2", "x = 3\n    assert x == x")
    assert whats("tests/test_x.py", BASE, same) == [("test_a", "an assertion that can't fail")]


def test_python_early_exit_in_a_conftest() -> None:
    assert whats("conftest.py", "", "import os\nos._exit(0)\n") == [(None, "an early exit (os._exit)")]
    assert whats("conftest.py", "import sys\nsys.exit(0)\n", "import sys\nsys.exit(0)\n") == [], "already there"


def test_js_markers_but_not_in_strings_or_comments() -> None:
    base = "test('a', () => { expect(add(1, 2)).toBe(3); });\n"
    text = base + "// test.skip('old')\nconst s = 'it.only(';\ntest.only('b', () => { expect(x).toBe(x); });\n"
    assert whats("src/a.test.js", base, text) == [(None, "a .only marker"), (None, "an assertion that can't fail")]
    assert whats("src/a.test.js", base, base + "xit('c', () => {});\n") == [(None, "an xit marker")]


def test_go_and_rust_markers() -> None:
    go = "package calc\n\nfunc TestA(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(\"x\")\n\t}\n}\n"
    skipped = go.replace("\tif Mul", "\tt.Skip(\"later\")\n\tif Mul")
    assert whats("mul_test.go", go, skipped) == [(None, "a t.Skip call")]
    rust = "#[test]\nfn adds() { assert_eq!(add(1, 2), 3); }\n"
    assert whats("tests/add.rs", rust, rust.replace("#[test]\n", "#[test]\n#[ignore]\n")) == [
        (None, "an #[ignore] attribute")]
    assert whats("tests/add.rs", rust, rust + "// #[ignore]\n") == []


def test_new_tests_that_pass_when_they_fail_or_never_fail() -> None:
    """jest's `test.failing`, vitest's `test.fails`, a bare `#[should_panic]` (or one expecting an assertion's
    panic) and a Go test with no failure call; a panic test naming its own message and a helper given `t` are
    ordinary."""
    js = "test.failing('div', () => { expect(div(6, 3)).toBe(2); });\nit.fails('zero', () => {});\n"
    assert whats("test/div.test.js", None, js) == [(None, "a .failing marker"), (None, "a .fails marker")]
    rust = ("#[test]\n#[should_panic]\nfn a() { assert_eq!(div(6, 3), 2); }\n"
            "#[test]\n#[should_panic(expected = \"assertion failed\")]\nfn b() {}\n"
            "#[test]\n#[should_panic(expected = \"divide by zero\")]\nfn c() { div(1, 0); }\n")
    assert [line for line in (hit.line for hit in screen("tests/div.rs", None, rust))] == [2, 5]
    go = ("package calc\n\nimport \"testing\"\n\nfunc TestDiv(t *testing.T) {\n\tif div(6, 3) != 2 {\n"
          "\t\tt.Logf(\"got %d\", div(6, 3))\n\t}\n}\n\nfunc TestHelped(t *testing.T) {\n\tcheck(t, div(6, 3))\n}\n\n"
          "func TestFails(t *testing.T) {\n\tif div(6, 3) != 2 {\n\t\tt.Errorf(\"bad\")\n\t}\n}\n")
    assert whats("calc/div_test.go", None, go) == [("TestDiv", "an assertion that can't fail (a Go test with no"
                                                                " failure call)")]
