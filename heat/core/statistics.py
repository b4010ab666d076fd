"""heat statistics (being written)."""

__all__ = []
