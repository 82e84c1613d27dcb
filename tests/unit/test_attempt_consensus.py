"""What tied attempts agree their change needs (graph/attempt_consensus.py): each one's code lines no sibling
changed; test files and blank lines are not counted."""

from __future__ import annotations

from orchestrator.graph.attempt_consensus import changed_lines, unshared

FIX = ("--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,3 @@\n def f(x):\n+    if x < 0:\n"
       "+        raise ValueError(x)\n")
TESTS = "--- /dev/null\n+++ b/tests/test_f.py\n@@ -0,0 +1,2 @@\n+def test_f():\n+    assert f(1)\n"
BREAK = ("--- a/pkg/other.py\n+++ b/pkg/other.py\n@@ -1,2 +1,2 @@\n def g(y):\n-    return y\n+    return 0\n"
         "\n")


def test_a_change_made_alone_counts_its_lines_and_a_shared_one_none() -> None:
    found = unshared({1: FIX + TESTS, 2: FIX + BREAK, 3: FIX.replace("x < 0", "x <= -1")})
    assert found == {1: 0, 2: 2, 3: 1}


def test_test_files_deleted_files_and_blank_lines_are_left_out() -> None:
    gone = "--- a/pkg/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n"
    assert changed_lines(TESTS) == set()
    assert changed_lines(gone) == {("pkg/old.py", "-", "x = 1")}
    assert changed_lines(FIX + "+\n") == {("pkg/core.py", "+", "if x < 0:"),
                                          ("pkg/core.py", "+", "raise ValueError(x)")}
