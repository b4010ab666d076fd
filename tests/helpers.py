"""
Shared test utilities: NumPy is the oracle.

Every helper here is collective where it touches distributed data, so call it on every rank.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence, Tuple

import numpy as np
import torch

import heat as ht

# the splits every function is tested on
SPLITS = (None, 0, 1, -1)


def splits_for(ndim: int) -> Tuple[Optional[int], ...]:
    """The distinct split values valid for ``ndim`` dimensions: None, 0..ndim-1 and -1."""
    values = [None] + list(range(ndim))
    if ndim > 1:
        values.append(-1)
    return tuple(values)


def world_size() -> int:
    return ht.MPI_WORLD.size


def collective_assert(ok: bool, message: str = "") -> None:
    """Assert ``ok`` on every rank; fails on all ranks if it fails on one."""
    all_ok = ht.MPI_WORLD.allreduce(bool(ok), op=ht.MPI.LAND)
    if not all_ok:
        raise AssertionError(message if not ok else "assertion failed on another rank")


def check_layout(x: "ht.DNDarray") -> None:
    """The invariants every DNDarray keeps (DESIGN.md), checked collectively."""
    assert isinstance(x, ht.DNDarray), f"expected a DNDarray, got {type(x).__name__}"
    ok = tuple(x.larray.shape) == x.lshape
    message = f"larray shape {tuple(x.larray.shape)} != lshape {x.lshape}"
    shapes = x.comm.allgather(tuple(x.larray.shape))
    if x.split is None:
        ok = ok and all(s == x.gshape for s in shapes)
        message = message if not ok else message
        if not ok:
            message = f"split=None but local shapes {shapes} differ from gshape {x.gshape}"
    else:
        total = sum(s[x.split] for s in shapes)
        others_ok = all(
            len(s) == x.ndim and all(s[i] == x.gshape[i] for i in range(x.ndim) if i != x.split)
            for s in shapes
        )
        if total != x.gshape[x.split] or not others_ok:
            ok = False
            message = f"local shapes {shapes} do not compose gshape {x.gshape} along split {x.split}"
        cached = x._balanced
        if cached is not None:
            actual = x.is_balanced(force_check=True)
            if cached != actual:
                ok = False
                message = f"balanced flag says {cached}, layout says {actual}"
    if x.larray.dtype != x.dtype.torch_type():
        ok = False
        message = f"larray dtype {x.larray.dtype} != dtype {x.dtype}"
    collective_assert(ok, message)


def assert_array_equal(
    actual,
    expected,
    rtol: float = 1e-5,
    atol: float = 1e-8,
    check_dtype: bool = True,
    equal_nan: bool = True,
) -> None:
    """
    Compare a DNDarray with a NumPy result: layout invariants, shape, dtype (heat's
    counterpart of the NumPy dtype) and values. Collective.
    """
    expected = np.asarray(expected)
    check_layout(actual)
    ok, message = True, ""
    if actual.gshape != expected.shape:
        ok, message = False, f"shape {actual.gshape} != expected {expected.shape}"
    if ok and check_dtype:
        expected_type = ht.types.canonical_heat_type(expected.dtype)
        if actual.dtype is not expected_type:
            ok, message = False, f"dtype {actual.dtype.__name__} != expected {expected_type.__name__}"
    values = actual.numpy()
    if ok:
        try:
            if expected.dtype.kind in "fc" or values.dtype.kind in "fc":
                np.testing.assert_allclose(values, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
            else:
                np.testing.assert_array_equal(values, expected)
        except AssertionError as error:
            ok, message = False, str(error)
    collective_assert(ok, message)


def assert_raises_then_collective_works(exception, function, *args, **kwargs) -> None:
    """``function`` raises ``exception`` on every rank, and the next collective still completes."""
    raised = None
    try:
        function(*args, **kwargs)
    except exception as error:  # noqa: B902
        raised = error
    collective_assert(raised is not None, f"{function} did not raise {exception.__name__}")
    total = ht.MPI_WORLD.allreduce(1)
    collective_assert(total == ht.MPI_WORLD.size, "collective after the error did not complete")


def random_array(shape: Sequence[int], dtype=np.float64, seed: int = 0, low=-10, high=10) -> np.ndarray:
    """Reproducible NumPy test data, identical on every rank."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        lo = max(low, np.iinfo(dtype).min)
        return rng.integers(lo, high, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(low, high, size=shape) + 1j * rng.uniform(low, high, size=shape)).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


# shapes that exercise uneven splits and fewer rows than processes at 1-4 processes
SHAPES = ((7,), (5, 6), (2, 3, 4), (1, 5), (0, 3))

DTYPES = (np.float32, np.float64, np.int32, np.int64)


def combinations(shapes: Iterable[Sequence[int]] = SHAPES):
    """(shape, split) pairs over every valid split of every shape."""
    for shape in shapes:
        for split in splits_for(len(shape)):
            yield tuple(shape), split


def assert_arrays_equal(pairs, rtol: float = 1e-5, atol: float = 1e-8, check_dtype: bool = True) -> None:
    """
    Batched :func:`assert_array_equal` for many results at once, with two collectives in all
    (one allgather of every local block, one agreement on the outcome) instead of ~5 per array.

    ``pairs``: iterable of ``(actual, expected)`` or ``(actual, expected, {"rtol": ..., ...})``.
    Checks the same as assert_array_equal: layout invariants, shape, dtype, values (NaN == NaN).
    """
    pairs = [tuple(p) if len(p) == 3 else (p[0], p[1], {}) for p in pairs]
    payload = []
    for actual, _, _ in pairs:
        if isinstance(actual, ht.DNDarray):
            local = actual.larray.detach().cpu()
            local = local.float() if local.dtype is torch.bfloat16 else local
            payload.append((tuple(actual.larray.shape), local.resolve_conj().resolve_neg().numpy()))
        else:
            payload.append(None)
    gathered = ht.MPI_WORLD.allgather(payload)
    ok, message = True, ""
    for index, (actual, expected, options) in enumerate(pairs):
        expected = np.asarray(expected)
        prefix = f"result {index}: "
        if not isinstance(actual, ht.DNDarray):
            ok, message = False, prefix + f"expected a DNDarray, got {type(actual).__name__}"
            break
        shapes = [g[index][0] for g in gathered]
        blocks = [g[index][1] for g in gathered]
        if actual.larray.dtype != actual.dtype.torch_type():
            ok, message = False, prefix + f"larray dtype {actual.larray.dtype} != dtype {actual.dtype}"
            break
        if actual.split is None:
            if any(s != actual.gshape for s in shapes):
                ok, message = False, prefix + f"split=None but local shapes {shapes} != gshape {actual.gshape}"
                break
            values = blocks[actual.comm.rank]
        else:
            split = actual.split
            if any(len(s) != actual.ndim or any(s[i] != actual.gshape[i] for i in range(actual.ndim) if i != split)
                   for s in shapes) or sum(s[split] for s in shapes) != actual.gshape[split]:
                ok, message = False, prefix + f"local shapes {shapes} do not compose {actual.gshape} along {split}"
                break
            if actual._balanced is not None:
                balanced = tuple(s[split] for s in shapes) == tuple(
                    actual.comm.counts_displs_shape(actual.gshape, split)[0])
                if balanced != actual._balanced:
                    ok, message = False, prefix + f"balanced flag says {actual._balanced}, layout says {balanced}"
                    break
            values = np.concatenate(blocks, axis=split)
        if actual.gshape != expected.shape:
            ok, message = False, prefix + f"shape {actual.gshape} != expected {expected.shape}"
            break
        if check_dtype and actual.dtype is not ht.types.canonical_heat_type(expected.dtype):
            ok, message = False, prefix + f"dtype {actual.dtype.__name__} != expected {expected.dtype}"
            break
        try:
            if expected.dtype.kind in "fc" or values.dtype.kind in "fc":
                np.testing.assert_allclose(values, expected, rtol=options.get("rtol", rtol),
                                           atol=options.get("atol", atol), equal_nan=True)
            else:
                np.testing.assert_array_equal(values, expected)
        except AssertionError as error:
            ok, message = False, prefix + str(error)
            break
    collective_assert(ok, message)
