import threading

import pytest
import torch

from heat.core import parallel as _parallel
from tests.helpers import collective_assert


def test_worker_count_and_bounds():
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        assert _parallel.worker_count(pieces=10, elements=1 << 20) == 3
        assert _parallel.worker_count(pieces=2, elements=1 << 20) == 2
        assert _parallel.worker_count(pieces=10, elements=100) == 1
        assert _parallel.worker_count(pieces=0, elements=1 << 20) == 1
    finally:
        torch.set_num_threads(threads)
    for length in (0, 1, 5, 17):
        for workers in (1, 2, 3, 4):
            bounds = _parallel.piece_bounds(length, workers)
            assert len(bounds) == workers
            assert bounds[0][0] == 0 and bounds[-1][1] == length
            assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
            sizes = [b - a for a, b in bounds]
            assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("workers", [0, 1, 2, 4])
def test_run_pieces(workers):
    seen = [None] * workers
    _parallel.run_pieces(lambda i: seen.__setitem__(i, threading.get_ident()), workers)
    assert all(ident is not None for ident in seen)
    if workers > 1:
        assert threading.get_ident() not in seen  # ran on the pool's threads

    def fail(i):
        if i == workers - 1:
            raise ValueError("piece failed")

    if workers:
        with pytest.raises(ValueError, match="piece failed"):
            _parallel.run_pieces(fail, workers)


def test_pool_per_process(monkeypatch):
    # a forked child gets its own pool (the parent's threads do not exist there)
    pool = _parallel._pool(2)
    assert _parallel._pool(2) is pool
    monkeypatch.setattr(_parallel.os, "getpid", lambda: -1)
    other = _parallel._pool(2)
    collective_assert(other is not pool)
    _parallel._pools.pop((-1, 2)).shutdown()
