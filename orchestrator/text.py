"""Text from plans, agents and tools made safe to show: control characters (terminal escapes) become visible,
credentials in a command's output are named, not shown."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def first_few(items: Sequence[str], separator: str = ", ", limit: int = 5) -> str:
    """The first `limit` of `items` joined, and how many more there are: `a, b, c, d, e (and 2 more)`."""
    more = f" (and {len(items) - limit} more)" if len(items) > limit else ""
    return separator.join(items[:limit]) + more


def uncoloured(text: str) -> str:
    """A tool's output without its colour codes (`--color=yes` in a project's pytest `addopts`, FORCE_COLOR): what
    the gate reads in it is matched line by line."""
    return _COLOUR.sub("", text)


def visible(text: str) -> str:
    """Control characters (terminal escapes included) become visible `\\x1b`-style text; newlines and tabs stay."""
    return "".join(ch if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf") else f"\\x{ord(ch):02x}"
                   if ord(ch) < 0x100 else f"\\u{ord(ch):04x}" for ch in text)


def one_line(text: object, limit: int = 80) -> str:
    """The first line of `text`, made visible and cut to `limit` characters."""
    lines = str(text or "").strip().splitlines()
    first = visible(lines[0]) if lines else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def plain_line(text: str, limit: int | None = None, control: str = "") -> str:
    """One line of plain text for places that can't show escapes at all (diagram labels, notifications):
    control, format and private characters become `control`, any run of whitespace one space, cut to `limit`."""
    kept = "".join(" " if ch.isspace() else control if unicodedata.category(ch).startswith("C") else ch
                   for ch in text)
    line = " ".join(kept.split())
    return line if limit is None or len(line) <= limit else line[: limit - 1].rstrip() + "…"


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_MIN_SECRET = 8  # shorter values ("1", "true") would mask ordinary words


def without_secrets(text: str, env: Mapping[str, str]) -> str:
    """`text` with the value of every credential-like variable of `env` (ANTHROPIC_API_KEY, GH_TOKEN, a
    DATABASE_PASSWORD…) replaced by its name: a test that prints its environment can't put them in a report."""
    for name, value in sorted(env.items(), key=lambda item: -len(item[1])):
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET and value in text:
            text = text.replace(value, f"${name}")
    return text


def chosen_option(text: str, options: list[str]) -> str:
    """An answer to a question with options: a number stands for that option (1 for the first), anything else
    for itself."""
    text = text.strip()
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1]
    return text
