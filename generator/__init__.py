"""The tile generator (FORMAT §4, §8).

- ``generator.solution``: a random valid n×n solution from a seeded stream.
- ``generator.complete``: CP-SAT completion around fixed boundary cells (None = nofit).
- ``generator.thin``: seeded thinning under m_max and the seam_mask pinning invariant.
- ``generator.features``: FORMAT §4 features from the solution list and the ladder.
- ``generator.make``: one tile end to end (``make_tile``, ``GenParams``, ``Targets``).
- ``generator.batch``: K tiles over processes, appended to a library.
- ``generator.version``: ``GENERATOR_VERSION`` and the default m_max per n.
"""
