"""Schemathesis over `tiles referee serve`: every operation of the served ``/openapi.json`` fuzzed
with every check schemathesis has (``checks all``), in positive and negative modes, through all its
phases (examples, coverage, fuzzing, stateful), derandomized with a fixed seed and a fixed number of
examples per operation. Twice: anonymous (random ids: mostly 404s and 400s), and as a player (the
path's run and day pinned to a run created first, its bearer token sent), so the moves write gets
past auth and is judged. It must find nothing: no 5xx, no status or media type the document does not
declare, no answer off its schema, no malformed request accepted, no valid one refused.

Schemathesis runs here through its engine (``schemathesis.engine.from_schema``, what ``schemathesis
run`` drives) inside one pytest test per pass: its pytest loader for a schema served by a fixture
(``schemathesis.pytest.from_fixture``) does not work with pytest 9 (it sets ``request.node._nodeid``,
which pytest 9 no longer has).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace

import pytest
import schemathesis
from referee_support import board21
from schemathesis import Config
from schemathesis.engine import Status, events, from_schema
from serve_support import serving

from players.client import Client

DAY, FUTURE = "2026-11-29", "2099-01-01"
SEED = 20261129
MAX_EXAMPLES = 50


@pytest.fixture(scope="module")
def base(tmp_path_factory, module_runs_target):
    """The service over each backend in turn: hostile bodies reach SQLite and PostgreSQL alike."""
    fx = board21(tmp_path_factory)
    d = tmp_path_factory.mktemp("fuzz")
    (d / "past.json").write_text(fx.manifest.to_json())
    (d / "future.json").write_text(replace(fx.manifest, day=FUTURE).to_json())
    # the default quotas stay on (fuzzing makes hundreds of runs from one address: their 429s are
    # checked against the document too), over 5-second windows so a player waits seconds, not a minute
    with serving(
        fx.lib_path,
        module_runs_target,
        [d / "past.json", d / "future.json"],
        "--max-moves",
        "8",
        "--quota-window",
        "5",
        log=d / "serve.log",
    ) as url:
        yield url


MOVES = "/api/v1/runs/{run}/moves"


def config(**extra) -> Config:
    return Config.from_dict(
        {
            "seed": SEED,
            "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
            "checks": {"enabled": True},  # every check schemathesis has ("checks all")
            "request-timeout": 30,
            "operations": [
                {
                    "include-path": MOVES,
                    "include-method": "POST",
                    # every check on, missing_required_header and ignored_auth too: a write without the
                    # run's token is the 401 (with its Bearer challenge) this operation declares, RFC 6750
                    "checks": {
                        # a batch over --max-moves (the document's maxItems) is refused with the 413 this
                        # operation declares: a rejection, which the default list (no 413) does not know
                        "negative_data_rejection": {
                            "expected-statuses": [
                                "400",
                                "401",
                                "403",
                                "404",
                                "405",
                                "406",
                                "409",
                                "413",
                                "415",
                                "422",
                                "428",
                                "429",
                                "5xx",
                            ]
                        },
                    },
                }
            ],
            **extra,
        }
    )


def pinned_away(case, pins: dict) -> bool:
    """True if a negative case's only invalid part was a path parameter our ``parameters`` pin
    replaced before sending (schemathesis judges the case as drawn, not as sent): the server got a
    valid request, so accepting it is right."""
    meta = case.meta
    negative = {loc.name for loc, c in meta.components.items() if c.mode.is_negative}
    data = meta.phase.data
    names = {getattr(data, "parameter", None)} | {m.parameter for m in getattr(data, "mutations", ()) or ()}
    names.discard(None)
    return negative == {"PATH"} and bool(names) and names <= set(pins)


def other_run_in_body(case, pins: dict) -> bool:
    """True for a moves request whose body names another run than the (pinned) path: the 400 that
    MovesRequest.run documents ("must equal the run in the path"), a rule across two parameters no
    schema can state. The fuzzing phase keeps the body's run pinned too (``body.run``); the coverage
    phase does not apply body pins, so its cases come here."""
    body = case.body if isinstance(case.body, dict) else {}
    return case.operation.path == MOVES and "run" in body and body["run"] not in (None, pins["run"])


def exempt(check: str, case, pins: dict) -> bool:
    return (check == "negative_data_rejection" and pinned_away(case, pins)) or (
        check == "positive_data_acceptance" and other_run_in_body(case, pins)
    )


def fuzz(schema, pins: dict | None = None) -> tuple[list[str], Counter, Counter]:
    """Run the engine; (failures as text, check runs by name, answers by (method, path, mode, status))."""
    failures, ran, statuses = [], Counter(), Counter()
    t_phase = time.monotonic()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            rec = event.recorder
            for case_id, nodes in rec.checks.items():
                for node in nodes:
                    ran[node.name] += 1
                    if node.status == Status.FAILURE and node.failure_info is not None:
                        f = node.failure_info.failure
                        if pins and case_id in rec.cases and exempt(node.name, rec.cases[case_id].value, pins):
                            continue
                        code = getattr(f, "status_code", "")
                        failures.append(
                            f"[{event.phase.name}] {f.operation}: {f.title} ({code}): {f.message}\n"
                            f"    {node.failure_info.code_sample}"
                        )
            for case_id, inter in rec.interactions.items():
                if inter.response is not None and case_id in rec.cases:
                    case = rec.cases[case_id].value
                    mode = case.meta.generation.mode.name if case.meta is not None else "-"
                    statuses[
                        (case.operation.method.upper(), case.operation.path, mode, inter.response.status_code)
                    ] += 1
        elif isinstance(event, events.PhaseStarted):
            t_phase = time.monotonic()
        elif isinstance(event, events.PhaseFinished):
            print(f"  phase {event.phase.name}: {time.monotonic() - t_phase:.1f}s")
        elif isinstance(event, events.NonFatalError):
            failures.append(f"error in {event.label}: {event.info.title}: {event.info.message}")
        elif isinstance(event, events.FatalError):
            failures.append(f"fatal: {event.exception!r}")
        elif isinstance(event, events.EngineFinished):
            failures += [f"after run: {f.title}: {f.message}" for f in event.failures]
    return sorted(set(failures)), ran, statuses


def assert_exercised(ran: Counter, statuses: Counter) -> None:
    """Every operation was called in both modes, and the checks that judge each answer ran."""
    modes = {}
    for (method, path, mode, _st), _n in statuses.items():
        modes.setdefault((method, path), set()).add(mode)
    assert len(modes) >= 15 and all({"POSITIVE", "NEGATIVE"} <= m for m in modes.values()), modes
    for name in (
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
        "positive_data_acceptance",
        "missing_required_header",
        "ignored_auth",
        "response_headers_conformance",
    ):
        assert ran[name] > 100, (name, ran[name])


@pytest.mark.slow
def test_anonymous(base):
    schema = schemathesis.openapi.from_url(base + "/openapi.json", config=config())
    t0 = time.monotonic()
    failures, ran, statuses = fuzz(schema)
    print(f"anonymous: {time.monotonic() - t0:.1f}s, {sum(statuses.values())} requests")
    assert failures == [], "\n".join(failures[:20])
    assert_exercised(ran, statuses)


@pytest.mark.slow
def test_player(base):
    with Client(base, max_wait=30) as c:  # a player, as a player's client does: waits out a 429
        made = c.create_run(DAY, player="fuzz")
    run, token = made.run, made.token
    pins = {"run": run, "day": DAY}
    # The body's optional 'run' must equal the path's (a 400 otherwise, as MovesRequest says): a rule
    # across two parameters no schema can state, so the pinned run goes in the body too.
    schema = schemathesis.openapi.from_url(
        base + "/openapi.json",
        config=config(
            headers={"Authorization": f"Bearer {token}"},
            parameters={"body.run": run, **{f"path.{k}": v for k, v in pins.items()}},
        ),
    )
    t0 = time.monotonic()
    failures, ran, statuses = fuzz(schema, pins)
    print(f"player: {time.monotonic() - t0:.1f}s, {sum(statuses.values())} requests")
    assert failures == [], "\n".join(failures[:20])
    assert_exercised(ran, statuses)
    # past auth: the moves write judged batches (200) and refused ones off the frontier (409)
    answers = {st for (m, path, _mode, st) in statuses if (m, path) == ("POST", MOVES)}
    assert {200, 409} <= answers, answers
    assert statuses[("GET", "/api/v1/runs/{run}/tiles/{tile}", "POSITIVE", 200)] > 0
