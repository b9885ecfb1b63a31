"""Schemathesis hooks for scripts/contract-checks.sh (loaded through SCHEMATHESIS_HOOKS).

One narrow exception, everything else is judged by `--checks all` as is:

`cursor` is an opaque value signed by the server (HMAC, bound to company, sort and filters;
docs/decisions/0003-keyset-cursors.md). A string that matches the parameter's schema but was not
issued by the server cannot be valid, so the documented answer to a generated one is
`400 invalid_cursor` — while the positive-data check expects a schema-valid request to be
accepted. Only that exact combination is dropped: a positive-data rejection whose response is 400
with code `invalid_cursor` for a request that carried a `cursor`. Real cursors are exercised by the
stateful phase (the contract's links) and by the api's own tests (walks with next/prev).
"""

import json

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if not isinstance(failure, RejectedPositiveData) or response.status_code != 400:
        return True
    if "cursor" not in (case.query or {}):
        return True
    try:
        code = json.loads(response.content).get("code")
    except (ValueError, AttributeError):
        return True
    return code != "invalid_cursor"
