"""JavaScript and TypeScript code that knows it is judged, read with tree-sitter's grammars: what reads the runner's
presence (js_presence.py), the runner's globals used, exits and patched streams, runner imports, `valueOf`,
`Symbol.toPrimitive`, `asymmetricMatch` or `equals` answers that ignore their operand, code run from a string the
screen can't read (`eval`, `new Function`, `vm`), and changes to the tests' assertion library
(`assert.strictEqual = ...`) or to how modules load."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from orchestrator.gate.spec.code_tokens import (
    LIES,
    OPAQUE,
    TOUCHES,
    Finding,
    ancestors,
    names_runner,
    normal,
    parse,
    string_value,
    text_of,
    walk,
)
from orchestrator.gate.spec.js_presence import FUNCTIONS, declared, finding, presence

_RUNNER_OBJECTS = frozenset({"expect", "jest", "vi"})
"""Runner globals a product's code has no use for (`it`, `test` and `describe` are also ordinary names)."""
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
_COMPARING = frozenset({"equals", "isEqual", "asymmetricMatch", "Symbol.hasInstance"})
_CONSTANT_VALUE = frozenset({"valueOf", "Symbol.toPrimitive", "toJSON"})
_LITERALS = frozenset({"number", "string", "true", "false", "null", "undefined", "template_string"})


def _runner_globals(root: Node) -> Iterator[Finding]:
    """The runner's own globals used by code that does not declare them (`expect.anything()`, `jest.fn()`): only a
    test run has them, and `expect.anything()` equals whatever it is compared with."""
    own = declared(root)
    for node in walk(root):
        if node.type != "member_expression":
            continue
        target = node.child_by_field_name("object")
        if target is not None and target.type == "identifier" and text_of(target) in _RUNNER_OBJECTS - own:
            yield finding(node, f"{TOUCHES}: uses the runner's global `{text_of(target)}` in code that is not a test")


def _touches(root: Node, script: bool) -> Iterator[Finding]:
    yield from _runner_globals(root)
    yield from _assertion_changes(root)
    for node in walk(root):
        if node.type in ("assignment_expression", "augmented_assignment_expression"):
            target = text_of(node.child_by_field_name("left"))
            if _CHANNEL.match(target):
                yield finding(node, f"{TOUCHES}: replaces `{target}`")
        elif node.type == "call_expression":
            yield from _call(node, script)
            yield from _runs_code(node, "function")
        elif node.type == "new_expression":
            yield from _runs_code(node, "constructor")
        elif node.type == "import_statement":
            source = string_value(node.child_by_field_name("source") or node)
            if source and _RUNNER_PACKAGES.match(source):
                yield finding(node, f"{TOUCHES}: imports `{source}` in code that is not a test")


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
            yield finding(node, f"{TOUCHES}: adds to or overrides the tests' assertion library `{library}`"
                                 f" (`{text_of(callee)}`)")
    elif text_of(callee) == "Symbol.for":
        first = _first_argument(node)
        if first is not None and names_runner(string_value(first) or ""):
            yield finding(node, f"{TOUCHES}: reaches the runner's shared state (`{text_of(node)[:80]}`)")


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
            yield finding(node, f"{TOUCHES}: changes how modules load (`{shown}`)")
        elif library:
            yield finding(node, f"{TOUCHES}: changes `{shown}` of the tests' assertion library `{library}`")


def _call(node: Node, script: bool) -> Iterator[Finding]:
    callee = text_of(node.child_by_field_name("function"))
    arguments = node.child_by_field_name("arguments")
    first = _first_argument(node)
    first_text = string_value(first) if first is not None else None
    if callee in ("require", "import") and first_text and _RUNNER_PACKAGES.match(first_text):
        yield finding(node, f"{TOUCHES}: imports `{first_text}` in code that is not a test")
    elif callee == "Object.defineProperty" and first is not None and re.match(r"^process(\.std(out|err))?$",
                                                                             text_of(first)):
        yield finding(node, f"{TOUCHES}: redefines a property of `{text_of(first)}`")
    elif callee in ("process.on", "process.once", "process.addListener", "process.prependListener") and \
            first_text in ("exit", "beforeExit") and "process.exit" in text_of(arguments):
        yield finding(node, f"{TOUCHES}: sets the exit code from an exit handler")
    elif _EXITS.match(callee) and not script and not any(up.type in FUNCTIONS for up in ancestors(node)):
        yield finding(node, f"{TOUCHES}: exits the process when the module is loaded")


def _runs_code(node: Node, field: str) -> Iterator[Finding]:
    """`eval`, `new Function`, `vm`'s runners: the code of literal strings screened in place, any other a hit."""
    callee = text_of(node.child_by_field_name(field))
    if callee not in _RUNS_CODE and not _VM_RUNS.search(callee):
        return
    arguments = node.child_by_field_name("arguments")
    given = list(arguments.named_children) if arguments is not None else []
    texts = [string_value(argument) for argument in given]
    if not given or None in texts:
        yield finding(node, f"{OPAQUE} (`{normal(text_of(node))[:100]}`: built or read at run time)", node)
        return
    for inner in findings("javascript", "\n".join(text for text in texts if text is not None)):
        yield finding(node, f"{inner.what} (in the code `{callee}` runs)", node)


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
    if key is None or function is None or (function.type not in FUNCTIONS and node.type != "method_definition"):
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
        if inner.type == "return_statement" and not any(up.type in FUNCTIONS for up in ancestors(inner)
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
            yield finding(node, f"{LIES}: `{name}` returns {next(iter(constants))} whatever the value", node)
        elif name in _CONSTANT_VALUE and returns and not any(inner.type == "this" for inner in walk(function)):
            # A value's primitive that never reads the value itself (`hint => hint === 'default' ? 20 : 21`)
            # answers a loose comparison with whatever it likes.
            yield finding(node, f"{LIES}: `{name}` answers without reading the value it converts", node)
        elif name in _COMPARING and returns:
            operand, body = _operand(function), function.child_by_field_name("body")
            reads = operand is not None and body is not None and any(
                inner.type in ("identifier", "shorthand_property_identifier")
                and text_of(inner) in (operand, "arguments") for inner in walk(body))
            if not reads:
                yield finding(node, f"{LIES}: `{name}` never reads the value it is compared with", node)
            elif constant and constants == {"true"}:
                yield finding(node, f"{LIES}: `{name}` returns true whatever it is compared with", node)


def findings(language: str, text: str, ids: frozenset[str] = frozenset()) -> list[Finding]:
    """Every construct of a JavaScript ("javascript") or TypeScript ("typescript", "tsx") file that knows it is
    judged (`ids`: the run's, code_tokens.place_ids)."""
    root = parse(language, text)
    return [*presence(root, ids), *_touches(root, script=text.startswith("#!")), *_lies(root)]
