"""Bearer-token authentication for a worker that listens beyond loopback: `ORCHESTRATOR_AUTH_TOKEN`, compared in
constant time; Aegra loads it (`auth.path` of the generated config)."""

from __future__ import annotations

import hmac

from langgraph_sdk import Auth

from orchestrator.settings import environment

auth = Auth()


@auth.authenticate
async def authenticate(headers: dict[str, str]) -> dict[str, object]:
    """The one identity of a token holder; anything else is 401. (Aegra 0.11 passes the request's headers as one
    dict, positionally, and wants a user dict with an `identity`.)"""
    expected = environment().auth_token.strip()
    given = next((value for key, value in headers.items() if key.lower() == "authorization"), "")
    scheme, _, token = given.partition(" ")
    if not expected or scheme.lower() != "bearer" or not hmac.compare_digest(token.strip(), expected):
        raise Auth.exceptions.HTTPException(status_code=401, detail="send ORCHESTRATOR_AUTH_TOKEN as a bearer token")
    return {"identity": "autobuild", "is_authenticated": True}
