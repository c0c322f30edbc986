"""stitcher package (see docs/ARCHITECTURE.md)."""
