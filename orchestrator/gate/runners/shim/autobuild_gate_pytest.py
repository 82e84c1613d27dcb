"""A pytest plugin the gate's sitecustomize adds to pytest's default plugins (only where that shim was imported,
so this module is importable too): no fail-fast (`-x`, `--maxfail`), so the base's run and each task's see the same
tests. Options given on the command line come after PYTEST_ADDOPTS, so only a plugin can overrule them."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookimpl(trylast=True)
def pytest_configure(config: Any) -> None:
    config.option.maxfail = 0
