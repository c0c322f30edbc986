"""The generator's version stamp (FORMAT §4 ``version``) and its defaults.

Bump ``GENERATOR_VERSION`` whenever a change alters which tiles a seed
produces or how their features are computed: rows are never rewritten, a new
version only adds rows.
"""

GENERATOR_VERSION = 5  # 2: thinning counts capped at 2 n^2 nodes (generator.make.THIN_NODE_CAP)
# 3: generator.complete builds engine.cpsat's model (the one encoding the stitcher shares) with
#    CP-SAT's presolve, LP, symmetry and probing off: other completions of the same boundary
# 4: CP-SAT's SAT inprocessing off as well (engine.cpsat, lean): ~45% less solve time on these
#    small models, same verdicts, some completions differ
# 5: completions decided by the C line-domain search (engine.windows), CP-SAT only for what it
#    leaves undecided: same verdicts, other grids for the same seed (issue 36)

# FORMAT §4: default m_max per tile side.
_M_MAX = {6: 2, 8: 2, 10: 3, 12: 3, 14: 3, 16: 4}


def default_m_max(n: int) -> int:
    """The default isolated multiplicity cap for side n (2 for 6–8, 3 for 10–14, 4 for 16)."""
    from tilelib.bits import check_n

    return _M_MAX[check_n(n)]
