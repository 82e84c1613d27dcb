"""The gate's `go` (ahead of the real one on PATH, run by the gate's own Python, never the project's): `go test`
runs as `go test -json`, so the go command's own converter (test2json, outside the test binary) turns the binary's
output into events; this process, the test binary's grandparent, runs no test code and takes the record: each
test's start and outcome and each package's result go on the gate's channel as they happen, the text of the
events goes to stdout as `go test -v` prints it (the events themselves when the command asked for -json), and
the session ends with go's exit status. The test binaries never get the channel's descriptor nor its variable.
Any other go command is the real one, untouched. Plain code for the gate's Python; it never breaks the user's
command (no channel: the real go, as it was)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autobuild_channel

REAL = "AUTOBUILD_REAL_GO"
_NOT_RUN = frozenset({"-c", "--c", "-c=true", "-list", "--list", "-h", "-help", "--help"})
_JSON = frozenset({"-json", "--json", "-json=true", "--json=true"})
_LOG = re.compile(r"^\s+\S+\.go:\d+: (.*)$")
_PACKAGE_FAILED = re.compile(r"^FAIL\s+(\S+)\s+(\[[^\]]+\])\s*$")
"""The go command's own line for a package whose test binary never ran (go before 1.24 prints it as text)."""


def _split(args: list[str]) -> tuple[list[str], str, list[str]]:
    """(go's own leading flags, the subcommand, its arguments): `go -C dir test ./...`."""
    lead: list[str] = []
    index = 0
    while index < len(args) and args[index].startswith("-"):
        lead.append(args[index])
        if args[index] in ("-C", "--C") and index + 1 < len(args):
            lead.append(args[index + 1])
            index += 1
        index += 1
    return lead, (args[index] if index < len(args) else ""), args[index + 1:]


class _Record:
    """What the events of one `go test` say, sent on the channel as they come."""

    def __init__(self, session: autobuild_channel.Session) -> None:
        self.session = session
        self.last_log: dict[tuple[str, str], str] = {}
        self.detail: dict[str, str] = {}

    def event(self, event: dict[str, object]) -> None:
        package, test = str(event.get("Package") or ""), str(event.get("Test") or "")
        action, output = str(event.get("Action") or ""), event.get("Output")
        if isinstance(output, str):
            if (log := _LOG.match(output.rstrip("\n"))) is not None:
                self.last_log[(package, test)] = log.group(1).strip()
            if not test and (bracket := re.search(r"(\[[^\]]+\])\s*$", output)) is not None:
                self.detail[package] = bracket.group(1)
        if action not in ("run", "pass", "fail", "skip") or not package:
            return
        fields: dict[str, object] = {"package": package, "test": test, "action": action}
        if action == "skip":
            fields["reason"] = self.last_log.get((package, test), "")
        if not test and action != "run":
            fields["detail"] = self.detail.get(package, "")
        self.session.test(**fields)

    def line(self, text: str) -> None:
        if (failed := _PACKAGE_FAILED.match(text)) is not None:
            self.session.test(package=failed.group(1), test="", action="fail", detail=failed.group(2))


def _relay(proc: subprocess.Popen[bytes], record: _Record, as_json: bool) -> None:
    out = sys.stdout.buffer
    assert proc.stdout is not None
    for raw in proc.stdout:
        event = None
        if raw.startswith(b"{"):
            try:
                event = json.loads(raw)
            except ValueError:
                event = None
        if isinstance(event, dict) and "Action" in event:
            record.event(event)
            text = raw if as_json else str(event.get("Output") or "").encode("utf-8", "replace")
        else:
            record.line(raw.decode("utf-8", "replace").rstrip("\n"))
            text = raw
        if text:
            out.write(text)
            out.flush()


def main() -> int:
    real, args = os.environ.get(REAL, ""), sys.argv[1:]
    lead, command, rest = _split(args)
    runs = command == "test" and not _NOT_RUN.intersection(rest)
    session = autobuild_channel.Session("go test") if runs and real else None
    if session is None or session.fd is None:
        os.execv(real, [real, *args])
    as_json = bool(_JSON.intersection(rest))
    proc = subprocess.Popen([real, *lead, "test", *([] if as_json else ["-json"]), *rest], stdout=subprocess.PIPE)
    record = _Record(session)
    try:
        _relay(proc, record, as_json)
    finally:
        status = proc.wait()
    session.end(status)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
