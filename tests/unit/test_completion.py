"""`autobuild completion bash|zsh`: the script comes from the argparse parser, so every command and flag completes;
the bash one is sourced in a real bash and asked as bash's own completion would ask it, the zsh one is asked by a
real interactive zsh through a pseudo-terminal (skipped where zsh is not installed)."""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.cli.parser import build_parser

PROJECT = Path(__file__).resolve().parents[2]


def script(shell: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator", "completion", shell], cwd=cwd or PROJECT,
                          capture_output=True, text=True, check=False, timeout=60)


def complete_in_bash(tmp_path: Path, words: list[str]) -> list[str]:
    """What bash offers for `autobuild <words>` with the cursor after the last word (empty: a new word)."""
    completion = tmp_path / "autobuild.bash"
    if not completion.exists():  # generated once per test, by the real command
        completion.write_text(script("bash").stdout)
    line = " ".join(["autobuild", *words])
    quoted = " ".join(shlex.quote(word) for word in words)
    probe = (f"source {completion}\n"
             f"COMP_WORDS=(autobuild {quoted})\n"
             f"COMP_CWORD={len(words)}\nCOMP_LINE={line!r}\nCOMP_POINT=${{#COMP_LINE}}\n"
             "spec=$(complete -p autobuild); fn=${spec#*-F }; fn=${fn%% *}\n"
             f"$fn autobuild {shlex.quote(words[-1])} {shlex.quote((['autobuild', *words])[-2])}\n"
             'printf "%s\\n" "${COMPREPLY[@]}"\n')
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    return [word.strip() for word in done.stdout.splitlines() if word.strip()]


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_every_command_and_each_commands_flags(tmp_path: Path) -> None:
    offered = complete_in_bash(tmp_path, [""])
    assert set(commands()) <= set(offered)
    assert set(complete_in_bash(tmp_path, ["la"])) == {"land"}
    run_flags = set(complete_in_bash(tmp_path, ["run", "--"]))
    assert {"--max-turns", "--dry-run", "--json", "--plan", "--verify"} <= run_flags
    assert set(complete_in_bash(tmp_path, ["land", "--s"])) == {"--squash"}
    assert set(complete_in_bash(tmp_path, ["run", "--schedule", ""])) == {"dag", "groups"}
    assert set(complete_in_bash(tmp_path, ["completion", ""])) == {"bash", "zsh"}


def test_zsh_script_is_a_compdef_naming_every_command() -> None:
    done = script("zsh")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("#compdef autobuild")
    for name in commands():
        assert name in done.stdout


def complete_in_zsh(folder: Path, line: str) -> set[str]:
    """What zsh's own completion offers after `line` and a Tab, in a real interactive zsh (a pseudo-terminal)."""
    capture = PROJECT / "tests" / "fixtures" / "completion" / "capture.zsh"
    done = subprocess.run(["zsh", "-f", str(capture), str(folder), line], capture_output=True, text=True,
                          check=False, timeout=60)
    return {word.strip() for word in done.stdout.splitlines() if word.strip()}


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_commands_flags_and_choices(tmp_path: Path) -> None:
    (tmp_path / "_autobuild").write_text(script("zsh").stdout)
    assert set(commands()) <= complete_in_zsh(tmp_path, "autobuild ")
    assert complete_in_zsh(tmp_path, "autobuild la") == {"land"}
    assert {"--squash", "--partial", "--verify"} <= complete_in_zsh(tmp_path, "autobuild land --")
    assert complete_in_zsh(tmp_path, "autobuild run --schedule ") == {"dag", "groups"}


def test_completion_needs_no_repo_and_refuses_other_shells_in_one_line(tmp_path: Path) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    assert script("bash", cwd=outside).returncode == 0, "works from any folder, a repo or not"
    done = script("fish", cwd=outside)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "invalid choice" in done.stderr and "Traceback" not in done.stderr
