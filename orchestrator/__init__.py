"""AutoBuild orchestrator: the LangGraph layer (plan, state, graphs, persistence, CLI). Never imports the SDK.

Its packages, lowest layer first (tests/unit/test_layering.py), then the modules beside them on the lowest layer:

repo/: the target repository: git behind one guarded write path, worktrees, the per-repository lock.
gate/: the objective gate: which command judges, in which environment, and what its runs mean.
plan/: the feature plan: its model, rules and files, and the planner agent's side.
store/: where a run's facts are kept: checkpoint stores, their read-only readers, traces, pauses.
views/: what a person sees: the live view, reports, pictures, notifications; never the graph.
graph/: LangGraph: state, routers, the task subgraph's nodes, the scheduler, the graph factories.
landing/: after a run: review, land, discard and the pull request.
web/: the page on the runs (`autobuild ui`): live views, answers and notes, behind a token.
server/: workers on Aegra and their clients.
cli/: the command line, thin over the typed core.
schemas/: the JSON Schemas of every `--json` document and event.
settings/: one reader per setting, frozen once loaded: flags over `ORCHESTRATOR_*` over `.autobuild/config.yaml`.
__main__.py: `python -m orchestrator`.
causes.py: why a task stopped, typed: what replanning, notifications and the scorecard decide on.
errors.py: the one error tree; the CLI maps each branch to an exit code.
events.py: the one event model, as the stream writer and the traces carry it.
facts.py: what a run produces: outcomes, results, reviews, gate runs; views and readers import it.
jsonout.py: the shape of every `--json` document: a schema version, ISO-8601 UTC times.
processes.py: the one module that starts subprocesses (own session, killpg on timeout or cancel).
sandbox.py: bubblewrap for our own subprocesses (the gate, setup) and the agents' sandbox rules.
sandbox_tmp.py: which of the host's /tmp entries a sandboxed command sees (only those it can need).
text.py: text from plans, agents and tools made safe to show on a terminal.
"""

__version__ = "0.1.0"
