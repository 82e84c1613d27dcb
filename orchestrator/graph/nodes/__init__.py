"""The task subgraph's nodes; workflow.py wires them, routing.py chooses between them."""
