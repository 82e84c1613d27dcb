"""`submit` refuses what `run` refuses, before anything reaches the server: a fake worker API on 127.0.0.1 counts
the requests (threads, runs) each refusal made: none. One line, exit 2."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agents.testing.repos import git
from orchestrator.cli.main import main


class _Worker(BaseHTTPRequestHandler):
    requests: list[str] = []  # noqa: RUF012 - one list per test (reset by the fixture)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.requests.append(f"POST {self.path}")
        body: object = [] if self.path.endswith("/search") else {"thread_id": "t" * 8, "run_id": "r"}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def server() -> Iterator[str]:
    _Worker.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Worker)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.mark.parametrize(("args", "message"), [
    (["FEAT-001", "--base", "*"], "not a valid branch name"),
    (["FEAT-001", "--base", "autobuild/FEAT-001"], "an autobuild/ branch is a run's"),
    (["FEAT-001", "--base", "refs/heads/main"], "not a plain branch name"),
    (["FEAT-001", "--base=-x"], "not a plain branch name"),
    (["../../etc"], "invalid feature id"),
    (["FEAT-404"], "feature plan not found"),
])
def test_submit_refuses_bad_input_before_any_request(args: list[str], message: str, sample_repo: Path,
                                                     server: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["submit", *args, "--repo-url", str(sample_repo), "--server", server])
    err = capsys.readouterr().err
    assert (code, err.count("\n"), _Worker.requests) == (2, 1, []), err
    assert message in err


def test_an_empty_repo_url_is_an_error_never_the_current_folder(sample_repo: Path, server: str,
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(sample_repo)  # inside a git repo: it must not be sent
    code = main(["submit", "FEAT-001", "--repo-url", " ", "--server", server])
    err = capsys.readouterr().err
    assert (code, _Worker.requests) == (2, []) and "--repo-url is empty" in err


def test_a_good_submission_reaches_the_server(sample_repo: Path, server: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "FEAT-001", "--repo-url", str(sample_repo), "--server", server, "--base", "main"]) == 0
    assert "POST /threads" in _Worker.requests and any(r.endswith("/runs") for r in _Worker.requests)


class _RefusedThread(_Worker):
    """A worker whose one thread's run refused its input (the served graph's final value carries `refused`)."""

    def do_GET(self) -> None:
        self.requests.append(f"GET {self.path}")
        if "/state" in self.path:
            body: object = {"values": {"feature_id": "FEAT-001", "results": {}, "refused": REFUSAL}, "tasks": [],
                            "next": []}
        else:
            body = [{"run_id": "r", "status": "success", "created_at": "2026-01-01T00:00:00Z"}]
        self._answer(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer([{"thread_id": "0" * 8 + "-0000-0000-0000-" + "0" * 12, "status": "idle",
                       "metadata": {"feature": "FEAT-001"}}])

    def _answer(self, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


REFUSAL = "plan_files: docs/pwned.md resolves outside the repository (/home/x): name a file inside it"


def test_status_server_says_why_a_run_was_refused(capsys: pytest.CaptureFixture[str]) -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _RefusedThread)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        code = main(["status", "FEAT-001", "--server", f"http://127.0.0.1:{httpd.server_address[1]}"])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
    out = capsys.readouterr().out
    assert code == 1 and f"error: refused: {REFUSAL}" in out, out


def test_a_file_url_without_the_plan_at_its_base_is_refused(sample_repo: Path, server: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(sample_repo), str(bare))  # the plan is not committed in it
    code = main(["submit", "FEAT-001", "--repo-url", f"file://{bare}", "--server", server])
    err = capsys.readouterr().err
    assert (code, _Worker.requests) == (2, []) and "no plan of FEAT-001 on main" in err, err
    code = main(["submit", "FEAT-001", "--repo-url", f"file://{bare}", "--server", server, "--base", "nope"])
    assert (code, _Worker.requests) == (2, []) and "has no branch 'nope'" in capsys.readouterr().err


_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
_HOSTILE_PLANS = {
    "yaml-bomb": _BOMB + "id: FEAT-001\nname: bomb\ntasks: [{id: TASK-001, name: t}]\n",
    "file-path-outside": "id: FEAT-001\nname: out\ntasks: [{id: TASK-001, name: t, file_path: ../../etc/passwd}]\n",
    "self-dependency": "id: FEAT-001\nname: self\ntasks: [{id: TASK-001, name: t, dependencies: [TASK-001]}]\n",
}


@pytest.mark.parametrize("plan", _HOSTILE_PLANS.values(), ids=_HOSTILE_PLANS.keys())
def test_a_file_url_plan_is_refused_as_run_refuses_it(plan: str, sample_repo: Path, server: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`submit --repo-url file://…` reads the plan at the base: it is checked as `run` (and the worker) would."""
    (sample_repo / ".autobuild" / "features" / "FEAT-001.yaml").write_text(plan)
    git(sample_repo, "add", "-f", ".autobuild/features/FEAT-001.yaml")
    git(sample_repo, "commit", "-qm", "a hostile plan")
    assert main(["validate", "FEAT-001", "--repo", str(sample_repo)]) == 2  # what `run` says of it
    said_by_run = capsys.readouterr().err
    code = main(["submit", "FEAT-001", "--repo-url", f"file://{sample_repo}", "--server", server, "--base", "main"])
    err = capsys.readouterr().err
    assert (code, err.count("\n"), _Worker.requests) == (2, 1, []), err
    assert err.split(":")[-1] == said_by_run.split(":")[-1], (err, said_by_run)
