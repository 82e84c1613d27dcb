"""A worker with ORCHESTRATOR_AUTH_TOKEN answers only clients that send it (the CLI sends the same variable)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest

from agents.testing.scripted_model import ScriptedModel
from tests.conftest import CliRun
from tests.workers.conftest import Worker

pytestmark = pytest.mark.workers


def test_the_token_is_required_and_the_cli_sends_it(
    model_factory: Callable[..., ScriptedModel], workers: Callable[..., Worker], run_cli: Callable[..., CliRun]
) -> None:
    worker = workers(model_factory({"sessions": []}), ORCHESTRATOR_AUTH_TOKEN="s3cret")
    for header in ({}, {"Authorization": "Bearer wrong"}):
        request = urllib.request.Request(f"{worker.url}/threads/search", data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json", **header})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401
    refused_cli = run_cli("stats", "--server", worker.url)
    assert refused_cli.returncode == 2 and "HTTP 401: set ORCHESTRATOR_AUTH_TOKEN" in refused_cli.stderr
    assert len(refused_cli.stderr.strip().splitlines()) == 1, refused_cli.stderr
    stats = run_cli("stats", "--server", worker.url, "--json", ORCHESTRATOR_AUTH_TOKEN="s3cret")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["stats"] == {"threads": {}, "tasks": {}}
