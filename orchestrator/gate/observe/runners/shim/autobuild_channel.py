"""The gate's channel in a Python runner's process (gate/observe/channel.py is the other end): the first runner here
takes the inherited pipe named by AUTOBUILD_GATE_CHANNEL, removes that variable from the environment and keeps the
descriptor from its children, then writes one JSON line per record as it happens. Plain code for any Python 3,
and nothing here may raise into the user's run."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys

TYPE_CHECKING = False  # importing typing would cost every Python process of a gate run ~8 ms
if TYPE_CHECKING:
    from typing import Any

CHANNEL = "AUTOBUILD_GATE_CHANNEL"
_LINE = 4000  # below PIPE_BUF: a line is written whole, never interleaved with another process's
_taken: list[int] = []
_sessions = [0]
_HOOKS = ("meta_path", "path_hooks")
_BEFORE = [list(getattr(sys, name, ())) for name in _HOOKS]
"""Python's finders when the runner started (this module is loaded by the shims as the runner loads, before project
code): the installed packages' (editable installs' finders come from .pth files) and the runner's own after it."""
_ROOT = os.path.join(os.path.realpath(os.getcwd()), "")


def take() -> int | None:
    """The channel's descriptor in this process (taken once: the variable leaves the environment, the descriptor
    is not inherited by what this process starts); None when the run has none."""
    if _taken:
        return _taken[0]
    raw = os.environ.pop(CHANNEL, None)
    if raw is None:
        return None
    with contextlib.suppress(Exception):
        fd = int(raw)
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.set_inheritable(fd, False)
            _taken.append(fd)
            return fd
    return None


def named_runner() -> str | None:
    """The runner this interpreter was started as (`python -m pytest`, `pytest`, `python -m unittest`): its
    channel is taken before any project code loads."""
    argv = list(getattr(sys, "orig_argv", None) or [])
    for index, word in enumerate(argv[1:], 1):
        if word in ("-m", "-mpytest", "-munittest"):
            module = word[2:] or (argv[index + 1] if index + 1 < len(argv) else "")
            return {"pytest": "pytest", "py.test": "pytest", "unittest": "unittest"}.get(module)
        if not word.startswith("-"):
            base = os.path.basename(word)
            return "pytest" if base in ("pytest", "py.test") else None
    return None


def altered(owners: Any) -> list[list[str]]:
    """`[module.Class.name, file:line]` for each function of a runner's own class (or module) whose code no longer
    lives in the runner's package folder: code of the run's put in its place (an assertion that can't fail, a test
    call that runs nothing). `owners`: (module, class or "", names to check or () for every one)."""
    found: list[list[str]] = []
    stdlib = os.path.dirname(os.path.realpath(os.__file__)) + os.sep
    for module_name, class_name, names in owners:
        with contextlib.suppress(Exception):
            module = sys.modules.get(module_name)
            source = getattr(module, "__file__", None)
            if module is None or source is None:
                continue
            home = os.path.dirname(os.path.realpath(source)) + os.sep
            items = vars(getattr(module, class_name) if class_name else module)
            for name in names or list(items):
                value = items.get(name)
                where = _foreign(getattr(value, "__func__", value), home, stdlib)
                if where is None and callable(value) and not isinstance(value, type) \
                        and (names or name.startswith(("assert", "fail"))):
                    where = repr(value)[:100]  # no code at all where a function of the runner's was
                if where:
                    found.append([f"{module_name}.{class_name + '.' if class_name else ''}{name}", where])
    return found


def _foreign(func: Any, home: str, stdlib: str) -> str | None:
    """Where `func`'s code is when it is not under `home` ("" when it is; None: no Python code); a standard library
    decorator's wrapper (`contextlib.contextmanager`) is looked through to the function it wraps."""
    for _ in range(8):
        code = getattr(func, "__code__", None)
        if code is None:
            return None
        path = os.path.realpath(code.co_filename)
        if path.startswith(home):
            return ""
        if not (path.startswith(stdlib) and hasattr(func, "__wrapped__")):
            return f"{code.co_filename}:{code.co_firstlineno}"
        func = func.__wrapped__
    return "a chain of wrappers"


def import_hooks() -> list[list[str]]:
    """`["sys.meta_path", file:line]` for each finder put on `sys.meta_path` or `sys.path_hooks` since the
    runner started whose code is the run's own (a file under the folder it runs in, not an installed package's): a
    finder of the code's can answer the tests' import of their helper or assertion library with a fake."""
    found: list[list[str]] = []
    for index, name in enumerate(_HOOKS):  # plain code for any Python 3: no zip(strict=)
        for entry in list(getattr(sys, name, ())):
            if any(entry is old for old in _BEFORE[index]):
                continue
            with contextlib.suppress(Exception):
                owner = entry if isinstance(entry, type) or hasattr(entry, "__code__") else type(entry)
                code = getattr(getattr(owner, "find_spec", None) or getattr(owner, "find_module", None) or owner,
                               "__code__", None)
                source = code.co_filename if code is not None else sys.modules[owner.__module__].__file__
                path = os.path.realpath(source or "")
                if path.startswith(_ROOT) and "site-packages" not in path and "dist-packages" not in path:
                    line = f":{code.co_firstlineno}" if code is not None else ""
                    found.append([f"sys.{name}", f"{os.path.relpath(path, _ROOT)}{line}"])
    return found


class Session:
    """One runner's session on the channel: `open`, then a record per outcome, then `end` with its status."""

    def __init__(self, runner: str) -> None:
        self.runner = runner
        self.fd = take()
        _sessions[0] += 1
        self.key = f"{os.getpid()}-{_sessions[0]}"
        self.send("open")

    def send(self, event: str, **fields: Any) -> None:
        if self.fd is None:
            return
        record = {"s": self.key, "runner": self.runner, "event": event, **fields}
        with contextlib.suppress(Exception):
            line = json.dumps(record)
            if len(line) > _LINE:
                record.update({name: str(value)[:300] for name, value in fields.items() if isinstance(value, str)})
                line = json.dumps(record)
            os.write(self.fd, (line + "\n").encode("utf-8"))

    def test(self, **fields: Any) -> None:
        self.send("test", **fields)

    def end(self, status: int, owners: Any = ()) -> None:
        """The session's end, after the runner's own functions of `owners` that code of the run replaced (`altered`)
        and the finders it added (`import_hooks`)."""
        names = altered(owners) + import_hooks()
        if names:
            self.send("altered", names=names[:50])
        self.send("end", status=status)
