"""Benchmarks (`make bench`): numbers go to docs/benchmarks.md, never into timed test assertions."""
