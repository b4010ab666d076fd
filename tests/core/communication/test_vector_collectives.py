"""
Tests of vector_collectives.py: Allgatherv, Gatherv, Scatterv, Alltoallv, Alltoallw.

Run under 1-4 MPI processes: ``python scripts/run_tests.py --procs 1,3 tests/core/communication``.
Every test computes its outcome on each rank and asserts it on all ranks (``agree``).
"""

import pytest
import torch
from mpi4py import MPI

from heat.core import communication as hc
from tests.core.communication.comm_helpers import (
    ALL_DTYPES,
    RANK,
    SIZE,
    SOME_DTYPES,
    WORLD,
    agree,
    make,
    noncontig,
    outcome,
    same,
    strided,
    v_layout,
)


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
