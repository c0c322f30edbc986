"""tilelib: the tile core and the SQLite tile library (FORMAT §1–5).

Modules: ``bits`` (encodings), ``symmetry`` (16 transforms), ``rules``,
``tile`` (Tile value, canonical form, hash), ``constraint`` (edge constraints),
``store`` (the library file), ``query`` (edge lookups in all orientations),
``ledger`` (misses, manifests), ``audit`` (library verify), ``rng`` (seeded
stream), ``errors`` (exception types and exit codes).
"""
