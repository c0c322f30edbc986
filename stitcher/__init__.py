"""The stitcher (FORMAT §8): fill a packing with library tiles by edge lookup in all 16 orientations.

Public entry point: ``stitcher.stitch.stitch(packing, lib, stream) -> StitchResult``.
"""

from stitcher.stitch import StitchError, StitchResult, StitchStats, stitch

__all__ = ["stitch", "StitchResult", "StitchStats", "StitchError"]
