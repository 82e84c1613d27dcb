"""The ids shell completion offers: features (the repo's plans, plans run from elsewhere, the checkpoint DB's threads)
and a feature's tasks (its plan's, with those a replan added), for the command line being typed.

The completion script asks `autobuild completion SHELL --ids KIND WORDS…` at each Tab (WORDS: the line so far);
that answer reads the repo and the DB the line names (`--repo`, `--db`, as the command itself would), prints one id a
line and never fails: a line it can't read completes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from orchestrator.plan.ids import is_id

KINDS = ("features", "tasks", "targets")
"""What a positional completes: a feature, a task of the feature named on the line, or either (`run`'s target)."""
_DESTS = {"feature": "features", "target": "features", "task": "tasks", "rerun": "tasks"}
"""Arguments by dest, and what they complete (`run`'s target is `targets`: a feature or a task)."""

# Ids only ever reach the shell as checked ids (letters, digits, '-', '_'): bash's `compgen -W` expands the words it
# is given, so a plan file named `$(…).yaml` must never be printed.
PREAMBLE = {
    "bash": """
# $1: features, tasks or targets; $2: the word being completed. The ids come from the repo and DB the line names.
_autobuild_ids() {
  local IFS=$'\\n'
  compgen -W "$("${COMP_WORDS[0]}" completion bash --ids "$1" "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)" -- "$2"
}
_autobuild_features() { _autobuild_ids features "$1"; }
_autobuild_tasks() { _autobuild_ids tasks "$1"; }
_autobuild_targets() { _autobuild_ids targets "$1"; }
""",
    "zsh": """
# $1: features, tasks or targets: the ids the line typed so far (left of the cursor) names, from its repo and DB.
_autobuild_ids() {
  local -a typed ids
  typed=(${(Q)${(z)LBUFFER}})
  [[ $LBUFFER == *[[:space:]] ]] || typed[-1]=()
  ids=(${(f)"$($typed[1] completion zsh --ids $1 ${typed[2,-1]} 2>/dev/null)"})
  compadd -a ids
}
_autobuild_features() { _autobuild_ids features }
_autobuild_tasks() { _autobuild_ids tasks }
_autobuild_targets() { _autobuild_ids targets }
""",
}


def mark(action: argparse.Action, command: str) -> None:
    """Give a feature or task argument its completer (shtab's documented `complete` hook)."""
    kind = "targets" if command == "run" and action.dest == "target" else _DESTS.get(action.dest)
    if kind is not None:
        action.complete = {"bash": f"_autobuild_{kind}", "zsh": f"_autobuild_{kind}"}  # type: ignore[attr-defined]


def print_ids(kind: str, words: list[str], parser: argparse.ArgumentParser) -> int:
    """Print the ids of `kind` for the line `words` (after the program's name), one a line; nothing on any error."""
    if kind not in KINDS:
        return 0
    with contextlib.suppress(Exception):
        for found in ids(kind, words, parser):
            print(found)
    return 0


def ids(kind: str, words: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """The ids of `kind` the line `words` can take next."""
    from orchestrator.settings import Settings, environment, load_settings
    from orchestrator.store.locations import find_repo

    flags, positionals = _read_line(words, parser)
    repo = find_repo(Path(flags.get("--repo") or environment().repo or "."))
    db = load_settings(Settings, repo, db=flags.get("--db") or None).db
    features = _features(repo, db) if kind in ("features", "targets") else []
    feature = positionals[0] if positionals else ""
    if kind == "targets":
        tasks = [task for found in features for task in _tasks(repo, db, found)]
    else:
        tasks = _tasks(repo, db, feature) if kind == "tasks" and is_id(feature) else []
    return sorted({found for found in [*features, *tasks] if is_id(found)})


def _read_line(words: list[str], parser: argparse.ArgumentParser) -> tuple[dict[str, str], list[str]]:
    """The line's options with a value (`--repo`, `--db`, …) and its positionals after the command."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = commands.choices.get(words[0]) if words else None
    if command is None:
        return {}, []
    takes_value = {option for action in command._actions for option in action.option_strings if action.nargs != 0}
    flags: dict[str, str] = {}
    positionals: list[str] = []
    rest = iter(words[1:])
    for word in rest:
        name, equals, value = word.partition("=")
        if equals and name in takes_value:
            flags[name] = value
        elif word in takes_value:
            flags[word] = next(rest, "")
        elif not word.startswith("-"):
            positionals.append(word)
    return flags, positionals


def _features(repo: Path, db: str | None) -> list[str]:
    """The repo's plans by id, plans run from elsewhere (`--plan`), and the features the DB has threads of."""
    from orchestrator.plan.files import recorded_feature_ids

    folder = repo / ".autobuild" / "features"
    found = {path.stem for path in folder.glob("*.yaml")} if folder.is_dir() else set()
    found |= set(recorded_feature_ids(repo))
    return sorted(found | {thread.split(":", 1)[0] for thread in _threads(repo, db)})


def _threads(repo: Path, db: str | None) -> list[str]:
    """The checkpoint DB's threads: a local file only (a Tab never waits on a database server)."""
    from orchestrator.store.checkpoints import CheckpointStore

    store = CheckpointStore.for_repo(repo, db)
    if store.is_postgres or not store.exists():
        return []
    with store.reader() as reader:
        return list(reader.threads())


def _tasks(repo: Path, db: str | None, feature: str) -> list[str]:
    """The feature's tasks: its plan's, with the tasks a replan added (recorded in the DB)."""
    from orchestrator.plan.model import load_plan
    from orchestrator.store.checkpoints import CheckpointStore
    from orchestrator.store.inspection import replanned

    try:
        plan = load_plan(repo, feature)
    except Exception:  # noqa: BLE001 - a feature without a readable plan completes no task
        return []
    store = CheckpointStore.for_repo(repo, db, feature)
    if not store.is_postgres:
        plan = replanned(store, plan)
    return plan.task_ids()

