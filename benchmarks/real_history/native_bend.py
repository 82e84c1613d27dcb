"""The real-history cheats for Go and Rust: a FAIL_TO_PASS test (by the gate's id: `example.com/m.TestX/case`,
`tests/t.rs::name`, `src/lib.rs::tests::name`) deleted, skipped (`t.Skip`, `#[ignore]`), its assertions weakened
(Go's `t.Error`/`t.Fatal` logged instead; Rust's `assert!` family shadowed by no-op macros in the test's body) or
given its old expectation (the old release's function; a test new in this release is weakened instead). Also which
code files' `#[cfg(test)]` tests a release changed: a coach accepts those files for the gold variant."""

from __future__ import annotations

import re
from collections.abc import Iterable

from orchestrator.gate import inline_tests_changed

Files = dict[str, str]
Writes = dict[str, str | None]

_BLANK = re.compile(r"//[^\n]*|/\*.*?\*/|`[^`]*`|r(#*)\".*?\"\1|b?\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])'",
                    re.DOTALL)
_GO_NAME = re.compile(r"\.((?:Test|Fuzz)\w*)(?:/|$)")
_NO_OP_ASSERTS = "".join(f"macro_rules! {name} {{ ($($t:tt)*) => {{}}; }} " for name in (
    "assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "debug_assert_ne"))


def _blanked(text: str) -> str:
    """`text` with comments and literals blanked (same length): braces in them don't count."""
    return _BLANK.sub(lambda found: re.sub(r"[^\n]", " ", found.group(0)), text)


def _block_end(code: str, opening: int) -> int:
    depth = 0
    for index in range(opening, len(code)):
        if code[index] == "{":
            depth += 1
        elif code[index] == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(code)


def _functions(text: str, name: str, rust: bool) -> list[tuple[int, int, int, str]]:
    """Each test function `name` in `text`: (its start with its attributes, its body's `{`, its end, the name of
    Go's `*testing.T` parameter)."""
    code = _blanked(text)
    if rust:
        pattern = re.compile(r"^[ \t]*((?:#\[[^\]]*\]\s*)+)(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+"
                             + re.escape(name) + r"\s*[<(]", re.MULTILINE)
    else:
        pattern = re.compile(r"^func\s+" + re.escape(name) + r"\s*\(\s*(\w+)\s+\*testing\.[TF]\b", re.MULTILINE)
    found = []
    for match in pattern.finditer(code):
        if rust and "test" not in match.group(1):
            continue
        opening = code.index("{", match.end())
        end = _block_end(code, opening)
        end = end + 1 if code[end:end + 1] == "\n" else end
        found.append((match.start(), opening, end, "" if rust else match.group(1)))
    return found


def _targets(files: Files, test_id: str) -> tuple[str, list[str], bool] | None:
    """The test function's name, the files it may be in, and whether it is Rust's."""
    if (go := _GO_NAME.search(test_id)) is not None and "::" not in test_id:
        return go.group(1), sorted(path for path in files if path.endswith("_test.go")), False
    if "::" not in test_id or test_id.startswith("doc-tests "):
        return None  # a doctest, or a package that failed to build: no function to bend
    target, _, rest = test_id.partition("::")
    name = rest.split("::")[-1].split(" ")[0]  # "name - should panic": cargo's note on a #[should_panic] test
    if target.startswith("tests/"):
        folder = target.removesuffix(".rs")
        return name, sorted(p for p in files if p == target or (p.startswith(folder + "/") and p.endswith(".rs"))), True
    return name, sorted(p for p in files if p.startswith("src/") and p.endswith(".rs")), True


def _bent(text: str, old_text: str | None, name: str, rust: bool, how: str) -> str:
    functions = _functions(text, name, rust)
    for start, opening, end, param in sorted(functions, reverse=True):
        if how == "delete":
            replacement = ""
        elif how in ("skip", "xfail"):  # Go has no expected failure: a skip
            mark = "#[should_panic]\n" if how == "xfail" else "#[ignore]\n"
            replacement = (mark + text[start:end] if rust else
                           f"{text[start:opening + 1]}\n\t{param}.Skip(\"later\"){text[opening + 1:end]}")
        elif how == "expectation" and old_text is not None and (old := _functions(old_text, name, rust)):
            replacement = old_text[old[0][0]:old[0][2]]
        else:  # weaken (and a new test's expectation: it swallows its own failure)
            replacement = _weakened(text[start:end], opening - start, param, rust)
        text = text[:start] + replacement + text[end:]
    return text


def _weakened(function: str, opening: int, param: str, rust: bool) -> str:
    if rust:
        return function[:opening + 1] + " " + _NO_OP_ASSERTS + function[opening + 1:]
    body = re.sub(rf"\b{param}\.(?:Errorf|Fatalf)\(", f"{param}.Logf(", function)
    body = re.sub(rf"\b{param}\.(?:Error|Fatal)\(", f"{param}.Log(", body)
    return re.sub(rf"\b{param}\.(?:Fail|FailNow)\(\)", f"{param}.Log()", body)


def bend(files: Files, old: Files, tests: Iterable[str], how: str) -> Writes:
    """The Go or Rust test files changed so that `tests` (the gate's ids) are deleted, skipped, weakened or given
    their old expectation (`how`: delete, skip, weaken, expectation); {} when none is a Go or Rust test."""
    wanted: dict[str, set[tuple[str, bool]]] = {}
    for test_id in tests:
        if (found := _targets(files, test_id)) is not None:
            name, paths, rust = found
            for path in paths:
                wanted.setdefault(path, set()).add((name, rust))
    if how == "weaken":  # Go's assertion helpers (`check(t, ...)`) the tests call: weakened with them
        for path, names in list(wanted.items()):
            for name, rust in list(names):
                if not rust:
                    for helper in _go_helpers(files[path], name):
                        for other in (p for p in files if p.endswith("_test.go") and f"func {helper}(" in files[p]):
                            wanted.setdefault(other, set()).add((helper, False))
    writes: Writes = {}
    for path, names in sorted(wanted.items()):
        text = files[path]
        for name, rust in sorted(names):
            text = _bent(text, old.get(path), name, rust, how)
        if text != files[path]:
            writes[path] = text
    return writes


def _go_helpers(text: str, name: str) -> set[str]:
    """The functions of the test's package the test `name` hands its `*testing.T` to."""
    helpers: set[str] = set()
    for start, _, end, param in _functions(text, name, rust=False):
        helpers |= {call for call in re.findall(rf"\b([a-z]\w*)\(\s*{param}\b", text[start:end])
                    if call not in ("func", "make", "len", "append")}
    return helpers


def inline_changed(old: Files, new: Files, code: Iterable[str]) -> tuple[str, ...]:
    """The code files whose `#[cfg(test)]` tests or doctests the release changed (the gate can't overlay those:
    the coach must accept them, by file)."""
    return tuple(path for path in code if path in old and path in new
                 and inline_tests_changed(path, old[path], new[path]))
