"""The gate's sitecustomize runs in every Python process of a gate run (a suite's helper scripts, `pip`, the
subprocesses a test starts): it loads unittest's hooks and the pytest plugin only in a process that imports them,
and imports nothing heavy itself (it once cost every such process ~0.12 CPU-s: importlib.abc, unittest, typing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from orchestrator.gate.observe.instrument import SHIM

HEAVY = ("unittest", "importlib.abc", "importlib.resources", "typing", "pathlib", "inspect", "_pytest")


def _python(tmp_path: Path, *args: str, shim: bool = True, report: bool = False) -> subprocess.CompletedProcess[str]:
    """`python args` with the gate's shim on PYTHONPATH and its unittest report named, as a gate run has them
    (`shim`: both; `report`: the report's name alone)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTHON", "AUTOBUILD_"))}
    if shim:
        env.update(PYTHONPATH=str(SHIM))
    if shim or report:
        env.update(AUTOBUILD_UNITTEST_REPORT=str(tmp_path / "unittest.jsonl"))
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60, check=False)


def test_a_python_process_that_runs_no_tests_loads_nothing_heavy(tmp_path: Path) -> None:
    probe = (f"import sys, json; site = sys.modules.get('sitecustomize'); print(json.dumps("
             f"[[name for name in {HEAVY!r} if name in sys.modules], getattr(site, '__file__', None)]))")
    done, bare = _python(tmp_path, "-c", probe), _python(tmp_path, "-c", probe, shim=False)
    assert done.returncode == 0, done.stderr
    (heavy, site), (bare_heavy, _) = json.loads(done.stdout), json.loads(bare.stdout)
    assert site is not None and Path(site).parent == SHIM, "the shim's sitecustomize ran"
    assert set(heavy) - set(bare_heavy) == set(), "loaded at start-up by the shim"


def test_unittest_is_hooked_when_it_loads(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text("import unittest\n\n\nclass One(unittest.TestCase):\n"
                                          "    def test_ok(self):\n        pass\n\n"
                                          "    def test_bad(self):\n        self.fail('no')\n")
    done = _python(tmp_path, "-m", "unittest", "-f", "test_one")
    assert done.returncode == 1, done.stderr
    outcomes = {record["id"]: record["outcome"]
                for record in map(json.loads, (tmp_path / "unittest.jsonl").read_text().splitlines())
                if record["outcome"] in ("passed", "failed")}
    assert outcomes == {"test_one.One.test_bad": "failed", "test_one.One.test_ok": "passed"}, "-f switched off"


def test_unittest_loaded_before_the_shim_ran_is_hooked_at_once(tmp_path: Path) -> None:
    """As when a site-packages `.pth` file imports unittest: site runs those before any sitecustomize."""
    (tmp_path / "test_one.py").write_text("import unittest\n\n\nclass One(unittest.TestCase):\n"
                                          "    def test_ok(self):\n        pass\n")
    late = (f"import sys, unittest; sys.path.insert(0, {str(SHIM)!r}); import sitecustomize; "
            "unittest.main(module='test_one', exit=False)")
    done = _python(tmp_path, "-c", late, shim=False, report=True)
    assert done.returncode == 0, done.stderr
    assert '"id": "test_one.One.test_ok"' in (tmp_path / "unittest.jsonl").read_text()


def test_pytest_gets_the_gates_plugin_when_its_config_loads(tmp_path: Path) -> None:
    probe = "import _pytest.config as c; print('autobuild_gate_pytest' in c.default_plugins)"
    assert _python(tmp_path, "-c", probe).stdout.strip() == "True"
