"""heat sets (being written)."""

__all__ = []
