"""Plan validation: the schema and cross-field rules of DESIGN §5."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.errors import PlanError
from orchestrator.plan.model import TaskSpec, load_plan, parse_plan
from orchestrator.plan.rules import compute_groups


def plan(*tasks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "FEAT-001", "name": "Feature", "tasks": list(tasks), **extra}


def task(tid: str, *deps: str, **extra: Any) -> dict[str, Any]:
    return {"id": tid, "name": f"task {tid}", "complexity": 3, "dependencies": list(deps), **extra}


def test_seed_example_with_contradicting_groups_names_both_tasks() -> None:
    data = plan(
        task("TASK-001"),
        task("TASK-002", "TASK-001"),
        task("TASK-003", "TASK-002"),
        orchestration={"parallel_groups": [["TASK-001"], ["TASK-002", "TASK-003"]]},
    )
    with pytest.raises(PlanError) as error:
        parse_plan(data, "FEAT-001.yaml")
    message = str(error.value)
    assert "TASK-003" in message and "TASK-002" in message
    assert "\n" not in message


def test_a_task_is_a_feature_unless_it_says_what_it_is() -> None:
    parsed = parse_plan(plan(task("A"), task("B", kind="fix")), "FEAT-001.yaml")
    assert [spec.kind for spec in parsed.tasks] == ["feature", "fix"]


def test_groups_computed_from_dependencies_when_absent() -> None:
    data = plan(task("A"), task("B"), task("C", "A"), task("D", "B", "C"))
    assert parse_plan(data, "p").groups() == [["A", "B"], ["C"], ["D"]]


def test_explicit_consistent_groups_are_kept() -> None:
    groups = [["A"], ["B"], ["C"]]
    data = plan(task("A"), task("B"), task("C", "A"), orchestration={"parallel_groups": groups})
    assert parse_plan(data, "p").groups() == groups


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (plan(task("A", "B"), task("B", "A")), "cycle"),
        (plan(task("A", "Z")), "unknown task Z"),
        (plan(task("A"), task("A")), "duplicate task id A"),
        (plan(task("_land")), "ids starting with _ are reserved"),
        (plan(task("A"), task("B", "A"), orchestration={"parallel_groups": [["B"], ["A"]]}), "runs later"),
        (plan(task("A", complexity=11)), "complexity"),
        (plan(task("A", complexity=0)), "complexity"),
        (plan(task("../etc")), "id"),
        (plan(task("A/B")), "id"),
        ({"id": "FEAT/1", "name": "x", "tasks": [task("A")]}, "id"),
        (plan(), "tasks"),
        (plan(task("A", dependencies="B")), "dependencies"),
        (plan(task("A", complexity="high")), "complexity"),
        (plan(task("A", complexity=True)), "complexity"),
        ({"name": "no id", "tasks": [task("A")]}, "id"),
        (plan(task("A"), orchestration={"parallel_groups": [["A"], ["Q"]]}), "unknown task Q"),
        (plan(task("A"), task("B"), orchestration={"parallel_groups": [["A"]]}), "missing"),
        (plan(task("A", "A")), "itself"),
        (["not", "a", "mapping"], "mapping"),
        (plan(task("A", kind="bugfix")), "tasks[A].kind: Input should be 'feature', 'fix', 'refactor'"),
    ],
)
def test_bad_plans_give_one_line_reason(data: Any, expected: str) -> None:
    with pytest.raises(PlanError) as error:
        parse_plan(data, "FEAT-001.yaml")
    assert expected in str(error.value)
    assert "\n" not in str(error.value)


def test_load_plan_reads_task_file_body(tmp_path: Path) -> None:
    features = tmp_path / ".autobuild" / "features"
    features.mkdir(parents=True)
    (features / "FEAT-001.yaml").write_text(yaml.safe_dump(plan(task("TASK-001"))))
    tasks = tmp_path / ".autobuild" / "tasks"
    tasks.mkdir()
    (tasks / "TASK-001.md").write_text("---\ntitle: x\n---\nUse the stdlib only.\n")
    assert load_plan(tmp_path, "FEAT-001").task("TASK-001").description == "Use the stdlib only."


def test_load_plan_malformed_yaml_and_mismatched_id(tmp_path: Path) -> None:
    features = tmp_path / ".autobuild" / "features"
    features.mkdir(parents=True)
    (features / "FEAT-001.yaml").write_text("id: [unclosed\n")
    with pytest.raises(PlanError, match="malformed YAML at line"):
        load_plan(tmp_path, "FEAT-001")
    (features / "FEAT-001.yaml").write_text(yaml.safe_dump(plan(task("A")) | {"id": "FEAT-009"}))
    with pytest.raises(PlanError, match="make them match"):
        load_plan(tmp_path, "FEAT-001")
    with pytest.raises(PlanError, match="not found"):
        load_plan(tmp_path, "FEAT-404")


@st.composite
def dags(draw: st.DrawFn) -> list[TaskSpec]:
    count = draw(st.integers(min_value=1, max_value=12))
    tasks = []
    for index in range(count):
        deps = draw(st.lists(st.integers(min_value=0, max_value=max(0, index - 1)), max_size=3, unique=True))
        deps = [f"T{d}" for d in deps if d < index]
        tasks.append(TaskSpec(id=f"T{index}", name="t", dependencies=deps))
    return tasks


@given(dags())
@settings(max_examples=150, deadline=None)
def test_computed_groups_respect_dependencies(tasks: list[TaskSpec]) -> None:
    groups = compute_groups(tasks)
    position = {tid: index for index, group in enumerate(groups) for tid in group}
    assert sorted(position) == sorted(t.id for t in tasks)
    for spec in tasks:
        for dep in spec.dependencies:
            assert position[dep] < position[spec.id]
    # Explicit groups equal to the computed ones always validate.
    data = plan(*[t.model_dump() for t in tasks], orchestration={"parallel_groups": groups})
    parse_plan(data, "p")


def write_plan(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / ".autobuild" / "features"
    folder.mkdir(parents=True)
    (folder / "FEAT-001.yaml").write_text(text)
    return tmp_path


def test_yaml_alias_bomb_is_refused_with_a_short_message(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))
    bomb += "id: FEAT-001\nname: bomb\ntasks: [*j]\n"
    with pytest.raises(PlanError) as caught:
        load_plan(write_plan(tmp_path, bomb), "FEAT-001")
    assert "too large" in str(caught.value) and len(str(caught.value)) < 200
    many = "x: &x 1\n" + "".join(f"k{i}: *x\n" for i in range(150)) + "id: FEAT-001\n"
    with pytest.raises(PlanError, match="YAML aliases"):
        load_plan(write_plan(tmp_path / "many", many), "FEAT-001")


def test_oversized_plan_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="byte limit"):
        load_plan(write_plan(tmp_path, "id: FEAT-001\n" + "#" * 1_100_000 + "\n"), "FEAT-001")


def test_a_ten_thousand_task_chain_in_reverse_order_validates() -> None:
    ids = [f"T{i}" for i in range(10_000)]
    tasks = [task(ids[i], *([ids[i - 1]] if i else [])) for i in reversed(range(len(ids)))]
    parsed = parse_plan(plan(*tasks), "chain.yaml")
    assert compute_groups(parsed.tasks)[0] == ["T0"] and len(compute_groups(parsed.tasks)) == 10_000
    with pytest.raises(PlanError, match="dependency cycle"):
        parse_plan(plan(*[task(ids[0], ids[-1]), *tasks[:-1]]), "cycle.yaml")


def test_control_characters_are_shown_escaped() -> None:
    parsed = parse_plan(plan(task("T1", name="evil \x1b[2J\x1b]0;pwned\x07 name")), "p.yaml")
    name = parsed.task("T1").name
    assert "\x1b" not in name and "\x07" not in name and "\\x1b[2J" in name


@pytest.mark.parametrize("field", ["name", "verify"])
def test_blank_names_and_verify_commands_are_rejected(field: str) -> None:
    with pytest.raises(PlanError, match="T1"):
        parse_plan(plan(task("T1", **{field: "   "})), "p.yaml")
    with pytest.raises(PlanError):
        parse_plan(plan(task("T1"), **{field: " \t "}), "p.yaml")


def test_error_messages_are_cut_to_a_sane_length() -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(plan(task("T1", complexity="x" * 100_000)), "p.yaml")
    assert len(str(caught.value)) < 300
