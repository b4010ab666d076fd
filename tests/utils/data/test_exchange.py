"""
Tests of heat.utils.data.exchange: one round's all-to-all moves exactly the rows the plan says,
through MPI and through the node's shared memory (with nodes emulated: both at once).

The windows come from an in-memory NumPy array (no files); the oracle is the plan's simulation
``Segment.received_rows`` (which rows a process receives, in arrival order) applied to that array:
the received rows, with the rows a process keeps put in at its own rank's place, must be those.
"""

import numpy as np
import pytest
import torch

import heat as ht
from heat.utils.data.buffers import BufferPool
from heat.utils.data.exchange import Exchanger, node_route
from heat.utils.data.plan import EpochPlan
from tests.helpers import collective_assert

COMM = ht.MPI_WORLD


def exchange_epoch(plan, data, labels, landing="none", poll=False, node=False):
    """
    Exchange every round of the plan's segment; check each against the simulation. ``landing``:
    "none" (pooled buffers), "fits" (a caller's area with room), "small" (an area too small:
    pooled buffers after all). ``node``: the node's processes exchange through shared memory.
    """
    segment, rank = plan.segment, COMM.rank
    pool = BufferPool([data.shape[1:], ()], [np.float64, np.int32])
    route = None
    if node:
        row_bytes = data[0].nbytes + labels[0].nbytes + 8
        capacity = (plan.window_rows + COMM.size * plan.batch_size) * row_bytes + 64 * COMM.size
        route = node_route(COMM, capacity)
    exchanger = Exchanger(COMM, pool, poll=poll, node=route)
    ok, rounds = True, 0
    for j in range(segment.round_count):
        windows = segment.round_window_indices(j)
        w = j * COMM.size + rank
        if w in windows:
            start, stop = int(segment.starts[w]), int(segment.stops[w])
            arrays = [data[start:stop], labels[start:stop]]
            offsets, send_counts = segment.send_plan(j, rank)
        else:
            start, arrays = 0, None
            offsets, send_counts = np.zeros(0, np.int64), np.zeros(COMM.size, np.int64)
        expected = segment.received_rows(j, rank)
        room = {"none": None, "fits": len(expected) + 3, "small": max(len(expected) // 2 - 1, 0)}[
            landing
        ]
        land = None
        if room is not None:
            land = [
                torch.full((room,) + data.shape[1:], -1.0, dtype=torch.float64),
                torch.full((room,), -1, dtype=torch.int32),
            ]
        received = exchanger.exchange(arrays, start, offsets, send_counts, land=land, reserve=2)
        ok &= not received.failed
        # arrival order: rows from lower ranks, the kept ones, rows from higher ranks
        lower = int(received.counts[:rank].sum())
        begin = int(send_counts[:rank].sum())
        kept = start + offsets[begin : begin + int(send_counts[rank])]
        numbers = np.concatenate([received.numbers[:lower], kept, received.numbers[lower:]])
        ok &= np.array_equal(numbers, expected)
        for d, source in enumerate([data, labels]):
            rows = received.rows[d].numpy()
            ok &= np.array_equal(
                np.concatenate([rows[:lower], source[kept], rows[lower:]]), source[expected]
            )
        ok &= int(received.counts.sum()) == len(expected)
        landed = received.buffer is None
        ok &= landed == (land is not None and room >= len(expected) - len(kept))
        if not len(received.numbers):
            pass  # nothing arrived (empty tensors have no data pointer to compare)
        elif landed:
            ok &= received.rows[0].data_ptr() == land[0].data_ptr()  # in the caller's area
        else:
            after_reserve = torch.from_numpy(received.buffer.arrays[0][2:])
            ok &= received.rows[0].data_ptr() == after_reserve.data_ptr()
        pool.release(received.buffer)
        rounds += 1
    return ok, rounds


@pytest.mark.parametrize("node", [False, True])
@pytest.mark.parametrize("landing", ["none", "fits", "small"])
@pytest.mark.parametrize("tail", ["short", "wrap"])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("n, window", [(53, 7), (3, 2), (40, 50)])
def test_rounds_move_the_planned_rows(n, window, shuffle, tail, landing, node):
    data = np.arange(n * 2, dtype=np.float64).reshape(n, 2) / 3
    labels = np.arange(n, dtype=np.int32) * 7
    plan = EpochPlan(n, window, COMM.size, 3, seed=1, shuffle=shuffle, tail=tail)
    ok, rounds = exchange_epoch(plan, data, labels, landing, node=node)
    assert rounds == plan.segment.round_count
    collective_assert(ok, "received rows differ from the plan")


@pytest.mark.parametrize("ranks_per_node", [None, 1, 2])
def test_the_node_route_beside_mpi_for_other_nodes(emulate_nodes, ranks_per_node):
    # nodes of 1 or 2 ranks: node mates through the slots, the other processes through MPI
    emulate_nodes(ranks_per_node)
    n = 71
    data = np.arange(n * 3, dtype=np.float64).reshape(n, 3)
    labels = np.arange(n, dtype=np.int32)
    for shuffle in (True, False):
        plan = EpochPlan(n, 9, COMM.size, 2, seed=5, shuffle=shuffle, tail="wrap")
        ok, _ = exchange_epoch(plan, data, labels, "fits", poll=True, node=True)
        collective_assert(ok, f"rows differ from the plan (nodes of {ranks_per_node})")
    route = node_route(COMM, 1000)
    node = COMM.node_topology().node_comm
    if node.size == 1:
        assert route is None  # nobody to share with
    else:
        assert sorted(route.index.values()) == list(range(node.size))
        assert route.holds_everyone == (COMM.node_topology().num_nodes == 1)
        again = node_route(COMM, 500, reuse=route)
        assert again.slots is route.slots  # large enough: reused
        assert node_route(COMM, 5000, reuse=route).slots is not route.slots


@pytest.mark.parametrize("node", [False, True])
@pytest.mark.parametrize("landing", ["none", "fits"])
@pytest.mark.parametrize("shuffle", [True, False])
def test_wide_rows_travel_straight_from_the_window(shuffle, landing, node):
    # rows of 16 KiB: MPI reads them from the window (one block per run of consecutive rows)
    from heat.utils.data.exchange import DIRECT_ROW_BYTES

    n, width = 45, DIRECT_ROW_BYTES // 8
    data = np.arange(n * width, dtype=np.float64).reshape(n, width) / 7
    labels = np.arange(n, dtype=np.int32) * 3
    plan = EpochPlan(n, 6, COMM.size, 2, seed=4, shuffle=shuffle, tail="wrap")
    ok, _ = exchange_epoch(plan, data, labels, landing, node=node)
    collective_assert(ok, "wide rows differ from the plan")


def test_pieces_are_runs_of_consecutive_rows():
    from heat.utils.data.exchange import _pieces

    rows = torch.arange(20).view(10, 2)
    parts = _pieces((rows, np.array([4, 5, 6, 1, 2, 9, 0])), 1, 6)  # offsets 5, 6 | 1, 2 | 9
    assert [p[:, 0].tolist() for p in parts] == [[10, 12], [2, 4], [18]]
    assert _pieces((rows, np.array([3])), 0, 0) == []
    packed = torch.zeros(5, 3)
    assert _pieces(packed, 1, 4)[0].shape == (3, 3)


def test_rounds_after_a_resume_skip_yielded_rows():
    # windows with rows excluded (yielded before a resume on another process count)
    n = 61
    data = np.arange(n, dtype=np.float64).reshape(n, 1)
    labels = np.arange(n, dtype=np.int32)
    plan = EpochPlan(n, 8, COMM.size, 2, seed=3, history=[(COMM.size + 1, 3, 2)])
    assert plan.segment.excluded  # some windows are partly consumed
    ok, _ = exchange_epoch(plan, data, labels, node=True)
    collective_assert(ok, "received rows differ from the plan after a resume")


def test_exchange_buffers_come_from_the_pool_and_go_back():
    pool = BufferPool([(2,)], [np.float32])
    exchanger = Exchanger(COMM, pool)
    counts = np.zeros(COMM.size, np.int64)
    first = exchanger.exchange(None, 0, np.zeros(0, np.int64), counts).buffer
    assert first.leased  # the caller's until it releases it
    assert pool.counts() == (0, pool.allocated - 1)  # the send staging went back
    pool.release(first)
    made = pool.allocated
    second = exchanger.exchange(None, 0, np.zeros(0, np.int64), counts).buffer
    pool.release(second)
    assert pool.allocated == made and pool.counts() == (0, made)  # reused, all free again


def test_polled_exchange_moves_the_same_rows():
    # the loader's thread waits for the others by tests and sleeps, not a blocking call
    n = 29
    data = np.arange(n * 2, dtype=np.float64).reshape(n, 2)
    labels = np.arange(n, dtype=np.int32)
    plan = EpochPlan(n, 5, COMM.size, 2, seed=6)
    ok, _ = exchange_epoch(plan, data, labels, "fits", poll=True)
    collective_assert(ok, "a polled exchange moved other rows")


def test_a_failed_read_is_known_everywhere():
    # the process whose read failed still takes part; every process learns of the failure
    plan = EpochPlan(20, 4, COMM.size, 2, seed=0)
    segment = plan.segment
    exchanger = Exchanger(COMM, BufferPool([(1,)], [np.float32]))
    w = COMM.rank if COMM.rank < segment.window_count else None
    if w is not None:
        offsets, send_counts = segment.send_plan(0, COMM.rank)
    else:
        offsets, send_counts = np.zeros(0, np.int64), np.zeros(COMM.size, np.int64)
    failing = COMM.rank == COMM.size - 1
    received = exchanger.exchange(None, 0, offsets, send_counts, failed=failing)
    assert received.failed  # on every process, and no rows moved
    assert received.rows == [] and received.buffer is None
