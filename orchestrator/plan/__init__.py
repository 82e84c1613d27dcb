"""The feature plan: its model, its rules, its files on disk, and the planner agent's side.

model.py: the plan model: loads `.autobuild/features/<ID>.yaml` (or a plan file where it lies).
ids.py: feature and task ids: one pattern matched whole, at most 64 characters, wherever an id enters.
rules.py: the cross-field rules pydantic can't express: ids, dependencies, cycles, groups.
fields.py: fields that only inform, and GuardKit's own: accepted with a warning.
files.py: plan and task files on disk: bounded YAML, task markdown.
planner.py: `plan "description"`: the planner's plan validated, regrouped and written.
replacement.py: a task replaced by smaller ones (`--replan`): the plan a run works from.
"""
