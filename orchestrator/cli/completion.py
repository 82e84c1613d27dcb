"""`autobuild completion bash|zsh`: the shell's completion script, generated from the argparse parser (shtab)."""

from __future__ import annotations

import argparse
import sys

import shtab

_PATHS = {"--repo": shtab.DIRECTORY, "--plan": shtab.FILE, "--db": shtab.FILE}
"""Options whose value is a path: the shell offers folders or files for them (the parser knows them as strings)."""

_INSTALL = {
    "bash": "# bash: add to ~/.bashrc:  source <(autobuild completion bash)",
    "zsh": "# zsh: autobuild completion zsh > ~/.zfunc/_autobuild, and in ~/.zshrc before compinit: fpath+=~/.zfunc",
}


def completion_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the completion script for `args.shell`, every command and flag of `parser` in it."""
    _mark_paths(parser)
    script = shtab.complete(parser, shell=args.shell)
    if args.shell == "zsh":  # `#compdef` must stay the first line for zsh's autoload
        first, _, rest = script.partition("\n")
        sys.stdout.write(f"{first}\n{_INSTALL['zsh']}\n{rest}")
    else:
        sys.stdout.write(f"{_INSTALL['bash']}\n{script}")
    return 0


def _mark_paths(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _mark_paths(sub)
            continue
        for option in action.option_strings:
            if option in _PATHS:
                action.complete = _PATHS[option]  # type: ignore[attr-defined]  # shtab's documented hook
