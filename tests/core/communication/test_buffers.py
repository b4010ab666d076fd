"""
Tests of buffers.py: staging of lazily conjugated, grad-requiring and zero-size buffers, counts
beyond the per-call limit (lowered), CUDA awareness.

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
    make,
    reference,
    same,
    strided,
    v_layout,
)


def test_conjugate_and_grad_buffers():
    base = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex128)
    out = WORLD.allreduce_tensor(base.conj())  # lazily conjugated input
    ok = torch.equal(out, SIZE * base.conj().resolve_conj())
    target = torch.zeros(2, dtype=torch.complex128)
    WORLD.Allreduce(base, target.conj())  # lazily conjugated receive view
    ok = ok and torch.equal(target.conj(), SIZE * base)
    weights = torch.ones(3, requires_grad=True)
    ok = ok and torch.equal(WORLD.allreduce_tensor(weights), torch.full((3,), float(SIZE)))
    agree(ok, (out, target))


def test_zero_size_buffers():
    empty = torch.zeros(0, 3)
    ok = WORLD.allreduce_tensor(empty).shape == (0, 3)
    ok = ok and WORLD.Bcast(torch.zeros(0), 0).numel() == 0
    ok = ok and WORLD.Allgather(torch.zeros(0), torch.zeros(0)).numel() == 0
    ok = (
        ok
        and WORLD.Alltoallv((torch.zeros(0), [0] * SIZE), (torch.zeros(0), [0] * SIZE)).numel() == 0
    )
    agree(ok)


@pytest.mark.parametrize("limit", [2, 5])
def test_large_count_paths(monkeypatch, limit):
    monkeypatch.setattr(hc.buffers, "_MAX_COUNT", limit)
    ok, msg = True, ""
    for dtype in (torch.bfloat16, torch.int64, torch.complex128, torch.bool):
        n = 23
        everyone = [make(dtype, n, r) for r in range(SIZE)]
        mine = everyone[RANK]
        # reductions in pieces
        out = WORLD.allreduce_tensor(strided(mine))
        if not same(out, reference(dtype, "SUM", everyone)):
            ok, msg = False, f"{dtype} allreduce {out}"
        request = WORLD.Iallreduce(mine, torch.zeros(n, dtype=dtype), MPI.SUM)
        if not same(request.Wait(), reference(dtype, "SUM", everyone)):
            ok, msg = False, f"{dtype} Iallreduce"
        if not same(WORLD.scan_tensor(mine), reference(dtype, "SUM", everyone[: RANK + 1])):
            ok, msg = False, f"{dtype} scan"
        # derived datatypes for long messages
        buf = everyone[0].clone() if RANK == 0 else torch.zeros(n, dtype=dtype)
        if not same(WORLD.Bcast(buf, 0), everyone[0]):
            ok, msg = False, f"{dtype} Bcast {buf}"
        if not same(
            WORLD.Ibcast(everyone[0].clone() if RANK == 0 else torch.zeros(n, dtype=dtype)).Wait(),
            everyone[0],
        ):
            ok, msg = False, f"{dtype} Ibcast"
        gathered = WORLD.Allgather(mine, torch.zeros(SIZE, n, dtype=dtype))
        if not same(gathered, torch.stack(everyone)):
            ok, msg = False, f"{dtype} Allgather"
        gathered = WORLD.Gather(mine, torch.zeros(SIZE, n, dtype=dtype) if RANK == 0 else None, 0)
        if RANK == 0 and not same(gathered, torch.stack(everyone)):
            ok, msg = False, f"{dtype} Gather"
        part = WORLD.Scatter(
            torch.stack(everyone) if RANK == 0 else None, torch.zeros(n, dtype=dtype), 0
        )
        if not same(part, mine):
            ok, msg = False, f"{dtype} Scatter"
        swapped = WORLD.Alltoall(torch.stack([mine] * SIZE), torch.zeros(SIZE, n, dtype=dtype))
        if not same(swapped, torch.stack(everyone)):
            ok, msg = False, f"{dtype} Alltoall"
        right, left = (RANK + 1) % SIZE, (RANK - 1) % SIZE
        request = WORLD.Irecv(torch.zeros(n, dtype=dtype), left, tag=9)
        WORLD.Isend(mine, right, tag=9).Wait()
        if not same(request.Wait(), everyone[left]):
            ok, msg = False, f"{dtype} Isend/Irecv"
        # vector variants through Alltoallw with per-peer datatypes
        counts, displs, total = v_layout(SIZE, 0)
        counts = [c * 4 for c in counts]
        displs = [d * 4 for d in displs]
        total *= 4
        blocks = [make(dtype, counts[r], r) for r in range(SIZE)]
        expected = torch.zeros(total, dtype=dtype)
        for r in range(SIZE):
            expected[displs[r] : displs[r] + counts[r]] = blocks[r]
        out = WORLD.Allgatherv(blocks[RANK], (torch.zeros(total, dtype=dtype), counts, displs))
        if not same(out, expected):
            ok, msg = False, f"{dtype} Allgatherv {out} {expected}"
        in_place = torch.zeros(total, dtype=dtype)
        in_place[displs[RANK] : displs[RANK] + counts[RANK]] = blocks[RANK]
        WORLD.Allgatherv(MPI.IN_PLACE, (in_place, counts, displs))
        if not same(in_place, expected):
            ok, msg = False, f"{dtype} Allgatherv in place"
        out = WORLD.Gatherv(
            blocks[RANK],
            (torch.zeros(total, dtype=dtype), counts, displs) if RANK == 0 else None,
            0,
        )
        if RANK == 0 and not same(out, expected):
            ok, msg = False, f"{dtype} Gatherv"
        if RANK == 0:
            in_place = torch.zeros(total, dtype=dtype)
            in_place[displs[0] : displs[0] + counts[0]] = blocks[0]
            WORLD.Gatherv(MPI.IN_PLACE, (in_place, counts, displs), 0)
            if not same(in_place, expected):
                ok, msg = False, f"{dtype} Gatherv in place"
        else:
            WORLD.Gatherv(blocks[RANK], None, 0)
        got = WORLD.Scatterv(
            (expected, counts, displs) if RANK == 0 else None,
            torch.zeros(counts[RANK], dtype=dtype),
            0,
        )
        if not same(got, blocks[RANK]):
            ok, msg = False, f"{dtype} Scatterv"
        pieces = WORLD.alltoallv_tensors(
            [make(dtype, 3 * ((RANK + q) % 3), 10 * RANK + q) for q in range(SIZE)]
        )
        if not all(
            same(pieces[q], make(dtype, 3 * ((q + RANK) % 3), 10 * q + RANK)) for q in range(SIZE)
        ):
            ok, msg = False, f"{dtype} alltoallv_tensors"
    agree(ok, msg)


@pytest.mark.parametrize("n,limit", [(23, 2), (23, 5), (25, 5), (7, 7), (1000, 3)])
def test_contiguous_type_covers_exactly(monkeypatch, n, limit):
    monkeypatch.setattr(hc.buffers, "_MAX_COUNT", limit)
    for base in (MPI.UINT16_T, MPI.C_DOUBLE_COMPLEX):
        dt = hc.buffers._contiguous_type(base, n).Commit()
        size, (lb, extent) = dt.Get_size(), dt.Get_extent()
        dt.Free()
        assert (size, lb, extent) == (n * base.Get_size(), 0, n * base.Get_size())


def test_large_count_experiment_facts():
    # mpi4py calls the MPI-4 "_c" functions when the library provides them; without them the
    # per-call limit is the C int range.
    expected = hc.buffers._NO_LIMIT if MPI.Get_version() >= (4, 0) else 2**31 - 1
    agree(hc.buffers._MAX_COUNT == expected, hc.buffers._MAX_COUNT)


def test_cuda_aware_detection(monkeypatch):
    monkeypatch.setenv("HEAT_CUDA_AWARE_MPI", "1")
    on = hc.buffers._detect_cuda_aware()
    monkeypatch.setenv("HEAT_CUDA_AWARE_MPI", "0")
    off = hc.buffers._detect_cuda_aware()
    monkeypatch.delenv("HEAT_CUDA_AWARE_MPI")
    auto = hc.buffers._detect_cuda_aware()
    cpu_tensor = torch.zeros(1)
    host = hc.buffers._needs_host(cpu_tensor)
    agree(on is True and off is False and isinstance(auto, bool) and not host)


# --------------------------------------------------------------------------------------------------
# NumPy arrays as buffers (HeAT scripts call ht.MPI_WORLD.Bcast(numpy_array))
# --------------------------------------------------------------------------------------------------
def test_numpy_arrays_are_buffers_filled_in_place():
    import numpy as np

    import heat as ht
    from tests.helpers import collective_assert

    world = ht.MPI_WORLD
    rank, size = world.rank, world.size
    failures = []
    for dtype in (np.float64, np.float32, np.int64, np.uint8, np.complex64, np.bool_):
        expected = (
            (np.arange(6) % 2).astype(dtype) if dtype is np.bool_ else np.arange(6, dtype=dtype)
        )
        buf = expected.copy() if rank == 0 else np.zeros(6, dtype=dtype)
        world.Bcast(buf, root=0)
        if not np.array_equal(buf, expected):
            failures.append(f"Bcast {dtype.__name__}: {buf}")
    # a strided (non-contiguous) receive array, Allreduce from a read-only send array
    send = np.full((3, 2), rank + 1.0)
    send.setflags(write=False)
    recv = np.zeros((2, 3)).T
    world.Allreduce(send, recv, op=ht.MPI.SUM)
    if not np.array_equal(recv, np.full((3, 2), size * (size + 1) / 2)):
        failures.append(f"Allreduce: {recv}")
    gathered = np.zeros((size, 2), dtype=np.int32)
    world.Allgather(np.array([rank, -rank], dtype=np.int32), gathered)
    if not np.array_equal(gathered[:, 0], np.arange(size)):
        failures.append(f"Allgather: {gathered}")
    right, left = (rank + 1) % size, (rank - 1) % size
    received = np.zeros(3)
    request = world.Irecv(received, source=left, tag=5)
    world.Isend(np.full(3, float(rank)), right, tag=5).Wait()
    request.Wait()
    if not np.array_equal(received, np.full(3, float(left))):
        failures.append(f"Isend/Irecv: {received}")
    collective_assert(not failures, "; ".join(failures))
    with pytest.raises(TypeError, match="NumPy buffer"):
        world.Bcast(np.arange(6.0)[::-1], root=0)  # negative strides: refused, on every process
    with pytest.raises(TypeError, match="NumPy buffer"):
        world.Bcast(np.array(["a", "b"], dtype=object), root=0)
    assert world.allreduce(1) == size
