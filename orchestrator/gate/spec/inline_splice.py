"""Tests inside code files on the base's code, for the new-tests-on-base run (gate/spec/new_tests.py): a Rust code file
the task changed goes back to the base's version with the task's `#[cfg(test)]` modules spliced in (in place of
the base's module of the same name, else at the end), so the `#[test]` functions the task added or changed there
run against the code it started from. Only files the base has: a new file's tests have no base code to run on."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.gate.spec.inline_tests import _TEST_MODULE, _blanked, _block_end, _module_path, _unit_tests

_RUST_TARGET = re.compile(r"^(?:(?P<package>.+)/)?src/(?P<rest>.+\.rs)$")


@dataclass(frozen=True)
class Spliced:
    """One code file as the base has it, with the task's test modules: its path, its text, and the test functions
    the task added or changed there, by their path in the crate (`tests::it_adds`, `calc::tests::it_adds`)."""

    path: str
    text: str
    tests: tuple[str, ...]
    only_tests: bool
    """The task changed nothing of the file but its test modules (the spliced text is the task's)."""


def _modules(text: str) -> dict[str, tuple[int, int]]:
    """Each `#[cfg(test)] mod NAME { … }` of a Rust file: name -> its span, the attribute included."""
    code = _blanked(text)
    return {found.group(1): (found.start(), _block_end(code, found.end() - 1)) for found in _TEST_MODULE.finditer(code)}


def splice(base_text: str, text: str) -> str:
    """`base_text` with every test module of `text` in place of the base's module of that name, or at the end."""
    ours, theirs = _modules(base_text), _modules(text)
    spliced = base_text
    replaced = sorted(((ours[name], span) for name, span in theirs.items() if name in ours), reverse=True)
    for (start, end), (from_, to) in replaced:  # last first: earlier spans keep their offsets
        spliced = spliced[:start] + text[from_:to] + spliced[end:]
    appended = [text[from_:to] for name, (from_, to) in theirs.items() if name not in ours]
    return spliced.rstrip("\n") + "".join(f"\n\n{module}" for module in appended) + "\n"


def _in_crate(path: str) -> str | None:
    """The module path of a Rust file's items in its crate (`src/a/b.rs` -> `a::b::`, `src/lib.rs` -> ``); None
    for a file no lib or main target is rooted in (a build script, an example, an integration test, a binary of
    its own under `src/bin/`)."""
    found = _RUST_TARGET.match(path)
    if found is None or found.group("rest").startswith("bin/"):
        return None
    rest = found.group("rest")
    return "" if rest in ("lib.rs", "main.rs") else _module_path(f"src/{rest}")


def changed_tests(path: str, base_text: str, text: str) -> tuple[str, ...]:
    """The `#[test]` functions of `path`'s test modules that the task added, or whose body or module (a helper,
    a `use`) it changed, by their path in the crate."""
    inner = _in_crate(path)
    if inner is None:
        return ()
    before, after = _unit_tests(base_text), _unit_tests(text)
    changed = [name for name, (body, _, around) in after.items()
               if name not in before or before[name][0] != body or before[name][2] != around]
    return tuple(f"{inner}{name}" for name in sorted(changed))


def spliced(path: str, base_text: str | None, text: str | None) -> Spliced | None:
    """The base's version of the code file `path` with the task's test modules, when the task added or changed a
    test there; None otherwise."""
    if not path.endswith(".rs") or base_text is None or text is None:
        return None
    tests = changed_tests(path, base_text, text)
    if not tests:
        return None
    base_code = splice(base_text, text)
    return Spliced(path, base_code, tests, re.sub(r"\s+", " ", base_code).strip() == re.sub(r"\s+", " ", text).strip())


_TARGETS = {"src/lib.rs": "--lib", "src/main.rs": "--bins"}


def test_ids(passing: Sequence[str], spliced_files: Sequence[Spliced]) -> list[str]:
    """The passing ids (cargo's `src/lib.rs::tests::it_adds`) of the tests spliced in."""
    names = {name for found in spliced_files for name in found.tests}
    return [test for test in passing if (parts := test.split("::", 1))[0] in _TARGETS and parts[1:] and
            parts[1] in names]


def restriction(files: Sequence[str], tests: Sequence[str], whole: dict[str, str]) -> dict[str, str]:
    """What restricts the run when tests inside code files (their ids `tests`) are among those run: cargo's targets
    of both kinds (`--test <name>` for integration test files, `--lib`/`--bins` for the spliced ones), or the whole
    command when other test files are run too; `whole`, the restriction of `files` alone."""
    if not tests:
        return whole
    targets = [re.fullmatch(r"tests/(\w+)(?:\.rs|/main\.rs)", path) for path in files]
    if not all(targets):
        return {}
    names = [f"--test {found.group(1)}" for found in targets if found]
    kinds = sorted({_TARGETS[test.split("::", 1)[0]] for test in tests})
    return {"AUTOBUILD_CARGO_TEST_ARGS": " ".join([*sorted(set(names)), *kinds])}
