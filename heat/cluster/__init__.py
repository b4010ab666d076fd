"""
Clustering of distributed samples (``ht.cluster``), with scikit-learn's estimator conventions:
:class:`KMeans`, :class:`KMedians`, :class:`KMedoids`, :class:`Spectral`, and the
:class:`BatchParallelKMeans` / :class:`BatchParallelKMedians` that cluster every process's
samples locally and then the local centres.
"""

from .batchparallelclustering import BatchParallelKMeans, BatchParallelKMedians  # noqa: F401
from .kmeans import KMeans  # noqa: F401
from .kmedians import KMedians  # noqa: F401
from .kmedoids import KMedoids  # noqa: F401
from .spectral import Spectral  # noqa: F401

__all__ = [
    "BatchParallelKMeans",
    "BatchParallelKMedians",
    "KMeans",
    "KMedians",
    "KMedoids",
    "Spectral",
]
