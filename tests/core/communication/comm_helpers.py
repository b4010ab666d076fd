"""
Helpers of the communication tests: deterministic data every rank can rebuild for every other rank,
non-contiguous views, and assertions that agree on all ranks.
"""

import functools

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


def v_layout(size, seed):
    """Uneven counts (some zero) with gaps between the blocks."""
    counts = [(r + seed) % 3 for r in range(size)]
    displs, position = [], 1
    for c in counts:
        displs.append(position)
        position += c + 1
    return counts, displs, position
