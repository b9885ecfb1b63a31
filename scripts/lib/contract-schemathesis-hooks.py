"""Schemathesis hooks for scripts/contract-checks.sh (loaded through SCHEMATHESIS_HOOKS).

Four narrow exceptions, everything else is judged by `--checks all` as is:

`cursor` is an opaque value signed by the server (HMAC, bound to company, sort and filters;
docs/decisions/0003-keyset-cursors.md). A string that matches the parameter's schema but was not
issued by the server cannot be valid, so the documented answer to a generated one is
`400 invalid_cursor` — while the positive-data check expects a schema-valid request to be
accepted. Only that exact combination is dropped: a positive-data rejection whose response is 400
with code `invalid_cursor` for a request that carried a `cursor`. Real cursors are exercised by the
stateful phase (the contract's links) and by the api's own tests (walks with next/prev).

`sort` naming a field twice (`name,-name`) is refused with `400 invalid_parameter` (the `Sort`
parameter's description in api/openapi.yaml): "each field at most once" is not expressible in
the parameter's pattern without back-references, which test generators do not support. Only a
positive-data rejection whose response is 400 `invalid_parameter` naming `sort`, for a request
whose `sort` really repeats a field, is dropped. api/tests/parameters.test.ts covers the answer.

`filter[deleted_since]` of GET /v1/deletions is valid only from the company file's retention
horizon on (its creation, or the last prune: docs/decisions/0009-deletions-feed-and-retention.md):
an older schema-valid time is answered with the documented `410 sync_window_expired`, never an
incomplete list. The horizon is server state no schema can express, so only a positive-data
rejection answered 410 `sync_window_expired` for a request that carried `filter[deleted_since]`
is dropped. api/tests/deletions.test.ts and test/deletions.e2e.test.ts cover the answer.

`sync` is signed by the server like a cursor (docs/decisions/0011-sync-tokens.md): a
generated one is answered `400 invalid_cursor` naming `sync`, and one combined with a time
filter (or `filter[type]` on deletions) `400 invalid_parameter` naming `sync` (the parameter
descriptions say so; "one of these two" is not expressible per parameter). Only those answers, for
a request that carried `sync`, are dropped. api/tests/sync-token.test.ts covers real tokens.
"""

import json

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData


def _response_code(response):
    try:
        return json.loads(response.content).get("code")
    except (ValueError, AttributeError):
        return None


def _names_parameter(response, name):
    try:
        errors = json.loads(response.content).get("errors") or []
    except (ValueError, AttributeError):
        return False
    return any(error.get("parameter") == name for error in errors)


def _repeats_a_sort_field(query):
    sort = query.get("sort")
    if not isinstance(sort, str):
        return False
    fields = [part.lstrip("-") for part in sort.split(",")]
    return len(fields) != len(set(fields))


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if not isinstance(failure, RejectedPositiveData):
        return True
    query = case.query or {}
    code = _response_code(response)
    if response.status_code == 410:
        return not ("filter[deleted_since]" in query and code == "sync_window_expired")
    if response.status_code != 400:
        return True
    if "cursor" in query and code == "invalid_cursor":
        return False
    if "sync" in query and code in ("invalid_cursor", "invalid_parameter"):
        if _names_parameter(response, "sync"):
            return False
    if code == "invalid_parameter" and _repeats_a_sort_field(query):
        return False
    return True
