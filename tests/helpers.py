"""
Shared test utilities: NumPy is the oracle.

Every helper here is collective where it touches distributed data, so call it on every rank.
"""

from __future__ import annotations

import os
import warnings
from typing import Dict, Iterable, Optional, Sequence, Tuple

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


#: environment variables of MPI process managers (MPICH's Hydra, PMI, PMIx, Open MPI)
LAUNCHER_PREFIXES = ("PMI_", "PMIX_", "HYDRA_", "HYDI_", "MPI_LOCAL", "OMPI_", "MPIR_")
#: the repository root, for the PYTHONPATH of jobs that tests start
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fresh_job_environment(**extra: str) -> Dict[str, str]:
    """
    This process's environment for a new ``mpiexec`` job that a test starts: without the
    process manager's variables of the job the test runs in (or the new job's processes would
    try to join it), with the repository first on ``PYTHONPATH``, and ``extra`` on top.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_PREFIXES)}
    env["PYTHONPATH"] = os.pathsep.join([REPO_ROOT, env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


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
            message = (
                f"local shapes {shapes} do not compose gshape {x.gshape} along split {x.split}"
            )
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
            ok, message = (
                False,
                f"dtype {actual.dtype.__name__} != expected {expected_type.__name__}",
            )
    values = actual.numpy()
    if ok:
        try:
            if expected.dtype.kind in "fc" or values.dtype.kind in "fc":
                np.testing.assert_allclose(
                    values, expected, rtol=rtol, atol=atol, equal_nan=equal_nan
                )
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


def random_array(
    shape: Sequence[int], dtype=np.float64, seed: int = 0, low=-10, high=10
) -> np.ndarray:
    """Reproducible NumPy test data, identical on every rank."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        lo = max(low, np.iinfo(dtype).min)
        return rng.integers(lo, high, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (
            rng.uniform(low, high, size=shape) + 1j * rng.uniform(low, high, size=shape)
        ).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


# shapes that exercise uneven splits and fewer rows than processes at 1-4 processes
SHAPES = ((7,), (5, 6), (2, 3, 4), (1, 5), (0, 3))

DTYPES = (np.float32, np.float64, np.int32, np.int64)


def combinations(shapes: Iterable[Sequence[int]] = SHAPES):
    """(shape, split) pairs over every valid split of every shape."""
    for shape in shapes:
        for split in splits_for(len(shape)):
            yield tuple(shape), split


def assert_arrays_equal(
    pairs, rtol: float = 1e-5, atol: float = 1e-8, check_dtype: bool = True
) -> None:
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
            ok, message = (
                False,
                prefix + f"larray dtype {actual.larray.dtype} != dtype {actual.dtype}",
            )
            break
        if actual.split is None:
            if any(s != actual.gshape for s in shapes):
                ok, message = (
                    False,
                    prefix + f"split=None but local shapes {shapes} != gshape {actual.gshape}",
                )
                break
            values = blocks[actual.comm.rank]
        else:
            split = actual.split
            if (
                any(
                    len(s) != actual.ndim
                    or any(s[i] != actual.gshape[i] for i in range(actual.ndim) if i != split)
                    for s in shapes
                )
                or sum(s[split] for s in shapes) != actual.gshape[split]
            ):
                ok, message = (
                    False,
                    prefix + f"local shapes {shapes} do not compose {actual.gshape} along {split}",
                )
                break
            if actual._balanced is not None:
                balanced = tuple(s[split] for s in shapes) == tuple(
                    actual.comm.counts_displs_shape(actual.gshape, split)[0]
                )
                if balanced != actual._balanced:
                    ok, message = (
                        False,
                        prefix + f"balanced flag says {actual._balanced}, layout says {balanced}",
                    )
                    break
            values = np.concatenate(blocks, axis=split)
        if actual.gshape != expected.shape:
            ok, message = False, prefix + f"shape {actual.gshape} != expected {expected.shape}"
            break
        if check_dtype and actual.dtype is not ht.types.canonical_heat_type(expected.dtype):
            ok, message = (
                False,
                prefix + f"dtype {actual.dtype.__name__} != expected {expected.dtype}",
            )
            break
        try:
            if expected.dtype.kind in "fc" or values.dtype.kind in "fc":
                np.testing.assert_allclose(
                    values,
                    expected,
                    rtol=options.get("rtol", rtol),
                    atol=options.get("atol", atol),
                    equal_nan=True,
                )
            else:
                np.testing.assert_array_equal(values, expected)
        except AssertionError as error:
            ok, message = False, prefix + str(error)
            break
    collective_assert(ok, message)


# ---------------------------------------------------------------------------------------------
# reductions (statistics, quantiles, histograms)
# ---------------------------------------------------------------------------------------------
# (2, 3) and (1, 5) leave processes empty at 3-4 processes; (3, 4, 5) split=0 is the HeAT 1.8 abort
REDUCTION_SHAPES = ((7,), (5, 6), (3, 4, 5), (2, 3), (1, 5))
REDUCTION_CASES = [(shape, split) for shape in REDUCTION_SHAPES for split in splits_for(len(shape))]
REDUCTION_IDS = [f"{shape}-split{split}" for shape, split in REDUCTION_CASES]
# the costlier statistics: None, the first and the last split axis (-1 is the last one)
SHORT_CASES = [
    (shape, split)
    for shape in REDUCTION_SHAPES
    for split in sorted({None, 0, len(shape) - 1}, key=str)
]
SHORT_IDS = [f"{shape}-split{split}" for shape, split in SHORT_CASES]


def axes_for(ndim, split):
    """None, the split axis (distributed reduction), another axis (local one), for 3-D a tuple."""
    if ndim == 1:
        return [None, -1]
    along = 0 if split is None else split
    other = ndim - 1 if along % ndim != ndim - 1 else 0
    axes = [None, along, other - ndim if other else other]
    if ndim == 3:
        axes.append((0, 2))
    return axes


def rotate(values, i):
    return values[i % len(values)]


def quiet(function, *args, **kwargs):
    """NumPy's result, without its warnings about empty or all-NaN slices."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# batched checks of many results (manipulations, joining)
# ---------------------------------------------------------------------------------------------
def shape_id(shape):
    return "x".join(map(str, shape))


class Checks:
    """Collect (result, NumPy result) pairs; :meth:`verify` checks them all collectively."""

    def __init__(self):
        self.items = []
        self.failures = []

    def __call__(self, actual, expected, label=""):
        # the local values as they are now (a later in-place change must not affect the check)
        snapshot = actual.larray.detach().clone() if isinstance(actual, ht.DNDarray) else None
        self.items.append((actual, snapshot, np.asarray(expected), label))

    def expect(self, condition, message):
        """Record a condition on global information (checked collectively in :meth:`verify`)."""
        if not condition:
            self.failures.append(message)

    def verify(self):
        comm = ht.MPI_WORLD
        shapes = [
            tuple(a.larray.shape) if isinstance(a, ht.DNDarray) else None
            for a, _, _, _ in self.items
        ]
        all_shapes = comm.allgather(shapes) if comm.size > 1 else [shapes]
        errors = list(self.failures)
        for i, (actual, snapshot, expected, label) in enumerate(self.items):
            message = _check_block(actual, snapshot, expected, [s[i] for s in all_shapes], comm)
            if message:
                errors.append(f"[{label}] {message}")
        self.items, self.failures = [], []
        collective_assert(not errors, "\n".join(errors[:6]))


def _check_block(actual, snapshot, expected, shapes, comm):
    """What is wrong with this process's view of ``actual`` (None if nothing)."""
    if not isinstance(actual, ht.DNDarray):
        return f"expected a DNDarray, got {type(actual).__name__}"
    if actual.gshape != expected.shape:
        return f"shape {actual.gshape} != expected {expected.shape}"
    expected_type = ht.types.canonical_heat_type(expected.dtype)
    if actual.dtype is not expected_type:
        return f"dtype {actual.dtype.__name__} != expected {expected_type.__name__}"
    if actual.larray.dtype != actual.dtype.torch_type():
        return f"larray dtype {actual.larray.dtype} != dtype {actual.dtype}"
    split = actual.split
    if split is None:
        if any(s != actual.gshape for s in shapes):
            return f"split=None but local shapes {shapes} differ from {actual.gshape}"
        offset = 0
        if actual._balanced is not True:
            return "split=None but balanced flag is not True"
    else:
        others = all(
            len(s) == actual.ndim
            and all(s[d] == actual.gshape[d] for d in range(actual.ndim) if d != split)
            for s in shapes
        )
        counts = tuple(s[split] for s in shapes)
        if not others or sum(counts) != actual.gshape[split]:
            return f"local shapes {shapes} do not compose {actual.gshape} along split {split}"
        if actual._balanced is not None:
            balanced = counts == tuple(comm.counts_displs_shape(actual.gshape, split)[0])
            if actual._balanced != balanced:
                return f"balanced flag says {actual._balanced}, counts {counts} say {balanced}"
        offset = sum(counts[: comm.rank])
    block = expected
    if split is not None:
        index = [slice(None)] * actual.ndim
        index[split] = slice(offset, offset + shapes[comm.rank][split])
        block = expected[tuple(index)]
    local = snapshot.cpu().resolve_conj().resolve_neg().numpy()
    if local.shape != block.shape:
        return f"local block has shape {local.shape}, expected {block.shape} on rank {comm.rank}"
    if block.dtype.kind in "fc":
        if np.allclose(local, block, rtol=1e-5, atol=1e-8, equal_nan=True):
            return None
    elif np.array_equal(local, block):
        return None
    try:  # for NumPy's description of the difference
        if block.dtype.kind in "fc":
            np.testing.assert_allclose(local, block, rtol=1e-5, atol=1e-8, equal_nan=True)
        else:
            np.testing.assert_array_equal(local, block)
    except AssertionError as error:
        return f"values differ on rank {comm.rank}: {error}"
    return None


def skewed(x):
    """``x`` with a skewed layout (a third of the rows on rank 0, the rest on the last rank)."""
    size = x.comm.size
    if x.split is None or size == 1:
        return x
    n = x.shape[x.split]
    counts = [0] * size
    counts[0] = n // 3
    counts[-1] = n - n // 3
    return ht.redistribute(x, counts)


def inputs(shape, dtype=np.float32, seed=0, skew=True):
    """
    (NumPy data, heat array, label) for every split of ``shape``, balanced and (for the
    non-negative splits; -1 names the same layout as the last axis) skewed.
    """
    data = random_array(shape, dtype=dtype, seed=seed)
    for split in splits_for(len(shape)):
        x = ht.array(data, split=split)
        yield data, x, f"split={split}"
        if skew and split is not None and split >= 0 and ht.MPI_WORLD.size > 1:
            yield data, skewed(x), f"split={split} skewed"


def describe(argument):
    if isinstance(argument, ht.DNDarray):
        return f"DNDarray{argument.shape} split={argument.split}"
    if isinstance(argument, list):
        return [describe(a) for a in argument]
    return argument


def error_operands(split):
    """The operands of tests of bad calls: a skewed (4, 6) array, a (3, 5) array and a vector."""
    x = skewed(ht.array(random_array((4, 6), np.float32), split=split))
    y = ht.array(random_array((3, 5), np.float32), split=split)
    v = ht.array(random_array((5,), np.float32), split=None if split is None else 0)
    return x, y, v


def expect_errors(calls):
    """Check collectively that every ``(exception, function, args, kwargs)`` raises as listed."""
    failures = []
    for exception, function, args, kwargs in calls:
        call = f"{function.__name__}{tuple(describe(a) for a in args)} {kwargs}"
        try:
            function(*args, **kwargs)
            failures.append(f"{call} did not raise {exception.__name__}")
        except exception:
            pass
        except Exception as error:  # noqa: B902 - report the wrong type
            failures.append(f"{call} raised {type(error).__name__}: {error}")
    collective_assert(not failures, "\n".join(failures))


def raised_message(exception, function, *args, **kwargs) -> Optional[str]:
    """The message of the ``exception`` that ``function(*args, **kwargs)`` raises, or None."""
    try:
        function(*args, **kwargs)
    except exception as error:  # noqa: B902
        return str(error)
    return None


def assert_one_process_error_everywhere(exception, fragment, function, *args, **kwargs) -> None:
    """
    ``function`` gets an argument that is bad on the last process only: every process raises
    ``exception`` with that process's message (``fragment`` in it, and which process it was).
    """
    message = raised_message(exception, function, *args, **kwargs)
    size = ht.MPI_WORLD.size
    ok = message is not None and fragment in message
    ok = ok and (size == 1 or f"[on process {size - 1}]" in message)
    collective_assert(ok, f"rank {ht.MPI_WORLD.rank}: {message}")
