"""`autobuild serve`'s settings and generated engine config: bad input is one line and exit 2, nothing started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.cli.main import main
from orchestrator.errors import InputError
from orchestrator.server.client import feature_input
from orchestrator.server.worker import engine_env, write_config
from orchestrator.settings import WorkerSettings
from orchestrator.store.feature_lock import holder_text, lock_key

GOOD = {"DATABASE_URL": "postgresql://u@127.0.0.1:1/db", "REDIS_URL": "redis://127.0.0.1:1/0"}


@pytest.mark.parametrize(("env", "flags", "message"), [
    ({}, [], "DATABASE_URL is not set"),
    ({"DATABASE_URL": "mysql://x/y", "REDIS_URL": "redis://x"}, [], "must be a postgresql://"),
    ({"DATABASE_URL": GOOD["DATABASE_URL"]}, [], "REDIS_URL is not set"),
    ({**GOOD, "REDIS_URL": "http://x"}, [], "must be a redis://"),
    (GOOD, ["--host", "0.0.0.0"], "ORCHESTRATOR_AUTH_TOKEN"),
    (GOOD, ["--port", "0"], "--port"),
    ({**GOOD, "ORCHESTRATOR_WORKER_RUNS": "0"}, [], "ORCHESTRATOR_WORKER_RUNS"),
    ({**GOOD, "ORCHESTRATOR_RUN_TIMEOUT_HOURS": "0"}, [], "ORCHESTRATOR_RUN_TIMEOUT_HOURS"),
    ({**GOOD, "ORCHESTRATOR_WAKE_SECONDS": "soon"}, [], "bad value for ORCHESTRATOR_WAKE_SECONDS"),
    ({**GOOD, "PORT": "http"}, [], "bad value for PORT"),
    ({**GOOD, "ORCHESTRATOR_LEASE_SECONDS": "1.5"}, [], "bad value for ORCHESTRATOR_LEASE_SECONDS"),
    (GOOD, [], "DATABASE_URL: can't connect"),  # nothing listens on port 1
])
def test_bad_worker_settings_are_one_line_and_exit_2(
    env: dict[str, str], flags: list[str], message: str, *, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    for name in ("DATABASE_URL", "REDIS_URL", "PORT", "ORCHESTRATOR_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {**env, "ORCHESTRATOR_SERVE_DIR": str(tmp_path / "serve")}.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "s3cret" not in err, err
    assert not (tmp_path / "serve").exists(), "nothing written"


def test_a_token_allows_another_address() -> None:
    settings = WorkerSettings(DATABASE_URL=GOOD["DATABASE_URL"], REDIS_URL=GOOD["REDIS_URL"],
                              ORCHESTRATOR_HOST="0.0.0.0", ORCHESTRATOR_AUTH_TOKEN=" " + "t" * 16 + "\n")
    assert settings.checked().host == "0.0.0.0"
    with pytest.raises(InputError):
        WorkerSettings(DATABASE_URL=GOOD["DATABASE_URL"], REDIS_URL=GOOD["REDIS_URL"],
                       ORCHESTRATOR_HOST="0.0.0.0").checked()


def test_the_generated_config_serves_the_autobuild_graph_with_hours_of_run_time(tmp_path: Path) -> None:
    settings = WorkerSettings(DATABASE_URL=GOOD["DATABASE_URL"], REDIS_URL=GOOD["REDIS_URL"],
                              ORCHESTRATOR_SERVE_DIR=str(tmp_path), ORCHESTRATOR_WORKER_RUNS=3,
                              ORCHESTRATOR_RUN_TIMEOUT_HOURS=6, ORCHESTRATOR_AUTH_TOKEN="t").checked()
    config = write_config(settings)
    data = json.loads(config.read_text())
    assert data["graphs"] == {"autobuild": "./autobuild_graph.py:graph"}
    assert data["auth"] == {"path": "orchestrator.server.auth:auth"}
    assert "orchestrator.graph.workflow import graph" in (config.parent / "autobuild_graph.py").read_text()
    env = engine_env(settings, config)
    assert env["N_JOBS_PER_WORKER"] == "3" and env["WORKER_COUNT"] == "1"
    assert env["BG_JOB_TIMEOUT_SECS"] == str(6 * 3600)
    assert int(env["LEASE_DURATION_SECONDS"]) > 2 * int(env["HEARTBEAT_INTERVAL_SECONDS"])  # Aegra's rule
    assert env["ORCHESTRATOR_LOCK_DB"] == GOOD["DATABASE_URL"] and env["REDIS_BROKER_ENABLED"] == "true"
    assert "ORCHESTRATOR_SERVED_REPOS_UNDER" not in env  # on loopback: `submit --repo-url /folder` works in place


def test_beyond_loopback_a_served_repo_is_confined_to_the_serve_dir(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORCHESTRATOR_SERVED_REPOS_UNDER", raising=False)
    wide = {**GOOD, "ORCHESTRATOR_HOST": "0.0.0.0", "ORCHESTRATOR_AUTH_TOKEN": "t" * 32}
    settings = WorkerSettings(**wide, ORCHESTRATOR_SERVE_DIR=str(tmp_path)).checked()
    assert engine_env(settings, tmp_path / "aegra.json")["ORCHESTRATOR_SERVED_REPOS_UNDER"] == str(tmp_path.resolve())
    default = engine_env(WorkerSettings(**wide).checked(), tmp_path / "aegra.json")["ORCHESTRATOR_SERVED_REPOS_UNDER"]
    assert Path(default).is_absolute() and default.endswith("autobuild")
    monkeypatch.setenv("ORCHESTRATOR_SERVED_REPOS_UNDER", str(tmp_path / "repos"))  # the operator's own stands
    assert "ORCHESTRATOR_SERVED_REPOS_UNDER" not in engine_env(settings, tmp_path / "aegra.json")


def test_lock_keys_are_per_repo_and_feature_and_holders_are_safe_text() -> None:
    assert lock_key("/r", "FEAT-1") == lock_key("/r", "FEAT-1")
    assert len({lock_key("/r", "FEAT-1"), lock_key("/r", "FEAT-2"), lock_key("/s", "FEAT-1")}) == 3
    assert -(2**63) <= lock_key("/r", "FEAT-1") < 2**63
    assert "*/" not in holder_text("x*/; DROP TABLE t; --") and "thread=" in holder_text("t")


@pytest.mark.parametrize(("args", "message"), [
    (["--repo-url", "/no/such/folder"], "neither a URL nor an existing folder"),
    (["--repo-url", "https://me:s3cret@example.invalid/r.git"], "credential"),
    (["--repo-url", "https://example.invalid/r.git", "--plan", "/no/such/plan.yaml"], "no such file"),
    (["--repo-url", ".", "--plan", "/no/such/plan.yaml"], "no such file"),
])
def test_bad_submissions_are_one_line_and_exit_2_before_the_server_is_asked(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["submit", "FEAT-001", "--server", "http://127.0.0.1:9", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "s3cret" not in err, err


def test_a_plan_submitted_by_url_travels_with_its_task_markdown_and_a_bad_one_is_refused_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / ".autobuild/tasks").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "docs/one.md").write_text("Do one thing.\n")
    (repo / ".autobuild/tasks/TASK-2.md").write_text("Then another.\n")
    plan = repo / "plan.yaml"
    plan.write_text("id: FEAT-009\nname: Sent\ntasks:\n"
                    "  - {id: TASK-1, name: one, complexity: 2, file_path: docs/one.md}\n"
                    "  - {id: TASK-2, name: two, complexity: 2}\n")
    sent = feature_input("file:///srv/app.git", "FEAT-009", None, str(plan))
    assert sent["repo_url"] == "file:///srv/app.git" and "repo" not in sent and "plan" not in sent
    assert sent["plan_yaml"] == plan.read_text()
    assert sent["plan_files"] == {"docs/one.md": "Do one thing.\n", ".autobuild/tasks/TASK-2.md": "Then another.\n"}
    plan.write_text("id: FEAT-009\ntasks: []\n")
    assert main(["submit", "FEAT-009", "--server", "http://127.0.0.1:9", "--repo-url", "file:///srv/app.git",
                 "--plan", str(plan)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_serve_help_names_every_variable_of_the_worker_settings(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    shown = capsys.readouterr().out
    aliases = [str(field.validation_alias) for field in WorkerSettings.model_fields.values()]
    assert len(aliases) >= 12 and all(f"\n  {alias} " in shown for alias in aliases), shown


@pytest.mark.parametrize(("env", "flags", "message"), [
    ({"ORCHESTRATOR_AUTH_TOKEN": "   "}, ["--host", "0.0.0.0"], "set ORCHESTRATOR_AUTH_TOKEN"),
    ({"ORCHESTRATOR_AUTH_TOKEN": "s3cret"}, ["--host", "0.0.0.0"], "needs at least 16"),
    ({"ORCHESTRATOR_AUTH_TOKEN": "s3cret"}, ["--host", "worker.example"], "needs at least 16"),
    ({"ORCHESTRATOR_SERVE_DIR": "{file}"}, [], "ORCHESTRATOR_SERVE_DIR {file}: is a file"),
    ({"ORCHESTRATOR_SERVE_DIR": "{file}/serve"}, [], "is not a folder"),
    ({"ORCHESTRATOR_WORKSPACE": "{file}"}, [], "ORCHESTRATOR_WORKSPACE {file}: is a file"),
])
def test_the_worker_config_is_checked_before_it_listens(
    env: dict[str, str], flags: list[str], message: str, *, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """A serve dir naming a file was a 26-line traceback; a whitespace token opened a public listener nobody could
    authenticate to. Each is one line, exit 2, before anything is started or written."""
    file = tmp_path / "a-file"
    file.write_text("x")
    for name in ("PORT", "ORCHESTRATOR_AUTH_TOKEN", "ORCHESTRATOR_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {**GOOD, "ORCHESTRATOR_SERVE_DIR": str(tmp_path / "serve"), **env}.items():
        monkeypatch.setenv(name, value.format(file=file))
    assert main(["serve", *flags]) == 2
    err = capsys.readouterr().err
    assert message.format(file=file) in err and len(err.strip().splitlines()) == 1 and "s3cret" not in err, err
    assert not (tmp_path / "serve").exists() and file.read_text() == "x"


def test_a_loopback_worker_ignores_a_blank_token(tmp_path: Path) -> None:
    settings = WorkerSettings(DATABASE_URL=GOOD["DATABASE_URL"], REDIS_URL=GOOD["REDIS_URL"],
                              ORCHESTRATOR_SERVE_DIR=str(tmp_path), ORCHESTRATOR_AUTH_TOKEN="  \n").checked()
    assert settings.auth_token == ""
    assert "auth" not in json.loads(write_config(settings).read_text())
