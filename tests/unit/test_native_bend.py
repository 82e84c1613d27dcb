"""The real-history bench's Go and Rust cheats bend exactly the FAIL_TO_PASS tests the gate names, and the bent Go
module still builds and runs: a deleted, skipped or weakened test no longer catches the broken code (which is what
the gate then has to notice)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.real_history.native_bend import bend, inline_changed

GO_TEST = ("package calc\n\nimport \"testing\"\n\nfunc check(t *testing.T, got, want int) {\n"
           "\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n\n"
           "func TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Errorf(\"Mul(2, 3) = %d\", Mul(2, 3))\n\t}\n"
           "\tcheck(t, Mul(4, 5), 20)\n}\n\nfunc TestOther(t *testing.T) {\n\tcheck(t, 1, 1)\n}\n")
GO_FILES = {"go.mod": "module example.com/calc\n\ngo 1.19\n",
            "mul.go": "package calc\n\nfunc Mul(a, b int) int { return a + b }\n",  # broken: 2+3 != 6
            "mul_test.go": GO_TEST}
RUST_TEST = ("use calc::mul;\n\n#[test]\nfn mul_works() {\n    assert_eq!(mul(2, 3), 6);\n}\n\n"
             "#[test]\nfn other() {\n    assert!(true);\n}\n")


def test_go_cheats_touch_only_the_named_test() -> None:
    test = ["example.com/calc.TestMul"]
    deleted = bend(GO_FILES, {}, test, "delete")["mul_test.go"]
    assert deleted is not None and "func TestMul" not in deleted and "func TestOther" in deleted
    skipped = bend(GO_FILES, {}, test, "skip")["mul_test.go"]
    assert skipped is not None and "func TestMul(t *testing.T) {\n\tt.Skip(\"later\")" in skipped
    weakened = bend(GO_FILES, {}, test, "weaken")["mul_test.go"]
    assert weakened is not None and "t.Errorf" not in weakened and "t.Fatalf" not in weakened  # the helper too
    old = {"mul_test.go": GO_TEST.replace("Mul(2, 3) != 6", "Mul(2, 3) != 5")}
    assert bend(GO_FILES, old, test, "expectation")["mul_test.go"] == old["mul_test.go"]


def test_rust_cheats_touch_only_the_named_test() -> None:
    files = {"tests/mul.rs": RUST_TEST, "src/lib.rs": "pub fn mul(a: i32, b: i32) -> i32 { a * b }\n"}
    test = ["tests/mul.rs::mul_works"]
    deleted = bend(files, {}, test, "delete")["tests/mul.rs"]
    assert deleted is not None and "mul_works" not in deleted and "#[test]\nfn other()" in deleted
    assert deleted.count("#[test]") == 1  # its attribute went with it
    skipped = bend(files, {}, test, "skip")["tests/mul.rs"]
    assert skipped is not None and "#[ignore]\n#[test]\nfn mul_works" in skipped and skipped.count("#[ignore]") == 1
    weakened = bend(files, {}, test, "weaken")["tests/mul.rs"]
    assert weakened is not None and "macro_rules! assert_eq" in weakened.split("fn other")[0]
    assert bend(files, {}, ["doc-tests calc::src/lib.rs - mul"], "delete") == {}  # a doctest has no function


def test_a_release_that_changed_a_cfg_test_module_is_accepted_by_its_file() -> None:
    old = ("pub fn f() -> i32 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n"
           "    fn t() { assert_eq!(super::f(), 1); }\n}\n")
    new = old.replace("{ 1 }", "{ 2 }").replace("f(), 1)", "f(), 2)")
    assert inline_changed({"src/lib.rs": old}, {"src/lib.rs": new}, ["src/lib.rs"]) == ("src/lib.rs",)
    assert inline_changed({"src/lib.rs": old}, {"src/lib.rs": old.replace("{ 1 }", "{ 3 }")}, ["src/lib.rs"]) == ()


@pytest.mark.heavy  # two real `go test` builds per case: ~20 s on a busy machine
@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
@pytest.mark.parametrize("how", ["delete", "skip", "weaken"])
def test_a_bent_go_test_builds_and_no_longer_catches_the_break(tmp_path: Path, how: str) -> None:
    files = {**GO_FILES, **{path: text for path, text in bend(GO_FILES, {}, ["example.com/calc.TestMul"], how).items()
                            if text is not None}}
    for path, text in files.items():
        (tmp_path / path).write_text(text)
    env = dict(os.environ, GOPROXY="off", GOFLAGS="-mod=mod", GOCACHE=str(tmp_path / ".cache"))
    unbent = subprocess.run(["go", "test", "./..."], cwd=tmp_path, env=dict(env, GOFLAGS="-mod=mod -run=TestOther"),
                            capture_output=True, text=True, check=False, timeout=300)
    done = subprocess.run(["go", "test", "-v", "./..."], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False, timeout=300)
    assert unbent.returncode == 0, unbent.stdout + unbent.stderr
    assert done.returncode == 0, done.stdout + done.stderr
