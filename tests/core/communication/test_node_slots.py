"""
Tests of heat/core/communication/node_slots.py: each process of a node writes its slot, after
the barrier every process of the node reads any slot; rounds reuse the slots; nodes that cannot
share memory (or HEAT_NODE_SHARED_MEMORY=0) get None everywhere. Under 1-4 processes, with nodes
emulated (HEAT_RANKS_PER_NODE) or real.
"""

import pytest
import torch

import heat as ht
from heat.core.communication.node_slots import node_slots
from tests.helpers import collective_assert

COMM = ht.MPI_WORLD


@pytest.mark.parametrize("ranks_per_node", [None, 2])
def test_every_process_reads_what_the_others_wrote(emulate_nodes, ranks_per_node):
    emulate_nodes(ranks_per_node)
    node = COMM.node_topology(cached=False).node_comm
    slots = node_slots(node, 1000)
    if node.size == 1:
        collective_assert(slots is None, "a node of one process needs no slots")
        return
    ok = slots is not None and slots.capacity == 1000
    for round_ in range(3):  # the slots serve every round (the allgather orders the rounds)
        if ok:
            slots.data(node.rank)[:] = (node.rank + round_) % 256
            slots.header(node.rank)[:] = torch.arange(node.size) + 10 * node.rank
            slots.barrier()
            for other in range(node.size):
                ok &= bool((slots.data(other) == (other + round_) % 256).all())
                ok &= slots.header(other).tolist() == [10 * other + i for i in range(node.size)]
        node.allgather(round_)  # every process read before anyone writes the next round
    collective_assert(ok, f"rank {COMM.rank}: slots differ from what their writers wrote")
    assert slots.seconds_waiting >= 0


def test_no_slots_where_memory_is_not_shared(monkeypatch):
    node = COMM.node_topology(cached=False).node_comm
    monkeypatch.setenv("HEAT_NODE_SHARED_MEMORY", "0")
    assert node_slots(node, 10) is None  # on every process
    assert node_slots(ht.MPI_SELF, 10) is None
    with pytest.raises(ValueError, match="capacity"):
        node_slots(node, 0)
