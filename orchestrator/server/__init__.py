"""Workers and their clients: `autobuild serve` runs the `autobuild` graph on Aegra (the LangGraph Server API over
Postgres + Redis); `submit` and `--server` reach it through langgraph-sdk."""
