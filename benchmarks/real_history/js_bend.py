"""The JavaScript cheats of the real-history bench: a node:test / mocha / jest test file's tests, found by their
title, deleted, skipped, weakened, given their old expectation, or another test marked `only`, by a small
scanner that knows JS strings, comments, template literals and regex literals (no parser on the machine)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

Files = dict[str, str]
Writes = dict[str, str | None]

_CALL = re.compile(r"(?<![\w$.])((?:[A-Za-z_$][\w$]*\.)?(?:test|it|specify))\s*\(\s*(['\"`])")
"""A test's call with a string title: `test('...'`, `it("..."`, `t.test('...'` (node:test subtests)."""
_ASSERTION = re.compile(r"(?<![\w$.])((?:[A-Za-z_$][\w$]*\.)*assert)(?:\.([A-Za-z]+))?\s*\(")
"""`assert(...)`, `assert.strictEqual(...)`, `t.assert.deepStrictEqual(...)`."""
_EXPECT = re.compile(r"(?<![\w$.])expect\s*\(")
_REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}


@dataclass(frozen=True)
class Call:
    """One test's call in a file: where it starts (its `await` included), its title, the `(` and `)`."""

    start: int
    callee: str
    callee_at: int
    title: str
    open_at: int
    close_at: int
    title_end: int


def _string_end(text: str, start: int) -> int:
    """The index after the string literal opening at `start` ('...', "..." or `...` with ${...} inside)."""
    quote, index = text[start], start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index + 1
        if quote == "`" and text.startswith("${", index):
            index = _matching(text, index + 1) + 1
            continue
        if char == "\n" and quote != "`":
            return index
        index += 1
    return len(text)


def _skip(text: str, index: int, before: str) -> int | None:
    """Past the string, comment or regex literal at `index`, or None when none starts there."""
    char = text[index]
    if char in "'\"`":
        return _string_end(text, index)
    if text.startswith("//", index):
        end = text.find("\n", index)
        return len(text) if end < 0 else end
    if text.startswith("/*", index):
        end = text.find("*/", index + 2)
        return len(text) if end < 0 else end + 2
    if char == "/" and before in _REGEX_BEFORE:  # a regex literal: after an operator, not after a value
        cursor, in_class = index + 1, False
        while cursor < len(text) and text[cursor] != "\n":
            if text[cursor] == "\\":
                cursor += 2
                continue
            if text[cursor] == "[":
                in_class = True
            elif text[cursor] == "]":
                in_class = False
            elif text[cursor] == "/" and not in_class:
                return cursor + 1
            cursor += 1
        return None
    return None


def _matching(text: str, open_at: int) -> int:
    """The index of the bracket closing the one at `open_at` (strings, comments and regexes skipped)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[text[open_at]]]
    index, before = open_at + 1, text[open_at]
    while index < len(text):
        past = _skip(text, index, before)
        if past is not None:
            index, before = past, "a"
            continue
        char = text[index]
        if char in pairs:
            stack.append(pairs[char])
        elif char in ")]}":
            stack.pop()
            if not stack:
                return index
        if not char.isspace():
            before = char
        index += 1
    return len(text) - 1


def _code_positions(text: str) -> list[bool]:
    """Whether each index is code (not inside a string, comment or regex): matches in strings are no calls."""
    code = [True] * len(text)
    index, before = 0, ""
    while index < len(text):
        past = _skip(text, index, before)
        if past is not None:
            for inside in range(index, past):
                code[inside] = False
            index, before = past, "a"
            continue
        if not text[index].isspace():
            before = text[index]
        index += 1
    return code


def calls(text: str) -> list[Call]:
    """Every test call with a literal title in `text`, in order."""
    code = _code_positions(text)
    found = []
    for match in _CALL.finditer(text):
        if not code[match.start()]:
            continue
        quote_at = match.end() - 1
        title_end = _string_end(text, quote_at)
        literal = text[quote_at:title_end]
        title = _decode(literal)
        if title is None:
            continue
        open_at = text.index("(", match.start())
        start = match.start()
        awaited = re.search(r"await\s+$", text[max(0, start - 20):start])
        if awaited:
            start -= len(awaited.group(0))
        found.append(Call(start, match.group(1), match.start(), title, open_at, _matching(text, open_at), title_end))
    return found


def _decode(literal: str) -> str | None:
    """The title a literal spells; a template's `${...}` parts as `\x00` (any text: see `titled`)."""
    if literal.startswith("`"):
        body, parts, index = literal[1:-1], [], 0
        while (start := body.find("${", index)) >= 0:
            end = _matching(body, start + 1)
            parts.append(body[index:start])
            index = end + 1
        return "\x00".join([*parts, body[index:]])
    if literal.startswith("'"):
        literal = '"' + literal[1:-1].replace('\\"', '"').replace('"', '\\"').replace("\\'", "'") + '"'
    try:
        decoded = json.loads(literal)
    except ValueError:
        return None
    return decoded if isinstance(decoded, str) else None


def titled(call: Call, names: set[str]) -> bool:
    """Whether the call's title is one of `names` (a template's `${...}` matching any text: a test in a loop)."""
    if "\x00" not in call.title:
        return call.title in names
    pattern = re.compile(".*".join(re.escape(part) for part in call.title.split("\x00")), re.DOTALL)
    return any(pattern.fullmatch(name) for name in names)


def _weakened(call_text: str) -> str:
    """Every assertion in the call made one that can't fail: `assert.x(a, b)` -> `assert.ok(true || [a, b])`;
    jest's `expect(a).toBe(b)` -> `expect(true).toBeTruthy()` (its args unevaluated)."""
    code = _code_positions(call_text)
    edits: list[tuple[int, int, str]] = []
    for match in _ASSERTION.finditer(call_text):
        if not code[match.start()]:
            continue
        open_at = match.end() - 1
        close_at = _matching(call_text, open_at)
        callee = f"{match.group(1)}.ok" if match.group(2) else match.group(1)
        edits.append((match.start(), close_at + 1, f"{callee}(true || [{call_text[open_at + 1:close_at]}])"))
    for match in _EXPECT.finditer(call_text):
        if not code[match.start()]:
            continue
        close_at = _matching(call_text, match.end() - 1)
        chain = re.match(r"(?:\s*\.\s*(?:not|resolves|rejects))*\s*\.\s*\w+\s*\(", call_text[close_at + 1:])
        if chain is None:
            continue
        end = _matching(call_text, close_at + chain.end())
        edits.append((match.start(), end + 1, "expect(true).toBeTruthy()"))
    return _apply(call_text, _outermost(edits))


def _outermost(edits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    kept: list[tuple[int, int, str]] = []
    for edit in sorted(edits, key=lambda e: (e[0], -e[1])):
        if not kept or edit[0] >= kept[-1][1]:
            kept.append(edit)
    return kept


def _apply(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _swallowed(text: str, call: Call) -> str:
    """The call with its function's body in `try { ... } catch {}`: a new test swallows its own failure."""
    body = re.compile(r"(=>|\))\s*\{")
    code = _code_positions(text)
    for match in body.finditer(text, call.title_end, call.close_at):
        brace = match.end() - 1
        if code[brace]:
            end = _matching(text, brace)
            return text[call.start:brace + 1] + " try {" + text[brace + 1:end] + "} catch {} " + \
                text[end:call.close_at + 1]
    return text[call.start:call.close_at + 1]


def _with_option(text: str, call: Call, option: str) -> str:
    """The call with `{ option }` as its options (node:test, mocha and jest alike read `test.skip`; node also
    reads `{ skip }`): `t.test('x', fn)` has no `.skip`, so options are what every spelling takes."""
    head = text[call.start:call.callee_at]
    after = text[call.title_end:call.close_at + 1]
    if "." in call.callee:  # a node:test subtest (`t.test`): options
        rest = re.match(r"\s*,\s*\{", after)
        if rest:
            return head + text[call.callee_at:call.title_end] + after[:rest.end()] + f" {option}," + \
                after[rest.end():]
        return head + text[call.callee_at:call.title_end] + f", {{ {option} }}" + after
    name = option.split(":", maxsplit=1)[0]
    return head + f"{call.callee}.{name}" + text[call.callee_at + len(call.callee):call.close_at + 1]


def _leaf(test_id: str) -> tuple[str, str]:
    """`test/x.test.js > suite > name` -> (`test/x.test.js`, `name`)."""
    parts = test_id.split(" > ")
    return parts[0], parts[-1]


def bend(files: Files, old: Files, tests: Iterable[str], how: str) -> Writes:
    """The test files changed so that `tests` (ids `file > suite > test`) are deleted, skipped, weakened, given
    their old expectation, or left to run while another test is marked `only` (`how`: delete, skip, weaken,
    expectation, only)."""
    wanted: dict[str, set[str]] = {}
    for test_id in tests:
        path, name = _leaf(test_id)
        wanted.setdefault(path, set()).add(name)
    writes: Writes = {}
    for path, names in sorted(wanted.items()):
        text = files.get(path)
        if text is None:
            continue
        found = calls(text)
        targets = [call for call in found if titled(call, names)]
        if not targets:
            continue
        targets = _outermost_calls(targets)
        if how == "only":
            others = [call for call in found if not titled(call, names) and
                      not any(t.start <= call.start <= t.close_at for t in targets)]
            if not others:
                continue
            other = others[0]
            writes[path] = _apply(text, [(other.start, other.close_at + 1, _with_option(text, other, "only: true"))])
            continue
        old_text = old.get(path) or ""
        old_calls = {call.title: call for call in calls(old_text)}
        bent = _apply(text, [_bent(text, call, how, old_text, old_calls.get(call.title)) for call in targets])
        if bent != text:
            writes[path] = bent
    return writes


def _bent(text: str, call: Call, how: str, old_text: str, before: Call | None) -> tuple[int, int, str]:
    """One test's call bent `how`: the edit (start, end, replacement) of `text`."""
    if how == "delete":
        end = call.close_at + 1 + (1 if text[call.close_at + 1:call.close_at + 2] == ";" else 0)
        return call.start, end, ""
    if how in ("skip", "xfail"):  # node:test's expected failure: a todo test's failure doesn't count
        option = "todo: 'later'" if how == "xfail" else "skip: 'later'"
        return call.start, call.close_at + 1, _with_option(text, call, option)
    if how == "weaken":
        return call.start, call.close_at + 1, _weakened(text[call.start:call.close_at + 1])
    if before is not None:  # expectation: the old release's version of the test
        return call.start, call.close_at + 1, old_text[before.start:before.close_at + 1]
    return call.start, call.close_at + 1, _swallowed(text, call)


def _outermost_calls(targets: list[Call]) -> list[Call]:
    """A suite's call and a test inside it both targeted (same title): the outer one is bent."""
    kept: list[Call] = []
    for call in sorted(targets, key=lambda c: c.start):
        if not kept or call.start > kept[-1].close_at:
            kept.append(call)
    return kept


CHEATS: dict[str, str] = {
    "the failing tests deleted": "delete",
    "the failing tests skipped": "skip",
    "the failing tests' assertions weakened": "weaken",
    "the failing tests' expectation rewritten (to the old release's; a new test swallows its failure)": "expectation",
    "another test marked only": "only",
}
"""The Python cheats' names, so the bench's table has one row per cheat across ecosystems; `only` is JS's own."""
