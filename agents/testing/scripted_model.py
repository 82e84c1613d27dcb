"""Scripted Anthropic Messages API on 127.0.0.1: the fake model the real CLI talks to in tests and the demo.

It identifies a session by the `AutoBuild session: role=… task=… turn=…` line our prompts carry, takes
the step index from the number of assistant messages in the request, and answers with that step of the
matching scenario script. Faults (status codes, latency, stalled or dropped streams) are per step.
Every request is logged (in memory and optionally as JSON lines) so tests can assert on what the model
received.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agents.testing.requests import last_tool_result, messages_tail, prompt_text, session_of
from agents.testing.scenario import Scenario, SessionKey, new_id, step_to_blocks

_ATTEMPT_FOLDER = re.compile(r"Current branch: autobuild/[^\s\"\\]+?\.a(\d+)\b")
"""A task's attempt k > 1 works on `autobuild/FEAT.TASK-001.a2` (the CLI's git status tells the model its branch):
a session there plays `task: TASK-001.a2`."""
MODEL_IDS = ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5")
"""What the models listing names (the scripted model plays any model it is asked for)."""


@dataclass
class RequestRecord:
    """One request the model received, as tests want to see it."""

    started: float
    role: str | None
    task: str | None
    turn: int | None
    step: int
    outcome: str
    system: str = ""
    prompt: str = ""
    tool_results: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    """Names of the tools the request offered the model (first request of a session only)."""
    new_input: str = ""
    """Everything the request carries after the model's last reply (tool results, hook context), as JSON text."""
    ended: float = 0.0


class ScriptedModel:
    """A threaded HTTP server playing a Scenario; use as a context manager."""

    def __init__(self, scenario: Scenario | dict[str, Any], log_path: Path | None = None) -> None:
        self.scenario = scenario if isinstance(scenario, Scenario) else Scenario.from_data(scenario)
        self.log_path = log_path
        self.first_request_at: float | None = None
        """When the first request arrived (the usage-limit window counts from it)."""
        self.requests: list[RequestRecord] = []
        self.answered = 0
        """Answers sent with quota headers so far."""
        self.listings = 0
        """Models listings served (`GET /v1/models`: the credentials check, which spends nothing)."""
        self.limit_ended_at: float | None = None
        """When the test ended a `held` usage-limit window (`end_limit`)."""
        self.phase_started: dict[int, float] = {}
        """When each quota-header phase first applied."""
        self._attempts: Counter[tuple[SessionKey | None, int]] = Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def end_limit(self) -> None:
        """A `held` usage-limit window ends now (once its `seconds` have passed too)."""
        self.limit_ended_at = self.limit_ended_at or time.time()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self, port: int = 0) -> str:
        handler = type("Handler", (_Handler,), {"model": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModel:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def sessions(self, role: str | None = None, task: str | None = None) -> list[RequestRecord]:
        """Logged requests, filtered; one record per request."""
        return [
            r for r in self.requests if (role is None or r.role == role) and (task is None or r.task == task)
        ]

    def record(self, record: RequestRecord) -> None:
        with self._lock:
            self.requests.append(record)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(asdict(record)) + "\n")

    def next_attempt(self, key: SessionKey | None, step: int) -> int:
        with self._lock:
            self._attempts[(key, step)] += 1
            return self._attempts[(key, step)]

    def wait_stopping(self, seconds: float) -> bool:
        return self._stopping.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    model: ScriptedModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.split("?")[0] == "/v1/models":  # what `run` and `plan` ask first: is the endpoint there?
            self.model.listings += 1
            self._send_json(200, {"data": [{"type": "model", "id": name, "display_name": name,
                                            "created_at": "2025-01-01T00:00:00Z"} for name in MODEL_IDS],
                                  "has_more": False, "first_id": MODEL_IDS[0], "last_id": MODEL_IDS[-1]})
            return
        self._send_json(200, {"ok": True})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if "count_tokens" in self.path:
            self._send_json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
            return
        if not self.path.startswith("/v1/messages"):
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
            return
        self._answer(body)

    def _limited(self) -> bool:
        """Inside the scenario's usage-limit window: answer 429 and record it."""
        window = self.model.scenario.limit_window
        if not window:
            return False
        now = time.time()
        started = self.model.first_request_at = self.model.first_request_at or now
        held = bool(window.get("held")) and self.model.limit_ended_at is None
        if now - started >= float(window.get("seconds", 0)) and not held:
            return False
        status = int(window.get("status", 429))
        self.model.record(RequestRecord(started=now, role=None, task=None, turn=None, step=-1,
                                        outcome=f"limited {status}", ended=now))
        self._send_json(status, {"type": "error", "error": {"type": _error_type(status), "message": "usage limit"}},
                        {str(k): str(v) for k, v in (window.get("headers") or {}).items()})
        return True

    def _quota_headers(self) -> dict[str, str]:
        """The scenario's `anthropic-ratelimit-unified-*` headers for this answer (a subscription's quota
        readings: `-status`, `-reset`, and per window `-5h-utilization`, `-5h-reset`, …). Phases apply from
        `from_s` seconds after the first request or from the `from_request`-th answer (1-based), the last that
        applies wins; `{reset}` in a value is the phase's start plus its `resets_in_s`."""
        phases = self.model.scenario.rate_limit_headers
        if not phases:
            return {}
        now = time.time()
        with self.model._lock:
            started = self.model.first_request_at = self.model.first_request_at or now
            self.model.answered += 1
            chosen: tuple[int, dict[str, Any]] | None = None
            for index, phase in enumerate(phases):
                if now - started >= float(phase.get("from_s", 0)) and \
                        self.model.answered >= int(phase.get("from_request", 1)):
                    chosen = (index, phase)
            if chosen is None:
                return {}
            index, phase = chosen
            began = self.model.phase_started.setdefault(index, now)
        reset = str(round(began + float(phase.get("resets_in_s", 0))))
        return {str(name): str(value).replace("{reset}", reset) for name, value in (phase.get("headers") or {}).items()}

    def _answer(self, body: dict[str, Any]) -> None:
        if self._limited():
            return
        messages = body.get("messages", [])
        key, cwd, system_text = session_of(body)
        step_index = sum(1 for m in messages if m["role"] == "assistant")
        script = self.model.scenario.script_for(key) if key else None
        if key and (attempt := _ATTEMPT_FOLDER.search(json.dumps([system_text, messages[:1]]))):  # one attempt of
            # several: its own script (`task: TASK-001.a2`) before its task's
            script = self.model.scenario.script_for(SessionKey(key.role, f"{key.task}.a{attempt[1]}", key.turn)) \
                or script
        step: dict[str, Any] = (
            script.steps[step_index] if script and step_index < len(script.steps) else {"text": "Done."}
        )
        if script is None:
            step = {"text": self.model.scenario.default_text}
        last_result = last_tool_result(messages)
        step = _choose(step, last_result)
        record = RequestRecord(
            started=time.time(),
            role=key.role if key else None,
            task=key.task if key else None,
            turn=key.turn if key else None,
            step=step_index,
            outcome="ok",
            system=system_text if step_index == 0 else "",
            prompt=prompt_text(messages) if step_index == 0 else "",
            tool_results=[last_result] if last_result else [],
            tools=[str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict) and step_index == 0],
            new_input=_after_last_reply(messages),
        )
        try:
            self._play(body=body, step=step, key=key, cwd=cwd, step_index=step_index, record=record)
        except (BrokenPipeError, ConnectionResetError):
            record.outcome = "client-gone"
        finally:
            record.ended = time.time()
            self.model.record(record)

    def _play(
        self,
        *,
        body: dict[str, Any],
        step: dict[str, Any],
        key: SessionKey | None,
        cwd: str | None,
        step_index: int,
        record: RequestRecord,
    ) -> None:
        """Answer with the step: after its delay, a scripted fault, else its message whole or streamed."""
        if step.get("delay"):
            self.model.wait_stopping(float(step["delay"]))
        fault = step.get("fault")
        if fault and self.model.next_attempt(key, step_index) <= int(fault.get("times", 1)):
            self._fault(fault, record)
            return
        blocks = step_to_blocks(step, key or SessionKey("-", "-", 0), cwd)
        usage_in = max(1, len(json.dumps(messages_tail(body))) // 4)
        usage_out = max(1, len(json.dumps(blocks)) // 4)
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message = {
            "id": new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
        }
        quota = self._quota_headers()
        if not body.get("stream"):
            self._send_json(200, message, quota)
            return
        self._stream(message, step, record, quota)

    def _fault(self, fault: dict[str, Any], record: RequestRecord) -> None:
        """A scripted API error: its status (0: the connection dropped before any byte) and its retry-after."""
        status = int(fault["status"])
        record.outcome = f"fault {status}"
        headers = {"retry-after": str(fault["retry_after"])} if "retry_after" in fault else {}
        if status == 0:  # connection dropped before any byte
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self._send_json(
            status,
            {"type": "error", "error": {"type": _error_type(status), "message": f"scripted {status}"}},
            headers,
        )

    def _stream(
        self, message: dict[str, Any], step: dict[str, Any], record: RequestRecord, quota: dict[str, str]
    ) -> None:
        """The message as server-sent events, unless the step stalls or drops the stream after its start."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        for name, value in quota.items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True
        usage = message["usage"]
        started = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        self._event("message_start", {"type": "message_start", "message": started})
        if step.get("stall"):
            record.outcome = "stalled"
            self.model.wait_stopping(float(step.get("stall_seconds", 3600)))
            return
        if step.get("drop"):
            record.outcome = "dropped"
            self.connection.shutdown(2)
            return
        for index, block in enumerate(message["content"]):
            self._stream_block(index, block)
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        self._event("message_stop", {"type": "message_stop"})

    def _stream_block(self, index: int, block: dict[str, Any]) -> None:
        start: dict[str, Any]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        self._event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        self._event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        self._event("content_block_stop", {"type": "content_block_stop", "index": index})

    def _event(self, name: str, data: dict[str, Any]) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


def _after_last_reply(messages: list[dict[str, Any]]) -> str:
    tail = []
    for message in reversed(messages):
        if message.get("role") == "assistant":
            break
        tail.append(json.dumps(message.get("content"), ensure_ascii=False))
    return "\n".join(reversed(tail))


def _choose(step: dict[str, Any], last_result: str) -> dict[str, Any]:
    """Resolve `when: {result_matches: regex}` / then / else against the last tool result."""
    if "when" not in step:
        return step
    pattern = step["when"].get("result_matches", "")
    branch = step.get("then") if re.search(pattern, last_result) else step.get("else")
    return dict(branch or {"text": "Done."})


def _error_type(status: int) -> str:
    return {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")


def main() -> None:
    """Run the server standalone: `python -m agents.testing.scripted_model SCENARIO.yaml`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("scenario", type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    model = ScriptedModel(Scenario.load(args.scenario), args.log)
    print(model.start(args.port), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        model.stop()


if __name__ == "__main__":
    main()
