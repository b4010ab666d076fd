"""heat random (being written)."""

__all__ = []
