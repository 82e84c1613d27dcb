"""The docs site is the contract the README points at: every command and option of the command line (read from its
argparse parser), every task outcome and every exit code appears in docs/, and the site builds in strict mode
(a broken link between pages or a missing anchor fails), offline."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from orchestrator import errors
from orchestrator.cli.parser import build_parser
from orchestrator.facts import Outcome

PROJECT = Path(__file__).resolve().parents[2]
DOCS = PROJECT / "docs"


def page(name: str) -> str:
    return (DOCS / name).read_text()


def commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def mentioned(word: str, text: str) -> bool:
    """`word` as a whole token (`--db` is not found in `--db-lock`, `land` not in `landing`)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def test_every_command_and_its_options_are_on_the_commands_page() -> None:
    text = page("commands.md")
    missing = [f"autobuild {name}" for name in commands() if f"autobuild {name}" not in text]
    for name, parser in commands().items():
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help") and not mentioned(option, text):
                    missing.append(f"{name} {option}")
            for choice in action.choices or ():  # `--schedule dag|groups`, `completion bash|zsh`
                if not mentioned(str(choice), text):
                    missing.append(f"{name} {'/'.join(action.option_strings) or action.dest} {choice}")
    assert not missing, "not in docs/commands.md: " + ", ".join(missing)


def test_the_top_level_options_are_documented() -> None:
    text = page("commands.md")
    for action in build_parser()._actions:
        for option in action.option_strings:
            if option not in ("-h", "--help"):
                assert mentioned(option, text), option


def test_every_outcome_is_explained() -> None:
    text = page("concepts.md")
    missing = [outcome for outcome in get_args(Outcome) if f"| `{outcome}` |" not in text]
    assert not missing, f"outcomes missing from the table in docs/concepts.md: {missing}"


def test_every_exit_code_is_explained() -> None:
    codes = sorted({value for name, value in vars(errors).items() if name.startswith("EXIT_")})
    text = page("commands.md")
    missing = [code for code in codes if f"| `{code}` |" not in text]
    assert not missing, f"exit codes missing from the table in docs/commands.md: {missing}"


def test_every_page_is_in_the_navigation() -> None:
    nav = (PROJECT / "mkdocs.yml").read_text()
    missing = [p.name for p in DOCS.glob("*.md") if p.name not in nav]
    assert not missing, f"pages missing from mkdocs.yml's nav: {missing}"


def test_the_site_builds_strictly_offline(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site"),
                           "--config-file", str(PROJECT / "mkdocs.yml")],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "commands" / "index.html").is_file()


def test_the_readme_is_short_and_its_links_reach_the_docs() -> None:
    readme = (PROJECT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150, "the README is read in five minutes: the rest goes to docs/"
    links = re.findall(r"\]\(((?!https?:)[^)#\s]+)(?:#([^)\s]+))?\)", readme)
    assert links, "the README points at the docs"
    for target, anchor in links:
        path = PROJECT / target
        assert path.is_file(), f"README links to {target}, which does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(), flags=re.MULTILINE)
            slugs = {re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", h).strip().lower()) for h in headings}
            assert anchor in slugs, f"README links to {target}#{anchor}: no such heading"


def test_the_docs_tell_resume_of_a_finished_feature_reruns_what_did_not_succeed() -> None:
    text = page("commands.md")
    assert "already finished (use --fresh" in text, "the old reply is named, so a reader who saw it finds the change"
    assert re.search(r"re-runs its `failed`, `skipped`, `conflict` and `error` tasks", text)


def test_every_orchestrator_variable_the_code_names_is_documented() -> None:
    named = {match for folder in ("orchestrator", "agents") for path in (PROJECT / folder).rglob("*.py")
             for match in re.findall(r"ORCHESTRATOR_[A-Z][A-Z_]*[A-Z]", path.read_text())}
    docs = "\n".join(path.read_text() for path in DOCS.glob("*.md"))
    missing = sorted(name for name in named if name not in docs)
    assert not missing, f"variables no docs page names: {missing}"
