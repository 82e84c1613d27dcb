"""Credentials before anything: `plan` and `run` without a key or login, with a refused key, or with an endpoint
that doesn't answer, refuse in one line with exit 2 before any branch, worktree, checkpoint or session. The
refusals run `main` in this process (tests/cli_in_process.py); the whole run stays on the real CLI."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.cli_in_process import cli_in_process
from tests.conftest import SECRET_KEY, CliRun, approve_scenario, git, one_task_plan

pytestmark = pytest.mark.cli


class _Refusing(BaseHTTPRequestHandler):
    """An endpoint that refuses every key, as the real API does a wrong one."""

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        body = b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET


@pytest.fixture
def refusing_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def nothing_created(repo: Path, db: Path) -> None:
    assert "autobuild/" not in git(repo, "branch", "--list"), "no branch"
    assert git(repo, "worktree", "list").count("\n") == 1, "no worktree"
    assert not (repo / ".autobuild/runs").exists() and not (repo / ".autobuild/worktrees").exists()
    assert not db.exists(), "no checkpoint"


def refused(result: CliRun, *words: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    assert SECRET_KEY not in result.stdout + result.stderr


@pytest.mark.parametrize("command", ["run", "plan"])
def test_no_key_and_no_login_is_refused_before_anything(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel],
        command: str) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    db = tmp_path / "db.sqlite"
    model = model_factory(approve_scenario())
    args = ["run", "FEAT-001", "--db", str(db)] if command == "run" else ["plan", "Add OAuth2 login"]
    result = cli_in_process(tmp_path, *args, "--repo", str(repo), model=model, ANTHROPIC_API_KEY="")
    refused(result, "no credentials", "ANTHROPIC_API_KEY", "`claude`")
    nothing_created(repo, db)
    assert model.requests == [] and model.listings == 0, "no session, nothing spent"


def test_an_expired_login_is_refused_before_anything(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    db = tmp_path / "db.sqlite"
    model = model_factory(approve_scenario())
    config = tmp_path / "claude-config"
    config.mkdir()
    (config / ".credentials.json").write_text('{"claudeAiOauth": {"accessToken": "tok", "expiresAt": 1000}}')
    result = cli_in_process(tmp_path, "run", "FEAT-001", "--repo", str(repo), "--db", str(db), model=model,
                            ANTHROPIC_API_KEY="", CLAUDE_CONFIG_DIR=str(config))
    refused(result, "expired 1970-01-01", "`claude`")
    nothing_created(repo, db)
    assert model.listings == 0


def test_a_key_the_endpoint_refuses_is_named_and_nothing_is_created(
        tmp_path: Path, refusing_endpoint: str) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    db = tmp_path / "db.sqlite"
    for args in (["run", "FEAT-001", "--db", str(db)], ["plan", "Add OAuth2 login"]):
        result = cli_in_process(tmp_path, *args, "--repo", str(repo), ANTHROPIC_BASE_URL=refusing_endpoint)
        refused(result, "refused ANTHROPIC_API_KEY (401)")
    nothing_created(repo, db)


def test_an_endpoint_that_does_not_answer_is_refused(tmp_path: Path, run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    db = tmp_path / "db.sqlite"
    result = cli_in_process(tmp_path, "run", "FEAT-001", "--repo", str(repo), "--db", str(db))  # no model: 127.0.0.1:9
    refused(result, "http://127.0.0.1:9 does not answer", "ANTHROPIC_BASE_URL")
    nothing_created(repo, db)


@pytest.mark.heavy  # a whole run on the real CLI; the endpoint's refusal stays in make test
def test_a_run_asks_the_endpoint_for_its_models_once_before_its_sessions(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    model = model_factory(approve_scenario())
    result = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), model=model)
    assert result.returncode == 0, result.stdout + result.stderr
    assert model.listings == 1 and model.requests, "one free listing, then the sessions"


def test_doctor_checks_the_endpoint_with_the_same_free_models_listing(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel],
        refusing_endpoint: str) -> None:
    """A TCP connect would call a key-refusing endpoint fine; the listing names the refused key, and spends nothing."""
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    db = str(tmp_path / "db.sqlite")
    model = model_factory({"sessions": []})
    good = cli_in_process(tmp_path, "doctor", "--repo", str(repo), "--db", db, model=model)
    assert "ok    model endpoint" in good.stdout, good.stdout
    assert model.listings == 1, "one free listing"
    offline = cli_in_process(tmp_path, "doctor", "--repo", str(repo), "--db", db, "--offline", model=model)
    assert "not asked (--offline)" in offline.stdout and "model call" not in offline.stdout, offline.stdout
    assert model.listings == 1, "--offline asks nothing over the network"
    bad = cli_in_process(tmp_path, "doctor", "--repo", str(repo), "--db", db, ANTHROPIC_BASE_URL=refusing_endpoint)
    assert bad.returncode == 1 and "FAIL  model endpoint" in bad.stdout, bad.stdout
    assert "refused ANTHROPIC_API_KEY (401)" in bad.stdout and SECRET_KEY not in bad.stdout + bad.stderr
