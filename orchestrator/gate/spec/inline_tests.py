"""Tests inside code files, which the base's version can't be overlaid for (Rust's `#[cfg(test)]` modules and
doctests): which of them a task changed. A test function whose body changed, every test of a test module whose
other code (a helper, a constant) changed, and a doc comment whose code example changed are test changes the
coach must accept; a removed test is the accounting's (gone), an added one is new."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.facts import TestChange
from orchestrator.gate.spec import oversized
from orchestrator.repo.git import GitRepo

_BLANK = re.compile(r"//[^\n]*|/\*.*?\*/|r(#*)\".*?\"\1|b?\"(?:\\.|[^\"\\])*\"|b?'(?:\\.|[^'\\\n])'", re.DOTALL)
_TEST_MODULE = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*\{")
_TEST_FN = re.compile(r"#\[(?:\w+::)*test\b[^\]]*\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?"
                      r"fn\s+(\w+)[^{]*\{")
_ITEM = re.compile(r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?"
                   r"(?:const\s+|async\s+|unsafe\s+|extern\s+\"\w+\"\s+)*(?:fn|struct|enum|trait|mod|const|static|type|union|macro_rules!)\s+(\w+)")
_FENCE = re.compile(r"^```(\w[\w,]*)?\s*$")
_NOT_RUN = {"ignore", "text", "no_run", "compile_fail", "console", "sh", "bash", "toml", "json"}
"""Code blocks rustdoc doesn't run (or runs to fail to compile): a change there is no test change."""


@dataclass(frozen=True)
class InlineChange:
    """A test inside a code file the task changed: its id as the runner names it, and the line in the task's file."""

    test: str
    line: int
    what: str


def _blanked(text: str) -> str:
    """`text` with comments and literals blanked (same length, newlines kept): braces in them don't count."""
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


def _unit_tests(text: str) -> dict[str, tuple[str, int, str]]:
    """`module::test` -> (its body, its line, the module's code outside its tests) for each `#[cfg(test)]` module."""
    code = _blanked(text)
    found: dict[str, tuple[str, int, str]] = {}
    for module in _TEST_MODULE.finditer(code):
        end = _block_end(code, module.end() - 1)
        tests = [(test.group(1), test.start(), _block_end(code, test.end() - 1))
                 for test in _TEST_FN.finditer(code, module.end(), end)]
        rest, at = [], module.end()
        for _, start, stop in tests:
            rest.append(text[at:start])
            at = stop
        rest.append(text[at:end])
        around = re.sub(r"\s+", " ", "".join(rest))
        for name, start, stop in tests:
            found[f"{module.group(1)}::{name}"] = (re.sub(r"\s+", " ", text[start:stop]),
                                                   text.count("\n", 0, start) + 1, around)
    return found


def _doctests(text: str) -> dict[str, tuple[str, int]]:
    """Item name -> (the code examples of its doc comment, the comment's first line)."""
    found: dict[str, tuple[str, int]] = {}
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if not re.match(r"^\s*//[/!]", lines[index]):
            index += 1
            continue
        start = index
        while index < len(lines) and re.match(r"^\s*//[/!]", lines[index]):
            index += 1
        code, fenced, runs = [], False, False
        for line in lines[start:index]:
            body = re.sub(r"^\s*//[/!] ?", "", line)
            if (fence := _FENCE.match(body.strip())) is not None:
                opening = not fenced
                fenced = opening
                runs = opening and not set((fence.group(1) or "rust").split(",")) & _NOT_RUN
            elif runs:
                code.append(body)
        following = next((line for line in lines[index:index + 5] if line.strip()), "")
        item = _ITEM.match(following)
        if code:
            found[item.group(1) if item else f"line {start + 1}"] = ("\n".join(code), start + 1)
    return found


def changed(path: str, base_text: str, text: str) -> list[InlineChange]:
    """The base's tests inside the code file `path` whose code the task changed."""
    if not path.endswith(".rs"):
        return []
    target = "src/lib.rs::" if path != "src/main.rs" else "src/main.rs::"
    prefix = "" if path in ("src/lib.rs", "src/main.rs") else _module_path(path)
    changes: list[InlineChange] = []
    before, after = _unit_tests(base_text), _unit_tests(text)
    for name, (body, _, around) in sorted(before.items()):
        if name in after and (after[name][0] != body or after[name][2] != around):
            what = "its body changed" if after[name][0] != body else "its test module's other code changed"
            changes.append(InlineChange(f"{target}{prefix}{name}", after[name][1], f"a #[cfg(test)] test in a code"
                                        f" file changed ({what}): it can't be overlaid, the coach must accept it"))
    docs_before, docs_after = _doctests(base_text), _doctests(text)
    for item, (examples, _) in sorted(docs_before.items()):
        if item in docs_after and docs_after[item][0] != examples:
            changes.append(InlineChange(f"{path} - {item}", docs_after[item][1], "a doctest's example changed: it"
                                        " can't be overlaid, the coach must accept it"))
    return changes


def _read(file: Path) -> str | None:
    return oversized.bounded_text(file)  # one too large to read is that module's finding


def _module_path(path: str) -> str:
    """`src/a/b.rs` -> `a::b::` (a `mod.rs` is its folder's module)."""
    parts = path.removeprefix("src/").removesuffix(".rs").split("/")
    parts = parts[:-1] if parts[-1] == "mod" else parts
    return "".join(f"{part}::" for part in parts)


async def inline_changes(repo: GitRepo, worktree: Path, against: str, paths: Iterable[tuple[str, str]]
                         ) -> list[TestChange]:
    """The changed tests inside the code files the task modified (`paths`: (base path, path in the tree))."""
    changes: list[TestChange] = []
    for base_path, path in sorted(paths):
        if not base_path.endswith(".rs"):
            continue
        base_text = await repo.show_file(against, base_path)
        text = await asyncio.to_thread(_read, worktree / path)
        if base_text is None or text is None:
            continue
        changes += [TestChange(test=found.test, fate="changed expectation", detail=f"{path}:{found.line}:"
                               f" {found.what}", file=base_path, accepted=None)
                    for found in changed(path, base_text, text)]
    return changes
