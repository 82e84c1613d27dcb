"""What the screen on code that knows it is judged looks for, in every language: the runners' names and variables, a
finding's shape, and tree-sitter's parsers for JavaScript, TypeScript, Go and Rust."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import PurePath

import tree_sitter
import tree_sitter_go
import tree_sitter_javascript
import tree_sitter_rust
import tree_sitter_typescript


@dataclass(frozen=True)
class Finding:
    """One construct in one version of a file: its line, what it does, and its text normalized (`key`), so the
    same construct on the base and in the task's version is the same finding wherever it moved."""

    line: int
    what: str
    key: str


PRESENCE = "reads whether a test runner is running"
TOUCHES = "touches the test runner or its output"
LIES = "answers without looking at what it is compared with"
OPAQUE = "runs code the gate can't read"

RUNNER_VARIABLES = frozenset({
    "PYTEST_CURRENT_TEST", "PYTEST_VERSION", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "_PYTEST_RAISE", "UNITTEST_MAIN", "NODE_TEST_CONTEXT",
    "JEST_WORKER_ID", "VITEST", "VITEST_WORKER_ID", "VITEST_POOL_ID", "VITEST_MODE", "MOCHA_WORKER_ID",
    "AVA_PATH", "TAP", "TAP_CHILD_ID", "RUST_TEST_THREADS", "RUST_TEST_NOCAPTURE", "RUST_TEST_TIME_UNIT",
    "RUST_TEST_TIME_INTEGRATION", "RUST_TEST_SHUFFLE", "NEXTEST", "NEXTEST_RUN_ID", "NEXTEST_EXECUTION_MODE",
    "GOTEST", "GO_TEST", "_called_from_test", "CARGO_TARGET_TMPDIR", "NODE_ENV", "BABEL_ENV", "HUSKY",
    "COREPACK_ROOT",
})
"""Variables that exist only while a runner runs the code (cargo's for integration tests too), pytest's documented
`sys._called_from_test`, and the files only a test run has; NODE_ENV and BABEL_ENV, which jest and vitest set to
`test` (code that reads them can be what only the tests get); HUSKY and COREPACK_ROOT, which the gate sets for the
commands it runs (a product's code has no use for them)."""
_DESCRIPTOR_LISTINGS = frozenset({"/proc/self/fd", "/dev/fd", "/proc/self/fdinfo", "/proc/thread-self/fd"})
_VARIABLE_PREFIXES = ("AUTOBUILD_", "PYTEST_", "JEST_", "VITEST_", "NODE_TEST_", "RUST_TEST_", "NEXTEST_",
                      "CARGO_BIN_EXE_")

_RUNNER_WORDS = re.compile(r"pytest|py\.test|unittest|nosetests|nose2|doctest|jest|vitest|mocha|jasmine|node:test"
                           r"|(?:^|[^\w])--test\b|\.test$|\.test\.exe$|_test\.go|^-{0,2}test\.\w*$"
                           r"|\.(?:test|spec)\.[cm]?[jt]sx?$|(?:^|/)_?tests?/|(?:^|/)deps(?:/|$)"
                           r"|autobuild|gate-own|encodedfile|captureio|dontreadfrominput|assertionrewrit|capturefixture"
                           r"|logcapturehandler|liveloggin|syscapture|fdcapture|terminalreporter|sitecustomize")
"""A runner's name in a string a probe is compared with (`"pytest" in sys.modules`, `os.Args[0]` ending in `.test`):
the gate's own (`autobuild`, its folders, the `sitecustomize` its runs load), and the classes pytest puts in place of
the streams, the import finders and the root logger's handlers (`type(sys.stdout).__name__ == "EncodedFile"`)."""
_EXACT_WORDS = frozenset({"test", "tests", "testing", "nose", "test_", "_test", "tests_", "test.", "tests."})
_PLACE_WORDS = re.compile(r"autobuild|worktrees")
"""Where the gate runs the tests: a task's worktree under the checkout's `.autobuild/worktrees/`, on an `autobuild/…`
branch, its `.git` a file naming git's `worktrees/` folder. The user's checkout is none of these."""


def names_runner_variable(text: str) -> bool:
    """A variable only a runner sets, a file only a test run has, or the open descriptors' listing (where the gate's
    channel is found)."""
    return text in RUNNER_VARIABLES or text.startswith(_VARIABLE_PREFIXES) or text.endswith(
        ("conftest.py", ".pytest_cache")) or text.rstrip("/") in _DESCRIPTOR_LISTINGS


def names_runner(text: str) -> bool:
    """A string that names a test runner: a module, a program, a test binary's suffix, the word `test` alone."""
    return text.strip().lower() in _EXACT_WORDS or _RUNNER_WORDS.search(text.strip().lower()) is not None


def names_gate_place(text: str, ids: frozenset[str] = frozenset()) -> bool:
    """A string that names where the gate runs the tests (`.autobuild`, `worktrees`, or `ids`: the run's own feature
    and task, its worktree's folders), compared with where the code runs (its file, the working directory, the
    branch), tells the gate's run from the user's."""
    lowered = text.lower()
    return _PLACE_WORDS.search(lowered) is not None or any(word in lowered for word in ids)


def place_ids(worktree: PurePath) -> frozenset[str]:
    """The run's own names in a task's worktree path (`.autobuild/worktrees/FEAT-001/TASK-003.a2`: the feature's and
    the task's, an attempt's suffix apart; ids have no dots), lower-cased, where they can't be an ordinary word: with
    a digit, five characters or more."""
    return frozenset(name.lower() for part in worktree.parts[-2:] for name in part.split(".")
                     if len(name) >= 5 and any(char.isdigit() for char in name))


def names_git_file(text: str) -> bool:
    """A path to a checkout's `.git` (`.git`, `../.git`) or into it (`.git/HEAD`): a file in a worktree, a folder in
    the user's checkout."""
    return ".git" in text.rstrip("/\\").replace("\\", "/").split("/")


def more_path_follows(node: tree_sitter.Node) -> bool:
    """Whether a string is a path's part that more parts follow (`path.join(root, ".git", "HEAD")`,
    `filepath.Join(dir, ".git", "HEAD")`): a file read there is git's own, read as any tool reads a repository."""
    parent = node.parent
    if parent is None or parent.type not in ("arguments", "argument_list"):
        return False
    function = parent.parent.child_by_field_name("function") if parent.parent is not None else None
    joins = text_of(function).replace("::", ".").rsplit(".", 1)[-1] in ("join", "Join", "resolve", "joinpath")
    return joins and parent.named_children[-1] != node


def into_git_folder(text: str) -> bool:
    """A path into `.git` as a folder (`.git/HEAD`): there in the user's checkout, not in a worktree."""
    parts = text.replace("\\", "/").split("/")
    return ".git" in parts[:-1] and bool(parts[-1])


def asks_git_kind(node: tree_sitter.Node, value: str, headers: Iterable[tree_sitter.Node], kind: re.Pattern[str],
                  existence: re.Pattern[str]) -> bool:
    """A string `value` naming `.git` (not a part more of a path follows) where what decides asks whether it is a
    file or reads it (`kind`), or, for a path into it (`.git/HEAD`), whether it is there (`existence`): JavaScript's,
    Go's and Rust's calls for these are each language's patterns."""
    return names_git_file(value) and not more_path_follows(node) and any(
        kind.search(text_of(header)) or (into_git_folder(value) and existence.search(text_of(header)))
        for header in headers)


_COMPARING_CALLS = frozenset({
    "includes", "startsWith", "endsWith", "indexOf", "lastIndexOf", "match", "matchAll", "search", "test", "exec",
    "Contains", "HasPrefix", "HasSuffix", "Index", "LastIndex", "EqualFold", "MatchString", "Match", "contains",
    "starts_with", "ends_with", "find", "rfind", "eq", "ne", "is_match"})
"""Calls that compare a string with another (JavaScript's, Go's `strings`, Rust's)."""
_COMPARING_OPERATORS = frozenset({"==", "===", "!=", "!==", "in"})


def compared(node: tree_sitter.Node) -> bool:
    """Whether a string (or a pattern, or a name given one) is compared with something (JavaScript, Go, Rust): an
    operand of `==`, an argument of a call that compares (`cwd.includes(...)`, `strings.Contains(wd, ...)`), the
    pattern tested (`/autobuild/.test(cwd)`); not a program's argument (`exec.Command("git", "worktree", "list")`)."""
    current, parent = node, node.parent
    while parent is not None and (parent.type in ("template_substitution", "parenthesized_expression",
                                                  "template_string", "interpreted_string_literal") or (
            parent.type == "binary_expression" and text_of(parent.child_by_field_name("operator")) == "+")):
        current, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == "binary_expression":
        return text_of(parent.child_by_field_name("operator")) in _COMPARING_OPERATORS
    if parent.type == "member_expression" and parent.child_by_field_name("object") == current:
        return text_of(parent.child_by_field_name("property")) in ("test", "exec")  # `/autobuild/.test(cwd)`
    if parent.type not in ("arguments", "argument_list"):
        return False
    function = parent.parent.child_by_field_name("function") if parent.parent is not None else None
    name = text_of(function).replace("::", ".").rsplit(".", 1)[-1] if function is not None else ""
    return name in _COMPARING_CALLS


def normal(text: str) -> str:
    return " ".join(text.split())


@cache
def parser(language: str) -> tree_sitter.Parser:
    """tree-sitter's parser for "javascript", "typescript", "tsx", "go" or "rust"."""
    grammars = {"javascript": tree_sitter_javascript.language, "typescript": tree_sitter_typescript.language_typescript,
                "tsx": tree_sitter_typescript.language_tsx, "go": tree_sitter_go.language,
                "rust": tree_sitter_rust.language}
    return tree_sitter.Parser(tree_sitter.Language(grammars[language]()))


def parse(language: str, text: str) -> tree_sitter.Node:
    return parser(language).parse(text.encode("utf-8")).root_node


def text_of(node: tree_sitter.Node | None) -> str:
    return (node.text or b"").decode("utf-8", errors="replace") if node is not None else ""


def line_of(node: tree_sitter.Node) -> int:
    return node.start_point[0] + 1


def walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """Every node under `node`, itself first, depth first (a stack: no recursion limit on deep files)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def ancestors(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def string_value(node: tree_sitter.Node) -> str | None:
    """A string literal's text without its quotes (JavaScript, Go, Rust), or the string an expression of literals
    builds (`"je" + "st"`, Rust's `concat!`), as a name built piece by piece is read as the whole; None for anything
    else."""
    if node.type in ("string", "template_string", "interpreted_string_literal", "raw_string_literal",
                     "string_literal"):
        return text_of(node).strip("`'\"")
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return string_value(node.named_children[0])
    if node.type == "binary_expression" and text_of(node.child_by_field_name("operator")) == "+":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        parts = [string_value(side) if side is not None else None for side in (left, right)]
        return "".join(part for part in parts if part is not None) if None not in parts else None
    if node.type == "macro_invocation" and text_of(node.child_by_field_name("macro")) == "concat":
        pieces = [child for tree in node.named_children if tree.type == "token_tree" for child in tree.named_children]
        parts = [string_value(piece) for piece in pieces]
        return "".join(part for part in parts if part is not None) if parts and None not in parts else None
    return None


def probe_bound(root: tree_sitter.Node, probed: Callable[[tree_sitter.Node], bool]) -> frozenset[str]:
    """Names given a value read through a probe (`_, file, _, _ := runtime.Caller(1)`, `const exe =
    process.argv[1]`, `let name = thread::current()`): a later branch on them reads the probe."""
    sides = {"variable_declarator": ("name", "value"), "short_var_declaration": ("left", "right"),
             "assignment_statement": ("left", "right"), "assignment_expression": ("left", "right"),
             "let_declaration": ("pattern", "value")}
    found: set[str] = set()
    for node in walk(root):
        fields = sides.get(node.type)
        if fields is None:
            continue
        target, value = (node.child_by_field_name(field) for field in fields)
        if target is not None and value is not None and probed(value):
            found.update(text_of(inner) for inner in walk(target) if inner.type == "identifier")
    return frozenset(found - {"_"})


_CLOSURES = frozenset({"arrow_function", "function_expression", "function", "closure_expression", "func_literal"})


def is_statement(node: tree_sitter.Node, compounds: frozenset[str] = frozenset()) -> bool:
    return node.type.endswith(("_statement", "_declaration")) or node.type in compounds


def statement_of(node: tree_sitter.Node, compounds: frozenset[str] = frozenset()) -> tree_sitter.Node:
    """The innermost statement around `node` (its declaration, or the `if` it is the condition of)."""
    return next((up for up in ancestors(node) if is_statement(up, compounds)), node)


def deciding(node: tree_sitter.Node, functions: frozenset[str], loops: frozenset[str],
             compounds: frozenset[str] = frozenset()) -> Iterator[tree_sitter.Node]:
    """What decides around `node`: its statement, or the condition or head of the compound statement it is in, and
    the heads of the loops around it, up to its named function; a closure's statement and the one it is in
    (`if (process.argv.some(a => a.includes("jest")))`)."""
    first, below = True, node
    for up in ancestors(node):
        if up.type in functions:
            if up.type not in _CLOSURES:
                if first and below.type != "parameters":  # a tail expression (Rust's): what the function answers
                    yield below
                return
            first = True
        below = up if up.type != "block" else below
        if is_statement(up, compounds) and (first or up.type in loops):
            first = False
            bodies = {child.id for field in ("body", "consequence", "alternative")
                      if (child := up.child_by_field_name(field)) is not None}
            yield from (child for child in up.children if child.id not in bodies)


def scope_of(node: tree_sitter.Node) -> str:
    """The named functions, methods and types around `node`, outermost first: where a touch of the runner is (a
    base function that already swapped a stream may change how without it being the task's)."""
    names = [text_of(up.child_by_field_name("name")) for up in ancestors(node)
             if up.child_by_field_name("name") is not None and up.type.endswith(("_declaration", "_definition",
                                                                                  "_item", "_spec"))]
    return "scope:" + ".".join(reversed(names))
