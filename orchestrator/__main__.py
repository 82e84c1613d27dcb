"""Entry point for `python -m orchestrator`."""

from orchestrator.cli.main import main

raise SystemExit(main())
