"""Our own modules parsed once per test process, for the tests that read the code itself (layering, package maps,
function lengths, settings readers, the verdict's writer, error trees): each walks every module, and parsing them
all takes ~1.5 CPU-s, once per test when each parsed its own. The trees are shared: read them, never change them."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of the file at `path` (read once: the checkout does not change while the tests run)."""
    return ast.parse(path.read_text(encoding="utf-8"))
