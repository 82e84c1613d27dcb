"""Strings JavaScript code builds from constants, folded as the engine would: the screen reads a runner's name built
piece by piece or decoded from constants (`String.fromCharCode(106, ...)`, `atob("amVzdA==")`,
`Buffer.from("...", "base64").toString()`, `"tsej".split("").reverse().join("")`, a `const` given one) as the whole
name."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterator

from tree_sitter import Node

from orchestrator.gate.spec.code_tokens import string_value, text_of, walk

_LONGEST = 10_000
"""The most a folded value holds: a name is short, and a constant decoded while screening must stay cheap."""
_CASES: dict[str, Callable[[str], str]] = {"toLowerCase": str.lower, "toUpperCase": str.upper, "trim": str.strip,
                                           "trimStart": str.lstrip, "trimEnd": str.rstrip}


def folded(node: Node, memo: dict[int, str | None] | None = None) -> str | None:
    """The string an expression of constants builds; None when it reads anything else. `memo` keeps what each `+`
    chain's parts fold to, for a caller that asks of every node of a tree (each part read once, not once per node
    above it)."""
    if node.type == "binary_expression":
        return _sum(node, {} if memo is None else memo)
    if node.type in _FOLDS:
        return _FOLDS[node.type](node)
    template = _template(node) if node.type == "template_string" and any(
        child.type == "template_substitution" for child in node.children) else None
    return template if template is not None else string_value(node)  # else its text, `${...}` and all


def const_values(root: Node) -> Iterator[tuple[str, Node]]:
    """Each name a `const` declares, with the value it is given (`const LIMIT = 40`: "LIMIT" and `40`)."""
    for node in walk(root):
        if node.type != "lexical_declaration" or not node.children or node.children[0].type != "const":
            continue
        for declarator in node.named_children:
            name, value = declarator.child_by_field_name("name"), declarator.child_by_field_name("value")
            if declarator.type == "variable_declarator" and name is not None and value is not None \
                    and name.type == "identifier":
                yield text_of(name), value


def constants(root: Node, wanted: Callable[[str], bool]) -> dict[str, str]:
    """Names a `const` gives a folded string `wanted` holds for (`const RUNNER = "je" + "st"`): name -> string."""
    return {name: text for name, value in const_values(root) if (text := folded(value)) is not None and wanted(text)}


def _sum(node: Node, memo: dict[int, str | None]) -> str | None:
    """Pieces joined by `+`, each `+` folded after its two sides, without recursing down the chain (a long one is one
    expression)."""
    pending = [(node, False)]
    while pending:
        current, sides_done = pending.pop()
        if current.id in memo:
            continue
        left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
        if current.type != "binary_expression":
            memo[current.id] = folded(current)
        elif text_of(current.child_by_field_name("operator")) != "+" or left is None or right is None:
            memo[current.id] = None
        elif not sides_done:
            pending += [(current, True), (right, False), (left, False)]
        else:
            parts = memo[left.id], memo[right.id]
            memo[current.id] = _short(parts[0] + parts[1]) if parts[0] is not None and parts[1] is not None else None
    return memo[node.id]


def _template(node: Node) -> str | None:
    parts: list[str | None] = []
    for child in node.named_children:
        if child.type == "string_fragment":
            parts.append(text_of(child))
        elif child.type == "template_substitution":
            parts.append(folded(child.named_children[0]) if child.named_child_count == 1 else None)
        else:
            parts.append(None)
    return "".join(part for part in parts if part is not None) if None not in parts else None


def _inner(node: Node) -> str | None:
    return folded(node.named_children[0]) if node.named_child_count == 1 else None


def _call(node: Node) -> str | None:
    """`String.fromCharCode(...)`, `atob(...)`, `Buffer.from(..., "base64").toString()`, `x.toLowerCase()`,
    `[...].join(...)` and `x.split("").reverse().join("")` of constants."""
    function, arguments = node.child_by_field_name("function"), _arguments(node)
    if function is None or arguments is None:
        return None
    if function.type == "identifier":
        return _atob(arguments) if text_of(function) == "atob" else None
    target = function.child_by_field_name("object") if function.type == "member_expression" else None
    method = text_of(function.child_by_field_name("property")) if target is not None else ""
    fold = _METHODS.get(method)
    return fold(method, target, arguments) if fold is not None and target is not None else None


def _from_char_code(_: str, target: Node, arguments: list[Node]) -> str | None:
    return _code_points(arguments) if target.type == "identifier" and text_of(target) == "String" else None


def _to_string(_: str, target: Node, arguments: list[Node]) -> str | None:
    return _buffer(target) if not arguments else None


def _cased(method: str, target: Node, arguments: list[Node]) -> str | None:
    whole = folded(target) if not arguments else None
    return _CASES[method](whole) if whole is not None else None


def _joined(_: str, target: Node, arguments: list[Node]) -> str | None:
    parts, glue = _listed(target), folded(arguments[0]) if len(arguments) == 1 else "," if not arguments else None
    return _short(glue.join(parts)) if parts is not None and glue is not None else None


def _arguments(node: Node) -> list[Node] | None:
    found = node.child_by_field_name("arguments")
    return [child for child in found.named_children if child.type != "comment"] if found is not None else None


def _short(text: str) -> str | None:
    return text if len(text) <= _LONGEST else None


def _code_points(arguments: list[Node]) -> str | None:
    if len(arguments) > _LONGEST or not all(argument.type == "number" for argument in arguments):
        return None
    try:
        codes = [int(text_of(argument), 0) for argument in arguments]
    except ValueError:
        return None
    return "".join(chr(code) for code in codes) if all(0 <= code < 0x110000 for code in codes) else None


def _decoded(text: str, encoding: str) -> str | None:
    try:
        raw = base64.b64decode(text) if encoding in ("base64", "base64url") else bytes.fromhex(text) \
            if encoding == "hex" else text.encode("latin-1")
    except (ValueError, binascii.Error):
        return None
    return _short(raw.decode("utf-8", errors="replace"))


def _atob(arguments: list[Node]) -> str | None:
    text = folded(arguments[0]) if len(arguments) == 1 else None
    return _decoded(text, "base64") if text is not None else None


def _buffer(node: Node) -> str | None:
    """`Buffer.from("...", "base64")` (the object `.toString()` is called on)."""
    function, arguments = node.child_by_field_name("function"), _arguments(node)
    if node.type != "call_expression" or function is None or arguments is None or text_of(function) != "Buffer.from":
        return None
    text = folded(arguments[0]) if arguments and len(arguments) <= 2 else None
    encoding = folded(arguments[1]) if len(arguments) == 2 else "utf8"
    return _decoded(text, encoding) if text is not None and encoding is not None else None


def _listed(node: Node) -> list[str] | None:
    """An array of constants, `x.split(sep)` of one, or `.reverse()` of either."""
    if node.type == "array":
        parts = [folded(item) for item in node.named_children]
        return [part for part in parts if part is not None] if None not in parts else None
    function, arguments = node.child_by_field_name("function"), _arguments(node)
    if node.type != "call_expression" or function is None or arguments is None or function.type != "member_expression":
        return None
    target, method = function.child_by_field_name("object"), text_of(function.child_by_field_name("property"))
    if target is None:
        return None
    if method == "reverse" and not arguments:
        listed = _listed(target)
        return listed[::-1] if listed is not None else None
    if method == "split" and len(arguments) == 1:
        whole, sep = folded(target), folded(arguments[0])
        return (list(whole) if sep == "" else whole.split(sep)) if whole is not None and sep is not None else None
    return None


_METHODS: dict[str, Callable[[str, Node, list[Node]], str | None]] = {
    "fromCharCode": _from_char_code, "toString": _to_string, "join": _joined, **dict.fromkeys(_CASES, _cased)}
_FOLDS: dict[str, Callable[[Node], str | None]] = {"parenthesized_expression": _inner, "call_expression": _call}
