"""The solver engine: line-domain counting (C kernel + Python reference), backbone, difficulty ladder.

Public API: ``count``, ``backbone``, ``count_rows``, ``backbone_rows``,
``CountResult``, ``Backbone``; ``engine.ladder.rate`` for SPEC §4 features.
"""

from engine.count import Backbone, CountResult, backbone, backbone_rows, count, count_rows, rows_to_grid

__all__ = ["Backbone", "CountResult", "backbone", "backbone_rows", "count", "count_rows", "rows_to_grid"]
