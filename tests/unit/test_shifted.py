"""Ids that shift when a case is dropped, and the parametrize / table diff that names the case itself."""

from __future__ import annotations

import pytest

from orchestrator.gate.spec.shifted import case_diff, function_of, shifting

PARAMS = ("import pytest\n\n\n@pytest.mark.parametrize('case', [(2, 3), (0, 5)])\ndef test_a(case):\n    pass\n\n\n"
          "class TestB:\n    @pytest.mark.parametrize('n', [1, 2])\n    def test_b(self, n):\n        pass\n")


@pytest.mark.parametrize(("test_id", "shifts"), [
    ("tests.t::test_a[case0]", True), ("tests.t::test_a[x1-y0]", True), ("tests.t::test_a[1-2]", False),
    ("tests.t::test_a[True]", False), ("tests.t::test_a", False), ("example.com/m.TestT/case#01", True),
    ("example.com/m.TestT/case", False), ("example.com/m.TestT/#00", True),
])
def test_which_ids_are_positions(test_id: str, shifts: bool) -> None:
    assert shifting(test_id) is shifts


def test_the_function_an_id_belongs_to() -> None:
    assert function_of("tests.t::TestB::test_b[n0]") == "test_b"
    assert function_of("example.com/calc/v2.TestTable/case#02") == "TestTable"


def test_the_diff_shows_the_dropped_case_of_the_named_test_only() -> None:
    tree = PARAMS.replace("[(2, 3), (0, 5)]", "[(0, 5)]").replace("[1, 2]", "[1]")
    shown = case_diff("tests/t.py", PARAMS, tree, {"test_a"})
    assert "-@pytest.mark.parametrize('case', [(2, 3), (0, 5)])\n" in shown
    assert "+@pytest.mark.parametrize('case', [(0, 5)])\n" in shown and "test_b" not in shown
    assert "test_b, the base" in case_diff("tests/t.py", PARAMS, tree)
    assert case_diff("tests/t.py", PARAMS, PARAMS) == ""
    assert "-@pytest.mark" in case_diff("tests/t.py", PARAMS, None, {"test_a"})


def test_a_go_test_function_is_diffed_whole() -> None:
    base = "package m\n\nfunc TestT(t *testing.T) {\n\tcases := []int{1, 2}\n\t_ = cases\n}\n"
    shown = case_diff("m_test.go", base, base.replace("{1, 2}", "{2}"), {"TestT"})
    assert "-\tcases := []int{1, 2}\n+\tcases := []int{2}\n" in shown
