"""
Tests of the package heat/core/communication/.

Run under 1-4 MPI processes, e.g.
``mpiexec -n 3 python -m pytest -q -p no:cacheprovider --timeout=60 --timeout-method=thread
tests/core/test_communication.py``. Every test computes its outcome on each rank and then asserts
the same thing on all ranks (``agree``), so a failure on one rank never desynchronises the next
collective.
"""

import datetime
import functools
import os
import re
import subprocess
import sys
import time

import pytest
import torch
from mpi4py import MPI

from heat.core import communication as hc

WORLD = hc.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size

ALL_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
]
SOME_DTYPES = [
    torch.bool,
    torch.int32,
    torch.float16,
    torch.bfloat16,
    torch.float64,
    torch.complex128,
]


def agree(ok, message=""):
    """Assert on every rank that ``ok`` held on every rank."""
    results = MPI.COMM_WORLD.allgather((bool(ok), str(message)))
    failures = [(rank, msg) for rank, (good, msg) in enumerate(results) if not good]
    assert not failures, f"failed on ranks: {failures}"


def outcome(exception, fn):
    """(True, message) when ``fn()`` raises ``exception``; (False, what happened) otherwise."""
    try:
        fn()
    except exception as error:
        return True, str(error)
    except Exception as error:  # pragma: no cover - reported through agree
        return False, f"raised {error!r}"
    return False, "did not raise"


def make(dtype, n, seed, low=0, high=5):
    """Deterministic small values: every rank can build every other rank's data."""
    base = (torch.arange(n, dtype=torch.int64) * 7 + seed * 3 + 1) % (high - low) + low
    if dtype == torch.bool:
        return (base % 2).bool()
    if dtype.is_complex:
        return torch.complex(base.double(), (base + seed).double()).to(dtype)
    return base.to(dtype)


def noncontig(t, rows=3):
    """A non-contiguous view with the values of ``t`` (numel divisible by ``rows``)."""
    return t.reshape(rows, -1).t().contiguous().t()  # column-major copy


def strided(t):
    """A non-contiguous 1-d view with the values of ``t``."""
    buf = torch.zeros(2 * t.numel(), dtype=t.dtype)
    view = buf[::2]
    view.copy_(t.reshape(-1))
    return view


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b))


def reference(dtype, op, tensors):
    tensors = list(tensors)
    if dtype == torch.bool:
        if op in ("SUM", "MAX", "LOR", "BOR"):
            return functools.reduce(torch.logical_or, tensors)
        if op in ("PROD", "MIN", "LAND", "BAND"):
            return functools.reduce(torch.logical_and, tensors)
        return functools.reduce(torch.logical_xor, tensors)
    fn = {
        "SUM": torch.add,
        "PROD": torch.mul,
        "MIN": torch.minimum,
        "MAX": torch.maximum,
        "BAND": torch.bitwise_and,
        "BOR": torch.bitwise_or,
        "BXOR": torch.bitwise_xor,
    }[op]
    return functools.reduce(fn, tensors)


def ops_for(dtype):
    if dtype == torch.bool:
        return ["SUM", "PROD", "LAND", "LOR", "LXOR", "MAX", "MIN"]
    if dtype.is_complex:
        return ["SUM", "PROD"]
    if dtype.is_floating_point:
        return ["SUM", "PROD", "MIN", "MAX"]
    return ["SUM", "PROD", "MIN", "MAX", "BAND", "BOR", "BXOR"]


# ------------------------------------------------------------------------------------------------
# layout, communicator objects
# ------------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------------
# reductions
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_allreduce_dtypes_ops(dtype):
    ok, msg = True, ""
    for op in ops_for(dtype):
        high = 3 if op == "PROD" else 5
        mine = make(dtype, 12, RANK, low=1 if op == "PROD" else 0, high=high)
        everyone = [
            make(dtype, 12, r, low=1 if op == "PROD" else 0, high=high) for r in range(SIZE)
        ]
        expected = reference(dtype, op, [noncontig(t) for t in everyone])
        out = torch.zeros(4, 3, dtype=dtype).t()  # non-contiguous receive buffer
        result = WORLD.Allreduce(noncontig(mine), out, getattr(MPI, op))
        if result is not out or not same(out, expected):
            ok, msg = False, f"{op}: {out} != {expected}"
        in_place = noncontig(mine).clone()
        WORLD.Allreduce(MPI.IN_PLACE, in_place, getattr(MPI, op))
        if not same(in_place, expected):
            ok, msg = False, f"{op} in place: {in_place}"
        fresh = WORLD.allreduce_tensor(noncontig(mine), getattr(MPI, op))
        if not same(fresh, expected):
            ok, msg = False, f"{op} allreduce_tensor: {fresh}"
        # contiguous small tensors take allreduce_tensor's direct path where the type allows
        direct = WORLD.allreduce_tensor(noncontig(mine).contiguous(), getattr(MPI, op))
        if not same(direct, expected) or direct.dtype != dtype:
            ok, msg = False, f"{op} allreduce_tensor (contiguous): {direct}"
        scalar = WORLD.allreduce_tensor(mine.reshape(-1)[0].clone(), getattr(MPI, op))
        if scalar.shape != () or not same(scalar, expected.reshape(-1)[0]):
            ok, msg = False, f"{op} allreduce_tensor (0-d): {scalar}"
    agree(ok, msg)


def test_allreduce_bad_arguments():
    checks = [
        outcome(ValueError, lambda: WORLD.Allreduce(torch.ones(2), torch.ones(2), MPI.BAND)),
        outcome(
            ValueError,
            lambda: WORLD.Allreduce(
                torch.ones(2, dtype=torch.complex64), torch.ones(2, dtype=torch.complex64), MPI.MAX
            ),
        ),
        outcome(
            ValueError,
            lambda: WORLD.Allreduce(
                torch.ones(2, dtype=torch.bfloat16), torch.ones(2, dtype=torch.bfloat16), MPI.LAND
            ),
        ),
        outcome(ValueError, lambda: WORLD.Allreduce(torch.ones(2), torch.ones(3), MPI.SUM)),
        outcome(TypeError, lambda: WORLD.Allreduce([1.0, 2.0], torch.ones(2), MPI.SUM)),
        outcome(TypeError, lambda: WORLD.Allreduce(torch.ones(2), torch.ones(2), "sum")),
    ]
    names = ["op", "op", "op", "recvbuf", "sendbuf", "op"]
    ok = all(good and name in msg for (good, msg), name in zip(checks, names))
    # the next collective still works
    ok = ok and WORLD.allreduce_tensor(torch.ones(1)).item() == SIZE
    agree(ok, checks)


def test_allreduce_same_tensor_is_in_place():
    x = torch.full((3,), float(RANK + 1))
    WORLD.Allreduce(x, x, MPI.SUM)
    agree(torch.equal(x, torch.full((3,), SIZE * (SIZE + 1) / 2)), x)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
def test_reduce_scan_exscan(dtype):
    everyone = [make(dtype, 6, r) for r in range(SIZE)]
    mine = everyone[RANK]
    ok, msg = True, ""
    for root in sorted({0, SIZE - 1}):
        out = torch.zeros(3, 2, dtype=dtype).t() if RANK == root else None
        result = WORLD.Reduce(noncontig(mine, 2), out, MPI.SUM, root=root)
        if RANK == root:
            if not same(result, reference(dtype, "SUM", [noncontig(t, 2) for t in everyone])):
                ok, msg = False, f"Reduce root {root}: {result}"
        elif result is not None:
            ok, msg = False, "Reduce returned something on a non-root"
        in_place = mine.clone()
        WORLD.Reduce(
            MPI.IN_PLACE if RANK == root else in_place,
            in_place if RANK == root else None,
            MPI.SUM,
            root,
        )
        if RANK == root and not same(in_place, reference(dtype, "SUM", everyone)):
            ok, msg = False, f"Reduce in place: {in_place}"
    scanned = WORLD.scan_tensor(mine)
    if not same(scanned, reference(dtype, "SUM", everyone[: RANK + 1])):
        ok, msg = False, f"scan {scanned}"
    out = torch.zeros(6, dtype=dtype)
    WORLD.Scan(MPI.IN_PLACE, out.copy_(mine))
    if not same(out, scanned):
        ok, msg = False, f"Scan in place {out}"
    ex = WORLD.exscan_tensor(noncontig(mine))
    expected = (
        torch.zeros(6, dtype=dtype) if RANK == 0 else reference(dtype, "SUM", everyone[:RANK])
    )
    if not same(ex, noncontig(expected)):
        ok, msg = False, f"exscan {ex}"
    agree(ok, msg)


@pytest.mark.parametrize(
    "dtype,op,neutral",
    [
        (torch.float32, "MIN", float("inf")),
        (torch.float32, "MAX", float("-inf")),
        (torch.bfloat16, "PROD", 1.0),
        (torch.int64, "MIN", torch.iinfo(torch.int64).max),
        (torch.int16, "MAX", torch.iinfo(torch.int16).min),
        (torch.uint8, "BAND", 255),
        (torch.bool, "LAND", True),
        (torch.bool, "SUM", False),
        (torch.complex128, "PROD", 1.0),
    ],
)
def test_exscan_tensor_neutral_and_values(dtype, op, neutral):
    everyone = [make(dtype, 4, r, low=1, high=3) for r in range(SIZE)]
    result = WORLD.exscan_tensor(everyone[RANK], getattr(MPI, op))
    if RANK == 0:
        expected = torch.full((4,), neutral, dtype=dtype)
    else:
        expected = reference(dtype, op, everyone[:RANK])
    agree(same(result, expected), (result, expected))


def test_user_defined_op_passes_through():
    op = MPI.Op.Create(lambda a, b, dt: None, commute=True)  # keeps the accumulated value
    try:
        out = WORLD.allreduce_tensor(torch.full((2,), 5, dtype=torch.int32), op)
        agree(torch.equal(out, torch.full((2,), 5, dtype=torch.int32)), out)
    finally:
        op.Free()


# ------------------------------------------------------------------------------------------------
# data movement
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_bcast(dtype):
    ok, msg = True, ""
    for root in sorted({0, SIZE - 1}):
        data = make(dtype, 12, root)
        buf = noncontig(data) if RANK == root else torch.zeros(4, 3, dtype=dtype).t()
        result = WORLD.Bcast(buf, root=root)
        if result is not buf or not same(buf, noncontig(data)):
            ok, msg = False, f"root {root}: {buf}"
        got = WORLD.bcast_tensor(noncontig(data) if RANK == root else None, root=root)
        if not same(got, noncontig(data)):
            ok, msg = False, f"bcast_tensor root {root}: {got}"
        request = WORLD.Ibcast(data.clone() if RANK == root else torch.zeros(12, dtype=dtype), root)
        if not same(request.Wait(), data):
            ok, msg = False, f"Ibcast root {root}"
    agree(ok, msg)


def test_bcast_tensor_errors_everywhere():
    good, msg = outcome(TypeError, lambda: WORLD.bcast_tensor([1, 2] if RANK == 0 else None))
    good2, msg2 = outcome(ValueError, lambda: WORLD.bcast_tensor(torch.ones(1), root=SIZE))
    agree(good and "t must be" in msg and good2 and "root" in msg2, (msg, msg2))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_allgather_gather_scatter_alltoall(dtype):
    everyone = [make(dtype, 6, r) for r in range(SIZE)]
    mine = everyone[RANK]
    stacked = torch.stack(everyone)
    ok, msg = True, ""
    out = torch.zeros(6, SIZE, dtype=dtype).t()  # (SIZE, 6), non-contiguous
    WORLD.Allgather(noncontig(mine, 2), out)
    if not same(out, torch.stack([noncontig(t, 2).reshape(-1) for t in everyone])):
        ok, msg = False, f"Allgather {out}"
    in_place = torch.zeros(SIZE, 6, dtype=dtype)
    in_place[RANK] = mine
    WORLD.Allgather(MPI.IN_PLACE, in_place)
    if not same(in_place, stacked):
        ok, msg = False, f"Allgather in place {in_place}"
    root = SIZE - 1
    gathered = WORLD.Gather(mine, torch.zeros(SIZE, 6, dtype=dtype) if RANK == root else None, root)
    if (RANK == root and not same(gathered, stacked)) or (RANK != root and gathered is not None):
        ok, msg = False, f"Gather {gathered}"
    if RANK == root:
        in_place = stacked.clone()
        in_place[[r for r in range(SIZE) if r != root]] = torch.zeros(6, dtype=dtype)
        WORLD.Gather(MPI.IN_PLACE, in_place, root)
        if not same(in_place, stacked):
            ok, msg = False, f"Gather in place {in_place}"
    else:
        WORLD.Gather(mine, None, root)
    source = make(dtype, 6 * SIZE, 99).reshape(SIZE, 6)
    recv = torch.zeros(3, 2, dtype=dtype).t()
    WORLD.Scatter(source if RANK == 0 else None, recv, root=0)
    if not same(recv, source[RANK].reshape(2, 3)):
        ok, msg = False, f"Scatter {recv}"
    scattered = WORLD.Scatter(
        source.clone() if RANK == 0 else None,
        MPI.IN_PLACE if RANK == 0 else torch.zeros(6, dtype=dtype),
        0,
    )
    if RANK and not same(scattered, source[RANK]):
        ok, msg = False, f"Scatter in place {scattered}"
    send = torch.stack([make(dtype, 2, 10 * RANK + q) for q in range(SIZE)])
    expected = torch.stack([make(dtype, 2, 10 * q + RANK) for q in range(SIZE)])
    recv = torch.zeros(2, SIZE, dtype=dtype).t()
    WORLD.Alltoall(send.t().contiguous().t(), recv)
    if not same(recv, expected):
        ok, msg = False, f"Alltoall {recv}"
    in_place = send.clone()
    WORLD.Alltoall(MPI.IN_PLACE, in_place)
    if not same(in_place, expected):
        ok, msg = False, f"Alltoall in place {in_place}"
    agree(ok, msg)


def v_layout(size, seed):
    """Uneven counts (some zero) with gaps between the blocks."""
    counts = [(r + seed) % 3 for r in range(size)]
    displs, position = [], 1
    for c in counts:
        displs.append(position)
        position += c + 1
    return counts, displs, position


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_vector_collectives(dtype):
    ok, msg = True, ""
    counts, displs, total = v_layout(SIZE, 1)
    everyone = [make(dtype, counts[r], r) for r in range(SIZE)]
    expected = torch.zeros(total, dtype=dtype)
    for r in range(SIZE):
        expected[displs[r] : displs[r] + counts[r]] = everyone[r]
    out = strided(torch.zeros(total, dtype=dtype))  # non-contiguous, with gaps between blocks
    WORLD.Allgatherv(everyone[RANK], (out, counts, displs))
    if not same(out, expected):
        ok, msg = False, f"Allgatherv {out}"
    packed = torch.zeros(sum(counts), 1, dtype=dtype)[:, 0]  # non-contiguous? keep a view
    WORLD.Allgatherv(everyone[RANK], (packed, (counts, None)))
    if not same(packed, torch.cat(everyone)):
        ok, msg = False, f"Allgatherv packed {packed}"
    in_place = torch.zeros(total, dtype=dtype)
    in_place[displs[RANK] : displs[RANK] + counts[RANK]] = everyone[RANK]
    WORLD.Allgatherv(MPI.IN_PLACE, (in_place, counts, displs))
    if not same(in_place, expected):
        ok, msg = False, f"Allgatherv in place {in_place}"
    root = SIZE // 2
    out = WORLD.Gatherv(
        everyone[RANK],
        (strided(torch.zeros(total, dtype=dtype)), counts, displs) if RANK == root else None,
        root,
    )
    if (RANK == root and not same(out, expected)) or (RANK != root and out is not None):
        ok, msg = False, f"Gatherv {out}"
    recv = torch.zeros(counts[RANK], dtype=dtype)
    WORLD.Scatterv((expected, counts, displs) if RANK == root else None, recv, root)
    if not same(recv, everyone[RANK]):
        ok, msg = False, f"Scatterv {recv}"
    # Alltoallv: rank r sends (r + q) % 3 elements to q
    scounts = [(RANK + q) % 3 for q in range(SIZE)]
    rcounts = [(q + RANK) % 3 for q in range(SIZE)]
    send = torch.cat([make(dtype, scounts[q], 10 * RANK + q) for q in range(SIZE)])
    expected = torch.cat([make(dtype, rcounts[q], 10 * q + RANK) for q in range(SIZE)])
    recv = torch.zeros(sum(rcounts) * 2, dtype=dtype)[::2]  # non-contiguous
    WORLD.Alltoallv((send, scounts), (recv, rcounts))
    if not same(recv, expected):
        ok, msg = False, f"Alltoallv {recv} != {expected}"
    agree(ok, msg)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
def test_allgatherv_by_broadcasts(monkeypatch, dtype):
    # large blocks go by one broadcast per owner (MPICH's own Allgatherv is slow for them)
    monkeypatch.setattr(hc.vector_collectives, "_BCAST_ALLGATHERV_BYTES", 1)
    counts, displs, total = v_layout(SIZE, 1)
    everyone = [make(dtype, counts[r], r) for r in range(SIZE)]
    expected = torch.zeros(total, dtype=dtype)
    for r in range(SIZE):
        expected[displs[r] : displs[r] + counts[r]] = everyone[r]
    out = torch.zeros(2 * total, dtype=dtype)[::2]  # non-contiguous receive buffer
    WORLD.Allgatherv(strided(everyone[RANK]), (out, counts, displs))
    ok, msg = same(out, expected), f"Allgatherv {out}"
    in_place = torch.zeros(total, dtype=dtype)
    in_place[displs[RANK] : displs[RANK] + counts[RANK]] = everyone[RANK]
    WORLD.Allgatherv(MPI.IN_PLACE, (in_place, counts, displs))
    if not same(in_place, expected):
        ok, msg = False, f"in place {in_place}"
    block = make(dtype, 2 * (RANK % 3), RANK).reshape(2, RANK % 3)
    gathered = WORLD.allgather_tensors(block, axis=1)
    reference_blocks = [make(dtype, 2 * (r % 3), r).reshape(2, r % 3) for r in range(SIZE)]
    if not same(gathered, torch.cat(reference_blocks, dim=1)):
        ok, msg = False, f"allgather_tensors {gathered}"
    agree(ok, msg)


def test_alltoallv_in_place_and_errors():
    counts = [2] * SIZE
    buf = torch.arange(2 * SIZE, dtype=torch.float64) + 100 * RANK
    expected = torch.cat(
        [torch.arange(2 * RANK, 2 * RANK + 2, dtype=torch.float64) + 100 * q for q in range(SIZE)]
    )
    WORLD.Alltoallv(MPI.IN_PLACE, (buf, counts))
    ok = torch.equal(buf, expected)
    checks = [
        outcome(
            ValueError,
            lambda: WORLD.Allgatherv(torch.ones(1), (torch.ones(SIZE), [1] * (SIZE + 1))),
        ),
        outcome(
            ValueError, lambda: WORLD.Allgatherv(torch.ones(1), (torch.ones(SIZE), [2] * SIZE))
        ),
        outcome(TypeError, lambda: WORLD.Allgatherv(torch.ones(1), torch.ones(SIZE))),
        outcome(
            ValueError, lambda: WORLD.Allgatherv(torch.ones(2), (torch.ones(SIZE), [1] * SIZE))
        ),
    ]
    ok = (
        ok
        and all(good for good, _ in checks)
        and "recvbuf" in checks[0][1]
        and "sendbuf" in checks[3][1]
    )
    agree(ok, (buf, checks))


@pytest.mark.parametrize("dtype", SOME_DTYPES)
def test_alltoallw(dtype):
    sends = [noncontig(make(dtype, 3 * (RANK + q + 1), 10 * RANK + q)) for q in range(SIZE)]
    recvs = [torch.zeros(3 * (q + RANK + 1) * 2, dtype=dtype)[::2] for q in range(SIZE)]
    result = WORLD.Alltoallw(sends, recvs)
    expected = [
        noncontig(make(dtype, 3 * (q + RANK + 1), 10 * q + RANK)).reshape(-1) for q in range(SIZE)
    ]
    ok = all(same(a, b) for a, b in zip(result, expected)) and all(
        a is b for a, b in zip(result, recvs)
    )
    agree(ok, result)


def test_alltoallw_mixed_dtypes():
    # the pair (q -> r) uses dtype number (q + r) % 3; empty tensors are fine
    dtypes = [torch.bfloat16, torch.int64, torch.complex64]
    sends = [make(dtypes[(RANK + q) % 3], q % 2 * 4, RANK) for q in range(SIZE)]
    recvs = [torch.zeros(RANK % 2 * 4, dtype=dtypes[(q + RANK) % 3]) for q in range(SIZE)]
    WORLD.Alltoallw(sends, recvs)
    ok = all(same(recvs[q], make(dtypes[(q + RANK) % 3], RANK % 2 * 4, q)) for q in range(SIZE))
    agree(ok, recvs)


def _view_pieces(dtype, src, dst):
    """What rank ``src`` sends to ``dst`` as strided views: a column block, a transposed tensor,
    an expanded row (stride 0), an empty block and a 3-d slice; sizes depend on both ranks."""
    cols = (src + dst) % 3 + 1
    grid = make(dtype, 5 * 6, 10 * src + dst).reshape(5, 6)
    cube = make(dtype, 2 * 3 * 4, 7 * src + dst).reshape(2, 3, 4)
    return [
        grid[:, 1 : 1 + cols],
        grid[:3, :2].t(),
        grid[dst % 5 : dst % 5 + 1].expand(3, 6),
        grid[:0],
        cube[:, 1:, ::2],
    ]


def _flat_sizes(pieces):
    return [p.numel() for p in pieces]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_alltoallw_strided_views_and_lists(dtype):
    # lists of strided views on both sides: nothing is packed, every element lands in place
    sends = [_view_pieces(dtype, RANK, q) for q in range(SIZE)]
    # receive into a column block of one tensor per source plus a transposed target
    recvs, targets = [], []
    for q in range(SIZE):
        n = sum(_flat_sizes(_view_pieces(dtype, q, RANK)))
        wide = torch.zeros(n, 3, dtype=dtype)
        head = 5
        targets.append(wide)
        recvs.append([wide[:head, 1], wide[head:, 2].reshape(-1, 1).t()])
    result = WORLD.Alltoallw(sends, recvs)
    ok = result is not recvs and all(a is b for a, b in zip(result, recvs))
    for q in range(SIZE):
        expected = torch.cat([p.reshape(-1) for p in _view_pieces(dtype, q, RANK)])
        got = torch.cat([targets[q][:5, 1], targets[q][5:, 2]])
        untouched = targets[q][:, 0]
        ok = ok and same(got, expected) and not untouched.any()
    agree(ok, [t.shape for t in targets])


@pytest.mark.parametrize("dtype", [torch.bool, torch.bfloat16, torch.complex64, torch.int64])
def test_alltoallw_self_part_and_staging(monkeypatch, dtype):
    # the piece a rank sends itself is a tensor copy when shapes agree, MPI's job otherwise;
    # with a tiny _MAX_COUNT long strided dimensions go through contiguous stages; without MPI-4
    # large counts the views are structs at absolute addresses
    for limit, large in ((None, True), (None, False), (2, True)):
        monkeypatch.setattr(hc.buffers, "_LARGE_COUNT", large)
        if limit is not None:
            monkeypatch.setattr(hc.buffers, "_MAX_COUNT", limit)
        source = make(dtype, 8 * 6, RANK).reshape(8, 6)
        for same_shapes in (True, False):
            sends = [source[:, q % 3 :: 3] for q in range(SIZE)]
            if same_shapes:
                outs = [torch.zeros(8, 6, dtype=dtype)[:, :2] for _ in range(SIZE)]
                recvs = outs
            else:
                outs = [torch.zeros(16, dtype=dtype) for _ in range(SIZE)]
                recvs = [[o[:5], o[5:]] for o in outs]
            WORLD.Alltoallw(sends, recvs)
            expected = [make(dtype, 48, q).reshape(8, 6)[:, RANK % 3 :: 3] for q in range(SIZE)]
            ok = all(same(o.reshape(-1), e.reshape(-1)) for o, e in zip(outs, expected))
            agree(ok, (limit, large, same_shapes, outs))
    monkeypatch.setattr(hc.buffers, "_LARGE_COUNT", False)
    test_alltoallw_strided_views_and_lists(dtype)


def test_alltoallw_conjugated_and_grad_views():
    base = torch.tensor([[1 + 2j, 3 - 1j], [2 + 0j, -1j]], dtype=torch.complex128)
    sends = [base.conj().t() for _ in range(SIZE)]  # lazily conjugated, transposed
    recvs = [torch.zeros(2, 2, dtype=torch.complex128).conj() for _ in range(SIZE)]
    WORLD.Alltoallw(sends, recvs)
    ok = all(torch.equal(r.resolve_conj(), base.conj().t().resolve_conj()) for r in recvs)
    weights = [torch.zeros(3, requires_grad=True) for _ in range(SIZE)]
    WORLD.Alltoallw([torch.ones(3) for _ in range(SIZE)], weights)
    ok = ok and all(torch.equal(w.detach(), torch.ones(3)) for w in weights)
    agree(ok, recvs)


def test_alltoallw_bad_entries_raise():
    good = [torch.zeros(1)] * SIZE
    checks = [
        outcome(ValueError, lambda: WORLD.Alltoallw(good[:-1] + [], good + [torch.zeros(1)])),
        outcome(TypeError, lambda: WORLD.Alltoallw([[torch.zeros(1), "x"]] * SIZE, good)),
        outcome(TypeError, lambda: WORLD.Alltoallw(good, [None] * SIZE)),
    ]
    agree(all(c[0] for c in checks), checks)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
def test_point_to_point(dtype):
    right, left = (RANK + 1) % SIZE, (RANK - 1) % SIZE
    ok, msg = True, ""
    data = make(dtype, 12, RANK)
    recv = torch.zeros(4, 3, dtype=dtype).t()
    if SIZE > 1:
        if RANK % 2 == 0:
            WORLD.Send(noncontig(data), right, tag=3)
            WORLD.Recv(recv, left, tag=3)
        else:
            WORLD.Recv(recv, left, tag=3)
            WORLD.Send(noncontig(data), right, tag=3)
        if not same(recv, noncontig(make(dtype, 12, left))):
            ok, msg = False, f"Send/Recv {recv}"
    request_recv = WORLD.Irecv(torch.zeros(4, 3, dtype=dtype).t(), source=left, tag=5)
    request_send = WORLD.Isend(noncontig(data), right, tag=5)
    while not request_recv.Test():
        pass
    got = request_recv.Wait()
    if (
        request_send.Wait() is not None
        or not request_recv.done
        or not same(got, noncontig(make(dtype, 12, left)))
    ):
        ok, msg = False, f"Isend/Irecv {got}"
    # a short message into a larger, non-contiguous buffer leaves the rest untouched
    short = WORLD.Irecv(strided(torch.zeros(6, dtype=dtype)), source=left, tag=4)
    WORLD.Isend(make(dtype, 2, RANK), right, tag=4).Wait()
    got = short.Wait()
    if not same(got[:2], make(dtype, 2, left)) or not same(got[2:], torch.zeros(4, dtype=dtype)):
        ok, msg = False, f"short message {got}"
    status = MPI.Status()
    request = WORLD.Irecv(torch.zeros(2, dtype=dtype), source=MPI.ANY_SOURCE, tag=6)
    WORLD.Isend(make(dtype, 2, RANK), right, tag=6).Wait()
    request.Wait(status)
    if status.Get_source() != left:
        ok, msg = False, f"status source {status.Get_source()}"
    agree(ok, msg)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
def test_iallreduce(dtype):
    everyone = [make(dtype, 6, r) for r in range(SIZE)]
    out = torch.zeros(3, 2, dtype=dtype).t()
    request = WORLD.Iallreduce(noncontig(everyone[RANK], 2), out, MPI.SUM)
    result = request.Wait()
    ok = result is out and same(out, reference(dtype, "SUM", [noncontig(t, 2) for t in everyone]))
    in_place = everyone[RANK].clone()
    op = "PROD" if dtype.is_complex else "MAX"
    requests = [
        WORLD.Iallreduce(MPI.IN_PLACE, in_place, getattr(MPI, op)),
        WORLD.Ibcast(torch.ones(2) if RANK == 0 else torch.zeros(2)),
    ]
    results = hc.Request.Waitall(requests)
    ok = (
        ok
        and same(results[0], reference(dtype, op, everyone))
        and torch.equal(results[1], torch.ones(2))
    )
    agree(ok, (out, results))


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


# ------------------------------------------------------------------------------------------------
# counts beyond the per-call limit (lowered)
# ------------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------------
# tensor-level conveniences
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", SOME_DTYPES + [torch.uint8])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_allgather_and_gather_tensors(dtype, axis):
    def block(r):
        rows = r % 3  # rank 0 holds nothing
        shape = [2, 3, 2]
        shape[axis] = rows
        return make(dtype, math_prod(shape), r).reshape(shape)

    everyone = [block(r) for r in range(SIZE)]
    mine = everyone[RANK].transpose(0, 2).contiguous().transpose(0, 2)  # non-contiguous values
    expected = torch.cat(everyone, dim=axis)
    result = WORLD.allgather_tensors(mine, axis=axis)
    ok = same(result, expected) and result.is_contiguous()
    root = SIZE - 1
    gathered = WORLD.gather_tensors(mine, root=root, axis=axis)
    ok = ok and (same(gathered, expected) if RANK == root else gathered is None)
    agree(ok, (result.shape, expected.shape))


def math_prod(shape):
    return functools.reduce(lambda a, b: a * b, shape, 1)


def test_allgather_tensors_errors_agree():
    dtype = torch.float64 if RANK == SIZE - 1 else torch.float32
    good1, msg1 = outcome(
        ValueError, lambda: WORLD.allgather_tensors(torch.zeros(2, 3, dtype=dtype))
    )
    shape = (2, 4) if RANK == SIZE - 1 else (2, 3)
    good2, msg2 = outcome(ValueError, lambda: WORLD.allgather_tensors(torch.zeros(shape)))
    good3, msg3 = outcome(
        TypeError, lambda: WORLD.gather_tensors(None if RANK == 0 else torch.zeros(1))
    )
    good4, msg4 = outcome(ValueError, lambda: WORLD.allgather_tensors(torch.zeros(2), axis=1))
    good5, msg5 = outcome(ValueError, lambda: WORLD.allgather_tensors(torch.tensor(1.0)))
    if SIZE == 1:  # nothing can disagree with a single process
        good1 = good2 = True
    ok = good1 and good2 and good3 and good4 and good5 and "axis" in msg4
    ok = ok and WORLD.allgather_tensors(torch.ones(1)).shape == (SIZE,)  # still in step
    agree(ok, (msg1, msg2, msg3, msg4, msg5))


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("axis", [0, 1])
def test_alltoallv_tensors(dtype, axis):
    def block(src, dst):
        rows = (src + dst) % 3
        shape = [rows, 4] if axis == 0 else [4, rows]
        return make(dtype, 4 * rows, 10 * src + dst).reshape(shape)

    blocks = [block(RANK, q).t().contiguous().t() for q in range(SIZE)]  # non-contiguous
    result = WORLD.alltoallv_tensors(blocks, axis=axis)
    ok = len(result) == SIZE and all(same(result[q], block(q, RANK)) for q in range(SIZE))
    agree(ok, [r.shape for r in result])


def test_alltoallv_tensors_errors_agree():
    def bad_length():
        blocks = [torch.zeros(1)] * (SIZE + (1 if RANK == 0 else 0))
        return WORLD.alltoallv_tensors(blocks)

    def bad_dtype():
        dtype = torch.int32 if RANK == SIZE - 1 else torch.int64
        return WORLD.alltoallv_tensors([torch.zeros(1, dtype=dtype)] * SIZE)

    def bad_shape():
        cols = 3 if RANK == SIZE - 1 else 2
        return WORLD.alltoallv_tensors([torch.zeros(1, cols)] * SIZE)

    def bad_type():
        return WORLD.alltoallv_tensors(
            [torch.zeros(1)] * (SIZE - 1) + ["x" if RANK == 0 else torch.zeros(1)]
        )

    checks = [
        outcome(ValueError, bad_length),
        outcome(TypeError, bad_type),
        outcome(ValueError, bad_axis),
    ]
    if SIZE > 1:
        checks += [outcome(ValueError, bad_dtype), outcome(ValueError, bad_shape)]
    ok = all(good for good, _ in checks)
    ok = ok and len(WORLD.alltoallv_tensors([torch.ones(1)] * SIZE)) == SIZE  # still in step
    agree(ok, checks)


def bad_axis():
    return WORLD.alltoallv_tensors([torch.zeros(2)] * SIZE, axis=1 if RANK == 0 else 0)


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


# ------------------------------------------------------------------------------------------------
# node topology and torch.distributed
# ------------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------------
# process setup
# ------------------------------------------------------------------------------------------------


def test_setup_effects():
    ok = os.environ.get("THP_MEM_ALLOC_ENABLE") is not None
    # the hook may since have been wrapped by others (pytest plugins, torch.distributed)
    hooked = hc.process._ABORT_HOOK_INSTALLED
    wanted = SIZE > 1 and os.environ.get("HEAT_ABORT_ON_EXCEPTION", "1") != "0"
    ok = ok and bool(hooked) == wanted
    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    local = node.Get_size()
    node.Free()
    if not os.environ.get("OMP_NUM_THREADS") and not os.environ.get("MKL_NUM_THREADS"):
        ok = ok and torch.get_num_threads() <= max(1, (os.cpu_count() or 1) // local)
    before = sys.excepthook
    hc.process._setup_process()  # idempotent: no second hook
    ok = ok and sys.excepthook is before
    agree(ok, (torch.get_num_threads(), hooked))


def test_cuda_aware_detection(monkeypatch):
    monkeypatch.setenv("HEAT_CUDA_AWARE_MPI", "1")
    on = hc.buffers._detect_cuda_aware()
    monkeypatch.setenv("HEAT_CUDA_AWARE_MPI", "0")
    off = hc.buffers._detect_cuda_aware()
    monkeypatch.delenv("HEAT_CUDA_AWARE_MPI")
    auto = hc.buffers._detect_cuda_aware()
    cpu_tensor = torch.zeros(1)
    agree(on is True and off is False and isinstance(auto, bool) and not hc.buffers._needs_host(cpu_tensor))


def _subprocess_env(**extra):
    # drop the variables of the launcher that started this process, or the inner mpiexec and its
    # processes would try to join the outer job
    prefixes = ("PMI_", "PMIX_", "HYDI_", "HYDRA_", "MPI_LOCAL", "OMPI_", "MPIR_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update(extra)
    return env


ABORT_SCRIPT = """
import sys, time
from heat.core import communication as module
comm = module.MPI_WORLD
flags = comm.allgather(getattr(sys.excepthook, "_heat_abort_hook", False))
if comm.rank == 0:
    print("hooked", flags, flush=True)
if comm.rank == 1:
    time.sleep(0.5)
    sys.stderr.write("raising at %.3f\\n" % time.time())
    sys.stderr.flush()
    raise RuntimeError("boom on rank 1")
comm.Barrier()  # never matched: only the abort ends this process
"""


@pytest.mark.skipif(SIZE > 1, reason="starts its own 2-process job; runs in the 1-process suite")
def test_uncaught_exception_aborts_job():
    script = ABORT_SCRIPT
    try:
        done = subprocess.run(
            ["mpiexec", "-n", "2", sys.executable, "-c", script],
            env=_subprocess_env(),
            capture_output=True,
            text=True,
            timeout=50,
        )
    except subprocess.TimeoutExpired as error:  # pragma: no cover - the failure this test guards
        pytest.fail(f"the job did not end after an uncaught exception: {error}")
    ended = time.time()
    assert done.returncode != 0, done
    raised = re.search(r"raising at ([0-9.]+)", done.stderr)
    assert raised, done.stderr
    # measured from the exception, so a slow start of the job on a busy machine does not count
    assert ended - float(raised.group(1)) < 20, (ended, raised.group(1))
    assert "[rank 1/2]" in done.stderr and "boom on rank 1" in done.stderr, done.stderr
    assert "hooked [True, True]" in done.stdout, done.stdout


def test_abort_hook_switch(monkeypatch):
    monkeypatch.delenv("HEAT_ABORT_ON_EXCEPTION", raising=False)
    default = (hc.process._wants_abort_hook(1), hc.process._wants_abort_hook(2))
    monkeypatch.setenv("HEAT_ABORT_ON_EXCEPTION", "0")
    disabled = hc.process._wants_abort_hook(4)
    monkeypatch.setenv("HEAT_ABORT_ON_EXCEPTION", "1")
    enabled = hc.process._wants_abort_hook(4)
    hook = hc.process._abort_on_exception_hook(sys.__excepthook__)
    agree(default == (False, True) and not disabled and enabled and hook._heat_abort_hook)
