"""
Tests of heat/core/communication/node_groups.py: the plan of the sliced cross-node synchronization (pure), and
the groups and collectives under 1-4 processes with emulated nodes (HEAT_RANKS_PER_NODE), nodes
of unequal sizes included (3 processes, 2 per node: nodes of 2 and 1).
"""

import math

import pytest
import torch

import heat as ht
from heat.core.communication.node_groups import (
    CrossNodeSum,
    NodeGroups,
    cross_node_segments,
    disjoint_rounds,
    slice_bounds,
)
from tests.helpers import collective_assert

RANK, SIZE = ht.MPI_WORLD.rank, ht.MPI_WORLD.size


@pytest.mark.parametrize(
    "sizes", [[1], [2], [2, 1], [2, 2], [1, 1, 1], [2, 3], [3, 2, 2], [4, 1, 3]]
)
@pytest.mark.parametrize("length", [0, 1, 5, 12, 97])
def test_segments_partition_every_nodes_slices(sizes, length):
    segments = cross_node_segments(length, sizes)
    # consecutive, non-empty, covering [0, length)
    assert [s.start for s in segments[1:]] == [s.stop for s in segments[:-1]]
    assert all(s.start < s.stop for s in segments)
    assert (segments[0].start, segments[-1].stop) == (0, length) if segments else length == 0
    # each node's slices are exactly the union of the segments its processes own
    for k, size in enumerate(sizes):
        for j in range(size):
            owned = [i for s in segments if s.owners[k] == j for i in range(s.start, s.stop)]
            start, stop = slice_bounds(length, size, j)
            assert owned == list(range(start, stop)), (k, j)
    # every owner combination of any length appears on the lcm grid
    grid = {s.owners for s in cross_node_segments(math.lcm(*sizes), sizes)}
    assert {s.owners for s in segments} <= grid


def test_disjoint_rounds():
    assert disjoint_rounds([(0, 2), (1, 2), (1, 3)]) == [[(0, 2), (1, 3)], [(1, 2)]]
    rounds = disjoint_rounds([(0, 3), (1, 3), (2, 3), (0, 4)])
    assert rounds == [[(0, 3)], [(1, 3), (0, 4)], [(2, 3)]]


def _expected_topology(ranks_per_node):
    if ranks_per_node is None:
        return [SIZE]
    return [min(ranks_per_node, SIZE - start) for start in range(0, SIZE, ranks_per_node)]


def _value(position, node):
    """Exactly representable in bfloat16, and so are sums over a few nodes."""
    return (node + 1) + (position % 8) * 0.25


@pytest.mark.parametrize("ranks_per_node", [None, 1, 2, 3])
@pytest.mark.parametrize("wire_dtype", [torch.bfloat16, torch.float32])
def test_cross_node_sum_and_node_all_gather(emulate_nodes, ranks_per_node, wire_dtype):
    emulate_nodes(ranks_per_node)
    groups = NodeGroups(ht.MPI_WORLD)
    sizes = _expected_topology(ranks_per_node)
    ok = groups.node_sizes == sizes and groups.num_nodes == len(sizes)
    ok = ok and sum(groups.node_ranks, []) == list(range(SIZE))
    ok = ok and (groups.node_group is None) == (groups.local_size == 1)
    failures = []
    for length, chunk in ((1, 1), (13, 3), (40, 100)):
        exchange = CrossNodeSum(groups, length, chunk, wire_dtype)
        start, stop = exchange.start_index, exchange.stop_index
        positions = torch.arange(start, stop)
        mine = torch.tensor(
            [_value(int(i), groups.node_index) for i in positions], dtype=torch.float32
        )
        pending = exchange.start(mine)
        for _ in range(3):
            exchange.progress(pending)  # never blocks; may start second phases
        total = exchange.finish(pending)
        expected = torch.tensor(
            [sum(_value(int(i), k) for k in range(len(sizes))) for i in positions],
            dtype=torch.float32,
        )
        if not torch.equal(total, expected):
            failures.append((length, chunk, total.tolist(), expected.tolist()))
        full = torch.full((length,), -1.0)
        groups.node_all_gather(total, length, full)
        everywhere = torch.tensor(
            [sum(_value(i, k) for k in range(len(sizes))) for i in range(length)]
        )
        if not torch.equal(full, everywhere):
            failures.append((length, "all_gather", full.tolist()))
        sent = pending.bytes_sent
        if (sent > 0) != (len(sizes) > 1 and stop > start):
            failures.append((length, "bytes", sent))
        if wire_dtype == torch.bfloat16 and sent > 0 and length > 1:  # fewer bytes than float32
            full = CrossNodeSum(groups, length, chunk, torch.float32)
            full_sent = full.start(mine)
            full.finish(full_sent)
            if not sent < full_sent.bytes_sent:
                failures.append((length, "more bytes than float32", sent, full_sent.bytes_sent))
    collective_assert(ok and not failures, f"rank {RANK}: {groups.node_sizes} {failures[:2]}")


def test_node_groups_of_the_pieces_of_a_partition(emulate_nodes):
    """
    Every process passes its piece of a Split (e.g. the replicas of one pipeline stage, each on
    another node): each piece gets its own groups, and sums only over its own nodes.
    """
    emulate_nodes(2)
    piece = ht.MPI_WORLD.Split(RANK % 2, RANK)
    try:
        groups = NodeGroups(piece)
        nodes = sorted({r // 2 for r in piece.world_ranks()})
        ok = groups.num_nodes == len(nodes) and groups.local_size == 1
        exchange = CrossNodeSum(groups, 13, 3, torch.float32)
        positions = torch.arange(exchange.start_index, exchange.stop_index)
        mine = torch.tensor([_value(int(i), RANK) for i in positions], dtype=torch.float32)
        total = exchange.finish(exchange.start(mine))
        expected = torch.tensor(
            [sum(_value(int(i), r) for r in piece.world_ranks()) for i in positions],
            dtype=torch.float32,
        )
        collective_assert(ok and torch.equal(total, expected), f"rank {RANK}: {total} {expected}")
    finally:
        piece.Free()


def test_node_groups_need_a_partition_of_the_world():
    sub = ht.MPI_WORLD.Split(0 if RANK == 0 else 1, RANK)
    try:
        if SIZE > 1:  # process 0 passes the world, the others their piece: not a partition
            with pytest.raises(ValueError, match="partition"):
                NodeGroups(ht.MPI_WORLD if RANK == 0 else sub)
    finally:
        sub.Free()


@pytest.mark.parametrize("ranks_per_node", [None, 2, 3])
def test_node_all_gather_slices_into_kept_buffer(emulate_nodes, ranks_per_node):
    emulate_nodes(ranks_per_node)
    groups = NodeGroups(ht.MPI_WORLD)
    failures = []
    for length in (1, 7, 24):
        width = groups.gather_width(length)
        start, stop = groups.my_slice(length)
        padded = torch.full((width,), -5.0)  # a piece of the full width: sent without a copy
        padded[: stop - start] = torch.arange(start, stop, dtype=torch.float32)
        received = torch.full((width * groups.local_size + 3,), -7.0)  # larger than needed
        slices, sent = groups.node_all_gather_slices(padded, length, received)
        got = torch.full((length,), -1.0)
        for a, b, values in slices:
            got[a:b] = values
            if groups.local_size > 1 and b > a and values.data_ptr() < received.data_ptr():
                failures.append((length, "not in the kept buffer"))
        if not torch.equal(got, torch.arange(length, dtype=torch.float32)):
            failures.append((length, got.tolist()))
        if sent != (groups.local_size - 1) * width * 4:
            failures.append((length, "bytes", sent))
    collective_assert(not failures, f"rank {RANK}: {failures}")
