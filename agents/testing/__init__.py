"""Test and demo infrastructure shipped with the package: the scripted model server and its scenarios, and
the sample repositories (repos.py) tests and the demo run it against.

Production code never imports this package; tests and `make demo` point the real CLI at it.
"""
