"""Markdown prompt templates (front-matter + body), shipped in the wheel and loaded by name by agents.prompts."""
