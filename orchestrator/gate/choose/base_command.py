"""The gate's command as the base defines it: a task that edits the script or target it names doesn't change what runs.

`npm test`, `npm run X`, `yarn [run] X` and `pnpm [run] X` run the base's `scripts` entry (npm's pre/post scripts
too) with the tree's `node_modules/.bin` on PATH; `make X`, `tox …` and `nox …` run with the base's Makefile,
tox.ini or noxfile.py, written for the run beside the tree's own (`BASE_PREFIX`), so the tree's other config (a
plugin, a dependency, a test folder) runs as the task left it. Anything else (a compound command, a `-f`/`-c`
of the user's own) runs as written: the accounting still names a base test an edit there deselected.
"""

from __future__ import annotations

import configparser
import io
import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from orchestrator.facts import GateResult

BASE_PREFIX = ".autobuild-base."
"""The name prefix of the base's config copies written into the tree for one run (removed after it)."""
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NPM_TEST = {"test", "t", "tst"}
_NPM_RUN = {"run", "run-script", "rum", "urn"}
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_BAILS = {"make": {"-f", "--file", "--makefile", "-C", "--directory"}, "tox": {"-c", "--conf", "--root"},
          "nox": {"-f", "--noxfile", "--noxfile-dir"}}


@dataclass(frozen=True)
class BaseCommand:
    """What runs in the tree in place of the gate's command, and the base's files it needs there."""

    command: str
    files: Mapping[str, str] = field(default_factory=dict)
    """Path in the tree -> text: the base's config copies to write for the run."""
    why: str = ""


def named_as_given(result: GateResult, command: str, launched: str, as_on_base: BaseCommand | None) -> GateResult:
    """A run of `launched` (the command as the base defines it, or wrapped) named as the gate's `command`, saying
    when the base's definition ran."""
    if launched != command:
        result["summary"] = result["summary"].replace(f"`{launched}`", f"`{command}`")
        result["command"] = command
    if as_on_base is not None:
        result["summary"] += f"; run with {as_on_base.why} (the task's edit there doesn't change what runs)"
    return result


def _words(command: str) -> tuple[list[str], list[str]] | None:
    """(leading `VAR=value` words, the rest) of one simple command; None for anything the shell would combine."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    if not words or any(word and set(word) <= set("();<>|&") for word in words):
        return None
    split = next((i for i, word in enumerate(words) if not _ASSIGNMENT.match(word)), len(words))
    return words[:split], words[split:]


def config_files(command: str) -> list[str]:
    """The files whose base version decides what `command` runs (read on the base and in the tree)."""
    parsed = _words(command)
    if parsed is None or not parsed[1]:
        return []
    tool = _tool(parsed[1])
    if tool in ("npm", "yarn", "pnpm"):
        return ["package.json"]
    if tool == "make":
        return list(_MAKEFILES)
    if tool == "tox":
        return ["tox.ini"]
    if tool == "nox":
        return ["noxfile.py"]
    return []


def _tool(words: list[str]) -> str | None:
    if re.fullmatch(r"python[\d.]*", words[0]) and words[1:3] in (["-m", "tox"], ["-m", "nox"]):
        return words[2]
    name = words[0].rsplit("/", 1)[-1]
    return {"gmake": "make"}.get(name, name) if name in ("npm", "yarn", "pnpm", "make", "gmake", "tox", "nox") \
        else None


def resolve(command: str, base: Mapping[str, str | None], tree: Mapping[str, str | None]) -> BaseCommand | None:
    """The command that runs `command` as the base defines it (`base` and `tree` map `config_files` to their
    text); None when the tree defines it the same way, or when it can't be said."""
    parsed = _words(command)
    if parsed is None or not parsed[1]:
        return None
    env, words = parsed
    tool = _tool(words)
    if tool in ("npm", "yarn", "pnpm"):
        return _script(tool, env, words, base.get("package.json"), tree.get("package.json"))
    if tool in _BAILS and not any(word in _BAILS[tool] or any(word.startswith(flag + "=") for flag in _BAILS[tool])
                                  for word in words):
        names = _MAKEFILES if tool == "make" else ("tox.ini",) if tool == "tox" else ("noxfile.py",)
        name = next((name for name in names if base.get(name) is not None), None)
        if name is None or base.get(name) == tree.get(name):
            return None
        text, why = str(base[name]), f"{name} as on the base"
        if tool == "tox" and (merged := tox_commands_from_base(text, tree.get(name))) is not None:
            if merged == "":
                return None  # the task changed only what its envs install: its tox.ini runs as it is
            text, why = merged, "tox.ini's commands as on the base"
        copy = BASE_PREFIX + name
        at = 3 if words[1:3] in (["-m", "tox"], ["-m", "nox"]) else 1
        flag = {"make": "-f", "tox": "-c", "nox": "-f"}[tool]
        line = shlex.join([*env, *words[:at], flag, copy, *words[at:]])
        return BaseCommand(line, {copy: text}, why)
    return None


_TOX_RUN_KEYS = ("commands", "commands_pre", "commands_post", "changedir", "change_dir", "setenv", "set_env",
                 "passenv", "pass_env", "allowlist_externals", "ignore_outcome", "ignore_errors")
"""What a tox env runs, and with which variables: taken from the base; the rest (deps, extras) is the task's."""


def tox_commands_from_base(base_text: str, tree_text: str | None) -> str | None:
    """The tree's tox.ini with every env's commands (`_TOX_RUN_KEYS`) as the base has them; "" when they are the
    same already; None when either can't be read (the base's file then runs whole)."""
    base, tree = configparser.RawConfigParser(), configparser.RawConfigParser()
    base.optionxform = tree.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    try:
        base.read_string(base_text)
        tree.read_string(tree_text or "")
    except configparser.Error:
        return None
    if tree_text is None:
        return None
    changed = False
    sections = [s for s in {*base.sections(), *tree.sections()} if s == "testenv" or s.startswith("testenv:")]
    for section in sections:
        for key in _TOX_RUN_KEYS:
            want = base.get(section, key) if base.has_option(section, key) else None
            have = tree.get(section, key) if tree.has_option(section, key) else None
            if want == have:
                continue
            changed = True
            if not tree.has_section(section):
                tree.add_section(section)
            if want is None:
                tree.remove_option(section, key)
            else:
                tree.set(section, key, want)
    if not changed:
        return ""
    out = io.StringIO()
    tree.write(out)
    return out.getvalue()


def _scripts(text: str | None) -> dict[str, str] | None:
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in scripts.items()} if isinstance(scripts, dict) else None


def _script_call(tool: str, rest: list[str], scripts: Mapping[str, str]) -> tuple[str, list[str]] | None:
    """(script name, its arguments) of `npm test`, `npm run X -- args`, `yarn [run] X args`, `pnpm [run] X args`."""
    if not rest or rest[0].startswith("-"):
        return None  # global flags (--prefix, --workspace, -C): the script may not be the root's
    if tool == "npm" and rest[0] in _NPM_TEST:
        name, args = "test", rest[1:]
    elif (rest[0] in _NPM_RUN or (tool != "npm" and rest[0] == "run")) and len(rest) > 1:
        name, args = rest[1], rest[2:]
    elif tool != "npm" and rest[0] in scripts:
        name, args = rest[0], rest[1:]
    else:
        return None
    if tool == "npm" and args and args[0] != "--":
        return None  # npm's own flags before `--`
    return name, args[1:] if args and args[0] == "--" else args


def _script(tool: str, env: list[str], words: list[str], base_text: str | None,
            tree_text: str | None) -> BaseCommand | None:
    """An npm/yarn/pnpm script run as the base's `scripts` define it (None: the same in the tree, or unknown)."""
    base = _scripts(base_text)
    call = _script_call(tool, words[1:], base) if base is not None else None
    if base is None or call is None or call[0] not in base:
        return None
    name, args = call
    tree = _scripts(tree_text) or {}
    hooks = [f"pre{name}", name, f"post{name}"] if tool == "npm" else [name]
    if all(base.get(hook) == tree.get(hook) for hook in hooks):
        return None
    steps = [base[hook] + (" " + shlex.join(args) if hook == name and args else "")
             for hook in hooks if hook in base]
    path = 'export PATH="$PWD/node_modules/.bin:$PATH"'
    exports = [f"export {var}={shlex.quote(value)}" for var, _, value in (word.partition("=") for word in env)]
    line = "\n".join([*exports, path, " && ".join(f"( {step} )" for step in steps)])
    return BaseCommand(line, {}, f"package.json's `{name}` script as on the base")
