"""LangGraph layer: state, routers, nodes, the readiness scheduler and the graph factories (`workflow.py`)."""
