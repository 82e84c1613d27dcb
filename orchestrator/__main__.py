"""Entry point for `python -m orchestrator`."""

from orchestrator.cli.main import entry

raise SystemExit(entry())
