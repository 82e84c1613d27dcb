"""JavaScript and TypeScript code that knows it is judged, read with tree-sitter's grammars: the runner's variables
and globals, its command line, exits and patched streams, runner imports, `valueOf`, `Symbol.toPrimitive`,
`asymmetricMatch` or `equals` answers that ignore their operand, and code run from a string the screen can't read
(`eval`, `new Function`, `vm`), and changes to the tests' assertion library (`assert.strictEqual = ...`) or to
how modules load."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from orchestrator.gate.spec.code_tokens import (
    LIES,
    OPAQUE,
    PRESENCE,
    TOUCHES,
    Finding,
    ancestors,
    asks_git_kind,
    compared,
    deciding,
    line_of,
    names_gate_place,
    names_runner,
    names_runner_variable,
    normal,
    parse,
    probe_bound,
    scope_of,
    statement_of,
    string_value,
    text_of,
    walk,
)
from orchestrator.gate.spec.js_strings import const_values, constants, folded

_GLOBALS = frozenset({"jest", "vi", "vitest", "describe", "it", "test", "expect", "beforeEach", "afterEach",
                      "beforeAll", "afterAll", "mocha", "jasmine", "suite", "__vitest_worker__",
                      "__vitest_environment__", "__vitest_index__", "specify", "xit", "xdescribe", "fdescribe",
                      "suiteSetup", "suiteTeardown"})
"""What a runner puts in the global scope."""
_RUNNER_OBJECTS = frozenset({"expect", "jest", "vi"})
"""Runner globals a product's code has no use for (`it`, `test` and `describe` are also ordinary names)."""
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
_CALLERS = re.compile(r"^(?:(?:new Error\(\)|\w+)\.stack|Error\.captureStackTrace|Error\.prepareStackTrace)\b")
"""Who called: a branch on the stack with any string tells a test's call from any other."""
_COUNTED = re.compile(r"(?:require\.cache|process\.(?:env|execArgv|moduleLoadList)|module\.children"
                      r"|(?:new\s+)?Error\([^)]*\)\.stack)")
"""What a test run holds more of than any other run (loaded modules, variables, the runner's flags) and how deep the
code is called (the stack's lines): counted (`Object.keys(require.cache).length > 40`), a test run is told from any
other with no runner's name to read. `process.argv` is not: its length is how any program reads its arguments."""
_COUNTED_VIA = frozenset({"Object.keys", "Object.values", "Object.entries", "Object.getOwnPropertyNames",
                          "Reflect.ownKeys", "Array.from"})
_COMPARISONS = frozenset({"<", ">", "<=", ">=", "==", "===", "!=", "!=="})
_CHANNEL = re.compile(r"^process\.(?:stdout|stderr|exit|exitCode|reallyExit|kill|abort|_exiting)\b")
_EXITS = re.compile(r"^process\.(?:exit|reallyExit|abort|kill)$")
_RUNNER_PACKAGES = re.compile(r"^(?:jest|@jest/.*|jest-.*|vitest|@vitest/.*|mocha|node:test|ava|tap|uvu|jasmine)$")
_RUNS_CODE = frozenset({"eval", "globalThis.eval", "global.eval", "window.eval", "Function", "vm.Script"})
"""What runs code given as a string: a literal's code is screened in place, any other is a hit (decoded or read at
run time, it could patch the runner as code in place would)."""
_VM_RUNS = re.compile(r"\.(?:runInThisContext|runInNewContext|runInContext|compileFunction)$")
"""`vm`'s runners however the module is reached (`require("vm").runInThisContext`)."""
_ASSERTION_LIBRARIES = re.compile(r"^(?:(?:node:)?assert(?:/strict)?|chai|should|expect|@jest/expect|power-assert"
                                   r"|uvu/assert|unexpected|better-assert|expect\.js)(?:/.*)?$")
"""The tests' assertion libraries: a product's code may import them (node's `assert` for its own checks), never change
them: `assert.strictEqual = () => {}` in the code makes every test that asserts with it pass."""
_MUTATORS = frozenset({"Object.assign", "Object.defineProperty", "Object.defineProperties", "Object.setPrototypeOf",
                       "Reflect.set", "Reflect.defineProperty", "Reflect.deleteProperty", "Reflect.setPrototypeOf"})
"""Calls that change the object given first."""
_EXTENDING = frozenset({"extend", "use", "addMethod", "addProperty", "addChainableMethod", "overwriteMethod",
                        "overwriteProperty", "overwriteChainableMethod", "addAssertion", "addType"})
"""An assertion library's own ways to add or override its matchers (`expect.extend({ toBe })`, `chai.use`)."""
_MODULE_SYSTEM = re.compile(r"^(?:node:)?module$")
"""node's module system (`Module._load`, `Module.prototype.require`, `Module._extensions`): changed by the code, any
`require` (the tests' assertion library's too) returns what the code likes."""
_MODULE_LOADING = re.compile(r"^(?:require\.(?:cache|extensions)|module\.constructor"
                             r"|process\.mainModule\.constructor)\b")
"""The same reached without loading `module`: the loaded modules' cache, the module system through `module`."""
_FUNCTIONS = frozenset({"function_declaration", "function_expression", "function", "arrow_function",
                        "method_definition", "generator_function_declaration", "generator_function"})
_COMPARING = frozenset({"equals", "isEqual", "asymmetricMatch", "Symbol.hasInstance"})
_CONSTANT_VALUE = frozenset({"valueOf", "Symbol.toPrimitive", "toJSON"})
_LOOPS = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})
_LITERALS = frozenset({"number", "string", "true", "false", "null", "undefined", "template_string"})


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


def _finding(node: Node, what: str, key: Node | None = None) -> Finding:
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
            name in _GLOBALS or names_runner_variable(name))
    if node.type == "unary_expression":
        return text.startswith("typeof") and text.rsplit(maxsplit=1)[-1] in _GLOBALS
    return node.type == "member_expression" and text.split(".", maxsplit=1)[0] in _GLOBAL_OBJECTS and text_of(
        node.child_by_field_name("property")) in _GLOBALS


def _presence(root: Node, ids: frozenset[str]) -> Iterator[Finding]:
    """Strings that name a runner where a probe decides (read directly or through a name bound to one); any string
    where the stack does (`new Error().stack`: who called)."""
    bound = probe_bound(root, _probes)
    named = constants(root, lambda text: names_runner(text) or names_gate_place(text, ids))  # `const RUNNER = "je" +
    # "st"`, then `argv.includes(RUNNER)`
    placed: list[frozenset[str]] = []  # `const here = process.cwd()`: found once, and only for a place's name
    pieces: dict[int, str | None] = {}  # what each `+` chain's parts fold to, each read once
    by_stack = probe_bound(root, lambda value: _probes(value, probes=_CALLERS))
    # Each header asked once: a bundle is one statement holding thousands of strings, and walking it again for each
    # made a 0.5 MB file take a minute.
    probed: dict[tuple[int, bool], bool] = {}

    def reads(header: Node, stack: bool) -> bool:
        key = (header.id, stack)
        if key not in probed:
            probed[key] = _probes(header, by_stack, _CALLERS) if stack else _probes(header, bound)
        return probed[key]

    for node in walk(root):
        if node.type in _NAMING_PRESENCE and _names_presence(node, text := text_of(node)):
            yield _finding(node, f"{PRESENCE} (`{text}`)")
            continue
        regex = node.type == "regex"  # a runner's name in it; not any pattern where the stack decides (how stacks
        value = _pattern(node) if regex else named.get(text_of(node)) if node.type == "identifier" else (  # are
            folded(node, pieces) if node.parent is None or folded(node.parent, pieces) is None else None)  # parsed)
        if value is None:
            continue
        headers = list(deciding(node, _FUNCTIONS, _LOOPS))
        if ((names_runner(value) or value in _GLOBALS) and any(reads(header, False) for header in headers)) or (
                value and not regex and any(reads(header, True) for header in headers)):
            yield _finding(node, f"{PRESENCE} (`{_shown(node)}`)")
        elif names_gate_place(value, ids) and compared(node):
            placed = placed or [probe_bound(root, lambda given: _probes(given, probes=_PLACES))]
            if any(_probes(header, placed[0], _PLACES) for header in headers):
                yield _finding(node, f"{PRESENCE} (asks where it runs: `{_shown(node)}`)")
        elif not regex and asks_git_kind(node, value, headers, _READS_KIND, _EXISTENCE):
            yield _finding(node, f"{PRESENCE} (asks whether it runs in a git worktree: `{_shown(node)}`)")


def _pattern(regex: Node) -> str:
    """A regular expression literal's pattern (`/mocha/` tests for the name as a string would)."""
    return text_of(regex.child_by_field_name("pattern"))


def _shown(node: Node) -> str:
    """The statement around `node`, as a finding quotes it."""
    return normal(text_of(statement_of(node)))[:100]


def _constants(root: Node) -> frozenset[str]:
    """Names a `const` gives a number written in the code (`const LIMIT = 40`; not a loop's index)."""
    return frozenset(name for name, value in const_values(root) if _number(value, frozenset()))


def _counted(node: Node, bound: frozenset[str]) -> bool:
    """`node` is what `_COUNTED` names itself (not a value in it), through `Object.keys(...)`, the stack's lines
    (`.split("\\n")`) or a name given it (`const stack = new Error().stack`); not a part picked by `.filter(...)`."""
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
    return (node.type == "identifier" and text_of(node) in bound) or _COUNTED.fullmatch(text_of(node)) is not None


def _count(node: Node, bound: frozenset[str], counts: frozenset[str]) -> bool:
    """`X.length` or `X.size` of what is counted, or a name given such a count."""
    if node.type == "identifier":
        return text_of(node) in counts
    if node.type == "parenthesized_expression" and node.named_children:
        return _count(node.named_children[0], bound, counts)
    subject = node.child_by_field_name("object") if node.type == "member_expression" else None
    return subject is not None and text_of(node.child_by_field_name("property")) in ("length", "size") and _counted(
        subject, bound)


def _number(node: Node, numbers: frozenset[str]) -> bool:
    """A number written in the code (`40`, `-1`), or a constant given one (`const LIMIT = 40`; not a loop's
    index)."""
    if node.type == "unary_expression" and node.named_children:
        node = node.named_children[-1]
    return node.type == "number" or (node.type == "identifier" and text_of(node) in numbers)


def _counts(root: Node) -> Iterator[Finding]:
    """A count of the loaded modules, the variables or the stack's lines compared with a number: how much the
    process holds, or how deep the code is called, tells a test run from any other. Compared with anything else it
    is not (a loop's index over `Object.keys(require.cache)`)."""
    bound = probe_bound(root, lambda value: _counted(value, frozenset()))
    counts = probe_bound(root, lambda value: _count(value, bound, frozenset()))
    numbers = _constants(root)
    for node in walk(root):
        operator = node.child_by_field_name("operator") if node.type == "binary_expression" else None
        if operator is None or text_of(operator) not in _COMPARISONS:
            continue
        sides = [side for side in (node.child_by_field_name("left"), node.child_by_field_name("right")) if side]
        if any(_count(side, bound, counts) and any(_number(other, numbers) for other in sides if other != side)
               for side in sides):
            yield _finding(node, f"{PRESENCE} (counts what the process holds or who called it: `{_shown(node)}`)")


def _runner_globals(root: Node) -> Iterator[Finding]:
    """The runner's own globals used by code that does not declare them (`expect.anything()`, `jest.fn()`): only a
    test run has them, and `expect.anything()` equals whatever it is compared with."""
    declared = {text_of(node) for node in walk(root)
                if node.type in ("identifier", "shorthand_property_identifier_pattern")
                and node.parent is not None and node.parent.type in (
                    "variable_declarator", "function_declaration", "import_specifier", "namespace_import",
                    "import_clause", "formal_parameters", "required_parameter", "object_pattern", "class_declaration")}
    for node in walk(root):
        if node.type != "member_expression":
            continue
        target = node.child_by_field_name("object")
        if target is not None and target.type == "identifier" and text_of(target) in _RUNNER_OBJECTS - declared:
            yield _finding(node, f"{TOUCHES}: uses the runner's global `{text_of(target)}` in code that is not a test")


def _touches(root: Node, script: bool) -> Iterator[Finding]:
    yield from _runner_globals(root)
    yield from _assertion_changes(root)
    for node in walk(root):
        if node.type in ("assignment_expression", "augmented_assignment_expression"):
            target = text_of(node.child_by_field_name("left"))
            if _CHANNEL.match(target):
                yield _finding(node, f"{TOUCHES}: replaces `{target}`")
        elif node.type == "call_expression":
            yield from _call(node, script)
            yield from _runs_code(node, "function")
        elif node.type == "new_expression":
            yield from _runs_code(node, "constructor")
        elif node.type == "import_statement":
            source = string_value(node.child_by_field_name("source") or node)
            if source and _RUNNER_PACKAGES.match(source):
                yield _finding(node, f"{TOUCHES}: imports `{source}` in code that is not a test")


def _first_argument(call: Node) -> Node | None:
    arguments = call.child_by_field_name("arguments")
    return next(iter(arguments.named_children), None) if arguments is not None else None


def _watched(source: str) -> bool:
    """A module name the screen follows: an assertion library or node's module system."""
    return bool(_ASSERTION_LIBRARIES.match(source) or _MODULE_SYSTEM.match(source))


def _library_of(node: Node, bound: dict[str, str]) -> str | None:
    """The assertion library an expression's object is (`assert.ok` -> node:assert when `assert` is bound to it,
    `require('chai').Assertion.prototype` -> chai, whatever function loaded it by name), else None."""
    while node.type in ("member_expression", "subscript_expression", "parenthesized_expression", "await_expression"):
        wrapped = node.type in ("parenthesized_expression", "await_expression")
        inner = next(iter(node.named_children), None) if wrapped else node.child_by_field_name("object")
        if inner is None:
            return None
        node = inner
    if node.type == "identifier":
        return bound.get(text_of(node))
    if node.type == "call_expression":  # `require`, `module.require`, `createRequire(...)`'s, `import`: by the name
        first = _first_argument(node)
        source = string_value(first) if first is not None else None
        return source if source is not None and _watched(source) else None
    return None


def _assertion_bindings(root: Node) -> dict[str, str]:
    """Names bound to an assertion library or a part of one, in the file's order: `const assert =
    require('node:assert')`, `import { expect } from 'chai'`, `const a = assert`."""
    bound: dict[str, str] = {}
    for node in walk(root):
        if node.type == "import_statement":
            source = string_value(node.child_by_field_name("source") or node) or ""
            if _watched(source):
                clause = next((child for child in node.named_children if child.type == "import_clause"), None)
                for inner in walk(clause) if clause is not None else ():
                    if inner.type == "identifier":
                        bound[text_of(inner)] = source
        elif node.type == "variable_declarator":
            value, name = node.child_by_field_name("value"), node.child_by_field_name("name")
            library = _library_of(value, bound) if value is not None else None
            if library is not None and name is not None:
                for inner in walk(name):
                    if inner.type in ("identifier", "shorthand_property_identifier_pattern"):
                        bound[text_of(inner)] = library
    return bound


def _changed(node: Node) -> Node | None:
    """What an assignment, a `delete` or a mutating call (`Object.assign(x, ...)`) changes; None for anything else
    and for a name bound again (the object it named is unchanged)."""
    if node.type in ("assignment_expression", "augmented_assignment_expression"):
        target = node.child_by_field_name("left")
        return target if target is not None and target.type != "identifier" else None
    if node.type == "unary_expression" and text_of(node).startswith("delete"):
        return node.child_by_field_name("argument")
    if node.type == "call_expression" and text_of(node.child_by_field_name("function")) in _MUTATORS:
        return _first_argument(node)
    return None


def _extends(node: Node, bound: dict[str, str]) -> Iterator[Finding]:
    """`expect.extend({ toBe })`, `chai.use(plugin)`: a matcher of every test's added or overridden; `Symbol.for` of
    a runner's name (`$$jest-matchers-object`): the runner's state shared with the tests."""
    if node.type != "call_expression" or (callee := node.child_by_field_name("function")) is None:
        return
    if callee.type == "member_expression" and text_of(callee.child_by_field_name("property")) in _EXTENDING:
        library = _library_of(callee, bound)
        if library is not None and not _MODULE_SYSTEM.match(library):
            yield _finding(node, f"{TOUCHES}: adds to or overrides the tests' assertion library `{library}`"
                                 f" (`{text_of(callee)}`)")
    elif text_of(callee) == "Symbol.for":
        first = _first_argument(node)
        if first is not None and names_runner(string_value(first) or ""):
            yield _finding(node, f"{TOUCHES}: reaches the runner's shared state (`{text_of(node)[:80]}`)")


def _assertion_changes(root: Node) -> Iterator[Finding]:
    """An assertion library's function or property replaced, deleted, redefined or extended, and node's module
    system changed (through which any `require` of the tests' library can be answered with a fake)."""
    bound = _assertion_bindings(root)
    for node in walk(root):
        yield from _extends(node, bound)
        if (target := _changed(node)) is None:
            continue
        shown, library = normal(text_of(target))[:80], _library_of(target, bound) or ""
        if _MODULE_LOADING.match(text_of(target)) or _MODULE_SYSTEM.match(library):
            yield _finding(node, f"{TOUCHES}: changes how modules load (`{shown}`)")
        elif library:
            yield _finding(node, f"{TOUCHES}: changes `{shown}` of the tests' assertion library `{library}`")


def _call(node: Node, script: bool) -> Iterator[Finding]:
    callee = text_of(node.child_by_field_name("function"))
    arguments = node.child_by_field_name("arguments")
    first = _first_argument(node)
    first_text = string_value(first) if first is not None else None
    if callee in ("require", "import") and first_text and _RUNNER_PACKAGES.match(first_text):
        yield _finding(node, f"{TOUCHES}: imports `{first_text}` in code that is not a test")
    elif callee == "Object.defineProperty" and first is not None and re.match(r"^process(\.std(out|err))?$",
                                                                             text_of(first)):
        yield _finding(node, f"{TOUCHES}: redefines a property of `{text_of(first)}`")
    elif callee in ("process.on", "process.once", "process.addListener", "process.prependListener") and \
            first_text in ("exit", "beforeExit") and "process.exit" in text_of(arguments):
        yield _finding(node, f"{TOUCHES}: sets the exit code from an exit handler")
    elif _EXITS.match(callee) and not script and not any(up.type in _FUNCTIONS for up in ancestors(node)):
        yield _finding(node, f"{TOUCHES}: exits the process when the module is loaded")


def _runs_code(node: Node, field: str) -> Iterator[Finding]:
    """`eval`, `new Function`, `vm`'s runners: the code of literal strings screened in place, any other a hit."""
    callee = text_of(node.child_by_field_name(field))
    if callee not in _RUNS_CODE and not _VM_RUNS.search(callee):
        return
    arguments = node.child_by_field_name("arguments")
    given = list(arguments.named_children) if arguments is not None else []
    texts = [string_value(argument) for argument in given]
    if not given or None in texts:
        yield _finding(node, f"{OPAQUE} (`{normal(text_of(node))[:100]}`: built or read at run time)", node)
        return
    for inner in findings("javascript", "\n".join(text for text in texts if text is not None)):
        yield _finding(node, f"{inner.what} (in the code `{callee}` runs)", node)


def _function_named(node: Node) -> tuple[str, Node] | None:
    """(name, function) for a method, an object's function-valued key, or a function assigned to a property."""
    key: Node | None
    function: Node | None
    if node.type == "method_definition":
        key, function = node.child_by_field_name("name"), node
    elif node.type == "pair":
        key, function = node.child_by_field_name("key"), node.child_by_field_name("value")
    elif node.type == "assignment_expression":
        left = node.child_by_field_name("left")
        key = left.child_by_field_name("property") if left is not None else None
        function = node.child_by_field_name("right")
    else:
        return None
    if key is None or function is None or (function.type not in _FUNCTIONS and node.type != "method_definition"):
        return None
    if key.type == "computed_property_name" and key.named_child_count == 1:
        return string_value(key.named_children[0]) or text_of(key).strip("[]'\""), function
    return text_of(key).strip("[]'\""), function


def _returns(function: Node) -> list[Node]:
    body = function.child_by_field_name("body")
    if body is None:
        return []
    if body.type != "statement_block":
        return [body]
    found = []
    for inner in walk(body):
        if inner.type == "return_statement" and not any(up.type in _FUNCTIONS for up in ancestors(inner)
                                                        if up.start_byte > function.start_byte):
            found += inner.named_children[:1]
    return found


def _operand(function: Node) -> str | None:
    parameters = function.child_by_field_name("parameters") or function.child_by_field_name("parameter")
    if parameters is None:
        return None
    first = parameters if parameters.type == "identifier" else next(iter(parameters.named_children), None)
    if first is not None and first.type in ("required_parameter", "optional_parameter"):
        first = first.child_by_field_name("pattern")
    return text_of(first) if first is not None and first.type == "identifier" else None


def _lies(root: Node) -> Iterator[Finding]:
    for node in walk(root):
        if (named := _function_named(node)) is None or named[0] not in _COMPARING | _CONSTANT_VALUE:
            continue
        name, function = named
        returns = _returns(function)
        constants = {normal(text_of(value)) for value in returns if value.type in _LITERALS}
        constant = len(returns) > 0 and len(constants) == 1 and all(value.type in _LITERALS for value in returns)
        if name in _CONSTANT_VALUE and constant:
            yield _finding(node, f"{LIES}: `{name}` returns {next(iter(constants))} whatever the value", node)
        elif name in _CONSTANT_VALUE and returns and not any(inner.type == "this" for inner in walk(function)):
            # A value's primitive that never reads the value itself (`hint => hint === 'default' ? 20 : 21`)
            # answers a loose comparison with whatever it likes.
            yield _finding(node, f"{LIES}: `{name}` answers without reading the value it converts", node)
        elif name in _COMPARING and returns:
            operand, body = _operand(function), function.child_by_field_name("body")
            reads = operand is not None and body is not None and any(
                inner.type in ("identifier", "shorthand_property_identifier")
                and text_of(inner) in (operand, "arguments") for inner in walk(body))
            if not reads:
                yield _finding(node, f"{LIES}: `{name}` never reads the value it is compared with", node)
            elif constant and constants == {"true"}:
                yield _finding(node, f"{LIES}: `{name}` returns true whatever it is compared with", node)


def findings(language: str, text: str, ids: frozenset[str] = frozenset()) -> list[Finding]:
    """Every construct of a JavaScript ("javascript") or TypeScript ("typescript", "tsx") file that knows it is
    judged (`ids`: the run's, code_tokens.place_ids)."""
    root = parse(language, text)
    return [*_presence(root, ids), *_counts(root), *_touches(root, script=text.startswith("#!")), *_lies(root)]
