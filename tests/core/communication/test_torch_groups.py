"""
Tests of torch_groups.py: torch.distributed process groups from MPI.

Run under 1-4 MPI processes: ``python scripts/run_tests.py --procs 1,3 tests/core/communication``.
Every test computes its outcome on each rank and asserts it on all ranks (``agree``).
"""

import datetime

import torch

from heat.core import communication as hc
from tests.core.communication.comm_helpers import (
    RANK,
    SIZE,
    WORLD,
    agree,
    outcome,
)


def test_torch_process_group_world():
    import torch.distributed as dist

    group = hc.torch_process_group(timeout=datetime.timedelta(seconds=60))
    x = torch.full((3,), float(RANK + 1))
    dist.all_reduce(x, group=group)
    ok = dist.is_initialized() and dist.get_world_size() == SIZE and dist.get_rank() == RANK
    ok = (
        ok
        and torch.equal(x, torch.full((3,), SIZE * (SIZE + 1) / 2))
        and group is WORLD.torch_process_group()
    )
    agree(ok, x)


def test_torch_process_groups_split_and_node():
    import torch.distributed as dist

    half = WORLD.Split(RANK % 2, RANK)
    group = hc.torch_process_group(half)
    x = torch.tensor([float(RANK)])
    dist.all_reduce(x, group=group)
    ok = x.item() == sum(range(RANK % 2, SIZE, 2))
    groups = hc.node_process_groups(ranks_per_node=2)
    y = torch.ones(1)
    dist.all_reduce(y, group=groups.node_group)
    z = torch.tensor([float(RANK)])
    dist.all_reduce(z, group=groups.cross_node_group)
    topology = groups.topology
    ok = ok and y.item() == topology.local_size
    ok = ok and z.item() == sum(r for r in range(SIZE) if r % 2 == RANK % 2)
    if SIZE > 1:  # overlapping communicators are refused on every process
        good, msg = outcome(
            ValueError, lambda: hc.torch_process_group(WORLD if RANK == 0 else hc.MPI_SELF)
        )
        ok = ok and good and "partition" in msg
    half.Free()
    agree(ok, (x, y, z))
