"""Strings Python code builds from constants, folded as the interpreter would: the screen reads a runner's name
built piece by piece (`"PYT" + "EST"`) as the whole name."""

from __future__ import annotations

import ast


def folded(node: ast.AST) -> str | None:
    """The string an expression of constants builds (`"PYT" + "EST"`, `"".join([...])`, `"tset"[::-1]`, `chr(116)`),
    as a name built piece by piece is read as the whole name; None when it reads anything else."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = folded(node.left), folded(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [folded(value) for value in node.values]
        return "".join(part for part in parts if part is not None) if None not in parts else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        whole = folded(node.value)
        bounds = [getattr(node.slice, name) for name in ("lower", "upper", "step")]
        if whole is not None and all(b is None or (isinstance(b, ast.Constant) and isinstance(b.value, int))
                                     or (isinstance(b, ast.UnaryOp) and isinstance(b.operand, ast.Constant))
                                     for b in bounds):
            values = [None if b is None else ast.literal_eval(b) for b in bounds]
            return whole[slice(*values)]
    if isinstance(node, ast.Call) and not node.keywords:
        return _folded_call(node)
    return None


def _folded_call(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name) and node.func.id == "chr" and len(node.args) == 1:
        code = node.args[0]
        return chr(code.value) if isinstance(code, ast.Constant) and isinstance(code.value, int) \
            and 0 <= code.value < 0x110000 else None
    if isinstance(node.func, ast.Attribute) and node.func.attr == "join" and len(node.args) == 1:
        glue, items = folded(node.func.value), node.args[0]
        if glue is not None and isinstance(items, (ast.List, ast.Tuple)):
            parts = [folded(item) for item in items.elts]
            return glue.join(part for part in parts if part is not None) if None not in parts else None
    return None
