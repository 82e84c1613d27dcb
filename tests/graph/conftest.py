"""Graph tier fixtures: the base check shared between tests, except in the tests about it (`base_check`)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.graph import shared_bases


@pytest.fixture(autouse=True)
def _shared_base_check(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The session's checked bases in the folder all xdist workers share (tests/graph/shared_bases.py); a test
    marked `base_check` runs every base check for real."""
    if request.node.get_closest_marker("base_check") is None:
        session = tmp_path_factory.getbasetemp()
        shared = session.parent if os.environ.get("PYTEST_XDIST_WORKER") else session
        shared_bases.folder = shared / "checked-bases"
        shared_bases.folder.mkdir(exist_ok=True)
    yield
    shared_bases.folder = None
