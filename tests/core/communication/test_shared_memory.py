"""
Tests of heat/core/communication/shared_memory.py: sums over a node's processes through a shared
segment equal torch's sum in slot order, bit for bit on every process of the node; rounds reuse
the segment; nodes that cannot share memory get None everywhere; bad arguments raise alike.
Under 1-4 processes, with nodes emulated (HEAT_RANKS_PER_NODE) or real.
"""

import gc
import os

import pytest
import torch

import heat as ht
from heat.core.communication import shared_memory
from heat.core.communication.shared_memory import node_shared_sum
from tests.helpers import collective_assert

COMM = ht.MPI_WORLD


@pytest.mark.parametrize("ranks_per_node", [None, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_sums_equal_the_slot_order_sum_on_every_process(emulate_nodes, ranks_per_node, dtype):
    emulate_nodes(ranks_per_node)
    node = COMM.node_topology(cached=False).node_comm
    summer = node_shared_sum(node, 1000, dtype)
    if node.size == 1:
        collective_assert(summer is None, "a node of one process needs no segment")
        return
    ok, message = summer is not None, "no segment on a node whose processes share memory"
    for round_ in range(3):  # the segment serves every round
        pieces = [
            torch.randn(n, generator=torch.Generator().manual_seed(100 * round_ + 10 * r + n)).to(
                dtype
            )
            for r in range(node.size)
            for n in (7, 300)
        ]
        mine = [pieces[2 * node.rank].clone(), pieces[2 * node.rank + 1].clone()]
        if ok:
            summer.allreduce_(mine, average=round_ == 2)
        for i, got in enumerate(mine):
            expected = pieces[i].clone()
            for r in range(1, node.size):
                expected += pieces[2 * r + i]
            if round_ == 2:
                expected = torch.mul(expected, 1.0 / node.size)
            if not torch.equal(got, expected):
                ok, message = False, f"round {round_} piece {i}: {got[:3]} != {expected[:3]}"
        # the same bits on every process of the node
        digests = node.allgather(tuple(float(t.double().sum()) for t in mine))
        ok = ok and len(set(digests)) == 1
    collective_assert(ok, f"rank {COMM.rank}: {message}")


def test_put_reduce_take_and_sharing():
    node = COMM.node_topology(cached=False).node_comm
    summer = node_shared_sum(node, 64, torch.float32)
    if summer is None:
        return
    summer.put(10, torch.full((5,), float(node.rank + 1)))
    summer.reduce()
    out = summer.take(10, torch.empty(5))
    total = node.size * (node.size + 1) / 2
    ok = torch.equal(out, torch.full((5,), total))
    # a gather through the common area: each process writes its own part, once every process
    # has taken the sum it overwrites
    summer.barrier()
    summer.share(node.rank * 4, torch.full((4,), float(node.rank)))
    summer.barrier()
    gathered = summer.take(0, torch.empty(4 * node.size))
    ok = ok and torch.equal(gathered, torch.arange(node.size).repeat_interleave(4).float())
    collective_assert(ok, f"rank {COMM.rank}: {out} {gathered}")
    with pytest.raises(ValueError, match="capacity"):
        summer.put(60, torch.ones(5))


def test_no_segment_left_behind_and_bad_arguments():
    node = COMM.node_topology(cached=False).node_comm
    before = set(os.listdir(shared_memory._segment_folder()))
    summer = node_shared_sum(node, 10, torch.float32)
    node.Barrier()
    after = set(os.listdir(shared_memory._segment_folder()))
    leftovers = [name for name in after - before if name.startswith("heat-node-sum-")]
    collective_assert(not leftovers, f"segments left in the folder: {leftovers}")
    del summer
    with pytest.raises(ValueError, match="capacity"):
        node_shared_sum(node, 0, torch.float32)
    with pytest.raises(TypeError, match="floating-point"):
        node_shared_sum(node, 10, torch.int64)


def test_processes_that_cannot_share_get_none_everywhere(monkeypatch):
    node = COMM.node_topology(cached=False).node_comm
    if node.size == 1:
        return
    real = shared_memory._map_segment

    def fails_on_the_last(path, nbytes, create):
        if not create and node.rank == node.size - 1:
            raise OSError("no such file: another machine")
        return real(path, nbytes, create)

    monkeypatch.setattr(shared_memory, "_map_segment", fails_on_the_last)
    summer = node_shared_sum(node, 10, torch.float32)
    collective_assert(summer is None, f"rank {COMM.rank}: got a segment")
    assert COMM.allreduce(1) == COMM.size


def test_a_fast_process_never_overwrites_a_sum_others_still_take():
    # process 0 runs ahead into the next round while the others are slow to take the sum
    import time

    node = COMM.node_topology(cached=False).node_comm
    summer = node_shared_sum(node, 8, torch.float64)
    if summer is None:
        return
    ok, seen = True, []
    for round_ in range(4):
        summer.put(0, torch.full((8,), float(round_ * 10 + node.rank)))
        summer.reduce()
        if node.rank != 0:
            time.sleep(0.05)
        got = summer.take(0, torch.empty(8))
        expected = round_ * 10 * node.size + node.size * (node.size - 1) / 2
        ok = ok and torch.equal(got, torch.full((8,), expected))
        seen.append(float(got[0]))
    collective_assert(ok, f"rank {COMM.rank}: {seen}")


@pytest.mark.parametrize("ranks_per_node", [None, 2])
def test_background_sums_equal_one_round_and_overlap_the_caller(emulate_nodes, ranks_per_node):
    """Pieces summed by the thread, in submission order, have the bits of allreduce_ of the same
    pieces; the thread works while the caller computes (and communicates on the node)."""
    emulate_nodes(ranks_per_node)
    node = COMM.node_topology(cached=False).node_comm
    summer = node_shared_sum(node, 2000, torch.float64)
    background = None if summer is None else shared_memory.BackgroundSums(node)
    ok, message = True, ""
    for round_ in range(3 if summer is not None else 0):  # a node of one process has none
        seed = 1000 * round_ + node.rank
        pieces = [
            torch.randn(n, generator=torch.Generator().manual_seed(seed + n)) for n in (5, 900, 1)
        ]
        expected = [p.clone() for p in pieces]
        summer.allreduce_(expected, average=True)
        offset = 0
        for piece in pieces:
            background.submit(summer, offset, piece, 1.0 / node.size)
            offset += piece.numel()
            node.Barrier()  # the caller communicates on the node meanwhile
        background.wait()
        for i, (got, want) in enumerate(zip(pieces, expected)):
            if not torch.equal(got, want):
                ok, message = False, f"round {round_} piece {i}: {got[:3]} != {want[:3]}"
    collective_assert(ok, f"rank {COMM.rank}: {message}")


def test_background_sums_hand_the_threads_error_to_wait():
    node = COMM.node_topology(cached=False).node_comm
    summer = node_shared_sum(node, 10, torch.float32)
    if summer is None:
        return
    background = shared_memory.BackgroundSums(node)
    background.submit(summer, 5, torch.ones(6), None)  # does not fit: fails before any barrier
    with pytest.raises(ValueError, match="do not fit the capacity"):
        background.wait()
    background.submit(summer, 0, torch.ones(10), None)  # the thread goes on with later pieces
    background.wait()


def test_background_sums_thread_ends_with_close_or_when_dropped():
    node = COMM.node_topology(cached=False).node_comm
    summer = node_shared_sum(node, 16, torch.float64)
    if summer is None:
        return
    ok, message = True, ""
    closed = shared_memory.BackgroundSums(node)
    piece = torch.full((16,), float(node.rank))
    closed.submit(summer, 0, piece, None)
    closed.close()  # finishes the piece first
    expected = torch.full((16,), node.size * (node.size - 1) / 2)
    if closed.running or not torch.equal(piece, expected):
        ok, message = False, f"after close: running {closed.running}, {piece[:2]}"
    closed.close()  # twice: nothing
    with pytest.raises(RuntimeError, match="closed"):
        closed.submit(summer, 0, piece, None)

    dropped = shared_memory.BackgroundSums(node)
    dropped.submit(summer, 0, torch.ones(16), None)
    dropped.wait()
    thread = dropped._thread
    del dropped
    gc.collect()
    thread.join(timeout=30)
    if thread.is_alive():
        ok, message = False, "the thread outlived its BackgroundSums"
    collective_assert(ok, f"rank {COMM.rank}: {message}")


def test_values_written_into_the_slot_are_summed_without_a_copy():
    node = COMM.node_topology(cached=False).node_comm
    summer = node_shared_sum(node, 32, torch.float64)
    if summer is None:
        return
    piece = summer.slot(8, 6)
    piece.copy_(torch.arange(6, dtype=torch.float64) * (node.rank + 1))
    summer.put(8, piece)  # in place already: nothing copied, the round still covers it
    summer.reduce()
    total = node.size * (node.size + 1) / 2
    out = summer.take(8, torch.empty(6, dtype=torch.float64))
    collective_assert(torch.equal(out, torch.arange(6, dtype=torch.float64) * total), f"{out}")
    with pytest.raises(ValueError, match="capacity"):
        summer.slot(30, 3)
