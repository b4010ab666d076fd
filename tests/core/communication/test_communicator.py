"""
Tests of communicator.py: layout of arrays, communicator objects, sub-communicators, object
collectives.

Run under 1-4 MPI processes: ``python scripts/run_tests.py --procs 1,3 tests/core/communication``.
Every test computes its outcome on each rank and asserts it on all ranks (``agree``).
"""

import pytest
import torch
from mpi4py import MPI

from heat.core import communication as hc
from tests.core.communication.comm_helpers import (
    RANK,
    SIZE,
    WORLD,
    agree,
    outcome,
)


@pytest.mark.parametrize(
    "shape,split", [((7, 5), 0), ((7, 5), 1), ((2, 3, 4), -1), ((0, 3), 0), ((3,), 0)]
)
def test_chunk_balanced(shape, split):
    ok, msg = True, ""
    for p in range(1, 6):
        rows = shape[split]
        offsets, lengths = [], []
        for r in range(p):
            offset, lshape, slices = WORLD.chunk(shape, split, rank=r, w_size=p)
            axis = split % len(shape)
            offsets.append(offset)
            lengths.append(lshape[axis])
            expected = rows // p + (1 if r < rows % p else 0)
            if lshape[axis] != expected or slices[axis] != slice(offset, offset + expected):
                ok, msg = False, f"p={p} r={r}: {lshape} {slices}"
            if any(lshape[i] != shape[i] for i in range(len(shape)) if i != axis):
                ok, msg = False, f"p={p} r={r}: other dims changed {lshape}"
        if sum(lengths) != rows or offsets != [sum(lengths[:r]) for r in range(p)]:
            ok, msg = False, f"p={p}: {offsets} {lengths}"
    offset, lshape, slices = WORLD.chunk(shape, None)
    ok = (
        ok
        and offset == 0
        and lshape == tuple(shape)
        and slices == tuple(slice(0, d) for d in shape)
    )
    own = WORLD.chunk(shape, split)
    ok = ok and own == WORLD.chunk(shape, split, rank=RANK, w_size=SIZE)
    agree(ok, msg)


def test_chunk_errors():
    checks = [
        outcome(TypeError, lambda: WORLD.chunk((3, 4), "0")),
        outcome(ValueError, lambda: WORLD.chunk((3, 4), 2)),
        outcome(ValueError, lambda: WORLD.chunk((3, 4), 0, rank=SIZE)),
        outcome(ValueError, lambda: WORLD.chunk((3, 4), 0, w_size=0)),
        outcome(TypeError, lambda: WORLD.chunk("ab", 0)),
        outcome(ValueError, lambda: WORLD.chunk((3, -1), 0)),
        outcome(ValueError, lambda: WORLD.chunk((), 0)),
        outcome(ValueError, lambda: WORLD.counts_displs_shape((3, 4), None)),
    ]
    names = ["split", "split", "rank", "w_size", "shape", "shape", "split", "split"]
    ok = all(good for good, _ in checks) and all(
        name in msg for (_, msg), name in zip(checks, names)
    )
    agree(ok, checks)


def test_counts_displs_shape():
    counts, displs, chunk_shape = WORLD.counts_displs_shape((10, 3), 0)
    ok = sum(counts) == 10 and len(counts) == SIZE and displs[0] == 0
    ok = ok and all(displs[i + 1] == displs[i] + counts[i] for i in range(SIZE - 1))
    ok = ok and chunk_shape == WORLD.chunk((10, 3), 0)[1]
    counts, displs, chunk_shape = WORLD.counts_displs_shape((2, 5), -1)
    ok = ok and chunk_shape == (2, counts[RANK]) and sum(counts) == 5
    agree(ok, (counts, displs, chunk_shape))


def test_communicator_basics():
    ok = WORLD.rank == MPI.COMM_WORLD.Get_rank() and WORLD.size == MPI.COMM_WORLD.Get_size()
    ok = ok and WORLD.is_distributed() == (SIZE > 1) and not hc.MPI_SELF.is_distributed()
    ok = ok and WORLD.Get_rank() == RANK  # delegated to the mpi4py communicator
    ok = ok and WORLD.world_ranks() == list(range(SIZE))
    ok = (
        ok
        and WORLD == hc.MPICommunication(MPI.COMM_WORLD)
        and hash(WORLD) == hash(hc.MPICommunication())
    )
    agree(ok)


def test_sanitize_and_default_comm():
    ok = hc.sanitize_comm(None) is hc.get_comm() is WORLD
    ok = (
        ok
        and hc.sanitize_comm(MPI.COMM_WORLD) is WORLD
        and hc.sanitize_comm(MPI.COMM_SELF) is hc.MPI_SELF
    )
    ok = ok and hc.sanitize_comm(hc.MPI_SELF) is hc.MPI_SELF
    dup = MPI.COMM_WORLD.Dup()
    wrapped = hc.sanitize_comm(dup)
    ok = ok and isinstance(wrapped, hc.MPICommunication) and wrapped.size == SIZE
    wrapped.Free()
    bad, msg = outcome(TypeError, lambda: hc.sanitize_comm("world"))
    ok = ok and bad and "comm" in msg
    bad, msg = outcome(ValueError, lambda: hc.sanitize_comm(MPI.COMM_NULL))
    ok = ok and bad and "comm" in msg
    try:
        hc.use_comm(hc.MPI_SELF)
        ok = ok and hc.get_comm() is hc.MPI_SELF
        bad, msg = outcome(TypeError, lambda: hc.use_comm(3))
        ok = ok and bad and hc.get_comm() is hc.MPI_SELF
    finally:
        hc.use_comm()
    ok = ok and hc.get_comm() is WORLD
    agree(ok)


def test_split_dup_free():
    sub = WORLD.Split(RANK % 2, RANK)
    total = sub.allreduce_tensor(torch.tensor([RANK]))
    expected = sum(r for r in range(SIZE) if r % 2 == RANK % 2)
    ok = sub.size == len(range(RANK % 2, SIZE, 2)) and total.item() == expected
    none = WORLD.Split(MPI.UNDEFINED if RANK else 0, 0)
    ok = ok and ((none is None) == (RANK != 0))
    if none is not None:
        none.Free()
    dup = WORLD.Dup()
    ok = ok and dup.allreduce(1) == SIZE
    dup.Free()
    sub.Free()
    WORLD.Free()  # a no-op for the world
    ok = ok and WORLD.allreduce(1) == SIZE
    agree(ok)


def test_lowercase_object_collectives():
    ok = WORLD.allreduce(RANK) == SIZE * (SIZE - 1) // 2
    ok = ok and WORLD.allreduce(RANK, MPI.MAX) == SIZE - 1
    ok = ok and WORLD.bcast({"a": RANK}, root=0) == {"a": 0}
    ok = ok and WORLD.allgather(RANK) == list(range(SIZE))
    gathered = WORLD.gather(RANK * 2, root=0)
    ok = ok and (gathered == [2 * r for r in range(SIZE)] if RANK == 0 else gathered is None)
    ok = ok and WORLD.alltoall([(RANK, q) for q in range(SIZE)]) == [(q, RANK) for q in range(SIZE)]
    WORLD.Barrier()
    agree(ok)


def test_heat_names_mpirequest_and_comm():
    # HeAT 1.8's ht.MPIRequest and ht.comm (issue 18, item 18): the pending-request class and the
    # world communicator under their old names
    import heat as ht

    assert ht.MPIRequest is hc.Request and hc.MPIRequest is hc.Request
    assert ht.comm is hc.MPI_WORLD and ht.comm.rank == RANK and ht.comm.size == SIZE
    request = ht.comm.Iallreduce(torch.ones(2), torch.empty(2))
    agree(isinstance(request, ht.MPIRequest), "Iallreduce returns an MPIRequest")
    result = request.Wait()
    agree(result.tolist() == [float(SIZE)] * 2, f"result {result}")
    # mpi4py's methods pass through, as on HeAT's bare MPI.COMM_WORLD
    agree(ht.comm.Get_rank() == RANK and ht.comm.allreduce(1) == SIZE, "pass-through")
    ht.comm.Barrier()
