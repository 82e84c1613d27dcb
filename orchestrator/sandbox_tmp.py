"""Which of the host's /tmp entries a sandboxed command sees, read-only above its private tmp: those it can need.

bwrap mounts each one, and each mount costs more the more there are (0.006 CPU-s to start `true` with none bound,
0.16 with 250, measured with bwrap 0.8): a busy /tmp made every gate run pay for every other program's sockets and
folders. A command needs only the top-level entries its own paths live in: its folder, the repo (`readable`),
what its command line and environment name (PATH's and PYTHONPATH's venvs and tools, HOME, a venv's base Python),
and AutoBuild's own interpreter and checkout. Nothing is made writable here; an entry not shown is simply absent
(the private tmp is seen in its place), as it is on a machine where it never existed.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from agents.bounded import read_text_bounded

TMP = Path("/tmp")
_NAMED = re.compile(r"(?<![\w.~-])/tmp/([^/\s:;,'\"=)(]+)")
"""A top-level /tmp entry named anywhere in a value: `PATH=/tmp/x/.venv/bin:…`, `GOPROXY=file:///tmp/y`."""
_OWN_CHECKOUT = Path(__file__).resolve().parent.parent
"""AutoBuild's own checkout: the gate's runners load its shims from there (a clone under /tmp ran no gate)."""


def shown(cwd: Path, readable: Sequence[Path], env: Mapping[str, str], args: Sequence[str],
          hidden: Iterable[Path] = ()) -> list[Path]:
    """The host paths under /tmp to show read-only: each top-level entry the command can need, then each of
    `readable` under /tmp that no such entry already shows. `hidden` (the private TMPDIR, the writable paths) are
    never shown read-only: the sandbox binds them itself."""
    skipped = {path.resolve() for path in hidden}
    names = _named(cwd, env, args)
    tops = [TMP / name for name in sorted(names) if TMP / name not in skipped and os.path.lexists(TMP / name)]
    exact = [path.resolve() for path in readable]
    exact = [path for path in exact if path.is_relative_to(TMP) and path != TMP and path not in skipped
             and not any(path.is_relative_to(top) for top in tops)]
    return [*tops, *dict.fromkeys(exact)]


def _named(cwd: Path, env: Mapping[str, str], args: Sequence[str]) -> set[str]:
    """The top-level /tmp names the command's folder, line and environment lead to, as written and resolved."""
    values = [*args, *env.values()]
    names = {found.group(1) for value in values for found in _NAMED.finditer(value)}
    paths = [cwd, Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable), _OWN_CHECKOUT]
    paths += [Path(piece) for value in env.values() for piece in value.split(os.pathsep)
              if piece.startswith("/") and len(piece) < 4096]
    paths += _venv_homes(env.get("PATH", ""))
    for path in paths:
        for form in (path, _resolved(path)):  # a symlink outside /tmp into it, or the reverse
            parts = form.parts  # not is_relative_to, which builds every parent: 8 of the 14 ms a command line took
            if len(parts) > 2 and parts[:2] == TMP.parts:
                names.add(parts[2])
    # `/tmp/..` (or `/tmp/.`) names no entry: bound, it would be the host's root (or /tmp) mounted over the
    # sandbox's own, the private tmp under it
    return names - {".", ".."}


def _venv_homes(path: str) -> list[Path]:
    """The base Python of each venv on PATH (`home` in its pyvenv.cfg): the venv's `python` links there."""
    homes: list[Path] = []
    for entry in dict.fromkeys(piece for piece in path.split(os.pathsep) if piece.startswith("/")):
        try:
            config = read_text_bounded(Path(entry).parent / "pyvenv.cfg")
        except OSError:
            continue
        homes += [Path(line.partition("=")[2].strip()) for line in config.splitlines()
                  if line.partition("=")[0].strip() == "home"]
    return homes


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path
