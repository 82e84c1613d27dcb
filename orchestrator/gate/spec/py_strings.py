"""Strings Python code builds from constants, folded as the interpreter would: the screen reads a runner's name
built piece by piece (`"PYT" + "EST"`) or decoded from constants (`base64.b64decode("cHl0ZXN0").decode()`,
`bytes([112, ...]).decode()`, rot13, `"".join(map(chr, [...]))`) as the whole name."""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
from collections.abc import Callable

_LONGEST = 10_000
"""The most a folded value holds: a name is short, and a constant decoded while screening must stay cheap."""
_BASE64: dict[str, Callable[[bytes], bytes]] = {
    "b64decode": base64.b64decode, "urlsafe_b64decode": base64.urlsafe_b64decode, "b32decode": base64.b32decode,
    "b16decode": base64.b16decode, "a85decode": base64.a85decode, "b85decode": base64.b85decode,
    "decodebytes": base64.decodebytes}
_TEXT_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "casefold", "title", "capitalize",
                           "swapcase"})


def folded(node: ast.AST) -> str | None:
    """The string an expression of constants builds (`"PYT" + "EST"`, `"".join([...])`, `"tset"[::-1]`, `chr(116)`,
    `"%s%s" % (...)`, a decoded constant), as a name built piece by piece is read as the whole name; None when it
    reads anything else."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp):
        return _joined_pair(node) if isinstance(node.op, ast.Add) else _percent(node) if isinstance(
            node.op, ast.Mod) else None
    if isinstance(node, ast.JoinedStr):
        parts = [folded(value) for value in node.values]
        return "".join(part for part in parts if part is not None) if None not in parts else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return _sliced(node, node.slice)
    if isinstance(node, ast.Call) and not node.keywords:
        return next((value for fold in _CALLS if (value := fold(node)) is not None), None)
    return None


def _joined_pair(node: ast.BinOp) -> str | None:
    """Pieces joined by `+`, read left to right without recursing down the chain (a long one is one expression,
    and its first piece that is no string ends the reading)."""
    pieces: list[str] = []
    pending: list[ast.AST] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add):
            pending += [current.right, current.left]
        elif (piece := folded(current)) is None:
            return None
        else:
            pieces.append(piece)
    return _short("".join(pieces))


def _sliced(node: ast.Subscript, part: ast.Slice) -> str | None:
    whole = folded(node.value)
    bounds = [part.lower, part.upper, part.step]
    if whole is not None and all(b is None or (isinstance(b, ast.Constant) and isinstance(b.value, int))
                                 or (isinstance(b, ast.UnaryOp) and isinstance(b.operand, ast.Constant))
                                 for b in bounds):
        values = [None if b is None else ast.literal_eval(b) for b in bounds]
        return whole[slice(*values)]
    return None


def _percent(node: ast.BinOp) -> str | None:
    """`"%s%s" % ("py", "test")`."""
    template, values = folded(node.left), node.right
    parts = [folded(item) for item in (values.elts if isinstance(values, ast.Tuple) else [values])]
    try:
        return _short(template % tuple(parts)) if template is not None and None not in parts else None
    except (TypeError, ValueError):
        return None


def _short(text: str) -> str | None:
    return text if len(text) <= _LONGEST else None


def _name(node: ast.AST) -> str:
    """`name` of `name` or of `module.name`: how a decoder is called, imported either way."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _method(node: ast.Call) -> tuple[str, ast.AST | None]:
    """The method a call calls and what on (`"", None` for a plain function)."""
    return (node.func.attr, node.func.value) if isinstance(node.func, ast.Attribute) else ("", None)


def _integers(node: ast.AST, below: int) -> list[int] | None:
    """The integers of a list or tuple of constants, each under `below`."""
    if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) > _LONGEST:
        return None
    codes = [item.value for item in node.elts if isinstance(item, ast.Constant) and type(item.value) is int]
    return codes if len(codes) == len(node.elts) and all(0 <= code < below for code in codes) else None


def _folded_bytes(node: ast.AST) -> bytes | None:
    """The bytes an expression of constants builds (`b"..."`, `bytes([112, ...])`, `bytes.fromhex("...")`,
    `base64.b64decode("...")`); None when it reads anything else."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, bytes) and len(node.value) <= _LONGEST else None
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
        return None
    name, argument = _name(node.func), node.args[0]
    if name in ("bytes", "bytearray"):
        codes = _integers(argument, 256)
        return bytes(codes) if codes is not None else None
    text = folded(argument)
    source = _folded_bytes(argument) if text is None else text.encode("ascii", errors="ignore")
    try:
        if name == "fromhex":
            return bytes.fromhex(text) if text is not None else None
        return bytes(_BASE64[name](source)) if name in _BASE64 and source is not None else None
    except (ValueError, binascii.Error):
        return None


def _decoded(node: ast.Call) -> str | None:
    """Bytes of constants decoded: `b"...".decode()`, `base64.b64decode("...").decode("ascii")`."""
    method, target = _method(node)
    if method != "decode" or target is None or len(node.args) > 1:
        return None
    raw, codec = _folded_bytes(target), folded(node.args[0]) if node.args else "utf-8"
    try:
        return _short(raw.decode(codec)) if raw is not None and codec is not None else None
    except (LookupError, UnicodeError):
        return None


def _text_method(node: ast.Call) -> str | None:
    """`"PYTEST".lower()` and the like."""
    method, target = _method(node)
    whole = folded(target) if method in _TEXT_METHODS and target is not None and not node.args else None
    return str(getattr(whole, method)()) if whole is not None else None


def _formatted(node: ast.Call) -> str | None:
    """`"{}{}".format("py", "test")`."""
    method, target = _method(node)
    template = folded(target) if method == "format" and target is not None else None
    parts = [folded(argument) for argument in node.args]
    try:
        return _short(template.format(*parts)) if template is not None and None not in parts else None
    except (IndexError, KeyError, ValueError):
        return None


def _rot13(node: ast.Call) -> str | None:
    """`codecs.decode("clgrfg", "rot13")`."""
    if _name(node.func) not in ("decode", "encode") or len(node.args) != 2:
        return None
    text, codec = folded(node.args[0]), folded(node.args[1])
    rot13 = codec is not None and codec.replace("_", "").replace("-", "").lower() == "rot13"
    return codecs.decode(text, "rot13") if text is not None and rot13 else None


def _chr(node: ast.Call) -> str | None:
    code = node.args[0] if isinstance(node.func, ast.Name) and node.func.id == "chr" and len(node.args) == 1 else None
    return chr(code.value) if isinstance(code, ast.Constant) and type(code.value) is int \
        and 0 <= code.value < 0x110000 else None


def _joined(node: ast.Call) -> str | None:
    """`"".join([...])` of strings, or of code points (`map(chr, [...])`, `(chr(c) for c in [...])`)."""
    method, target = _method(node)
    glue = folded(target) if method == "join" and target is not None and len(node.args) == 1 else None
    if glue is None:
        return None
    items = node.args[0]
    if isinstance(items, (ast.List, ast.Tuple)):
        parts = [folded(item) for item in items.elts]
        return glue.join(part for part in parts if part is not None) if None not in parts else None
    codes = _chr_codes(items)
    return glue.join(chr(code) for code in codes) if codes is not None else None


def _chr_codes(node: ast.AST) -> list[int] | None:
    """The code points of `map(chr, [112, ...])` or `(chr(c) for c in [112, ...])`; None for anything else."""
    if isinstance(node, ast.Call) and _name(node.func) == "map" and len(node.args) == 2 \
            and _name(node.args[0]) == "chr":
        return _integers(node.args[1], 0x110000)
    if not (isinstance(node, (ast.GeneratorExp, ast.ListComp)) and len(node.generators) == 1):
        return None
    loop, element = node.generators[0], node.elt
    if loop.ifs or not (isinstance(element, ast.Call) and _name(element.func) == "chr" and len(element.args) == 1):
        return None
    same = isinstance(element.args[0], ast.Name) and isinstance(loop.target, ast.Name) \
        and element.args[0].id == loop.target.id
    return _integers(loop.iter, 0x110000) if same else None


_CALLS: tuple[Callable[[ast.Call], str | None], ...] = (_decoded, _text_method, _formatted, _rot13, _chr, _joined)
