"""A fake forge on 127.0.0.1 for `autobuild pr`: bare repositories served over git's smart HTTP (the real
`git http-backend`, pushes allowed), and the forge's web page for opening a pull request (the compare view), which
answers 200 for a branch the forge has. Every request is recorded. Stopped by the test (a context manager)."""

from __future__ import annotations

import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit


class FakeForge:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[tuple[str, str]] = []
        """(method, path with query) of every request, in order."""
        forge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                forge.requests.append(("GET", self.path))
                if "/compare/" in self.path:
                    self._compare()
                else:
                    self._git()

            def do_POST(self) -> None:
                forge.requests.append(("POST", self.path))
                self._git()

            def _compare(self) -> None:
                """`/<repo>/compare/<base>...<branch>?expand=1`: 200 when both branches are there, else 404."""
                repo, _, spec = urlsplit(self.path).path.strip("/").partition("/compare/")
                base, _, branch = unquote(spec).partition("...")
                bare = forge.root / f"{repo}.git"
                found = all(subprocess.run(["git", "rev-parse", "--verify", "-q", f"refs/heads/{name}"], cwd=bare,
                                           capture_output=True, check=False).returncode == 0 for name in (base, branch))
                page = f"<h1>Open a pull request: {branch} into {base}</h1>".encode()
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def _git(self) -> None:
                """One request through `git http-backend` (CGI)."""
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                env = {**os.environ, "GIT_PROJECT_ROOT": str(forge.root), "GIT_HTTP_EXPORT_ALL": "1",
                       "PATH_INFO": unquote(parts.path), "QUERY_STRING": parts.query,
                       "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                       "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": "tester", "REMOTE_ADDR": "127.0.0.1",
                       "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                       "GIT_PROTOCOL": self.headers.get("Git-Protocol", "")}
                done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
                head, _, payload = done.stdout.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def repository(self, name: str, source: Path, *branches: str) -> str:
        """A bare repository `name` on the forge holding `branches` of `source`; its URL."""
        bare = self.root / f"{name}.git"
        subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
        subprocess.run(["git", "push", "-q", str(bare), *(f"refs/heads/{b}:refs/heads/{b}" for b in branches)],
                       cwd=source, check=True)
        return f"http://127.0.0.1:{self.server.server_address[1]}/{name}.git"

    def refs(self, name: str) -> dict[str, str]:
        listed = subprocess.run(["git", "for-each-ref", "--format=%(refname) %(objectname)"], cwd=self.root /
                                f"{name}.git", capture_output=True, text=True, check=True).stdout
        return dict(line.split() for line in listed.splitlines())

    def __enter__(self) -> FakeForge:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
