"""Debian's Chromium driven through the DevTools protocol (no driver library: Chromium's own
`--remote-debugging-port`, spoken over a WebSocket with the `websockets` package): open a page, run an expression
in it, wait for one to hold, set the window's width, take a screenshot. A fresh profile per browser, network
features off (the flags of tests/chromium.py)."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from tests import chromium

WAIT_S = 60.0
"""The longest a page may take to show what a test waits for (a loaded machine): then the test fails, never hangs."""
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")
_WATCH_CSP = """window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));"""


class Browser:
    """One headless Chromium and its one page."""

    def __init__(self) -> None:
        found = chromium.binary()
        assert found, "Chromium is missing: `make install` installs Debian's chromium"
        self._profile = tempfile.TemporaryDirectory(prefix="devtools-test-", ignore_cleanup_errors=True)
        self._process = subprocess.Popen(  # its own process group: its helpers end with it (see close)
            [found, *chromium.FLAGS, f"--user-data-dir={self._profile.name}", "--remote-debugging-port=0",
             "--remote-allow-origins=*", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        assert self._process.stderr is not None
        browser_url = None
        for line in self._process.stderr:
            if found_url := _LISTENING.search(line):
                browser_url = found_url.group(1)
                break
        assert browser_url, "Chromium did not open its DevTools port"
        self._ids = itertools.count(1)
        self._sockets = contextlib.ExitStack()
        self._browser = self._sockets.enter_context(connect(browser_url, max_size=None))
        target = self._call(self._browser, "Target.createTarget", url="about:blank")["targetId"]
        page_url = browser_url.split("/devtools/")[0] + f"/devtools/page/{target}"
        self._page: ClientConnection = self._sockets.enter_context(connect(page_url, max_size=None))
        self.call("Page.enable")
        self.call("Page.addScriptToEvaluateOnNewDocument", source=_WATCH_CSP)

    def _call(self, socket: ClientConnection, method: str, **params: Any) -> Any:
        message_id = next(self._ids)
        socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            reply = json.loads(socket.recv(timeout=WAIT_S))
            if reply.get("id") == message_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})

    def call(self, method: str, **params: Any) -> Any:
        return self._call(self._page, method, **params)

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && !!document.body")

    def value(self, expression: str) -> Any:
        """What `expression` (awaited if a promise) comes to in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait(self, expression: str, timeout: float = WAIT_S) -> Any:
        """Wait until `expression` is truthy in the page (re-read every 0.1 s, at most `timeout`): its value."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                found = self.value(expression)
            except AssertionError:  # the page is between two documents
                found = None
            if found:
                return found
            assert time.monotonic() < deadline, f"never true in the page: {expression}"
            time.sleep(0.1)

    def width(self, pixels: int) -> None:
        """The window as wide as a phone (390) or a laptop (1280), CSS pixels."""
        self.call("Emulation.setDeviceMetricsOverride", width=pixels, height=900 if pixels > 600 else 844,
                  deviceScaleFactor=1, mobile=pixels <= 600)

    def screenshot(self, path: Path) -> Path:
        """The whole page (not only the window) as a PNG."""
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        """Chromium and its helper processes ended, then its profile removed. Killing the browser alone left a
        helper writing into the profile while it was removed (`Directory not empty`, 1 run in 3 here)."""
        self._sockets.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait()
        for _ in range(50):  # a helper outside the group may still be flushing for a moment
            try:
                shutil.rmtree(self._profile.name)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.1)
        self._profile.cleanup()
