"""Test and demo infrastructure shipped with the package: the scripted model server and its scenarios, and
the sample repositories (repos.py) tests and the demo run it against.

Production code never imports this package; tests and `make demo` point the real CLI at it.

scripted_model.py: the scripted Anthropic Messages API on 127.0.0.1 that the real CLI talks to.
scenario.py: which response each role, task and turn's session gets at each step.
requests.py: what the scripted model reads from a request: which session and step it is.
scripted_agents.py: scripted results behind the `Agents` protocol, for the in-process tier.
repos.py: the sample repositories and the environment that points the real CLI at the scripted model.
sample_venv.py: the sample repositories' own virtualenv (pytest, pip, setuptools; nothing else).
"""
