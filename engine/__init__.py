"""engine package (see docs/ARCHITECTURE.md)."""
