"""A mkdocs hook: the site's Mermaid blocks drawn by the mermaid.js AutoBuild bundles (orchestrator/views/assets),
copied into the site as `js/mermaid.min.js`, so the pictures render offline (no CDN)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

MERMAID = Path(__file__).resolve().parents[1] / "orchestrator" / "views" / "assets" / "mermaid.min.js"


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "js/mermaid.min.js", abs_src_path=str(MERMAID)))
    return files
