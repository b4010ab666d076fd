"""
Tests of heat.utils.data.buffers: leases, views counted by the pool, reuse only when free.

The pool is per process (no communication); every rank runs the same checks.
"""

import gc
import threading

import numpy as np
import pytest
import torch

import heat as ht
from heat.utils.data.buffers import BufferPool


def make_pool(**kwargs):
    return BufferPool([(3,), ()], [np.float32, np.int64], **kwargs)


def test_take_gives_a_lease_of_the_layout():
    pool = make_pool()
    buffer = pool.take(10)
    assert buffer.leased and buffer.capacity == 10 and buffer.filled == 0
    assert [a.shape for a in buffer.arrays] == [(10, 3), (10,)]
    assert [a.dtype for a in buffer.arrays] == [np.float32, np.int64]
    assert pool.allocated == 1 and pool.counts() == (0, 0)  # leased buffers are the holder's
    pool.release(buffer)
    assert not buffer.leased and pool.counts() == (0, 1)
    with pytest.raises(ValueError, match="released twice"):
        pool.release(buffer)
    pool.release(None)  # nothing
    with pytest.raises(ValueError, match="not leased"):
        buffer.view()


def test_released_buffers_are_reused_only_when_free():
    pool = make_pool()
    buffer = pool.take(8)
    buffer.arrays[0][:] = 7
    x, y = buffer.view(5)
    assert x.shape == (5, 3) and y.shape == (5,) and x.dtype == torch.float32
    pool.release(buffer)
    assert pool.counts() == (1, 0)  # viewed
    other = pool.take(8)
    assert other is not buffer and pool.allocated == 2  # not reused while x and y live
    pool.release(other)
    del y
    assert pool.counts() == (1, 1)  # x still views it
    del x
    assert pool.counts() == (0, 2)
    assert pool.take(8) in (buffer, other) and pool.allocated == 2


@pytest.mark.parametrize("keep", ["slice", "numpy", "chained", "dndarray"])
def test_anything_sharing_a_views_memory_keeps_the_buffer(keep):
    pool = make_pool()
    buffer = pool.take(6)
    buffer.arrays[0][:] = np.arange(18, dtype=np.float32).reshape(6, 3)
    x = buffer.view(6)[0]
    held = {
        "slice": lambda t: t[2:4],
        "numpy": lambda t: t[1:].numpy(),
        "chained": lambda t: t.split(2)[1].view(-1)[1:],
        "dndarray": lambda t: ht.array(t, copy=None, is_split=0, comm=ht.MPI_SELF),
    }[keep](x)
    del x
    gc.collect()
    pool.release(buffer)
    assert pool.counts() == (1, 0)
    fresh = pool.take(6)
    assert fresh is not buffer
    fresh.arrays[0][:] = -1  # written: the held rows must not change
    pool.release(fresh)
    del held
    gc.collect()
    assert pool.counts() == (0, 2)


def test_copies_of_views_do_not_keep_the_buffer():
    pool = make_pool()
    buffer = pool.take(4)
    copy = buffer.view()[0].clone()
    stacked = torch.stack([buffer.view()[1]])
    pool.release(buffer)
    assert pool.counts() == (0, 1) and copy.shape == (4, 3) and stacked.shape == (1, 4)


def test_raw_arrays_are_not_counted():
    # the holder's raw arrays are valid only while it holds the lease; they do not keep the buffer
    pool = make_pool()
    buffer = pool.take(4)
    raw = buffer.arrays[0][:2]
    pool.release(buffer)
    assert pool.counts() == (0, 1) and raw.shape == (2, 3)
    assert pool.take(4) is buffer


def test_take_fits_by_size():
    pool = make_pool()
    big = pool.take(100)
    pool.release(big)
    small = pool.take(10)  # a free buffer of more than twice the rows is kept for larger takes
    assert small is not big and small.capacity == 10
    pool.release(small)
    assert pool.take(60) is big  # at least the rows, at most twice
    assert pool.take(5) is small  # the smallest that fits
    wide = pool.take(3, capacity=50)  # a new buffer gets the capacity asked for
    assert wide.capacity == 50
    pool.release(wide)
    assert pool.take(30, capacity=50) is wide
    empty = pool.take(0)
    assert empty.capacity == 1 and empty.view(0)[0].shape == (0, 3)


def test_free_buffers_beyond_keep_are_dropped():
    pool = make_pool(keep=2)
    buffers = [pool.take(10) for _ in range(4)]
    for buffer in buffers:
        pool.release(buffer)
    assert pool.counts() == (0, 2)
    kept = [pool.take(10), pool.take(10)]
    assert all(any(k is b for b in buffers[2:]) for k in kept)  # the oldest went


def test_threads_take_and_release_concurrently():
    pool = make_pool(keep=4)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(200):
                buffer = pool.take(int(rng.integers(1, 50)))
                buffer.arrays[1][:] = seed  # nobody else writes into a leased buffer
                views = buffer.view()
                pool.release(buffer)
                assert bool((views[1] == seed).all())
        except Exception as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


@pytest.mark.skipif(not torch.cuda.is_available(), reason="pinned memory needs CUDA")
def test_pinned_buffers_wait_for_device_copies():
    pool = make_pool(pinned=True)
    buffer = pool.take(1000)
    x = buffer.view()[0]
    assert x.is_pinned()
    on_device = x.to("cuda", non_blocking=True)
    pool.note_device_copy()
    del x
    pool.release(buffer)
    again = pool.take(1000)
    assert again is buffer and pool._device_copy.query()  # reused after the copy completed
    assert on_device.shape == (1000, 3)
