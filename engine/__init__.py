"""The solver engine: line-domain counting (C kernel + Python reference), backbone, difficulty ladder.

Public API:
  ``count(puzzle, k=2, *, distinct=True, keep=None, max_nodes=None, find=False) -> CountResult``
  ``backbone(puzzle) -> Backbone`` (cells on which every solution agrees)
  ``count_rows`` / ``backbone_rows``: the same on row ints, for hot loops
  ``engine.ladder.rate(puzzle) -> LadderResult`` (FORMAT §4 features)
  ``engine.report.solve_report``: what ``tiles solve`` prints
Everything runs in the C extension ``engine._kernel`` unless ``impl="python"`` asks for the
readable reference (``engine.reference``, ``engine.ladder``), which gives identical results
and node counts.
"""

from engine.count import Backbone, CountResult, backbone, backbone_rows, count, count_rows, rows_to_grid

__all__ = ["Backbone", "CountResult", "backbone", "backbone_rows", "count", "count_rows", "rows_to_grid"]
