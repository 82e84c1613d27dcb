"""Entry point for `python -m orchestrator`."""

from orchestrator.cli import main

raise SystemExit(main())
