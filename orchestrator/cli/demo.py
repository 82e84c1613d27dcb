"""`make demo`: a sample repo, a four-task plan and the scripted model, run through the real CLI."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from importlib import resources
from pathlib import Path

from agents.testing.repos import DEMO_PLAN, git, make_sample_repo, scripted_env
from agents.testing.scenario import Scenario
from agents.testing.scripted_model import ScriptedModel


def main() -> int:
    workspace = Path(os.environ.get("AUTOBUILD_DEMO_DIR", "demo-workspace")).resolve()
    if workspace.exists():
        shutil.rmtree(workspace)
    repo = make_sample_repo(workspace / "sample-repo", plan=DEMO_PLAN)
    db = workspace / "checkpoints.sqlite"
    scenario = Scenario.load(Path(str(resources.files("agents.testing") / "demo_scenario.yaml")))
    print(f"demo workspace: {workspace}\n")
    started = time.monotonic()
    with ScriptedModel(scenario, workspace / "model-requests.jsonl") as model:
        command = [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo),
                   "--db", str(db), "--autonomous"]
        print("$ " + " ".join(["python", *command[1:]]) + "\n", flush=True)
        code = subprocess.run(command, env=scripted_env(model.base_url, workspace), check=False).returncode
    print(f"\nexit code {code} after {time.monotonic() - started:.1f}s")
    if code not in (0, 1):
        print("the demo run did not complete; see the error above", file=sys.stderr)
        return code
    print(textwrap.dedent(f"""
        Where things are:
          branch:       autobuild/FEAT-001 in {repo}   (git -C {repo} log --oneline autobuild/FEAT-001)
          your branch:  main, untouched; `git -C {repo} status` lists only the
                        plan we wrote for you (.autobuild/features/, untracked)
          checkpoints:  {db}   (remembered: commands inside the repo find it without --db)
          reports:      {repo}/.autobuild/runs/FEAT-001/AUTO-RUN.md and …/TASK-00N/AUTO-RUN.md
          traces:       {repo}/.autobuild/runs/FEAT-001/TASK-00N/trace.jsonl
          model log:    {workspace}/model-requests.jsonl
    """))
    print(git(repo, "log", "--oneline", "--graph", "autobuild/FEAT-001"))
    print("Look around (paste these):")
    for line in closing_commands(repo):
        print(f"  {line}")
    print("\nNext steps, as after a run of your own:")
    for line in next_commands(code):
        print(f"  {line}")
    return code


def _autobuild() -> str:
    script = Path(sys.executable).parent / "autobuild"
    return shlex.quote(str(script)) if script.is_file() else f"{shlex.quote(sys.executable)} -m orchestrator"


def closing_commands(repo: Path) -> list[str]:
    """Ready-to-paste commands that inspect the demo's run from inside its repo, with no flags."""
    autobuild = _autobuild()
    return [f"cd {shlex.quote(str(repo))}", f"{autobuild} status FEAT-001", f"{autobuild} show FEAT-001 TASK-001",
            f"{autobuild} history FEAT-001"]


def next_commands(code: int) -> list[str]:
    """What a person does after a run, from inside the demo's repo: read the work, then land it (every task
    approved), or see why and go on."""
    autobuild = _autobuild()
    if code != 0:
        return ["# what was not approved, and why", f"{autobuild} status FEAT-001",
                "# run the failed and skipped tasks again", f"{autobuild} resume FEAT-001"]
    return ["# read what was built, task by task, with the coach's reasons", f"{autobuild} review FEAT-001",
            "# then put it on main, the demo repo's branch (it has no remote for `autobuild pr`)",
            f"{autobuild} land FEAT-001"]


if __name__ == "__main__":
    raise SystemExit(main())
