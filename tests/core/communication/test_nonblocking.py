"""
Tests of the non-blocking collectives (``Iallreduce`` ... ``Ialltoallw``, defined beside their
blocking forms in reductions.py, collectives.py and vector_collectives.py) and of the
:class:`Request` they return (requests.py).

Every scenario below runs once through the blocking method and once through its non-blocking form
(whose request is waited for), on every heat dtype, with contiguous and with strided buffers; both
must give the reference result and agree with each other. The other tests cover what only the
non-blocking forms have: requests in flight together, ``Test``/``Waitall``, buffers whose last
Python reference is dropped before ``Wait``, and the large-count fallbacks.
"""

import gc
import time
import weakref

import numpy as np
import pytest
import torch
from mpi4py import MPI

import heat as ht
from heat.core import communication as hc
from tests.core.communication.comm_helpers import (
    ALL_DTYPES,
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

UNDEFINED = object()  # an expected value nothing has to match (rank 0's Exscan result)


def layout(t, contiguous):
    """A tensor with the values of ``t``: a contiguous copy, or a strided view of a larger one."""
    return t.clone() if contiguous else strided(t)


def zeros(dtype, n, contiguous):
    return layout(torch.zeros(n, dtype=dtype), contiguous)


def place(dtype, counts, displs, total, blocks):
    """A tensor of ``total`` zeros with ``blocks[r]`` at ``displs[r]``."""
    out = torch.zeros(total, dtype=dtype)
    for block, count, displ in zip(blocks, counts, displs):
        out[displ : displ + count] = block
    return out


def form(name, blocking):
    """``WORLD.<name>``, or its non-blocking form ``WORLD.I<name>`` followed by ``Wait()``."""
    if blocking:
        return getattr(WORLD, name)
    method = getattr(WORLD, "I" + name[0].lower() + name[1:])

    def call(*args, **kwargs):
        request = method(*args, **kwargs)
        if not isinstance(request, hc.Request):
            raise AssertionError(f"I{name} returned {type(request).__name__}, not a Request")
        return request.Wait()

    return call


# Each scenario calls ``call`` (one of the two forms of one collective) and returns a list of
# (label, what the call returned, expected value); a returned receive tensor must be the very
# tensor passed in, which ``receives`` records.


def reduction_ops(dtype):
    return ["SUM", "PROD" if dtype.is_complex else "MAX"]


def scenario_allreduce(call, dtype, contiguous):
    results = []
    for op in reduction_ops(dtype):
        everyone = [make(dtype, 7, r, low=1, high=3) for r in range(SIZE)]
        recv = zeros(dtype, 7, contiguous)
        got = call(layout(everyone[RANK], contiguous), recv, getattr(MPI, op))
        results.append((op, got, reference(dtype, op, everyone), recv))
    everyone = [make(dtype, 7, r) for r in range(SIZE)]
    in_place = layout(everyone[RANK], contiguous)
    got = call(MPI.IN_PLACE, in_place, MPI.SUM)
    results.append(("in place", got, reference(dtype, "SUM", everyone), in_place))
    return results


def scenario_reduce(call, dtype, contiguous):
    everyone = [make(dtype, 7, r) for r in range(SIZE)]
    root = SIZE - 1
    recv = zeros(dtype, 7, contiguous) if RANK == root else None
    got = call(layout(everyone[RANK], contiguous), recv, MPI.SUM, root=root)
    expected = reference(dtype, "SUM", everyone) if RANK == root else None
    results = [("to the last rank", got, expected, recv)]
    own = layout(everyone[RANK], contiguous)
    got = call(MPI.IN_PLACE if RANK == 0 else own, own if RANK == 0 else None, MPI.SUM, root=0)
    expected = reference(dtype, "SUM", everyone) if RANK == 0 else None
    results.append(("in place on rank 0", got, expected, own if RANK == 0 else None))
    return results


def scenario_scan(call, dtype, contiguous):
    everyone = [make(dtype, 7, r) for r in range(SIZE)]
    recv = zeros(dtype, 7, contiguous)
    got = call(layout(everyone[RANK], contiguous), recv, MPI.SUM)
    return [("inclusive", got, reference(dtype, "SUM", everyone[: RANK + 1]), recv)]


def scenario_exscan(call, dtype, contiguous):
    everyone = [make(dtype, 7, r) for r in range(SIZE)]
    recv = zeros(dtype, 7, contiguous)
    got = call(layout(everyone[RANK], contiguous), recv, MPI.SUM)
    expected = reference(dtype, "SUM", everyone[:RANK]) if RANK > 0 else UNDEFINED
    return [("exclusive", got, expected, recv)]


def scenario_bcast(call, dtype, contiguous):
    root = SIZE - 1
    data = make(dtype, 9, 5)
    buf = layout(data, contiguous) if RANK == root else zeros(dtype, 9, contiguous)
    return [("from the last rank", call(buf, root=root), data, buf)]


def scenario_allgather(call, dtype, contiguous):
    everyone = [make(dtype, 5, r) for r in range(SIZE)]
    recv = zeros(dtype, 5 * SIZE, contiguous)
    got = call(layout(everyone[RANK], contiguous), recv)
    results = [("blocks", got, torch.cat(everyone), recv)]
    in_place = layout(place(dtype, [5], [5 * RANK], 5 * SIZE, [everyone[RANK]]), contiguous)
    got = call(MPI.IN_PLACE, in_place)
    results.append(("in place", got, torch.cat(everyone), in_place))
    return results


def scenario_gather(call, dtype, contiguous):
    everyone = [make(dtype, 5, r) for r in range(SIZE)]
    root = SIZE // 2
    recv = zeros(dtype, 5 * SIZE, contiguous) if RANK == root else None
    got = call(layout(everyone[RANK], contiguous), recv, root=root)
    return [("to the middle rank", got, torch.cat(everyone) if RANK == root else None, recv)]


def scenario_scatter(call, dtype, contiguous):
    blocks = [make(dtype, 5, 10 + r) for r in range(SIZE)]
    root = SIZE - 1
    send = layout(torch.cat(blocks), contiguous) if RANK == root else None
    recv = zeros(dtype, 5, contiguous)
    results = [("from the last rank", call(send, recv, root=root), blocks[RANK], recv)]
    # in place on the root: its block stays in the send tensor, nothing is returned there
    send = layout(torch.cat(blocks), contiguous) if RANK == 0 else None
    recv = MPI.IN_PLACE if RANK == 0 else zeros(dtype, 5, contiguous)
    got = call(send, recv, root=0)
    results.append(("in place", got, None if RANK == 0 else blocks[RANK], recv))
    return results


def scenario_alltoall(call, dtype, contiguous):
    send = torch.cat([make(dtype, 3, 10 * RANK + q) for q in range(SIZE)])
    expected = torch.cat([make(dtype, 3, 10 * q + RANK) for q in range(SIZE)])
    recv = zeros(dtype, 3 * SIZE, contiguous)
    results = [("blocks", call(layout(send, contiguous), recv), expected, recv)]
    in_place = layout(send, contiguous)
    results.append(("in place", call(MPI.IN_PLACE, in_place), expected, in_place))
    return results


def scenario_allgatherv(call, dtype, contiguous):
    counts, displs, total = v_layout(SIZE, 1)  # uneven, some empty, gaps between blocks
    everyone = [make(dtype, counts[r], r) for r in range(SIZE)]
    expected = place(dtype, counts, displs, total, everyone)
    recv = zeros(dtype, total, contiguous)
    got = call(layout(everyone[RANK], contiguous), (recv, counts, displs))
    results = [("uneven", got, expected, recv)]
    own = place(dtype, [counts[RANK]], [displs[RANK]], total, [everyone[RANK]])
    in_place = layout(own, contiguous)
    got = call(MPI.IN_PLACE, (in_place, counts, displs))
    results.append(("in place", got, expected, in_place))
    return results


def scenario_gatherv(call, dtype, contiguous):
    counts, displs, total = v_layout(SIZE, 2)
    everyone = [make(dtype, counts[r], r) for r in range(SIZE)]
    root = SIZE // 2
    recv = zeros(dtype, total, contiguous) if RANK == root else None
    got = call(
        layout(everyone[RANK], contiguous), (recv, counts, displs) if RANK == root else None, root
    )
    expected = place(dtype, counts, displs, total, everyone) if RANK == root else None
    return [("uneven to the middle rank", got, expected, recv)]


def scenario_scatterv(call, dtype, contiguous):
    counts, displs, total = v_layout(SIZE, 0)
    blocks = [make(dtype, counts[r], 20 + r) for r in range(SIZE)]
    root = SIZE - 1
    send = (layout(place(dtype, counts, displs, total, blocks), contiguous), counts, displs)
    recv = zeros(dtype, counts[RANK], contiguous)
    got = call(send if RANK == root else None, recv, root)
    return [("uneven from the last rank", got, blocks[RANK], recv)]


def scenario_alltoallv(call, dtype, contiguous):
    scounts = [(RANK + q) % 3 for q in range(SIZE)]  # rank r sends (r + q) % 3 elements to q
    rcounts = [(q + RANK) % 3 for q in range(SIZE)]
    send = torch.cat([make(dtype, scounts[q], 10 * RANK + q) for q in range(SIZE)])
    expected = torch.cat([make(dtype, rcounts[q], 10 * q + RANK) for q in range(SIZE)])
    recv = zeros(dtype, sum(rcounts), contiguous)
    got = call((layout(send, contiguous), scounts), (recv, rcounts))
    return [("uneven", got, expected, recv)]


def scenario_alltoallw(call, dtype, contiguous):
    sends = [
        layout(make(dtype, (RANK + q) % 3 + 1, 10 * RANK + q), contiguous) for q in range(SIZE)
    ]
    recvs = [zeros(dtype, (q + RANK) % 3 + 1, contiguous) for q in range(SIZE)]
    # one entry as a list of two pieces: an empty tensor and a 2-d transposed view
    sends[0] = [sends[0][:0], sends[0].reshape(1, -1).t()]
    expected = [make(dtype, (q + RANK) % 3 + 1, 10 * q + RANK) for q in range(SIZE)]
    got = call(sends, recvs)
    return [(f"from rank {q}", got[q], expected[q], recvs[q]) for q in range(SIZE)]


SCENARIOS = {
    "Allreduce": scenario_allreduce,
    "Reduce": scenario_reduce,
    "Scan": scenario_scan,
    "Exscan": scenario_exscan,
    "Bcast": scenario_bcast,
    "Allgather": scenario_allgather,
    "Gather": scenario_gather,
    "Scatter": scenario_scatter,
    "Alltoall": scenario_alltoall,
    "Allgatherv": scenario_allgatherv,
    "Gatherv": scenario_gatherv,
    "Scatterv": scenario_scatterv,
    "Alltoallv": scenario_alltoallv,
    "Alltoallw": scenario_alltoallw,
}


def matches(got, expected, recv):
    """Whether ``got`` is the receive tensor ``recv`` holding ``expected`` (None: nothing)."""
    if expected is UNDEFINED:
        return True
    if expected is None:
        return got is None
    return got is recv and same(got.reshape(-1), expected.reshape(-1))


def run_both_forms(name, dtypes):
    """Failures of ``name``'s scenario in both forms over ``dtypes`` and both layouts."""
    failures = []
    for dtype in dtypes:
        for contiguous in (True, False):
            outputs = {}
            for blocking in (True, False):
                results = SCENARIOS[name](form(name, blocking), dtype, contiguous)
                for label, got, expected, recv in results:
                    if not matches(got, expected, recv):
                        failures.append((name, blocking, dtype, contiguous, label, got, expected))
                outputs[blocking] = [got for _, got, expected, _ in results]
            # both forms return the same values (rank 0's Exscan result is undefined)
            if name != "Exscan" or RANK > 0:
                for got_b, got_nb in zip(outputs[True], outputs[False]):
                    if (got_b is None) != (got_nb is None) or (
                        got_b is not None and not same(got_b, got_nb)
                    ):
                        failures.append((name, "forms differ", dtype, contiguous, got_b, got_nb))
    return failures


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_both_forms_every_dtype(name):
    failures = run_both_forms(name, ALL_DTYPES)
    agree(not failures, failures[:3])


@pytest.mark.parametrize("large", [True, False])
def test_both_forms_beyond_the_per_call_limit(monkeypatch, large):
    # a per-call limit of 2 elements: reductions in several requests, long messages as derived
    # datatypes, v-collectives through one Alltoallw of absolute addresses; without MPI-4 large
    # counts Alltoallw's pieces are structs at absolute addresses
    monkeypatch.setattr(hc.buffers, "_MAX_COUNT", 2)
    monkeypatch.setattr(hc.buffers, "_LARGE_COUNT", large)
    failures = []
    for name in SCENARIOS:
        failures += run_both_forms(name, [torch.bool, torch.bfloat16, torch.complex128])
    agree(not failures, failures[:3])


@pytest.mark.parametrize("dtype", [torch.float16, torch.int64, torch.bool])
def test_iallgatherv_by_broadcasts(monkeypatch, dtype):
    # large blocks go by one broadcast per owner: several requests, the own block copied at once
    monkeypatch.setattr(hc.vector_collectives, "_BCAST_ALLGATHERV_BYTES", 1)
    failures = run_both_forms("Allgatherv", [dtype])
    agree(not failures, failures[:3])


def test_requests_in_flight_together():
    # several non-blocking collectives pending at once, completed by Test, Wait and Waitall
    dtype = torch.bfloat16
    everyone = [make(dtype, 6, r) for r in range(SIZE)]
    gathered = strided(torch.zeros(6 * SIZE, dtype=dtype))
    first = WORLD.Iallgather(strided(everyone[RANK]), gathered)
    second = WORLD.Iscan(everyone[RANK], torch.zeros(6, dtype=dtype), MPI.MAX)
    scounts = [(RANK + q) % 3 for q in range(SIZE)]
    rcounts = [(q + RANK) % 3 for q in range(SIZE)]
    send = torch.cat([make(dtype, scounts[q], 10 * RANK + q) for q in range(SIZE)])
    third = WORLD.Ialltoallv((send, scounts), (torch.zeros(sum(rcounts), dtype=dtype), rcounts))
    fourth = WORLD.Ireduce(everyone[RANK], torch.zeros(6, dtype=dtype), MPI.SUM, root=0)
    ok = not first.done and "pending" in repr(first)
    polls = 0
    while not first.Test():
        polls += 1
    ok = ok and first.done and "done" in repr(first) and first.Test()
    ok = ok and first.Wait() is gathered and same(gathered, torch.cat(everyone))
    results = hc.Request.Waitall([second, third, fourth])
    ok = ok and all(request.done for request in (second, third, fourth))
    ok = ok and same(results[0], reference(dtype, "MAX", everyone[: RANK + 1]))
    expected = torch.cat([make(dtype, rcounts[q], 10 * q + RANK) for q in range(SIZE)])
    ok = ok and same(results[1], expected)
    ok = ok and (same(results[2], reference(dtype, "SUM", everyone)) if RANK == 0 else True)
    ok = ok and second.Wait() is results[0]  # waiting again gives the same result
    agree(ok, (polls, results))


def start_with_dropped_references(name, n):
    """
    Start ``I<name>`` on buffers of ``n`` elements per process that only the request references
    afterwards; return the request, weak references to the tensors handed to it and the expected
    result.
    """
    data = [torch.arange(n, dtype=torch.float32) + 1000 * r for r in range(SIZE)]
    send = data[RANK].clone()
    if name == "Iallgather":
        recv = torch.zeros(n * SIZE)
        request = WORLD.Iallgather(send, recv)
        expected = torch.cat(data)
    elif name == "Ialltoall":
        recv = torch.zeros(n)
        request = WORLD.Ialltoall(send, recv)
        block = n // SIZE
        expected = torch.cat([data[q][RANK * block : (RANK + 1) * block] for q in range(SIZE)])
    elif name == "Igatherv":
        recv = torch.zeros(n * SIZE) if RANK == 0 else None
        request = WORLD.Igatherv(send, (recv, [n] * SIZE) if RANK == 0 else None, 0)
        expected = torch.cat(data) if RANK == 0 else None
    elif name == "Iallreduce":
        recv = torch.zeros(n)
        request = WORLD.Iallreduce(send, recv, MPI.SUM)
        expected = sum(data)
    else:  # Ialltoallw of views; strided receives are staged and copied back on completion
        block = n // SIZE
        send = list(send.split(block))
        recv = list(torch.zeros(2 * n)[::2].split(block))
        request = WORLD.Ialltoallw(send, recv)
        expected = torch.cat([data[q][RANK * block : (RANK + 1) * block] for q in range(SIZE)])
    handed = (send if isinstance(send, list) else [send]) + (
        recv if isinstance(recv, list) else [recv] if recv is not None else []
    )
    return request, [weakref.ref(t) for t in handed], expected


def test_wait_reporting():
    # a process whose partners are late: one report after report_after seconds, then the result
    # (printing uses it: its gather waits forever for processes that never print)
    reports = []
    late = RANK == SIZE - 1 and SIZE > 1
    if late:
        time.sleep(1.0)
    request = WORLD.Iallreduce(torch.ones(2), torch.empty(2))
    result = request.wait_reporting(0.2, reports.append)
    ok = torch.equal(result, torch.full((2,), float(SIZE))) and request.done
    # the last rank came late: everyone else waited and reported once, with the seconds so far
    early = SIZE > 1 and not late
    ok = ok and (len(reports) == 1 and reports[0] >= 0.2 if early else reports == [])
    agree(ok, (reports, result))


@pytest.mark.parametrize(
    "name", ["Iallgather", "Ialltoall", "Igatherv", "Iallreduce", "Ialltoallw"]
)
def test_dropped_references_stay_alive_until_completion(name):
    # 1 MiB per process: freed memory would go back to the system (a use after free crashes) and
    # MPI moves such messages only while it makes progress, i.e. while it is waited for
    n = (1 << 18) - (1 << 18) % SIZE
    request, refs, expected = start_with_dropped_references(name, n)
    gc.collect()
    alive = all(ref() is not None for ref in refs)  # held by the request only
    churn = [torch.full((n,), -1.0) for _ in range(8)]  # reuse any memory that was freed
    # Test() in a loop with pauses (wait_reporting) moves the messages as Wait() does; Wait()
    # busy-polls, and with 4 processes on 2 cores the spinning processes starved the ones that
    # had to move the data: 35-80 s, once past the 120 s timeout in CI
    result = request.wait_reporting(float("inf"), lambda seconds: None)
    del churn
    if isinstance(result, list):  # Ialltoallw: the receive views
        result = torch.cat(result)
    if expected is None:
        ok = result is None
    else:
        ok = result is not None and torch.equal(result.reshape(-1), expected)
    agree(alive and ok, (alive, ok))


def test_dndarray_buffers():
    # a DNDarray passed as a buffer stands for its local block, in both forms
    x = ht.arange(10, dtype=ht.float32, split=0)
    counts, displs, _ = WORLD.counts_displs_shape(x.gshape, 0)
    ok, msg = True, ""
    for blocking in (True, False):
        gathered = ht.zeros(10, dtype=ht.float32)  # replicated: its block is the whole array
        got = form("Allgatherv", blocking)(x, (gathered, counts, displs))
        if got is not gathered.larray or not np.array_equal(gathered.numpy(), np.arange(10.0)):
            ok, msg = False, f"Allgatherv blocking={blocking}: {gathered.larray}"
        total = ht.zeros(10, dtype=ht.float32)
        form("Allreduce", blocking)(gathered, total, MPI.SUM)
        if not np.array_equal(total.numpy(), SIZE * np.arange(10.0)):
            ok, msg = False, f"Allreduce blocking={blocking}: {total.larray}"
        form("Allreduce", blocking)(total, total, MPI.MAX)  # the same DNDarray: in place
        if not np.array_equal(total.numpy(), SIZE * np.arange(10.0)):
            ok, msg = False, f"Allreduce in place blocking={blocking}: {total.larray}"
        root_data = ht.array([5, 6, 7]) if RANK == 0 else ht.zeros(3, dtype=ht.int64)
        form("Bcast", blocking)(root_data, 0)
        if not np.array_equal(root_data.numpy(), [5, 6, 7]):
            ok, msg = False, f"Bcast blocking={blocking}: {root_data.larray}"
        pieces = [ht.full((2,), RANK, dtype=ht.int32) for _ in range(SIZE)]
        received = [ht.zeros(2, dtype=ht.int32) for _ in range(SIZE)]
        got = form("Alltoallw", blocking)(pieces, received)
        if not all(g is r.larray and (g == q).all() for q, (g, r) in enumerate(zip(got, received))):
            ok, msg = False, f"Alltoallw blocking={blocking}: {got}"
    request = WORLD.Irecv(ht.zeros(3, dtype=ht.float64), source=(RANK - 1) % SIZE, tag=11)
    WORLD.Isend(ht.full((3,), float(RANK), dtype=ht.float64), (RANK + 1) % SIZE, tag=11).Wait()
    got = request.Wait()
    expected = torch.full((3,), float((RANK - 1) % SIZE), dtype=torch.float64, device=got.device)
    if not torch.equal(got, expected):
        ok, msg = False, f"Isend/Irecv: {got}"
    agree(ok, msg)


BAD_CALLS = {
    # the same invalid arguments on every rank: every rank raises before any communication
    "Iallreduce": (
        ValueError,
        "op",
        lambda: WORLD.Iallreduce(torch.ones(2), torch.ones(2), MPI.BAND),
    ),
    "Ireduce": (ValueError, "op", lambda: WORLD.Ireduce(torch.ones(2), torch.ones(2), MPI.BOR)),
    "Iscan": (TypeError, "op", lambda: WORLD.Iscan(torch.ones(2), torch.ones(2), "sum")),
    "Iexscan": (
        ValueError,
        "op",
        lambda: WORLD.Iexscan(
            torch.ones(2, dtype=torch.complex64), torch.ones(2, dtype=torch.complex64), MPI.MAX
        ),
    ),
    "Ibcast": (TypeError, "buf", lambda: WORLD.Ibcast([1, 2])),
    "Iallgather": (
        ValueError,
        "sendbuf",
        lambda: WORLD.Iallgather(torch.ones(2), torch.ones(2 * SIZE, dtype=torch.int32)),
    ),
    "Igather": (ValueError, "root", lambda: WORLD.Igather(torch.ones(2), torch.ones(2), SIZE)),
    "Iscatter": (TypeError, "recvbuf", lambda: WORLD.Iscatter(torch.ones(SIZE), "x", 0)),
    "Ialltoall": (
        ValueError,
        "sendbuf",
        lambda: WORLD.Ialltoall(torch.ones(SIZE), torch.ones(2 * SIZE)),
    ),
    "Iallgatherv": (
        ValueError,
        "recvbuf counts",
        lambda: WORLD.Iallgatherv(torch.ones(1), (torch.ones(SIZE + 1), [1] * (SIZE + 1))),
    ),
    "Igatherv": (TypeError, "root", lambda: WORLD.Igatherv(torch.ones(1), None, root=0.0)),
    "Iscatterv": (ValueError, "root", lambda: WORLD.Iscatterv(None, torch.ones(1), SIZE)),
    "Ialltoallv": (
        ValueError,
        "dtype",
        lambda: WORLD.Ialltoallv(
            (torch.ones(SIZE), [1] * SIZE), (torch.ones(SIZE, dtype=torch.int32), [1] * SIZE)
        ),
    ),
    "Ialltoallw": (
        ValueError,
        "recvbufs",
        lambda: WORLD.Ialltoallw([torch.ones(1)] * SIZE, [torch.ones(1)] * (SIZE + 1)),
    ),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_invalid_arguments_raise_everywhere(name):
    exception, argument, call = BAD_CALLS[name]
    try:
        call()
        raised = ("nothing", "")
    except Exception as error:
        raised = (type(error).__name__, str(error))
    # the same exception type on every rank, naming the argument, and the next collective works
    ok = raised[0] == exception.__name__ and argument in raised[1]
    types = WORLD.allgather(raised[0])
    ok = ok and len(set(types)) == 1
    ok = ok and WORLD.Iallreduce(torch.ones(1), torch.zeros(1)).Wait().item() == SIZE
    agree(ok, raised)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensors_in_both_forms():
    # device tensors go through host stages unless MPI is CUDA-aware; results land on the device
    device = torch.device("cuda", torch.cuda.current_device())
    dtype = torch.float16  # reduced by a user-defined op on the host
    everyone = [make(dtype, 6, r) for r in range(SIZE)]
    failures = []
    for blocking in (True, False):
        out = torch.zeros(6, dtype=dtype, device=device)
        got = form("Allreduce", blocking)(everyone[RANK].to(device), out, MPI.SUM)
        if got is not out or not same(out.cpu(), reference(dtype, "SUM", everyone)):
            failures.append(("Allreduce", blocking, out))
        out = torch.zeros(6, SIZE, dtype=dtype, device=device).t()  # non-contiguous
        got = form("Allgather", blocking)(everyone[RANK].to(device), out)
        if got is not out or not same(out.cpu(), torch.stack(everyone)):
            failures.append(("Allgather", blocking, out))
        sends = [make(dtype, q + 1, 10 * RANK + q).to(device) for q in range(SIZE)]
        recvs = [torch.zeros(RANK + 1, dtype=dtype, device=device) for _ in range(SIZE)]
        got = form("Alltoallw", blocking)(sends, recvs)
        expected = [make(dtype, RANK + 1, 10 * q + RANK) for q in range(SIZE)]
        if not all(same(g.cpu(), e) for g, e in zip(got, expected)):
            failures.append(("Alltoallw", blocking, got))
    agree(not failures, failures)
