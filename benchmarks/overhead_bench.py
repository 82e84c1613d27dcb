"""Issue 24's overhead goals, measured with the real bundled CLI against the scripted model at a fixed latency:
AutoBuild against the bare CLI replaying the very same sessions (same prompts, same scripted steps, same
concurrency), and the work outside sessions and gate runs per task, read from the run's own timeline.

`python -m benchmarks.overhead_bench [PARALLEL ...]` prints the numbers; `make bench` adds them to
docs/benchmarks.md."""

from __future__ import annotations

import compileall
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents import sandbox as agent_sandbox
from agents.cli_binary import bundled_cli
from agents.testing.repos import make_sample_repo, scripted_env
from agents.testing.scripted_model import ScriptedModel
from benchmarks import overhead_phases
from benchmarks.gate_log import GateLog
from orchestrator.views.timeline import task_bars, timed

LATENCY_S = 0.5
TASKS = 8
FILES = {".gitignore": "__pycache__/\n", "README.md": "bench\n"}


def plan(verify: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"id": "FEAT-001", "name": "Bench", "tasks": [
        {"id": f"TASK-{i}", "name": f"task {i}", "complexity": 1} for i in range(1, TASKS + 1)]}
    if verify:
        found["verify"] = verify
    return found


def scenario() -> dict[str, Any]:
    """Per task a player (a Write, report_progress, a final text) and a coach (record_decision, a final text),
    every response after LATENCY_S."""
    sessions: list[dict[str, Any]] = []
    for i in range(1, TASKS + 1):
        sessions.append({"role": "player", "task": f"TASK-{i}", "steps": [
            {"write": {"path": f"out/task{i}.txt", "content": f"{i}\n"}, "delay": LATENCY_S},
            {"tool": {"name": "report_progress", "input": {"files_modified": [f"out/task{i}.txt"],
                                                           "implementation_notes": "x"}}, "delay": LATENCY_S},
            {"text": "done", "delay": LATENCY_S}]})
    sessions.append({"role": "coach", "steps": [
        {"tool": {"name": "record_decision", "input": {"decision": "approve", "rationale": "ok"}}, "delay": LATENCY_S},
        {"text": "ok", "delay": LATENCY_S}]})
    return {"sessions": sessions}


@dataclass
class Session:
    """One agent session as the scripted model saw it: who, the user prompt it was started with, its span."""

    role: str
    task: str
    turn: int
    prompt: str
    requests: int = 0
    first: float = 0.0
    last: float = 0.0


@dataclass
class Run:
    """One `autobuild run` as the bench saw it."""

    wall: float
    repo: Path
    sessions: list[Session] = field(default_factory=list)
    gates: list[tuple[float, float]] = field(default_factory=list)
    """Each gate run's start and end (epoch seconds), as the gate itself reported them."""
    started: float = 0.0
    """Epoch seconds when the `autobuild run` process was started, and when it had exited."""
    ended: float = 0.0
    cpu: float = 0.0
    """CPU seconds of the run's whole process tree (the CLIs, git, the gate included)."""
    own_cpu: float = 0.0
    """CPU seconds of the orchestrator's own Python process, and its peak RSS in MiB."""
    peak_rss: float = 0.0

    @property
    def gate_seconds(self) -> float:
        return sum(end - start for start, end in self.gates)


def _sessions(model: ScriptedModel) -> list[Session]:
    found: dict[tuple[str, str, int], Session] = {}
    for record in sorted(model.requests, key=lambda r: r.started):
        if record.role is None or record.task is None or record.turn is None:
            continue
        key = (record.role, record.task, record.turn)
        session = found.setdefault(key, Session(*key, prompt=record.prompt, first=record.started))
        session.requests += 1
        session.last = max(session.last, record.ended or record.started)
    return list(found.values())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _watch(pid: int, done: Callable[[], bool]) -> tuple[float, float]:
    """Poll a running process's own CPU seconds and peak RSS (MiB) from /proc until `done()`; the last reading."""
    cpu = rss = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    while not done():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            status = Path(f"/proc/{pid}/status").read_text()
        except (FileNotFoundError, ProcessLookupError):
            break
        cpu = (int(fields[11]) + int(fields[12])) / tick
        rss = next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")), rss)
        time.sleep(0.1)
    return cpu, rss


WARM_MARK = "autobuild-bench: modules loaded at "
WARM_START = (
    "import sys, time\n"
    "import orchestrator.cli.main as main, orchestrator.cli.run, agents.session  # a served worker's, after a run\n"
    f"sys.stderr.write(f'{WARM_MARK}{{time.time()}}\\n')\n"
    "raise SystemExit(main.entry())\n")
"""`autobuild run` in a process whose modules are loaded before the clock starts, as in a served worker."""


def run_autobuild(workdir: Path, parallel: int, *, gated: bool = False, warm: bool = False,
                  plan_data: dict[str, Any] | None = None, scenario_data: dict[str, Any] | None = None) -> Run:
    """The 8-task plan (or `plan_data` with `scenario_data`) through `autobuild run` (a fresh process, start-up
    included), no gate unless `gated`; `warm`: timed from when the process's modules are loaded (a served worker
    pays the imports once)."""
    workdir.mkdir(parents=True, exist_ok=True)
    gate = GateLog(workdir)
    planned = plan_data or plan(gate.command if gated else None)
    repo = make_sample_repo(workdir / "repo", files=FILES, plan=planned, venv=False)
    args = [] if gated else ["--verify", "none"]
    start = ["-c", WARM_START] if warm else ["-m", "orchestrator"]
    with ScriptedModel(scenario_data or scenario()) as model:
        started, epoch_started = time.monotonic(), time.time()
        before = _children_cpu()
        proc = subprocess.Popen(
            [sys.executable, *start, "run", "FEAT-001", "--repo", str(repo), "--db",
             str(workdir / "db.sqlite"), "--json", "--parallel", str(parallel), *args],
            env=scripted_env(model.base_url, workdir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        own_cpu, peak_rss = _watch(proc.pid, lambda: proc.poll() is not None)
        stdout, stderr = proc.communicate()
        wall = time.monotonic() - started
        epoch_ended = time.time()
        cpu = _children_cpu() - before
    if proc.returncode != 0:
        raise SystemExit(f"benchmark run failed (exit {proc.returncode}): {stderr[-2000:]}{stdout[-2000:]}")
    if warm:
        loaded = next(float(line.removeprefix(WARM_MARK)) for line in stderr.splitlines() if line.startswith(WARM_MARK))
        wall, epoch_started = epoch_ended - loaded, loaded
    gates = gate.runs()
    return Run(wall, repo, _sessions(model), gates, epoch_started, epoch_started + wall, cpu, own_cpu, peak_rss)


def run_bare(workdir: Path, parallel: int, sessions: list[Session], *, sandboxed: bool = False,
             scenario_data: dict[str, Any] | None = None,
             spans: list[tuple[Session, float, float]] | None = None) -> tuple[float, float]:
    """The same sessions by the bare CLI (`claude -p <the same prompt>`, the same session marker, so the
    scripted model plays the same steps), per task the player then the coach, `parallel` tasks at a time;
    `sandboxed`: with the Bash sandbox settings AutoBuild gives its sessions (agents/sandbox.py); `spans`: filled
    with each session as the model saw it, its process's start and its exit, in the order they ran."""
    cli = str(bundled_cli())
    # A git repo like AutoBuild's worktrees: the CLI reads git status, log and config for its context there.
    cwd = make_sample_repo(workdir / "bare", files=FILES, plan=plan(None), venv=False)
    by_task: dict[str, list[Session]] = {}
    for session in sorted(sessions, key=lambda s: (s.task, s.turn, s.role != "player")):
        by_task.setdefault(session.task, []).append(session)
    with ScriptedModel(scenario_data or scenario()) as model:
        env = scripted_env(model.base_url, workdir) | {
            "IS_SANDBOX": "1", "CLAUDE_CODE_MAX_RETRIES": "0", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1"}

        extra = ["--settings", json.dumps({"sandbox": agent_sandbox.settings(cwd, ())})] if sandboxed else []

        ran: list[tuple[tuple[str, str, int], float, float]] = []

        def one_task(task: str) -> None:
            for s in by_task[task]:
                started = time.time()
                subprocess.run(
                    [cli, "-p", s.prompt or "work", "--output-format", "json", "--permission-mode",
                     "bypassPermissions", "--model", "claude-sonnet-4-5", "--append-system-prompt",
                     f"AutoBuild session: role={s.role} task={s.task} turn={s.turn}", *extra],
                    cwd=cwd, env=env, capture_output=True, check=True)
                ran.append(((s.role, s.task, s.turn), started, time.time()))

        started, before = time.monotonic(), _children_cpu()
        with ThreadPoolExecutor(parallel) as pool:
            list(pool.map(one_task, sorted(by_task)))
        wall, cpu = time.monotonic() - started, _children_cpu() - before
    seen = {(s.role, s.task, s.turn): s for s in _sessions(model)}
    if spans is not None:
        spans.extend((seen[key], started, ended) for key, started, ended in ran)
    replayed = sum(1 for r in model.requests if r.role is not None)
    mine = sum(s.requests for s in sessions)
    if replayed != mine:
        raise SystemExit(f"the bare CLI replay made {replayed} model requests, AutoBuild's run {mine}: not comparable")
    return wall, cpu


def outside_sessions(run: Run) -> dict[str, float]:
    """Per task, from the run's own timeline (traces): the task's span (initialize to merge) minus its session
    bars and its gate runs (the gate's own log); and the whole run's wall time minus every session and gate,
    per task (process start-up and the run's own set-up and reports included)."""
    in_tasks = 0.0
    session_total = 0.0
    task_dirs = sorted((run.repo / ".autobuild" / "runs" / "FEAT-001").glob("TASK-*"))
    for task_dir in task_dirs:
        events = [json.loads(line) for line in (task_dir / "trace.jsonl").read_text().splitlines() if line.strip()]
        stamps = {e["event"]: at for at, e in timed(events)}
        bars = task_bars(events, now=time.time())
        sessions = sum(b.end - b.start for b in bars if b.kind in ("player", "coach"))
        session_total += sessions
        start, end = stamps["initialize"], stamps["merge"]
        gates = sum(min(b, end) - max(a, start) for a, b in run.gates if a < end and b > start)
        in_tasks += end - start - sessions - gates
    tasks = max(len(task_dirs), 1)
    return {"in_task": in_tasks / tasks, "whole_run": (run.wall - session_total - run.gate_seconds) / tasks}


def with_bytecode() -> None:
    """Our modules' bytecode up to date before any timed `autobuild` process, as a pip-installed AutoBuild has it:
    an editable checkout under PYTHONDONTWRITEBYTECODE (as here and on CI) compiles ~150 modules in every process
    (~0.1 s of start-up) that a user's install never does."""
    root = Path(__file__).resolve().parent.parent
    for package in ("orchestrator", "agents", "prompts", "benchmarks"):
        compileall.compile_dir(root / package, quiet=1)


def measure(parallels: tuple[int, ...] = (1, 8)) -> dict[str, Any]:
    with_bytecode()
    out: dict[str, Any] = {"load": {}, "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for parallel in parallels:
            load = os.getloadavg()[0]
            mine = run_autobuild(base / f"ab-{parallel}", parallel)
            warm = run_autobuild(base / f"warm-{parallel}", parallel, warm=True)
            bare, bare_cpu = run_bare(base / f"bare-{parallel}", parallel, mine.sessions)
            boxed_spans: list[tuple[Session, float, float]] = []
            boxed, _ = run_bare(base / f"boxed-{parallel}", parallel, mine.sessions, sandboxed=True,
                                spans=boxed_spans)
            model_spans = [s.last - s.first for s in mine.sessions]
            out["rows"].append({"parallel": parallel, "autobuild": mine.wall, "bare": bare, "ratio": mine.wall / bare,
                                "sessions": len(mine.sessions), "load": load, "cpu": mine.cpu, "boxed": boxed,
                                "own_cpu": mine.own_cpu, "peak_rss": mine.peak_rss, "bare_cpu": bare_cpu,
                                "model_span_mean": sum(model_spans) / len(model_spans), "warm": warm.wall,
                                **overhead_phases.row_phases(mine, plan(), boxed_spans)})
            print(out["rows"][-1], flush=True)
        load = os.getloadavg()[0]
        gated = run_autobuild(base / "gated", 1, gated=True)
        out["gated"] = {**outside_sessions(gated), "gate_runs": len(gated.gates), "wall": gated.wall, "load": load}
        ungated = run_autobuild(base / "ungated", 1)
        out["ungated"] = outside_sessions(ungated)
    return out


WHERE_THE_TIME_GOES = Path(__file__).with_name("where_the_time_goes.md")
"""The last profile's findings, written by hand (with its date and load): the report includes them as they are."""


def report_lines(found: dict[str, Any]) -> list[str]:
    rows = found["rows"]
    gated = found["gated"]
    return [
        f"## Overhead against the bare CLI: {TASKS} independent tasks, no gate (issue 24; goal ≤ 1.10x)",
        "",
        f"Each task: a player (3 responses: a Write, report_progress, a final text) and a coach (2 responses:"
        f" record_decision, a final text), every response {LATENCY_S:.1f} s. AutoBuild runs the plan with"
        " `--verify none`; the bare CLI then replays the very same sessions (the prompts AutoBuild's sessions sent,"
        " the same session marker, so the scripted model plays the same steps and the same tool calls; the run"
        " checks the request counts match) as `claude -p` in a copy of the same repository, per task the player"
        " then the coach, at the same concurrency. Load is the 1-minute load average when the row started"
        " (2 cores, shared). \"Modules loaded\" is the same run timed from when the process's Python modules are"
        " in, as in a served worker (`autobuild serve`), which pays the imports once, not per run.",
        "",
        "| concurrency | AutoBuild | bare CLI | ratio | CPU-s AutoBuild (its own process) | CPU-s bare |"
        " orchestrator peak RSS | mean session span at the model | bare CLI + our Bash sandbox (ratio) |"
        " AutoBuild, modules loaded (ratio to the bare CLI; to it sandboxed) | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *[f"| {r['parallel']} | {r['autobuild']:.1f} s | {r['bare']:.1f} s | {r['ratio']:.2f} | {r['cpu']:.1f}"
          f" ({r['own_cpu']:.1f}) | {r['bare_cpu']:.1f} | {r['peak_rss']:.0f} MiB | {r['model_span_mean']:.2f} s |"
          f" {r['boxed']:.1f} s ({r['autobuild'] / r['boxed']:.2f}) | {r['warm']:.1f} s ({r['warm'] / r['bare']:.2f};"
          f" {r['warm'] / r['boxed']:.2f}) | {r['load']:.1f} |" for r in rows],
        "",
        *overhead_phases.concurrency_lines(rows),
        *WHERE_THE_TIME_GOES.read_text().splitlines(),
        "",
        "## Work outside sessions and gate runs, per task (issue 24; goal ≤ 0.3 s)",
        "",
        f"Read from the run's own timeline (`.autobuild/runs/FEAT-001/TASK-*/trace.jsonl`: the session bars of"
        f" `views/timeline.py`) and the gate's own log of its runs; the same {TASKS} tasks at `--parallel 1`.",
        "",
        f"- Gated (a passing gate that logs its runs: {gated['gate_runs']} runs for {TASKS} tasks, the base's"
        f" included): {gated['in_task']:.2f} s per task inside the task (initialize to merge, minus its sessions and"
        f" gate runs); {gated['whole_run']:.2f} s per task over the whole run (process start-up, the base check and"
        f" reports included; load {gated['load']:.1f})",
        f"- Ungated (`--verify none`): {found['ungated']['in_task']:.2f} s per task inside the task;"
        f" {found['ungated']['whole_run']:.2f} s per task over the whole run",
        "",
    ]


if __name__ == "__main__":
    chosen = tuple(int(a) for a in sys.argv[1:] if a != "none") if sys.argv[1:] else (1, 8)
    print("\n".join(report_lines(measure(chosen))))
