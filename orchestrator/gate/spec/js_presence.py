"""JavaScript and TypeScript code that reads whether a test runner is running: a runner's variables, globals or
name where the process's state decides (its command line, environment, modules, stack, parent), the gate's place
compared with the code's own, and counts of what the process holds against a number."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from orchestrator.gate.spec.code_tokens import (
    PRESENCE,
    TOUCHES,
    Finding,
    asks_git_kind,
    compared,
    deciding,
    line_of,
    names_gate_place,
    names_runner,
    names_runner_variable,
    normal,
    probe_bound,
    scope_of,
    statement_of,
    string_value,
    text_of,
    walk,
)
from orchestrator.gate.spec.js_strings import const_values, constants, folded

GLOBALS = frozenset({"jest", "vi", "vitest", "describe", "it", "test", "expect", "beforeEach", "afterEach",
                      "beforeAll", "afterAll", "mocha", "jasmine", "suite", "__vitest_worker__",
                      "__vitest_environment__", "__vitest_index__", "specify", "xit", "xdescribe", "fdescribe",
                      "suiteSetup", "suiteTeardown"})
"""What a runner puts in the global scope."""
_GLOBAL_OBJECTS = ("globalThis", "global", "window", "self")
_PROBES = re.compile(r"^(?:process\.(?:argv|execArgv|env|mainModule|title|ppid)|require\.(?:cache|main|resolve)"
                     r"|import\.meta|globalThis|global|module\.parent|(?:new Error\(\)|\w+)\.stack)\b")
_PLACES = re.compile(r"^(?:__dirname|__filename|process\.cwd|module\.(?:filename|path|paths)|require\.main"
                     r"|import\.meta|path\.\w+|fs\.\w+|\w+Sync\b|child_process|os\.(?:homedir|tmpdir)|simpleGit|git\.)")
"""Where the code runs: its file, the working directory, paths made absolute, what a file or a program (git's branch)
says; with a name of the gate's place (`process.cwd().includes(".autobuild")`), the gate's run is told from the
user's."""
_READS_KIND = re.compile(r"(?:\.isFile\(\)|readFile(?:Sync)?\b|\.isSymbolicLink\(\))")
_EXISTENCE = re.compile(r"(?:existsSync|statSync|lstatSync|accessSync|\.isDirectory\(\)|\baccess\(|\bstat\()")
"""Whether `.git` is a file or what it holds (a worktree's names git's `worktrees/` folder); whether anything is in
it (`.git/HEAD`)."""
_CALLERS = (r"^(?:(?:new Error\(\)|\w+)\.stack|Error\.captureStackTrace|Error\.prepareStackTrace"
            r"|arguments\.callee\.caller)\b")
"""Who called: a branch on the stack, or on a function's `caller`, with any string tells a test's call from any
other."""
_TEST_WORDS = re.compile(r"(?:^|[^a-z])(?:tests?|specs?)(?:[^a-z]|$)", re.IGNORECASE)
"""What a pattern tested against the stack looks for when it looks for a test's file (`/[.](test|spec)[.]/`); other
patterns parse frames (`/at (.+):([0-9]+)/`), as error reporters do."""
_COUNTED = re.compile(r"(?:require\.cache|process\.(?:env|execArgv|moduleLoadList)|module\.children|globalThis|global"
                      r"|(?:new\s+)?Error\([^)]*\)\.stack)")
"""What a test run holds more of than any other run (loaded modules, variables, the runner's flags, the globals it
installs: `expect`, `describe`, …) and how deep the code is called (the stack's lines): counted
(`Object.keys(require.cache).length > 40`), a test run is told from any other with no runner's name to read.
`process.argv` is not: its length is how any program reads its arguments."""
_COUNTED_VIA = frozenset({"Object.keys", "Object.values", "Object.entries", "Object.getOwnPropertyNames",
                          "Object.getOwnPropertySymbols", "Reflect.ownKeys", "Array.from"})
_COMPARISONS = frozenset({"<", ">", "<=", ">=", "==", "===", "!=", "!=="})
FUNCTIONS = frozenset({"function_declaration", "function_expression", "function", "arrow_function",
                        "method_definition", "generator_function_declaration", "generator_function"})
_LOOPS = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})


_LISTING = re.compile(r"(?:ps|pgrep|pidof)(?:\s|[\"'`]|$)")
"""A program that lists the processes (a runner's among them)."""


def _reads_processes(node: Node) -> bool:
    """A string that reads the process's own or its parent's command line: a file under `/proc/`, or the program a
    call runs that lists the processes (`execFileSync("ps", [...])`; not the same word among other data)."""
    text = text_of(node)[1:]
    if text.startswith("/proc/"):
        return True
    if _LISTING.match(text) is None:
        return False
    parent = node.parent
    while parent is not None and parent.type in ("binary_expression", "template_substitution",
                                                 "parenthesized_expression"):
        parent = parent.parent
    return parent is not None and parent.type == "arguments"


def _probes(node: Node, bound: frozenset[str] = frozenset(), probes: re.Pattern[str] | None = None) -> bool:
    """Whether `node` reads through a probe (`probes`; else `_PROBES` or a string `_reads_processes`) or a name
    bound to one."""
    pattern = probes or _PROBES
    return any((inner.type in ("member_expression", "identifier", "subscript_expression", "call_expression")
                and (pattern.match(text_of(inner)) or (inner.type == "identifier" and text_of(inner) in bound)))
               or (probes is None and inner.type in ("string", "template_string") and _reads_processes(inner))
               for inner in walk(node))


def finding(node: Node, what: str, key: Node | None = None) -> Finding:
    if what.startswith(TOUCHES):
        return Finding(line_of(node), what, scope_of(node))
    return Finding(line_of(node), what, normal(text_of(key or statement_of(node))))


_NAMING_PRESENCE = frozenset({"property_identifier", "shorthand_property_identifier_pattern", "string_fragment",
                              "subscript_expression", "unary_expression", "member_expression"})
"""The nodes `_names_presence` can find a runner's variable or global in."""


def _names_presence(node: Node, text: str) -> bool:
    """A runner's variable (`process.env.JEST_WORKER_ID`), `typeof jest`, `globalThis.it`, `globalThis["exp" +
    "ect"]`."""
    if node.type in ("property_identifier", "shorthand_property_identifier_pattern", "string_fragment"):
        return names_runner_variable(text)
    if node.type == "subscript_expression":
        index = node.child_by_field_name("index")
        name = string_value(index) if index is not None else None
        return text.split("[", maxsplit=1)[0].split(".", maxsplit=1)[0] in _GLOBAL_OBJECTS and name is not None and (
            name in GLOBALS or names_runner_variable(name))
    if node.type == "unary_expression":
        return text.startswith("typeof") and text.rsplit(maxsplit=1)[-1] in GLOBALS
    return node.type == "member_expression" and text.split(".", maxsplit=1)[0] in _GLOBAL_OBJECTS and text_of(
        node.child_by_field_name("property")) in GLOBALS


def _presence(root: Node, ids: frozenset[str]) -> Iterator[Finding]:
    """Strings that name a runner where a probe decides (read directly or through a name bound to one); any string
    where the stack does (`new Error().stack`: who called)."""
    bound = probe_bound(root, _probes)
    named = constants(root, lambda text: names_runner(text) or names_gate_place(text, ids))  # `const RUNNER = "je" +
    # "st"`, then `argv.includes(RUNNER)`
    placed: list[frozenset[str]] = []  # `const here = process.cwd()`: found once, and only for a place's name
    pieces: dict[int, str | None] = {}  # what each `+` chain's parts fold to, each read once
    callers = _callers(root)
    by_stack = probe_bound(root, lambda value: _probes(value, probes=callers))
    # Each header asked once: a bundle is one statement holding thousands of strings, and walking it again for each
    # made a 0.5 MB file take a minute.
    probed: dict[tuple[int, bool], bool] = {}

    def reads(header: Node, stack: bool) -> bool:
        key = (header.id, stack)
        if key not in probed:
            probed[key] = _probes(header, by_stack, callers) if stack else _probes(header, bound)
        return probed[key]

    for node in walk(root):
        if node.type in _NAMING_PRESENCE and _names_presence(node, text := text_of(node)):
            yield finding(node, f"{PRESENCE} (`{text}`)")
            continue
        regex = node.type == "regex"  # a runner's name in it, or where the stack decides a test's file's words
        value = _pattern(node) if regex else named.get(text_of(node)) if node.type == "identifier" else (
            folded(node, pieces) if node.parent is None or folded(node.parent, pieces) is None else None)
        if value is None:
            continue
        headers = list(deciding(node, FUNCTIONS, _LOOPS))
        if ((names_runner(value) or value in GLOBALS) and any(reads(header, False) for header in headers)) or (
                not _BLANK.fullmatch(value) and (not regex or _TEST_WORDS.search(value))  # not `.split("\n")`
                and any(reads(header, True) for header in headers)):
            yield finding(node, f"{PRESENCE} (`{_shown(node)}`)")
        elif names_gate_place(value, ids) and compared(node):
            placed = placed or [probe_bound(root, lambda given: _probes(given, probes=_PLACES))]
            if any(_probes(header, placed[0], _PLACES) for header in headers):
                yield finding(node, f"{PRESENCE} (asks where it runs: `{_shown(node)}`)")
        elif not regex and asks_git_kind(node, value, headers, _READS_KIND, _EXISTENCE):
            yield finding(node, f"{PRESENCE} (asks whether it runs in a git worktree: `{_shown(node)}`)")


def _callers(root: Node) -> re.Pattern[str]:
    """`_CALLERS`, and the `caller` of each function the file names (`mul.caller`, `exports.mul["caller"]`; not any
    object's `caller` field): declared, named, or given to a variable or a property."""
    named = set()
    for node in walk(root):
        if node.type in ("function_declaration", "generator_function_declaration", "function_expression",
                         "function", "generator_function"):
            named.add(text_of(node.child_by_field_name("name")))
        if node.type in ("variable_declarator", "assignment_expression"):
            target = node.child_by_field_name("name" if node.type == "variable_declarator" else "left")
            value = node.child_by_field_name("value" if node.type == "variable_declarator" else "right")
            if value is not None and value.type in ("function_expression", "function", "generator_function"):
                named.add(text_of(target))
    functions = "|".join(re.escape(name) for name in sorted(named) if name)
    return re.compile(_CALLERS + (rf"""|^(?:[\w$.]+\.)?(?:{functions})(?:\.caller\b|\[["'`]caller["'`]\])"""
                                  if functions else ""))


_BLANK = re.compile(r"(?:\s|\\[nrt])*")
"""A string of white space, as written (`"\\n"`): how a stack is split into its lines, not what it is asked."""
_PATTERN_NOISE = re.compile(r"\(\?:|[()]|\\(?=\W)")
_ONE_CHARACTER = re.compile(r"\[(\w)\]")


def _pattern(regex: Node) -> str:
    r"""A regular expression literal's pattern as the words it matches (`/mocha/` tests for the name as a string
    would; `/(j)e[s]t/` for `jest`, `/node_modules\/jest/` for `node_modules/jest`)."""
    return _PATTERN_NOISE.sub("", _ONE_CHARACTER.sub(r"\1", text_of(regex.child_by_field_name("pattern"))))


def _shown(node: Node) -> str:
    """The statement around `node`, as a finding quotes it."""
    return normal(text_of(statement_of(node)))[:100]


def _constants(root: Node) -> frozenset[str]:
    """Names a `const` gives a number written in the code (`const LIMIT = 40`; not a loop's index)."""
    return frozenset(name for name, value in const_values(root) if _number(value, frozenset()))


def _counted(node: Node, bound: frozenset[str], own: frozenset[str] = frozenset()) -> bool:
    """`node` is what `_COUNTED` names itself (not a value in it), through `Object.keys(...)`, the stack's lines
    (`.split("\\n")`) or a name given it (`const stack = new Error().stack`); not a part picked by `.filter(...)`, nor
    a name of the file's `own` (a parameter called `global`)."""
    while node.type in ("call_expression", "parenthesized_expression"):
        if node.type == "parenthesized_expression":
            node = node.named_children[0] if node.named_children else node
            continue
        function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if function is None:
            return False
        if text_of(function) in _COUNTED_VIA and arguments is not None and arguments.named_children:
            node = arguments.named_children[0]
        elif function.type == "member_expression" and text_of(function.child_by_field_name("property")) == "split" \
                and (inner := function.child_by_field_name("object")) is not None:
            node = inner
        else:
            return False
    text = text_of(node)
    return (node.type == "identifier" and text in bound) or (_COUNTED.fullmatch(text) is not None and text not in own)


def _count(node: Node, bound: frozenset[str], counts: frozenset[str], own: frozenset[str] = frozenset()) -> bool:
    """`X.length` or `X.size` of what is counted, or a name given such a count."""
    if node.type == "identifier":
        return text_of(node) in counts
    if node.type == "parenthesized_expression" and node.named_children:
        return _count(node.named_children[0], bound, counts, own)
    subject = node.child_by_field_name("object") if node.type == "member_expression" else None
    return subject is not None and text_of(node.child_by_field_name("property")) in ("length", "size") and _counted(
        subject, bound, own)


def _number(node: Node, numbers: frozenset[str]) -> bool:
    """A number written in the code (`40`, `-1`), or a constant given one (`const LIMIT = 40`; not a loop's
    index)."""
    if node.type == "unary_expression" and node.named_children:
        node = node.named_children[-1]
    return node.type == "number" or (node.type == "identifier" and text_of(node) in numbers)


def declared(root: Node) -> frozenset[str]:
    """The names the file declares itself (a variable, a parameter, a function, a class, an import): those are not
    the engine's or a runner's globals."""
    return frozenset(text_of(node) for node in walk(root)
                     if node.type in ("identifier", "shorthand_property_identifier_pattern") and _declares(node))


def _declares(name: Node) -> bool:
    """`name` is what its parent declares (`const global = …`, not `const g = global`)."""
    parent = name.parent
    if parent is None:
        return False
    if parent.type in ("variable_declarator", "assignment_pattern"):
        target = parent.child_by_field_name("name" if parent.type == "variable_declarator" else "left")
        return target is not None and target.id == name.id
    return parent.type in ("function_declaration", "class_declaration", "import_specifier", "namespace_import",
                           "import_clause", "formal_parameters", "required_parameter", "optional_parameter",
                           "object_pattern", "array_pattern")


def _counts(root: Node) -> Iterator[Finding]:
    """A count of the loaded modules, the variables or the stack's lines compared with a number: how much the
    process holds, or how deep the code is called, tells a test run from any other. Compared with anything else it
    is not (a loop's index over `Object.keys(require.cache)`)."""
    own = declared(root) & {"global"}
    bound = probe_bound(root, lambda value: _counted(value, frozenset(), own))
    counts = probe_bound(root, lambda value: _count(value, bound, frozenset(), own))
    numbers = _constants(root)
    for node in walk(root):
        operator = node.child_by_field_name("operator") if node.type == "binary_expression" else None
        if operator is None or text_of(operator) not in _COMPARISONS:
            continue
        sides = [side for side in (node.child_by_field_name("left"), node.child_by_field_name("right")) if side]
        if any(_count(side, bound, counts, own) and any(_number(other, numbers) for other in sides if other != side)
               for side in sides):
            yield finding(node, f"{PRESENCE} (counts what the process holds or who called it: `{_shown(node)}`)")


def presence(root: Node, ids: frozenset[str] = frozenset()) -> list[Finding]:
    """Every read of the runner's presence in the parsed file (`ids`: the run's, code_tokens.place_ids)."""
    return [*_presence(root, ids), *_counts(root)]
