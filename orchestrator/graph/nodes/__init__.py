"""The task subgraph's nodes; workflow.py wires them, routing.py chooses between them.

task.py: initialize, player (and its judgement), ask_human, feedback, finalize.
review.py: the optional pre-check and the coach, with the objective gate.
merge.py: an approved task lands on the feature branch by fast-forward, one at a time.
bring_up.py: conflict turns when bringing approved work up to the feature head conflicts.
turns.py: the one agent-turn helper: budget, reset, session, cost, violations.
budget_question.py: at a budget's cap, an interactive run asks whether to raise it.
"""
