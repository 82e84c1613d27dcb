"""A fake LangSmith API on 127.0.0.1: answers what the langsmith client asks and keeps every run it is sent.

The client asks `GET /info` first (batch settings, whether it may compress), then sends runs in the background
as `POST /runs/multipart` (zstd-compressed when /info allows it, as the real service does), falling back to
`POST /runs/batch` (JSON) or single `POST /runs` / `PATCH /runs/<id>`. A run's creation and its end arrive as
separate operations; `runs` merges them by run id. With `hang=True` it accepts requests and never answers
(an endpoint that is up but stuck; /info still answers), so tests can show a run does not wait on it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import zstandard

INFO = {
    "version": "0.11.0",
    "instance_flags": {"zstd_compression_enabled": True},
    "batch_ingest_config": {"use_multipart_endpoint": True, "scale_up_qsize_trigger": 1000,
                            "scale_up_nthreads_limit": 16, "scale_down_nempty_trigger": 4,
                            "size_limit": 100, "size_limit_bytes": 20_971_520},
}


class FakeLangSmith:
    """Records every request (method, path) and every run operation it receives; stopped by the test."""

    def __init__(self, *, hang: bool = False) -> None:
        self.hang = hang
        self.requests: list[tuple[str, str]] = []
        self.bodies: list[bytes] = []
        """Every run payload as received (decompressed), e.g. to show no secret is in it."""
        self.operations: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def runs(self) -> dict[str, dict[str, Any]]:
        """Every run by id: its creation with later updates (end time, outputs, error) applied."""
        with self._lock:
            merged: dict[str, dict[str, Any]] = {}
            for _, run in self.operations:
                merged.setdefault(str(run.get("id")), {}).update({k: v for k, v in run.items() if v is not None})
            return merged

    def start(self) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                with fake._lock:
                    fake.requests.append((self.command, self.path))
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = self.path.split("?", 1)[0].rstrip("/")
                if path.endswith("/info"):
                    self._answer(200, INFO)
                    return
                if fake.hang:
                    fake._release.wait()
                    return
                if self.headers.get("Content-Encoding") == "zstd":
                    body = zstandard.ZstdDecompressor().decompressobj().decompress(body)
                operations = _operations(self.command, path, self.headers.get("Content-Type", ""), body)
                with fake._lock:
                    fake.bodies.append(body)
                    fake.operations.extend(operations)
                self._answer(202 if path.endswith(("/runs/multipart", "/runs/batch")) else 200, {})

            do_GET = do_POST = do_PATCH = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="fake-langsmith", daemon=True).start()

    def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


LANGSMITH_KEY = "lsv2_pt_test-NEVER-SEND-IN-A-PAYLOAD-0c1d"


def langsmith_env(url: str, **switch: str) -> dict[str, str]:
    """LangSmith's variables pointing at the fake, plus `switch` (e.g. LANGSMITH_TRACING="true")."""
    return {"LANGSMITH_ENDPOINT": url, "LANGSMITH_API_KEY": LANGSMITH_KEY, "LANGSMITH_PROJECT": "autobuild-test",
            **switch}


@contextmanager
def fake_langsmith(*, hang: bool = False) -> Iterator[FakeLangSmith]:
    server = FakeLangSmith(hang=hang)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _operations(method: str, path: str, content_type: str, body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """The run operations ("post" creates a run, "patch" ends it) in one request, in any of the client's forms."""
    if path.endswith("/runs/multipart"):
        return _multipart(content_type, body)
    data = json.loads(body or b"{}")
    if path.endswith("/runs/batch"):
        return [(op, run) for op in ("post", "patch") for run in data.get(op) or []]
    if path.endswith("/runs") and method == "POST":
        return [("post", data)]
    if "/runs/" in path and method == "PATCH":
        return [("patch", {**data, "id": path.rsplit("/", 1)[1]})]
    return []


def _multipart(content_type: str, body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Parts are named `<op>.<run id>` (the run without its large fields) and `<op>.<run id>.<field>`."""
    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str) or name.startswith("attachment."):
            continue
        op, run_id, *field = name.split(".", 2)
        value = json.loads(part.get_payload(decode=True) or b"null")
        run = runs.setdefault((op, run_id), {"id": run_id})
        if field:
            run[field[0]] = value
        else:
            run.update(value)
    return [(op, run) for (op, _), run in runs.items()]
