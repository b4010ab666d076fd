"""
Threads for NumPy kernels on CPU blocks (used by core's families and by heat's estimators, e.g.
the cluster kernels; the one place that decides how many threads a process computes with).

NumPy releases the GIL inside its sort and selection kernels, so independent pieces of one local
block (row blocks, groups of lanes) can be processed by several threads at once. The number of
threads follows torch's per-process setting (cores per node / local processes, see
communication.py), so MPI processes and threads do not oversubscribe the cores.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List, Tuple

import torch

__all__ = ["piece_bounds", "run_pieces", "single_threaded_torch", "worker_count"]

_pools: Dict[Tuple[int, int], ThreadPoolExecutor] = {}


def worker_count(pieces: int, elements: int, minimum: int = 1 << 18) -> int:
    """
    How many threads to use for ``pieces`` independent pieces of work over ``elements``
    elements in all: torch's thread count, at most one per piece, and 1 below ``minimum``
    elements (where starting threads costs more than it saves).

    Examples
    --------
    >>> worker_count(pieces=2000, elements=4_000_000)  # with torch.get_num_threads() == 2
    2
    """
    if elements < minimum:
        return 1
    return max(1, min(torch.get_num_threads(), pieces))


def piece_bounds(length: int, workers: int) -> List[Tuple[int, int]]:
    """
    ``workers`` consecutive ``(start, stop)`` ranges covering ``range(length)``, sizes differing
    by at most one.

    Examples
    --------
    >>> piece_bounds(5, 2)
    [(0, 2), (2, 5)]
    """
    cuts = [length * i // workers for i in range(workers + 1)]
    return list(zip(cuts, cuts[1:]))


def run_pieces(work: Callable[[int], None], workers: int) -> None:
    """
    Call ``work(0) ... work(workers - 1)``, on ``workers`` threads when more than one (each call
    must touch its own piece of memory), and re-raise the first exception.

    Examples
    --------
    >>> out = [0, 0]
    >>> run_pieces(lambda i: out.__setitem__(i, i + 1), 2)
    >>> out
    [1, 2]
    """
    if workers <= 1:
        for piece in range(workers):
            work(piece)
        return
    for _ in _pool(workers).map(work, range(workers)):
        pass


def _pool(workers: int) -> ThreadPoolExecutor:
    # keyed by process id: a forked child (e.g. a data-loader worker) has none of the threads
    key = (os.getpid(), workers)
    pool = _pools.get(key)
    if pool is None:
        pool = _pools[key] = ThreadPoolExecutor(workers, thread_name_prefix="heat-numpy")
    return pool


@contextmanager
def single_threaded_torch() -> Iterator[None]:
    """
    torch (and MKL inside it) runs one thread per operation in this section, for callers that
    share the work among threads of their own. A parallel region per small operation makes its
    threads meet at a barrier; on cores shared with other jobs a thread waiting there for a
    descheduled partner costs a time slice. The setting is torch's, for the whole process, and
    is restored on exit.
    """
    previous = torch.get_num_threads()
    if previous == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
