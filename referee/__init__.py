"""The referee (FORMAT §9–10): anyone with a manifest and the library file can check the day's board.

Modules: ``manifest`` (the Manifest value and its one JSON text), ``board`` (rebuild values, owners
and givens; the seam check), ``frontier`` (FORMAT §10.4 propagation, the global count, clue
placement), ``verify`` (the five checks in FORMAT order, first failure named), ``judge`` (runs and
moves in SQLite), ``records`` (a tile as JSON), ``render`` (the board picture).
"""
