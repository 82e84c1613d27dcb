"""docs/architecture.md can't drift: its layers table and its pictures of the feature and task graphs are drawn
again from the code (tests/architecture_doc.py) and must equal the page; `make docs-graphs` rewrites them."""

from __future__ import annotations

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
