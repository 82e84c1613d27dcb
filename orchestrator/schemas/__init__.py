"""JSON Schemas of every `--json` document and event (package data)."""
