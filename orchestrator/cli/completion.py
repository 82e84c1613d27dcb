"""`autobuild completion bash|zsh`: the shell's completion script, generated from the argparse parser (shtab)."""

from __future__ import annotations

import argparse
import sys

import shtab

from orchestrator.cli import completion_ids

_PATHS = {"--repo": shtab.DIRECTORY, "--plan": shtab.FILE, "--db": shtab.FILE}
"""Options whose value is a path: the shell offers folders or files for them (the parser knows them as strings)."""

_INSTALL = {
    "bash": "# bash: add to ~/.bashrc:  source <(autobuild completion bash)",
    "zsh": "# zsh: autobuild completion zsh > ~/.zfunc/_autobuild, and in ~/.zshrc before compinit: fpath+=~/.zfunc",
}


def completion_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the completion script for `args.shell`, every command and flag of `parser` in it, feature and task ids
    completed from the store; or, asked by that script (`--ids`), the ids for the line it is completing."""
    if args.ids is not None:
        return completion_ids.print_ids(args.ids[0] if args.ids else "", list(args.ids[1:]), parser)
    _mark_paths(parser)
    script = shtab.complete(parser, shell=args.shell, preamble=completion_ids.PREAMBLE[args.shell])
    if args.shell == "zsh":  # `#compdef` must stay the first line for zsh's autoload
        first, _, rest = script.partition("\n")
        sys.stdout.write(f"{first}\n{_INSTALL['zsh']}\n{rest}")
    else:
        sys.stdout.write(f"{_INSTALL['bash']}\n{script}")
    return 0


def _mark_paths(parser: argparse.ArgumentParser, command: str = "") -> None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                _mark_paths(sub, name)
            continue
        completion_ids.mark(action, command)
        for option in action.option_strings:
            if option in _PATHS:
                action.complete = _PATHS[option]  # type: ignore[attr-defined]  # shtab's documented hook
