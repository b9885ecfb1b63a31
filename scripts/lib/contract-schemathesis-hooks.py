"""Schemathesis hooks for scripts/contract-checks.sh (loaded through SCHEMATHESIS_HOOKS).

Six narrow exceptions, everything else is judged by `--checks all` as is:

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

`429 too_many_requests_in_progress` answers a valid request of a key that already has as many
requests in progress as its share (api/README.md, "Fair shares"); the fair-shares pass below
provokes it on purpose. Only a positive-data rejection answered 429 with that code is dropped.

`live=true` on GET /v1/changes asks a stream to stay open, and only a stream can (an `Accept:
application/x-ndjson` or `text/event-stream` request): on a page it is answered `400
invalid_parameter` naming `live` (the parameter's description says so; a header-dependent
parameter is not expressible in its schema). Only that answer, for a request with `live=true`, is
dropped. api/tests/changes-stream.test.ts covers live streams.
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
    if response.status_code == 429 and code == "too_many_requests_in_progress":
        return False
    if response.status_code == 410:
        return not ("filter[deleted_since]" in query and code == "sync_window_expired")
    if response.status_code != 400:
        return True
    if "cursor" in query and code == "invalid_cursor":
        return False
    if query.get("live") in (True, "true") and code == "invalid_parameter" and _names_parameter(response, "live"):
        return False
    if "sync" in query and code in ("invalid_cursor", "invalid_parameter"):
        if _names_parameter(response, "sync"):
            return False
    if code == "invalid_parameter" and _repeats_a_sort_field(query):
        return False
    return True


# The fair-shares pass (scripts/contract-checks.sh, PDA_CONTRACT_OUTCOMES set): a second api whose
# per-key in-progress cap is 1, run with several workers, so that valid requests meet the
# documented `429 too_many_requests_in_progress`; and every third GET /v1/sites asks, sorted by
# created_at with `limit=1`, for the sites changed since PDA_CONTRACT_SINCE: the newest 400 of
# 2,000, changed again after it, which the walk reaches only past the 1,600 others, more than its
# scan budget (projections/src/read/page-budget.ts). So the documented short page (fewer records
# than `limit`, even none, with `has_more: true`) is served. The hooks count both, and the script
# fails unless Schemathesis saw each at least once.
import os
import threading

_OUTCOMES = os.environ.get("PDA_CONTRACT_OUTCOMES")
_SINCE = os.environ.get("PDA_CONTRACT_SINCE", "")
_lock = threading.Lock()
_counts = {"calls": 0, "short_pages": 0, "in_progress_refusals": 0, "streams": 0, "bad_streams": 0}
_sites_calls = 0
_changes_calls = 0
_STREAM_OPS = {"upsert", "delete", "position", "heartbeat", "error"}


def _record(name):
    with _lock:
        _counts[name] += 1
        snapshot = dict(_counts)
    partial = f"{_OUTCOMES}.{threading.get_ident()}"
    with open(partial, "w") as out:
        json.dump(snapshot, out)
    os.replace(partial, _OUTCOMES)


def _header(response, name):
    for key, values in (response.headers or {}).items():
        if key.lower() == name:
            return values[0] if isinstance(values, list) and values else str(values)
    return ""


def _is_in_progress_refusal(response):
    return response.status_code == 429 and _response_code(response) == "too_many_requests_in_progress"


if _OUTCOMES:

    @schemathesis.hook
    def before_call(context, case, **kwargs):
        global _sites_calls, _changes_calls
        if case.method.upper() == "GET" and case.path == "/v1/changes":
            # Every third one as an NDJSON stream of the whole walk: not live, no wait (a page's).
            with _lock:
                _changes_calls += 1
                stream = _changes_calls % 3 == 0
            if stream:
                case.query = {k: v for k, v in (case.query or {}).items() if k not in ("live", "wait")}
                case.headers = {**(case.headers or {}), "Accept": "application/x-ndjson"}
            return
        if case.method.upper() != "GET" or case.path != "/v1/sites":
            return
        with _lock:
            _sites_calls += 1
            steer = _sites_calls % 3 == 0
        if steer:
            query = {k: v for k, v in (case.query or {}).items() if k not in ("sync", "cursor")}
            query["filter[updated_since]"] = _SINCE
            query["sort"] = "created_at"
            query["limit"] = 1
            case.query = query

    def _judge_stream(response):
        # Every line one JSON object with a known op; the last a position that says caught up.
        try:
            lines = [json.loads(line) for line in response.content.decode("utf-8").split("\n") if line]
            ok = (
                len(lines) > 0
                and all(isinstance(line, dict) and line.get("op") in _STREAM_OPS for line in lines)
                and lines[-1].get("op") == "position"
                and lines[-1].get("caught_up") is True
            )
        except (ValueError, UnicodeDecodeError):
            ok = False
        _record("streams" if ok else "bad_streams")

    @schemathesis.hook
    def after_call(context, case, response):
        _record("calls")
        if _is_in_progress_refusal(response):
            _record("in_progress_refusals")
            return
        if response.status_code == 200 and _header(response, "content-type").startswith("application/x-ndjson"):
            _judge_stream(response)
            return
        if response.status_code != 200 or case.path != "/v1/sites":
            return
        try:
            body = json.loads(response.content)
            limit = int((case.query or {}).get("limit", 50))
            if body["meta"]["page"]["has_more"] and len(body["data"]) < limit:
                _record("short_pages")
        except (ValueError, KeyError, TypeError):
            pass
