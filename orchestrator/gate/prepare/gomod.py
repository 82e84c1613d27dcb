"""go.mod in the clean room: the task's module, `go` line and requirements, with the base's `replace` directives. A
`replace` the task added can swap a module only the tests import (testify's `assert`) for a local fake that never
fails; a product change rarely needs one, and a coach can accept go.mod by name when it does."""

from __future__ import annotations

import re

_REPLACE_BLOCK = re.compile(r"^replace\s*\(\s*$.*?^\)\s*$\n?", re.MULTILINE | re.DOTALL)
_REPLACE_LINE = re.compile(r"^replace\s+[^(\s].*$\n?", re.MULTILINE)


def replaces(text: str) -> str:
    """The `replace` directives of a go.mod (blocks and single lines), in order, as written."""
    found = [(match.start(), match.group(0)) for pattern in (_REPLACE_BLOCK, _REPLACE_LINE)
             for match in pattern.finditer(text)]
    return "".join(block.rstrip("\n") + "\n" for _, block in sorted(found))


def without_replaces(text: str) -> str:
    return _REPLACE_LINE.sub("", _REPLACE_BLOCK.sub("", text))


def clean(base_text: str | None, tree_text: str | None) -> tuple[str | None, bool]:
    """(the clean room's go.mod, whether the task changed its `replace` directives)."""
    if tree_text is None:
        return base_text, base_text is not None and bool(replaces(base_text))
    base_replaces = replaces(base_text or "")
    if replaces(tree_text) == base_replaces:
        return tree_text, False
    rebuilt = without_replaces(tree_text).rstrip("\n") + "\n"
    return (rebuilt + "\n" + base_replaces if base_replaces else rebuilt), True
