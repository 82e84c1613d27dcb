"""The feature plan: its model (model.py), cross-field rules (rules.py), GuardKit's fields (fields.py), plan and
task files on disk (files.py), and the planner agent's side (planner.py)."""
