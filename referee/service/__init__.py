"""The referee service (``tiles referee serve``): the daily boards played over HTTP.

- ``boards``: a day's board loaded once and held in memory, and the pure views of it
  (public board, given cells, a tile's puzzle in board position);
- ``runs``: runs, tokens and moves in the runs database, judged by ``referee.judge.Judge.record``
  (the same core and schema as ``tiles referee judge``);
- ``analysis``: reward per batch and mean n of solved tiles, per run and per day;
- ``app``: the FastAPI app (JSON API under ``/api/v1``, OpenAPI at ``/docs``, the page at ``/``).
"""
