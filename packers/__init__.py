"""packers package (see docs/ARCHITECTURE.md)."""
