"""
Tests of heat.utils.data.exchange: one round's all-to-all moves exactly the rows the plan says.

The windows come from an in-memory NumPy array (no files); the oracle is the plan's simulation
``Segment.received_rows`` (which rows a process receives, in arrival order) applied to that array.
"""

import numpy as np
import pytest
import torch

import heat as ht
from heat.utils.data.exchange import Exchanger
from heat.utils.data.plan import EpochPlan
from tests.helpers import collective_assert

COMM = ht.MPI_WORLD


def exchange_epoch(plan, data, labels, counts_from_plan=True):
    """
    Exchange every round of the plan's segment; check each against the simulation. Without
    ``counts_from_plan`` the processes tell each other how many rows they send.
    """
    segment, rank = plan.segment, COMM.rank
    exchanger = Exchanger(COMM, [data.shape[1:], ()], [torch.float64, torch.int32])
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
        recv_counts = segment.recv_counts(j, rank)
        received, numbers, handle, failed = exchanger.exchange(
            arrays, start, offsets, send_counts, recv_counts if counts_from_plan else None
        )
        ok &= not failed
        expected = segment.received_rows(j, rank)
        ok &= np.array_equal(numbers.numpy(), expected)
        ok &= np.array_equal(received[0].numpy(), data[expected])
        ok &= np.array_equal(received[1].numpy(), labels[expected])
        ok &= int(recv_counts.sum()) == len(expected)
        exchanger.give_back(handle)
        rounds += 1
    return ok, rounds


@pytest.mark.parametrize("counts_from_plan", [True, False])
@pytest.mark.parametrize("tail", ["short", "wrap"])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("n, window", [(53, 7), (3, 2), (40, 50)])
def test_rounds_move_the_planned_rows(n, window, shuffle, tail, counts_from_plan):
    data = np.arange(n * 2, dtype=np.float64).reshape(n, 2) / 3
    labels = np.arange(n, dtype=np.int32) * 7
    plan = EpochPlan(n, window, COMM.size, 3, seed=1, shuffle=shuffle, tail=tail)
    ok, rounds = exchange_epoch(plan, data, labels, counts_from_plan)
    assert rounds == plan.segment.round_count
    collective_assert(ok, "received rows differ from the plan")


def test_rounds_after_a_resume_skip_yielded_rows():
    # windows with rows excluded (yielded before a resume on another process count)
    n = 61
    data = np.arange(n, dtype=np.float64).reshape(n, 1)
    labels = np.arange(n, dtype=np.int32)
    plan = EpochPlan(n, 8, COMM.size, 2, seed=3, history=[(COMM.size + 1, 3, 2)])
    assert plan.segment.excluded  # some windows are partly consumed
    ok, _ = exchange_epoch(plan, data, labels)
    collective_assert(ok, "received rows differ from the plan after a resume")


def test_receive_buffers_are_reused():
    exchanger = Exchanger(COMM, [(2,)], [torch.float32])
    counts = np.zeros(COMM.size, np.int64)
    _, _, first, _ = exchanger.exchange(None, 0, np.zeros(0, np.int64), counts, counts)
    exchanger.give_back(first)
    _, _, second, _ = exchanger.exchange(None, 0, np.zeros(0, np.int64), counts, counts)
    assert second is first


def test_a_failed_read_is_known_everywhere():
    # the process whose read failed still takes part; every process learns of the failure
    plan = EpochPlan(20, 4, COMM.size, 2, seed=0)
    segment = plan.segment
    exchanger = Exchanger(COMM, [(1,)], [torch.float32])
    w = COMM.rank if COMM.rank < segment.window_count else None
    if w is not None:
        offsets, send_counts = segment.send_plan(0, COMM.rank)
    else:
        offsets, send_counts = np.zeros(0, np.int64), np.zeros(COMM.size, np.int64)
    recv_counts = segment.recv_counts(0, COMM.rank)
    failing = COMM.rank == COMM.size - 1
    *_, failed = exchanger.exchange(None, 0, offsets, send_counts, recv_counts, failed=failing)
    assert failed == (COMM.size > 1 or failing)
