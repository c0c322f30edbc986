"""The players' side of `tiles`: what an agent, a trainer or a person uses to play a day.

- ``client``: the typed HTTP client of ``tiles referee serve`` (retries, Idempotency-Keys, quotas);
- ``sessions``: one run as an agent plays it, over HTTP or in process (the same judging core);
- ``agents``: the reference agents of ``tiles play`` (solver, random);
- ``gym``: the Gymnasium environments (``tiles/Takuzu-v0`` and the flat ``tiles/TakuzuCells-v0``).

It imports the referee (the API's contract ``referee.wire``, the boards, the runs store) and the nightly build
(``boards``: fresh training boards); nothing in ``referee`` or ``daily``
imports it back (tests/test_import_layers.py).
"""
