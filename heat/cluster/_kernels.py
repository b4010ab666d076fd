"""
Local kernels of the k-clustering estimators: what one process computes on its block of points.

The k-means iteration is the hot loop, written for speed on CPU:

- the points are stored as the columns of a ``(features, points)`` matrix: both matrix products
  of a chunk then read memory contiguously along the points (about twice as fast on CPU as the
  points along the rows);
- the points are processed in chunks that stay in the CPU caches, and the chunks are shared by
  ``torch.get_num_threads()`` Python threads, each running single-threaded torch kernels with
  reused output buffers: one synchronization per pass instead of one per small torch operation
  (torch's own threads open a parallel region per operation, which costs a lot for small chunks
  and collapses when the cores are shared with other jobs); torch's thread setting is 1 while
  the threads run and restored afterwards;
- per chunk: the squared distances up to a per-point constant, ``||c||^2 - 2 x.c``, with one
  matrix product (the centres are shifted by the data mean first, which keeps float32 precise
  for data far from the origin), the nearest centre as a 0/1 matrix ``(distance == column
  minimum)`` and the labels from it with one more small product (much faster on CPU than
  torch's ``argmin``); exact ties (a point at the same distance from two centres) are detected
  and resolved to the lowest index, as ``argmin`` does;
- the per-cluster sums with one more matrix product of the chunk and the 0/1 matrix, summed
  over the chunks in float64.

On GPUs a block is one chunk and one thread.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import torch

from ..core.parallel import single_threaded_torch

__all__: List[str] = []

# points per chunk: about this many distance entries (k x points) at a time; chunks large enough
# that the ~10 torch calls per chunk cost little, small enough to stay in the CPU caches
_CHUNK_ENTRIES = 1 << 18
_MIN_CHUNK, _MAX_CHUNK = 256, 32768
# below this many distance entries one thread does the work
_MIN_THREADED_ENTRIES = 1 << 16

_pools: Dict[Tuple[int, int], ThreadPoolExecutor] = {}


# ---------------------------------------------------------------------------------------------
# chunks and threads
# ---------------------------------------------------------------------------------------------
def chunk_size(n_centres: int, device: torch.device) -> int:
    """Points per chunk for ``n_centres`` centres: cache-sized on CPU, everything on GPU."""
    if device.type != "cpu":
        return 1 << 62
    return max(_MIN_CHUNK, min(_MAX_CHUNK, _CHUNK_ENTRIES // max(1, n_centres)))


@contextmanager
def _single_threaded_torch(threads: int) -> Iterator[None]:
    """torch uses one thread per operation inside when ``threads`` of our own share the work."""
    if threads <= 1:
        yield
        return
    with single_threaded_torch():
        yield


# the thread budgets of the open own_threads sections (innermost last)
_budgets: List[int] = []


@contextmanager
def own_threads() -> Iterator[None]:
    """
    A section (a whole fit) in which torch runs single-threaded and the kernels share their
    passes over ``torch.get_num_threads()`` Python threads of their own: torch's thread setting
    changes once, not twice per pass, and no torch operation in between opens a parallel region
    whose threads would then spin (which costs a lot when the cores are shared).
    """
    budget = _budgets[-1] if _budgets else torch.get_num_threads()
    _budgets.append(budget)
    try:
        with _single_threaded_torch(budget):
            yield
    finally:
        _budgets.pop()


def _thread_count(points: int, entries_per_point: int, device: torch.device) -> int:
    """How many threads share a pass over ``points`` points (1 for small blocks and GPUs)."""
    if device.type != "cpu" or points * entries_per_point < _MIN_THREADED_ENTRIES:
        return 1
    budget = _budgets[-1] if _budgets else torch.get_num_threads()
    return max(1, min(budget, points // _MIN_CHUNK))


def in_threads(
    work: Callable[[int, int], object], points: int, device, entries_per_point: int = 1
) -> list:
    """
    ``work(start, stop)`` on consecutive ranges covering ``range(points)``, one per thread (a
    single call for small work or on GPUs); the list of what the calls returned.
    """
    threads = _thread_count(points, entries_per_point, device)
    bounds = [(points * i // threads, points * (i + 1) // threads) for i in range(threads)]
    if threads <= 1:
        return [work(*bounds[0])]
    key = (os.getpid(), threads)  # a forked child has none of the parent's threads
    pool = _pools.get(key)
    if pool is None:
        pool = _pools[key] = ThreadPoolExecutor(threads, thread_name_prefix="heat-cluster")
    with _single_threaded_torch(threads):
        return list(pool.map(lambda bound: work(*bound), bounds))


# ---------------------------------------------------------------------------------------------
# the assignment of one chunk
# ---------------------------------------------------------------------------------------------
def distance_offsets(
    centres: torch.Tensor, shift: torch.Tensor
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    The shifted centres ``c - shift`` and the per-centre constants with which
    ``offsets - 2 x.(c - shift) = ||x - c||^2 - ||x - shift||^2``: the squared distance up to a
    per-point constant, which does not change the nearest centre.
    """
    shifted64 = centres.double() - shift
    offsets = (shifted64 * shifted64).sum(1) + 2.0 * (shifted64 @ shift)
    return shifted64.to(centres.dtype), offsets.to(centres.dtype).unsqueeze(1)


class _Chunks:
    """Per-thread buffers for chunks of ``width`` points, reused (``out=``) chunk after chunk."""

    def __init__(self, centres: torch.Tensor, shift: torch.Tensor, width: int, rows: int):
        k = centres.shape[0]
        self.width = width
        self.shifted, self.offsets = distance_offsets(centres, shift)
        self.distances = centres.new_empty((k, width))
        self.minima = centres.new_empty(width)
        self.onehot = centres.new_empty((k, width))
        self.products = centres.new_empty((rows, k))
        # labels and multiplicities of all points in one product with the 0/1 matrix
        self.weights = centres.new_ones((2, k))
        self.weights[0] = torch.arange(k, dtype=centres.dtype, device=centres.device)
        self.labels = centres.new_empty((2, width))

    def nearest(self, block: torch.Tensor) -> torch.Tensor:
        """
        The 0/1 matrix ``(k, n)`` of the nearest centres of the columns of ``block`` ``(f, n)``:
        ``distance == column minimum``, so a point equally near to two centres has two ones
        (see :meth:`resolve_ties`).
        """
        if block.shape[1] == self.width:  # a full chunk: no allocations
            distances = torch.addmm(
                self.offsets, self.shifted, block, alpha=-2.0, out=self.distances
            )
            return torch.eq(distances, torch.amin(distances, 0, out=self.minima), out=self.onehot)
        distances = torch.addmm(self.offsets, self.shifted, block, alpha=-2.0)
        return (distances == distances.amin(0)).to(block.dtype)

    @staticmethod
    def resolve_ties(onehot: torch.Tensor) -> None:
        """Keep only the first one of every column, as ``argmin`` picks the lowest index."""
        tied = (onehot.sum(0) > 1).nonzero().squeeze(1)
        columns = onehot[:, tied]
        columns *= columns.cumsum(0) <= 1
        onehot[:, tied] = columns

    def products_with(self, onehot: torch.Tensor, block: torch.Tensor) -> torch.Tensor:
        """``block @ onehot.T``: per-cluster sums of the rows of ``block``."""
        if onehot.shape[1] == self.width:
            return torch.mm(block, onehot.T, out=self.products)
        return block @ onehot.T

    def assign(self, block: torch.Tensor) -> torch.Tensor:
        """The nearest centre of every column of ``block`` (labels in the data's type)."""
        onehot = self.nearest(block)
        if onehot.shape[1] == self.width:
            labels = torch.mm(self.weights, onehot, out=self.labels)
        else:
            labels = self.weights @ onehot
        if labels[1].sum().item() != block.shape[1]:  # ties
            self.resolve_ties(onehot)
            labels[0] = self.weights[0] @ onehot
        return labels[0]


# ---------------------------------------------------------------------------------------------
# k-means
# ---------------------------------------------------------------------------------------------
def with_ones(points: torch.Tensor) -> torch.Tensor:
    """
    The points as the columns of a ``(features + 1, points)`` matrix whose last row is ones:
    the layout :func:`sums_and_counts` works on (one copy of the points). With the ones row,
    one matrix product gives the per-cluster sums and the counts together.
    """
    columns = points.new_empty((points.shape[1] + 1, points.shape[0]))
    columns[-1] = 1

    def work(start: int, stop: int) -> None:
        columns[:-1, start:stop] = points[start:stop].T

    in_threads(work, points.shape[0], points.device, points.shape[1])
    return columns


def sums_and_counts(
    columns: torch.Tensor,
    centres: torch.Tensor,
    shift: torch.Tensor,
    weights: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    One assignment pass: the float64 per-cluster sums ``(k, f)`` and counts ``(k,)`` of the
    points assigned to their nearest centre, weighted by ``weights`` if given. ``columns`` is
    the ``(f + 1, n)`` layout of :func:`with_ones`.
    """
    k = centres.shape[0]
    rows, points = columns.shape
    coordinates = columns[:-1]
    chunk = chunk_size(k, columns.device)

    def work(start: int, stop: int):
        totals = torch.zeros((rows, k), dtype=torch.float64, device=columns.device)
        chunks = _Chunks(centres, shift, min(chunk, max(stop - start, 1)), rows)
        for begin in range(start, stop, chunk):
            end = min(begin + chunk, stop)
            onehot = chunks.nearest(coordinates[:, begin:end])
            if weights is not None:
                if onehot.sum().item() != end - begin:
                    chunks.resolve_ties(onehot)
                onehot *= weights[begin:end]
            products = chunks.products_with(onehot, columns[:, begin:end])
            # the ones row counts the points: more than the chunk's means ties (rare)
            if weights is None and products[-1].sum().item() != end - begin:
                chunks.resolve_ties(onehot)
                products = chunks.products_with(onehot, columns[:, begin:end])
            totals += products
        return totals

    totals = sum(in_threads(work, points, columns.device, k))
    return totals[:-1].T, totals[-1]


def labels_and_inertia(
    columns: torch.Tensor,
    centres: torch.Tensor,
    shift: torch.Tensor,
    with_inertia: bool = True,
) -> Tuple[torch.Tensor, float]:
    """
    The nearest centre of every point (column of ``columns`` ``(f, n)``, or the first ``f``
    rows of a :func:`with_ones` layout; int64) and the sum of squared distances to it, computed
    from the differences (exact, unlike the expansion used for the assignment); 0.0 without
    ``with_inertia``.
    """
    k, features = centres.shape
    coordinates = columns[:features]
    points = coordinates.shape[1]
    labels = torch.empty(points, dtype=torch.int64, device=columns.device)
    chunk = chunk_size(k, columns.device)
    centre_columns = centres.T.contiguous()

    def work(start: int, stop: int):
        inertia = torch.zeros((), dtype=torch.float64, device=columns.device)
        chunks = _Chunks(centres, shift, min(chunk, max(stop - start, 1)), features)
        for begin in range(start, stop, chunk):
            block = coordinates[:, begin : min(begin + chunk, stop)]
            chunk_labels = labels[begin : begin + block.shape[1]]
            chunk_labels.copy_(chunks.assign(block))
            if with_inertia:
                differences = block - torch.index_select(centre_columns, 1, chunk_labels)
                inertia += differences.square_().sum(0).sum(dtype=torch.float64)
        return inertia

    parts = in_threads(work, points, columns.device, k)
    return labels, float(sum(part.item() for part in parts))


# ---------------------------------------------------------------------------------------------
# k-medians and k-medoids
# ---------------------------------------------------------------------------------------------
def nearest_manhattan(x: torch.Tensor, centres: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Nearest centre of every row of ``x`` in L1 distance (int64) and that distance (float64)."""
    labels = torch.empty(x.shape[0], dtype=torch.int64, device=x.device)
    distances = torch.empty(x.shape[0], dtype=torch.float64, device=x.device)
    chunk = chunk_size(centres.shape[0], x.device)
    for begin in range(0, x.shape[0], chunk):
        rows = x[begin : begin + chunk]
        nearest = torch.cdist(rows, centres, p=1.0).min(1)
        labels[begin : begin + rows.shape[0]] = nearest.indices
        distances[begin : begin + rows.shape[0]] = nearest.values
    return labels, distances


def squared_distances(x: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
    """Exact squared euclidean distances ``(len(x), len(centres))``, from the differences."""
    return torch.cdist(x, centres, p=2.0, compute_mode="donot_use_mm_for_euclid_dist").square_()
