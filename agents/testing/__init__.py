"""Test and demo infrastructure shipped with the package: the scripted model server and its scenarios.

Production code never imports this package; tests and `make demo` point the real CLI at it.
"""
