"""referee package (see docs/ARCHITECTURE.md)."""
