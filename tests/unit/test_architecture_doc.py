"""docs/architecture.md can't drift: its layers table and its pictures of the feature and task graphs are drawn
again from the code (tests/architecture_doc.py) and must equal the page; `make docs-graphs` rewrites them."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import chromium, mermaid_js
from tests.architecture_doc import PAGE, regenerated


def test_the_generated_parts_match_the_code() -> None:
    page = PAGE.read_text()
    assert regenerated(page) == page, "docs/architecture.md drifted from the code: run `make docs-graphs`"


def test_a_picture_the_graph_no_longer_has_is_drift() -> None:
    page = PAGE.read_text()
    stale = page.replace("merge(merge)", "landing(landing)", 1)
    assert stale != page
    assert regenerated(stale) == page


def test_a_page_without_its_generated_parts_is_refused() -> None:
    with pytest.raises(ValueError, match="generated: layers"):
        regenerated("# How it is built\n")


def test_the_pictures_are_mermaid_that_draws_every_node() -> None:
    feature, task = mermaid_js.blocks(PAGE.read_text())
    assert set(mermaid_js.flowchart(feature).labels) >= {"autobuild"}
    drawn = set(mermaid_js.flowchart(task).labels)
    assert drawn >= {"initialize", "player", "precheck", "coach", "feedback", "ask_human", "finalize_success",
                     "finalize_failure", "merge"}


@pytest.mark.heavy
def test_the_site_draws_the_pictures_offline(tmp_path: Path) -> None:
    """The docs site carries the package's own mermaid.js (docs/hooks.py): a browser draws both graphs."""
    if chromium.binary() is None:
        pytest.skip("Chromium is missing: `make install` installs Debian's chromium")
    root = PAGE.parents[1]
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site"),
                           "--config-file", str(root / "mkdocs.yml")], capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    dom = chromium.dump_dom(tmp_path / "site" / "architecture" / "index.html")
    assert dom.count('class="mermaid" data-processed="true"><svg') == 2
    assert "Syntax error" not in dom


ROOT = PAGE.parents[1]
_CITED = re.compile(r"`([A-Za-z0-9_.*/-]+(?:\.py|\.md|\.cjs|/))`")
_TREE_ROW = re.compile(r"^((?:orchestrator|agents|benchmarks|tests|prompts|docs)(?:/[a-z_]+)*/)\s")
_USER_FILES = {"noxfile.py", "conftest.py", "setup.py"}
"""Files of the user's repository the prose names (what the gate reads), not ours."""
_MODULE = re.compile(r"(?<![\w/.`-])((?:[a-z_]+/)*[a-z_]+\.(?:py|cjs))\b")


def _exists(cited: str, near: Path | None) -> bool:
    """A path the prose cites, from the checkout's top, from `orchestrator/` (the page's `gate/service.py`), or
    beside the path cited before it on the line (`plan/model.py` and `rules.py`); user-repo paths don't count."""
    if cited.startswith((".autobuild/", "<")) or "*" in cited:
        return True
    places = [ROOT, ROOT / "orchestrator", *([near] if near is not None else [])]
    return any((place / cited).exists() for place in places)


def missing_citations(page: str) -> list[str]:
    """The files and folders docs/architecture.md names, in backticks or in the tree's rows, that don't exist."""
    missing = []
    for number, line in enumerate(page.splitlines(), 1):
        near = None
        for cited in _CITED.findall(line):
            if not _exists(cited, near):
                missing.append(f"line {number}: `{cited}`")
            found = [place / cited for place in (ROOT, ROOT / "orchestrator") if (place / cited).exists()]
            near = (found[0] if found[0].is_dir() else found[0].parent) if found else near
    tree = page.split("## The tree, package by package", 1)[-1].split("```")[1]
    package = ROOT
    for number, line in enumerate(tree.splitlines(), 1):
        if row := _TREE_ROW.match(line):
            package = ROOT / row.group(1)
            if not package.is_dir():
                missing.append(f"tree row {number}: {row.group(1)}")
        for module in set(_MODULE.findall(line)) - _USER_FILES:
            places = itertools.chain((package / module, ROOT / module, ROOT / "orchestrator" / module),
                                     package.rglob(module))  # the tree walked only when the direct places miss
            if not any(path.is_file() for path in places):
                missing.append(f"tree row {number}: {module} (in {package.relative_to(ROOT)})")
    return missing


def test_the_page_names_no_file_that_does_not_exist() -> None:
    assert missing_citations(PAGE.read_text()) == []


def test_a_cited_module_that_is_gone_is_drift() -> None:
    page = PAGE.read_text()
    stale = missing_citations(page.replace("`orchestrator/settings/`", "`orchestrator/settings.py`", 1))
    assert [entry.split(": ", 1)[1] for entry in stale] == ["`orchestrator/settings.py`"]
    gone = page.replace("judge.py)", "verdicts.py)", 1)
    assert any("verdicts.py" in entry for entry in missing_citations(gone))
