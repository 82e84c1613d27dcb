"""AutoBuild orchestrator: the LangGraph layer (plan, state, graphs, persistence, CLI)."""

__version__ = "0.1.0"
