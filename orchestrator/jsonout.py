"""The shape of every `--json` document and event: a schema version, ISO-8601 UTC times, costs to 4 decimals.

The shipped JSON Schemas (`orchestrator/schemas/*.schema.json`) describe what these produce; tests validate
real outputs against them. A document is an object carrying `schema_version`; a list document (`history`,
`status` without a feature) keeps its rows as objects that each carry `schema_version`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

SCHEMA_VERSION = 1


def iso_utc(value: float | str | datetime | None) -> str | None:
    """Epoch seconds, an aware datetime or an ISO string (LangGraph checkpoint `ts`) as ISO-8601 UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif isinstance(value, int | float):
        moment = datetime.fromtimestamp(float(value), UTC)
    else:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_utc() -> str:
    """The current time as ISO-8601 UTC."""
    return str(iso_utc(datetime.now(UTC)))


def usd(value: float | int | str | None) -> float:
    """A cost in USD, rounded to 4 decimals (what every output shows)."""
    return round(float(value or 0.0), 4)


def versioned(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with `schema_version` first."""
    return {"schema_version": SCHEMA_VERSION, **{k: v for k, v in data.items() if k != "schema_version"}}


def _tidy(value: Any) -> Any:
    """Costs (any `…usd` key) rounded to 4 decimals, at any depth."""
    if isinstance(value, dict):
        return {key: usd(item) if str(key).endswith("usd") and isinstance(item, int | float) and
                not isinstance(item, bool) else _tidy(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_tidy(item) for item in value]
    return value


def dumps(data: Any) -> str:
    """A document as one line: objects get `schema_version`, a list's object rows each get it."""
    data = _tidy(data)
    if isinstance(data, dict):
        data = versioned(data)
    elif isinstance(data, list):
        data = [versioned(row) if isinstance(row, dict) else row for row in data]
    return json.dumps(data, default=str, ensure_ascii=False)
