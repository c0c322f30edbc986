"""Library trust: what proves a tile library file before anything reads it, and what rebuilds one
that fails.

- ``checks``: the per-row proofs (every tile row audited, every stored manifest parsed by the
  referee's own reader, the schema proven by SQLite's reading) and the verified watermark;
- ``repair``: a clean library written from a damaged or hostile one, each row proven on the way.

Below ``remote`` (a pulled snapshot is proven here before it is merged), ``daily`` (a build refuses
a library these checks fail) and ``tiles_cli``; above ``referee``, whose manifest reader it uses.
``referee`` itself is the authority over days and runs, not over the library file.
"""
