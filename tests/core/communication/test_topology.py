"""
Tests of topology.py: node topology.

Run under 1-4 MPI processes: ``python scripts/run_tests.py --procs 1,3 tests/core/communication``.
Every test computes its outcome on each rank and asserts it on all ranks (``agree``).
"""

import pytest
import torch

from tests.core.communication.comm_helpers import (
    RANK,
    SIZE,
    WORLD,
    agree,
    outcome,
)


def check_topology(topology, ranks_per_node):
    if ranks_per_node is None:  # one machine: everybody shares memory
        expected = dict(node_index=0, num_nodes=1, local_rank=RANK, local_size=SIZE)
    else:
        nodes = -(-SIZE // ranks_per_node)
        local_size = min(ranks_per_node, SIZE - (RANK // ranks_per_node) * ranks_per_node)
        expected = dict(
            node_index=RANK // ranks_per_node,
            num_nodes=nodes,
            local_rank=RANK % ranks_per_node,
            local_size=local_size,
        )
    got = {key: getattr(topology, key) for key in expected}
    ok = got == expected and topology.node_comm.size == topology.local_size
    local_rank_of = (lambda r: r) if ranks_per_node is None else (lambda r: r % ranks_per_node)
    expected_cross = [r for r in range(SIZE) if local_rank_of(r) == local_rank_of(RANK)]
    ok = ok and topology.cross_node_comm.world_ranks() == expected_cross
    ok = ok and topology.cross_node_comm.rank == topology.node_index
    if topology.local_rank == 0:
        ok = (
            ok
            and topology.leader_comm is not None
            and topology.leader_comm.size == topology.num_nodes
        )
        ok = ok and topology.leader_comm.rank == topology.node_index
    else:
        ok = ok and topology.leader_comm is None
    total = topology.node_comm.allreduce_tensor(torch.ones(1)).item()
    return ok and total == topology.local_size, (got, expected)


def test_node_topology_default(monkeypatch):
    monkeypatch.delenv("HEAT_RANKS_PER_NODE", raising=False)
    topology = WORLD.node_topology()
    ok, msg = check_topology(topology, None)
    ok = ok and WORLD.node_topology() is topology  # cached
    agree(ok, msg)


@pytest.mark.parametrize("ranks_per_node", [1, 2, 3])
def test_node_topology_emulated(monkeypatch, ranks_per_node):
    monkeypatch.setenv("HEAT_RANKS_PER_NODE", str(ranks_per_node))
    topology = WORLD.node_topology(cached=False)
    ok, msg = check_topology(topology, ranks_per_node)
    topology.free()
    monkeypatch.delenv("HEAT_RANKS_PER_NODE")
    explicit = WORLD.node_topology(ranks_per_node=ranks_per_node, cached=False)
    good, msg2 = check_topology(explicit, ranks_per_node)
    explicit.free()
    agree(ok and good, (msg, msg2))


def test_node_topology_errors(monkeypatch):
    monkeypatch.setenv("HEAT_RANKS_PER_NODE", "zero")
    good1, msg1 = outcome(ValueError, lambda: WORLD.node_topology())
    monkeypatch.delenv("HEAT_RANKS_PER_NODE")
    good2, msg2 = outcome(ValueError, lambda: WORLD.node_topology(ranks_per_node=0))
    good3, msg3 = outcome(TypeError, lambda: WORLD.node_topology(ranks_per_node="2"))
    ok = good1 and "HEAT_RANKS_PER_NODE" in msg1 and good2 and "ranks_per_node" in msg2 and good3
    agree(ok, (msg1, msg2, msg3))


def test_node_topology_of_subcommunicator():
    sub = WORLD.Split(RANK % 2, RANK)
    topology = sub.node_topology(ranks_per_node=2, cached=False)
    # world ranks 0,1 | 2,3 form the emulated nodes; the even/odd halves see one rank per node
    expected_nodes = len({r // 2 for r in range(RANK % 2, SIZE, 2)})
    ok = (
        topology.num_nodes == expected_nodes
        and topology.local_size == 1
        and topology.local_rank == 0
    )
    ok = ok and topology.node_index == sub.rank
    topology.free()
    sub.Free()
    agree(ok, topology)
