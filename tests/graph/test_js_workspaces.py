"""A worktree's JavaScript resolves to the worktree's own code, and tools that write into `node_modules` have a place
of their own. npm workspaces: the main checkout's `node_modules/@ws/a` links to the USER's `packages/a`, and a
worktree (inside the repo) finds it by walking up, so a task that broke package A passed package B's tests and
merged. vitest with a TypeScript config bundles it into the nearest `node_modules/.vite-temp`: the main
checkout's, read-only in the sandbox, so the base gate failed with EROFS and a good change was refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.js_cheats import TOOLS
from orchestrator import sandbox
from orchestrator.processes import run_async
from tests.graph.harness import Workflow, plan, task
from tests.graph.test_tests_are_spec import first_gate

WORKSPACE = {
    ".gitignore": "node_modules\n",
    "package.json": '{"name": "ws", "version": "1.0.0", "private": true, "workspaces": ["packages/*"],'
                    ' "scripts": {"test": "node --test packages/b/test/"}}\n',
    "packages/a/package.json": '{"name": "@ws/a", "version": "1.0.0", "main": "index.js"}\n',
    "packages/a/index.js": "exports.mul = (a, b) => a * b;\n",
    "packages/b/package.json": '{"name": "@ws/b", "version": "1.0.0", "main": "index.js",'
                               ' "dependencies": {"@ws/a": "1.0.0"}}\n',
    "packages/b/index.js": "const { mul } = require('@ws/a');\n\nexports.area = (w, h) => mul(w, h);\n",
    "packages/b/test/area.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                                    "const { area } = require('../index.js');\n\n"
                                    "test('area', () => { assert.equal(area(2, 3), 6); });\n",
}


@pytest.mark.skipif(shutil.which("npm") is None, reason="node and npm are installed by make install")
async def test_a_worktrees_workspace_packages_resolve_to_its_own_code_not_the_users(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=WORKSPACE, plan=plan(task("TASK-001"), verify="npm test"),
                            venv=False)
    # The user's install: node_modules/@ws/a -> ../../packages/a (workspaces only: nothing from the registry).
    done = await run_async(["npm", "install", "--offline", "--no-audit", "--no-fund"], repo, timeout=120)
    assert done.ok, done.stderr
    assert (repo / "node_modules" / "@ws" / "a").is_symlink()
    broken = {"packages/a/index.js": "exports.mul = (a, b) => a * b + 1;\n"}
    agents = ScriptedAgents({"player": writes(broken), "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=1)
    gate = first_gate(run)
    assert not gate["passed"], gate["summary"]
    assert "packages/b/test/area.test.js > area" in gate["summary"] + str(gate.get("failing")), gate
    assert run.status("TASK-001") != "approved"
    assert not (repo / "node_modules" / "@ws" / "a").resolve().is_relative_to(repo / ".autobuild")


VITEST_TS = {
    ".gitignore": "node_modules\n",
    "package.json": '{"name": "calc", "version": "1.0.0", "type": "module", "scripts": {"test": "vitest run"}}\n',
    "vitest.config.ts": "import { defineConfig } from 'vitest/config';\n\nconst include: string[] ="
                        " ['test/**/*.test.ts'];\n\nexport default defineConfig({ test: { include } });\n",
    "mul.ts": "export const mul = (a: number, b: number): number => a * b;\n",
    "test/mul.test.ts": "import { test, expect } from 'vitest';\nimport { mul } from '../mul';\n\n"
                        "test('mul', () => { expect(mul(2, 3)).toBe(6); });\n",
}


@pytest.mark.heavy
@pytest.mark.skipif(not (TOOLS / "vitest").is_dir() or not sandbox.available(),
                    reason="vitest is installed into .venv/js by make install; the sandbox needs bubblewrap")
async def test_vitest_with_a_typescript_config_writes_its_bundle_in_a_place_of_its_own(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=VITEST_TS, plan=plan(task("TASK-001"), verify="npm test"),
                            venv=False)
    (repo / "node_modules").symlink_to(TOOLS, target_is_directory=True)
    good = {"div.ts": "export const div = (a: number, b: number): number => a / b;\n",
            "test/div.test.ts": "import { test, expect } from 'vitest';\nimport { div } from '../div';\n\n"
                                "test('div', () => { expect(div(6, 3)).toBe(2); });\n"}
    agents = ScriptedAgents({"player": writes(good), "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=1)
    assert run.status("TASK-001") == "approved", first_gate(run)["summary"]
    assert "test/div.test.ts > div" not in first_gate(run)["summary"]
    assert not (TOOLS / ".vite-temp").exists() or not any((TOOLS / ".vite-temp").iterdir())
