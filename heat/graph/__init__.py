"""
Graphs over distributed samples (``ht.graph``): :class:`Laplacian`, the (normalized) Laplacian
of a similarity graph, as spectral methods use it.
"""

from .laplacian import Laplacian  # noqa: F401

__all__ = ["Laplacian"]
