"""generator package (see docs/ARCHITECTURE.md)."""
