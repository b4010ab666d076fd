"""Basic linear algebra (being written)."""

__all__ = []
