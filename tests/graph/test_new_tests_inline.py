"""A task's new tests inside a code file must be able to fail too (issue 38 item 5): a Rust fix that adds its
`#[test]` to the `#[cfg(test)]` module of the file it fixes has that module spliced into the base's version of the
file (gate/spec/inline_splice.py), so a test that passes on the old code is refused and a real one passes. Real git and
a real cargo (a crate with no dependency builds offline), through the gate service as the coach's turn calls it.
And the gate's own cargo home: a config an agent planted in its cache folder doesn't reach the gate (item 6)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.cli.demo import make_sample_repo
from tests.graph.harness import judged, plan, task

pytestmark = [pytest.mark.heavy, pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")]

VERIFY = "cargo test"
CODE = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else { x }\n}\n"
FIXED = CODE.replace("if x < lo { lo } else { x }", "if x < lo { lo } else if x > hi { hi } else { x }")
TESTS = ("\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn keeps_inside() {\n"
         "        assert_eq!(clamp(5, 0, 10), 5);\n    }\n}\n")
FILES = {"Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
         ".gitignore": "target/\n", "src/lib.rs": CODE + TESTS}


def with_test(code: str, name: str, check: str) -> str:
    added = f"    }}\n\n    #[test]\n    fn {name}() {{\n        {check}\n    }}\n}}\n"
    return code + TESTS.replace("    }\n}\n", added)


async def test_a_fix_whose_inline_test_passes_on_the_old_code_is_refused(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("TASK-001"), verify=VERIFY))
    weak = await judged(repo, {"src/lib.rs": with_test(FIXED, "keeps_low", "assert_eq!(clamp(-1, 0, 10), 0);")},
                        VERIFY, kind="fix")
    assert not weak["passed"], weak["summary"]
    assert "none of the 1 test(s) the fix added or changed fails on the code it started from" in weak["summary"]
    assert "src/lib.rs::tests::keeps_low" in weak["summary"]
    real = await judged(repo, {"src/lib.rs": with_test(FIXED, "caps_high", "assert_eq!(clamp(11, 0, 10), 10);")},
                        VERIFY, kind="fix")
    assert real["passed"], real["summary"]
    tests_only = await judged(repo, {"src/lib.rs": with_test(CODE, "keeps_low", "assert_eq!(clamp(-1, 0, 10), 0);")},
                              VERIFY, kind="feature")
    assert not tests_only["passed"], "only the test module changed: its tests ran on the base's code, and pass"
    assert "src/lib.rs::tests::keeps_low" in tests_only["summary"], tests_only["summary"]


async def test_a_cargo_config_an_agent_planted_in_its_caches_does_not_steer_the_gate(tmp_path: Path) -> None:
    """The agents write their own cache folder (`_sandbox`): a cargo config there, read by a gate whose CARGO_HOME
    it was, turned a break into a pass. The gate's caches are its own (sandbox.GATE_FOLDER)."""
    repo = make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("TASK-001"), verify=VERIFY))
    planted = repo / ".autobuild" / "worktrees" / "FEAT-001" / "_sandbox" / "cargo" / "config.toml"
    planted.parent.mkdir(parents=True)
    planted.write_text('[build]\nrustflags = ["--cfg", "judged"]\n')
    steered = CODE.replace("if x < lo { lo } else { x }", "if cfg!(judged) { if x < lo { lo } else { x } } else { lo }")
    result = await judged(repo, {"src/lib.rs": steered + TESTS}, VERIFY)
    assert not result["passed"], result["summary"]
    assert "src/lib.rs::tests::keeps_inside" in result["failing"], result["summary"]
