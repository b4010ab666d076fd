"""
Tests of heat/core/indexing.py: ``x[key]``, ``x[key] = value``, ``nonzero`` and ``where``.

NumPy is the oracle. For compactness, each test loops over many keys for one (shape, split) and
collects the failures; the ranks agree on the outcome at the end (every comparison uses gathered
data, so all ranks see the same failures).
"""

import numpy as np
import pytest
import torch

import heat as ht
from heat.core import indexing
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    splits_for,
)

SHAPES = ((7,), (5, 6), (3, 4, 5), (2, 3))
COMBOS = [(shape, split) for shape in SHAPES for split in splits_for(len(shape))]
# split=-1 is the last axis: tested by the getitem tests, skipped where it would only repeat them
COMBOS_NO_NEGATIVE = [(shape, split) for shape, split in COMBOS if split is None or split >= 0]


def ids(combo):
    shape, split = combo
    return f"{'x'.join(map(str, shape))}-s{split}"


_NUMPY_OF = {}


def H(data, split=None):
    """A DNDarray key that remembers its NumPy equivalent (the oracle needs no gather)."""
    data = np.asarray(data)
    x = ht.array(data, split=split)
    _NUMPY_OF[id(x)] = (x, data)
    return x


def skewed(x):
    """``x`` with an unbalanced layout (most rows on the last process), if distributed."""
    size = x.comm.size
    if x.split is None or size == 1:
        return x
    n = x.shape[x.split]
    counts = [0] * size
    counts[0] = n // 3
    counts[-1] = n - n // 3
    return ht.redistribute(x, counts)


def masks(shape, split):
    """Boolean masks for ``shape`` as NumPy arrays and as DNDarrays split in several ways."""
    rng = np.random.default_rng(len(shape) * 10 + sum(shape))
    full = rng.random(shape) > 0.4
    result = [full, H(full, split=split), H(full, split=0 if split != 0 else None)]
    lead = rng.random(shape[:1]) > 0.5
    result += [lead, H(lead, split=0), [bool(b) for b in lead]]
    result.append(torch.from_numpy(lead.copy()))
    return result


def keys_for(shape, split):
    """Keys covering basic, mask and integer-array indexing (valid and invalid)."""
    n0 = shape[0]
    ndim = len(shape)
    keys = [
        0,
        n0 - 1,
        -1,
        -n0,
        np.int64(1),
        Ellipsis,
        None,
        (),
        True,
        False,
        slice(None),
        slice(1, None),
        slice(None, None, 2),
        slice(None, None, -1),
        slice(n0 - 1, 0, -2),
        slice(None, None, -3),
        slice(2, 2),
        slice(10, 20),
        slice(-2, None),
        (None, slice(1, None)),
        (Ellipsis, None),
        (slice(None, None, -1), None),
        [0, n0 - 1, 0],
        np.array([-1, 0, 1]) % n0 - n0 * (np.arange(3) % 2),
        [],
        np.array([], dtype=np.int64),
        torch.tensor([n0 - 1, 0]),
        H([1, 0, 1], split=0),
        H(1),
        H([[0, 1, -1], [n0 - 1, 0, 1]], split=1),
        skewed(H([n0 - 1, 0, 1, 1, 0], split=0)),
        # errors
        n0,
        -n0 - 1,
        [n0],
        (Ellipsis, Ellipsis),
        1.5,
        np.array([1.0]),
        (0,) * (ndim + 1),
        np.ones(n0 + 1, dtype=bool),
        "a",
    ]
    keys += masks(shape, split)
    if ndim >= 2:
        n1 = shape[1]
        keys += [
            (1, 2),
            (-1, -1),
            (slice(None), 1),
            (1, slice(None)),
            (slice(None), -1),
            (slice(None, None, -1), slice(1, None, 2)),
            (slice(1, None, 2), slice(None, None, -2)),
            (Ellipsis, 1),
            (None, 1, None),
            (slice(None), None, slice(None, None, -1)),
            ([0, n0 - 1], [1, n1 - 1]),
            ([[0], [n0 - 1]], [1, 0, n1 - 1]),
            (slice(None), [0, n1 - 1, n1 - 1]),
            ([n0 - 1, 0], slice(None, None, -2)),
            (1, [0, 1]),
            ([1, 0], 1),
            ([1], None, [0]),
            (slice(None), [-1, 0]),
            (Ellipsis, [0, 1]),
            (np.array([0, n0 - 1]), Ellipsis),
            ([0, 1], [0, 1, 1]),
            (slice(None), np.ones(n1, dtype=bool)),
            (slice(None), np.zeros(n1, dtype=bool)),
            (slice(None), H(np.arange(n1) % 2 == 0, split=0)),
            (np.arange(n0) % 2 == 0, slice(None, None, -1)),
            (H(np.arange(n0) % 2 == 1, split=0), [0, n1 - 1]),
            (H([1, 0], split=0), H([1, n1 - 1], split=0)),
            (slice(None), H([1, 0], split=0)),
            (0, n1),
            (slice(None), [n1]),
            (np.ones((n0, n1 + 1), dtype=bool)),
        ]
    if ndim >= 3:
        n1, n2 = shape[1], shape[2]
        keys += [
            (1, Ellipsis, 2),
            (0, slice(None), [0, 2]),
            (slice(None), [1, 2], [0, n2 - 1]),
            ([0, 2], slice(None), [1, 3]),
            ([[0], [1]], slice(1, 3), [2, 4]),
            (None, Ellipsis, None),
            (slice(None), 2, [1, -1]),
            (slice(None, None, -1), Ellipsis, slice(None, None, -2)),
            (slice(None), np.random.default_rng(1).random((n1, n2)) > 0.5),
            (np.random.default_rng(2).random((shape[0], n1)) > 0.5, slice(1, None)),
            (slice(None), slice(None), [0, 0, 4]),
            (Ellipsis, [1, 0], slice(None)),
        ]
    return keys


def to_numpy_key(key):
    """The same key for NumPy (DNDarrays gathered, tensors converted)."""
    if isinstance(key, tuple):
        return tuple(to_numpy_key(k) for k in key)
    if isinstance(key, ht.DNDarray):
        known = _NUMPY_OF.get(id(key))
        return known[1] if known is not None and known[0] is key else key.numpy()
    if isinstance(key, torch.Tensor):
        return key.numpy()
    return key


class Checker:
    """
    Compares DNDarrays with NumPy results; the local blocks of all results are gathered in one
    collective at the end (:meth:`failures`), so checking costs one allgather per test.
    """

    def __init__(self):
        self.entries = []
        self.problems = []

    def add(self, result, expected, label):
        if not isinstance(result, ht.DNDarray):
            self.problems.append(f"{label}: got {type(result).__name__}")
            return
        expected = np.asarray(expected)
        self.entries.append(
            (
                label,
                expected,
                result.gshape,
                result.split,
                result.dtype,
                result._balanced,
                result.comm,
                result.larray.cpu().numpy(),
            )
        )

    def failures(self):
        comm = ht.MPI_WORLD
        gathered = comm.allgather([entry[-1] for entry in self.entries])
        problems = list(self.problems)
        for i, (label, expected, gshape, split, dtype, balanced, rcomm, _) in enumerate(
            self.entries
        ):
            pieces = [gathered[r][i] for r in range(comm.size)]
            shapes = [piece.shape for piece in pieces]
            if gshape != expected.shape:
                problems.append(f"{label}: shape {gshape} != {expected.shape}")
                continue
            if dtype is not ht.types.canonical_heat_type(expected.dtype):
                problems.append(f"{label}: dtype {dtype} != {expected.dtype}")
            if split is None:
                values = pieces[0]
                if any(s != gshape for s in shapes):
                    problems.append(f"{label}: split None but local shapes {shapes}")
                    continue
            else:
                if sum(s[split] for s in shapes) != gshape[split]:
                    problems.append(f"{label}: local shapes {shapes} do not sum to {gshape}")
                    continue
                if balanced is not None:
                    counts = tuple(s[split] for s in shapes)
                    if (counts == rcomm.counts_displs_shape(gshape, split)[0]) != balanced:
                        problems.append(f"{label}: balanced flag {balanced} but counts {counts}")
                values = np.concatenate(pieces, axis=split)
            if not np.array_equal(values, expected):
                problems.append(f"{label}: values\n{values}\n!= expected\n{expected}")
        return problems


def run_getitem(x, a, keys):
    checker = Checker()
    failures = checker.problems
    for i, key in enumerate(keys):
        label = f"key {i} {key!r}"
        np_key = to_numpy_key(key)
        try:
            expected = np.asarray(a[np_key])
            expected_error = None
        except Exception as error:  # noqa: BLE001 - any NumPy error is the oracle
            expected_error = type(error)
        try:
            result = x[key]
        except Exception as error:  # noqa: BLE001
            if expected_error is None or not isinstance(error, expected_error):
                failures.append(f"{label}: raised {type(error).__name__}: {error}")
            continue
        if expected_error is not None:
            failures.append(f"{label}: NumPy raised {expected_error.__name__}, heat did not")
            continue
        checker.add(result, expected, label)
    return checker.failures()


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_getitem_matches_numpy(combo):
    shape, split = combo
    a = np.arange(np.prod(shape), dtype=np.int64).reshape(shape) * 3 - 7
    x = ht.array(a, split=split)
    failures = run_getitem(x, a, keys_for(shape, split))
    collective_assert(not failures, "\n".join(failures[:8]))
    # the input is untouched
    assert_array_equal(x, a)


@pytest.mark.parametrize("combo", [c for c in COMBOS if c[1] is not None], ids=ids)
def test_getitem_unbalanced(combo):
    shape, split = combo
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x = skewed(ht.array(a, split=split))
    keys = [
        1,
        -1,
        slice(None, None, -1),
        slice(1, None, 2),
        slice(None, None, -2),
        [2, 0, 1],
        a > 5,
        np.arange(shape[0]) % 2 == 0,
    ]
    if len(shape) > 1:
        keys += [(slice(None), 1), (slice(None), slice(None, None, -1)), (slice(None), [1, 0])]
    failures = run_getitem(x, a, keys)
    collective_assert(not failures, "\n".join(failures[:8]))


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64]
)
def test_getitem_dtypes(dtype):
    a = (np.arange(20).reshape(4, 5) % 3).astype(dtype)
    for split in (None, 0, 1):
        x = ht.array(a, split=split)
        keys = [2, (1, 3), slice(None, None, -2), (slice(None), [4, 0]), a != 0, ([1, 2], 1)]
        failures = run_getitem(x, a, keys)
        collective_assert(not failures, "\n".join(failures[:8]))


def test_getitem_empty_arrays():
    a = np.zeros((0, 3))
    for split in (None, 0, 1):
        x = ht.array(a, split=split)
        keys = [
            slice(None),
            (slice(None), 1),
            (slice(None), [0, 2]),
            np.zeros((0, 3), bool),
            0,
            (Ellipsis, None),
            [],
        ]
        failures = run_getitem(x, a, keys)
        collective_assert(not failures, "\n".join(failures[:8]))


def test_getitem_0d():
    a = np.array(5.0)
    x = ht.array(a)
    failures = run_getitem(x, a, [(), Ellipsis, None, True, False, 0, slice(None)])
    collective_assert(not failures, "\n".join(failures[:8]))


def test_getitem_layouts():
    """Split and balance of the results, and views for basic slicing."""
    size = ht.MPI_WORLD.size
    x = ht.arange(10, split=0)
    collective_assert(x[3].split is None and x[3].gshape == ())
    y = x[2:9]
    collective_assert(y.split == 0 and y._balanced is not None)
    collective_assert(x[::-1].split == 0 and x[::-1]._balanced is True)
    m = x[x > 3]
    collective_assert(m.split == 0)
    two = ht.zeros((4, 6), split=1)
    collective_assert(two[1].split == 0 and two[:, 2].split is None and two[:, 1:4].split == 1)
    collective_assert(two[[0, 2]].split == 1)
    collective_assert(two[:, [0, 2, 5]].split == 1)
    r = ht.zeros((3, 4), split=None)
    v = r[1]
    v.larray[0] = 1  # basic indexing of a non-split array is a view, as in NumPy
    collective_assert(r.larray[1, 0].item() == 1)
    collective_assert(size >= 1)


class _Counter:
    """Counts the collectives of a communicator (wraps its methods)."""

    NAMES = (
        "Bcast",
        "bcast",
        "allgather",
        "allreduce",
        "allgather_tensors",
        "alltoallv_tensors",
        "Alltoallv",
        "allreduce_tensor",
        "Allreduce",
        "Allgather",
        "Allgatherv",
        "alltoall",
    )

    def __init__(self, comm, monkeypatch):
        self.calls = []
        for name in self.NAMES:
            original = getattr(type(comm), name)

            def wrapper(this, *args, _name=name, _original=original, **kwargs):
                self.calls.append(_name)
                return _original(this, *args, **kwargs)

            monkeypatch.setattr(type(comm), name, wrapper)


def test_communication_volume(monkeypatch):
    x = ht.arange(10, split=0)
    m = np.arange(10) % 3 == 0
    counter = _Counter(x.comm, monkeypatch)
    value = x[3]
    scalar_calls = list(counter.calls)
    counter.calls.clear()
    x[2:7]
    x[..., None]
    x[m]  # a NumPy mask is applied locally; the total is known everywhere
    getitem_calls = list(counter.calls)
    counter.calls.clear()
    x[m] = -1
    x[1:8:2] = 5
    setitem_calls = list(counter.calls)
    monkeypatch.undo()
    expected_scalar = ["Bcast"] if x.comm.size > 1 else []
    collective_assert(scalar_calls == expected_scalar, f"x[3] used {scalar_calls}")
    collective_assert(getitem_calls == [], f"local indexing used {getitem_calls}")
    collective_assert(setitem_calls == [], f"local assignment used {setitem_calls}")
    expected = np.arange(10)
    expected[m] = -1
    expected[1:8:2] = 5
    assert_array_equal(x, expected)
    collective_assert(value.item() == 3)


def test_fast_path_scalar():
    x = ht.arange(10)
    collective_assert(x[3].item() == 3 and x[-1].item() == 9 and x[2:5].gshape == (3,))
    assert_raises_then_collective_works(IndexError, lambda: x[10])
    x[4] = 40
    collective_assert(x[4].item() == 40)


# ---------------------------------------------------------------------------------------------
# setitem
# ---------------------------------------------------------------------------------------------
def set_keys(shape, split):
    n0 = shape[0]
    keys = [
        0,
        -1,
        slice(None),
        slice(1, None, 2),
        slice(None, None, -1),
        slice(None, None, -2),
        slice(3, 3),
        Ellipsis,
        (None, slice(None, 2)),
        [0, n0 - 1],
        [-1, 1],
        np.arange(n0) % 2 == 0,
        H(np.arange(n0) % 3 == 0, split=0),
        H([n0 - 1, 0], split=0),
        torch.tensor([1]),
    ]
    rng = np.random.default_rng(7)
    full = rng.random(shape) > 0.5
    keys += [full, H(full, split=split)]
    if len(shape) >= 2:
        n1 = shape[1]
        keys += [
            (1, 2),
            (slice(None), 1),
            (slice(None, None, -1), slice(1, None)),
            (slice(None), slice(None, None, -2)),
            (slice(None), [0, n1 - 1]),
            ([0, n0 - 1], [1, 0]),
            ([1, 0], 0),
            (slice(None), np.arange(n1) % 2 == 1),
            (0, slice(None), None),
            ([[0], [1]], [0, n1 - 1]),
        ]
    if len(shape) >= 3:
        keys += [
            (0, slice(None), [0, 2]),
            ([1, 0], slice(None), [1, 3]),
            (slice(None), np.random.default_rng(3).random(shape[1:]) > 0.5),
        ]
    return keys


def values_for(region_shape, rng, variant):
    """Values to assign to a region: a scalar, NumPy data, and one more kind chosen by ``variant``
    (distributed along the first or last axis, a broadcast row, an extra leading unit axis)."""
    values = [7 if variant % 2 else np.float64(-2.5)]
    data = rng.integers(-50, 50, size=region_shape).astype(np.float64)
    values.append(data)
    if len(region_shape) >= 1:
        row = rng.integers(-50, 50, size=region_shape[-1:]).astype(np.float64)
        extra = [
            H(data, split=0),
            H(data, split=len(region_shape) - 1),
            row,
            H(row, split=0),
            data[None],  # extra leading unit axis, accepted by NumPy
        ]
        values.append(extra[variant % len(extra)])
    return values


def local_block(x, expected):
    """The block of ``expected`` this process holds in ``x``'s (balanced) layout."""
    if x.split is None:
        return expected
    _, _, slices = x.comm.chunk(expected.shape, x.split)
    return expected[slices]


def value_for_numpy(value):
    return to_numpy_key(value)


@pytest.mark.parametrize("combo", COMBOS_NO_NEGATIVE, ids=ids)
def test_setitem_matches_numpy(combo):
    shape, split = combo
    base = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    rng = np.random.default_rng(0)
    failures = []
    for i, key in enumerate(set_keys(shape, split)):
        np_key = to_numpy_key(key)
        region_shape = base[np_key].shape
        for j, value in enumerate(values_for(region_shape, rng, i)):
            label = f"key {i} {key!r} value {j} {type(value).__name__}"
            expected = base.copy()
            try:
                expected[np_key] = value_for_numpy(value)
            except (TypeError, ValueError):
                continue  # NumPy's mask assignment takes only 0-d and 1-d values
            x = ht.array(base, split=split)
            try:
                x[key] = value
            except Exception as error:  # noqa: BLE001
                failures.append(f"{label}: raised {type(error).__name__}: {error}")
                continue
            if x.split != (None if split is None else split % len(shape)) or not x.balanced:
                failures.append(f"{label}: layout changed to split {x.split}")
            elif not np.array_equal(x.larray.cpu().numpy(), local_block(x, expected)):
                failures.append(f"{label}: local block\n{x.larray}\n!= {local_block(x, expected)}")
    collective_assert(not failures, "\n".join(failures[:8]))


@pytest.mark.parametrize("split", [None, 0, 1])
def test_setitem_unbalanced_and_dtypes(split):
    a = np.arange(30).reshape(5, 6).astype(np.int32)
    x = skewed(ht.array(a, split=split))
    expected = a.copy()
    block = np.arange(9).reshape(3, 3) + 100
    x[1:4, ::-2] = ht.array(block, split=0)
    expected[1:4, ::-2] = block
    x[::-2, 1:4] = ht.array(block, split=1)
    expected[::-2, 1:4] = block
    x[::-1, -1] = ht.array(np.arange(5) - 10, split=0)
    expected[::-1, -1] = np.arange(5) - 10
    x[x > 20] = 2.7  # cast to int32 as NumPy does
    expected[expected > 20] = 2
    x[[4, 0], [5, 1]] = np.array([-1, -2])
    expected[[4, 0], [5, 1]] = [-1, -2]
    assert_array_equal(x, expected)
    b = ht.zeros((4, 3), dtype=ht.bool, split=split)
    b[1:3] = True
    assert_array_equal(b, np.array([[0] * 3, [1] * 3, [1] * 3, [0] * 3], dtype=bool))


def test_setitem_errors():
    for split in (None, 0):
        x = ht.zeros((5, 6), split=split)
        assert_raises_then_collective_works(IndexError, x.__setitem__, 5, 1)
        assert_raises_then_collective_works(IndexError, x.__setitem__, (0, -7), 1)
        assert_raises_then_collective_works(IndexError, x.__setitem__, [[5]], 1)
        assert_raises_then_collective_works(IndexError, x.__setitem__, np.ones(4, bool), 1)
        assert_raises_then_collective_works(ValueError, x.__setitem__, slice(None), np.ones(5))
        assert_raises_then_collective_works(
            ValueError, x.__setitem__, slice(0, 2), ht.ones((3, 6), split=0)
        )
        assert_raises_then_collective_works(IndexError, x.__setitem__, 1.0, 1)
        # distributed index array out of bounds: every rank raises
        assert_raises_then_collective_works(
            IndexError, x.__getitem__, ht.array([0, 1, 2, 3, 9], split=0)
        )
        assert_raises_then_collective_works(
            IndexError, x.__setitem__, ht.array([0, -6, 2], split=0), 0
        )


def test_getitem_errors_collective():
    x = ht.zeros((5, 6), split=0)
    for key in (5, (0, 6), (0, 0, 0), np.ones((4, 6), bool), [1.5], (Ellipsis, Ellipsis)):
        assert_raises_then_collective_works(IndexError, x.__getitem__, key)
    assert_raises_then_collective_works(
        IndexError, x.__getitem__, (ht.array([0, 1, 2], split=0), ht.array([0, 1], split=0))
    )
    assert_raises_then_collective_works(TypeError, indexing.getitem, np.zeros(3), 0)


# ---------------------------------------------------------------------------------------------
# nonzero, where
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("combo", COMBOS_NO_NEGATIVE + [((0, 3), 0), ((0, 3), 1)], ids=ids)
def test_nonzero(combo):
    shape, split = combo
    rng = np.random.default_rng(4)
    checker = Checker()
    failures = checker.problems
    for dtype in (np.float32, np.int64, np.bool_):
        a = (rng.integers(0, 3, size=shape) * (rng.random(shape) > 0.3)).astype(dtype)
        arrays = [ht.array(a, split=split)]
        if dtype is np.float32:
            arrays.append(skewed(arrays[0]))
        for x in arrays:
            result = ht.nonzero(x)
            expected = np.nonzero(a)
            if len(result) != len(expected):
                failures.append(f"{dtype}: {len(result)} index arrays")
                continue
            for r, e in zip(result, expected):
                checker.add(r, e, f"nonzero {dtype}")
                if split is not None and ht.MPI_WORLD.size > 1 and r.split != 0:
                    failures.append(f"nonzero result split {r.split}")
            if dtype is np.bool_:
                for r, e in zip(ht.where(x), expected):
                    checker.add(r, e, f"where(x) {dtype}")
    failures = checker.failures()
    collective_assert(not failures, "\n".join(failures[:8]))
    assert_raises_then_collective_works(ValueError, ht.nonzero, ht.array(1.0))
    assert_raises_then_collective_works(TypeError, ht.nonzero, np.ones(3))


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_where(combo):
    shape, split = combo
    rng = np.random.default_rng(5)
    cond = rng.random(shape) > 0.5
    a = rng.integers(-5, 5, size=shape).astype(np.float32)
    b = rng.integers(-5, 5, size=shape[-1:]).astype(np.int32)
    other = None if split is None else (0 if split % len(shape) != 0 else len(shape) - 1)
    checker = Checker()
    cases = [
        (ht.array(cond, split=split), ht.array(a, split=split), ht.array(b), np.where(cond, a, b)),
        (
            ht.array(cond, split=split),
            ht.array(a, split=other),
            2.5,
            np.where(cond, a, np.float32(2.5)),
        ),
        (ht.array(cond), 1, ht.array(a, split=split), np.where(cond, 1, a)),
        (
            ht.array(cond, split=other),
            ht.array(b, split=0),
            ht.array(a, split=split),
            np.where(cond, b, a),
        ),
        (ht.array(cond.astype(np.int64), split=split), -1, 3, np.where(cond, -1, 3)),
    ]
    for i, (c, x, y, expected) in enumerate(cases):
        checker.add(ht.where(c, x, y), expected, f"case {i}")
    failures = checker.failures()
    collective_assert(not failures, "\n".join(failures[:8]))
    assert_raises_then_collective_works(ValueError, ht.where, ht.array(cond), 1)
    assert_raises_then_collective_works(
        ValueError, ht.where, ht.array(cond), ht.ones(shape + (2,)), 0
    )


# ---------------------------------------------------------------------------------------------
# fast paths: index arrays every process holds, NumPy's boolean selection on CPU
# ---------------------------------------------------------------------------------------------
def replicated_index_keys(n0, n1=None):
    """Index arrays along axis 0 (and pairs with axis 1) in the forms every process holds."""
    rng = np.random.default_rng(n0)
    unsorted = rng.integers(-n0, n0, size=2 * n0 + 1)  # repeated, negative, unsorted
    keys = [
        unsorted,
        H(unsorted),
        torch.from_numpy(unsorted.copy()),
        list(unsorted),
        np.sort(unsorted % n0),
        np.full(5, n0 - 1),
        np.array([-1]),
        np.array([0, -n0]),
        np.sort(rng.choice(n0, size=max(1, n0 // 2))),
        np.arange(n0),
        np.arange(-n0, 0),
        np.arange(n0 // 2)[:, None].repeat(2, axis=1),  # sorted rows of a 2-D index
        np.array([], dtype=np.int64),
        H(np.array([], dtype=np.int64)),
        np.arange(n0)[::-1].copy(),
        rng.integers(0, n0, size=(3, 2)),
        H(rng.integers(0, n0, size=(2, 4))),
        skewed(H(unsorted, split=0)),
        H(unsorted[:3], split=0),  # the distributed path, too
    ]
    if n1 is not None:
        cols = rng.integers(-n1, n1, size=3)
        keys += [
            (unsorted[:3], cols),
            (unsorted[:, None], cols[None, :]),
            (unsorted[:4], 0),
            (H(unsorted[:4]), slice(None, None, -1)),
            (slice(None), cols),
            (unsorted[:2], None),
            (unsorted[:3], Ellipsis),
            (unsorted[:3], np.arange(n1) % 2 == 0),
        ]
    return keys


@pytest.mark.parametrize(
    "shape", [(13, 4), (2, 3), (1, 5), (0, 3), (9,), (6, 2, 3)], ids=lambda s: "x".join(map(str, s))
)
def test_getitem_replicated_index(shape):
    """Integer arrays along the split axis that every process holds: one exchange of rows."""
    n0 = shape[0]
    n1 = shape[1] if len(shape) > 1 else None
    keys = replicated_index_keys(n0, n1) if n0 else [np.array([], dtype=np.int64), [], H([])]
    for dtype in (np.float32, np.int64, np.complex64, np.bool_):
        a = (np.arange(np.prod(shape)).reshape(shape) * 7 % 11).astype(dtype)
        for split in splits_for(len(shape)):
            for x in (ht.array(a, split=split), skewed(ht.array(a, split=split))):
                failures = run_getitem(x, a, keys)
                collective_assert(
                    not failures, f"{dtype} split {split}:\n" + "\n".join(failures[:8])
                )


def test_getitem_replicated_index_layout(monkeypatch):
    """The result is balanced along the index's first axis; one Alltoallv, no index exchange."""
    size = ht.MPI_WORLD.size
    a = np.arange(40, dtype=np.float64).reshape(10, 4)
    x = ht.array(a, split=0)
    idx = np.array([9, 0, 9, -1, 3, 3, 5])
    counter = _Counter(x.comm, monkeypatch)
    result = x[idx]
    calls = list(counter.calls)
    monkeypatch.undo()
    collective_assert(calls == (["Alltoallv"] if size > 1 else []), f"x[idx] used {calls}")
    collective_assert(result.split == 0 and result._balanced is True)
    collective_assert(result.lshape[0] == x.comm.counts_displs_shape((7,), 0)[0][x.comm.rank])
    assert_array_equal(result, a[idx])
    # along axis 1 of a split-1 array, with the index 2-D: split along the index's first axis
    y = ht.array(a, split=1)
    cols = np.array([[3, 0], [-1, 1], [2, 2]])
    result = y[:, cols]
    collective_assert(result.split == 1 and result._balanced is True)
    assert_array_equal(result, a[:, cols])
    # a sorted index whose requests do not pile up on one process: the rows stay where they are
    counter = _Counter(x.comm, monkeypatch)
    rows = np.array([0, 2, 2, 7, 8])
    result = x[rows]
    calls = list(counter.calls)
    monkeypatch.undo()
    collective_assert(calls == [], f"x[sorted] used {calls}")
    owners = np.searchsorted(np.cumsum(x.lshape_map[:, 0].tolist()), rows, side="right")
    collective_assert(result.lshape[0] == int(np.sum(owners == x.comm.rank)))
    assert_array_equal(result, a[rows])
    # many repeats of one row are spread over the processes
    result = x[np.full(12, 9)]
    collective_assert(result._balanced is True)
    assert_array_equal(result, a[np.full(12, 9)])


def test_select_masked_matches_torch(monkeypatch):
    """The NumPy selection (one thread and row blocks on several) against torch's indexing."""
    rng = np.random.default_rng(7)
    threads = torch.get_num_threads()
    cases = []
    for dtype in (torch.float32, torch.bfloat16, torch.complex128, torch.int16, torch.bool):
        t = (torch.from_numpy(rng.random((7, 5, 3))) * 4).to(dtype)
        cases += [
            (t, torch.from_numpy(rng.random((7, 5, 3)) > 0.5), 0),
            (t, torch.from_numpy(rng.random(7) > 0.5), 0),
            (t, torch.from_numpy(rng.random((5, 3)) > 0.3), 1),
            (t, torch.from_numpy(rng.random(5) > 0.5), 1),
            (t[:, ::2], torch.from_numpy(rng.random((7, 3)) > 0.5), 0),  # a strided view
            (t[:2], torch.zeros((2, 5, 3), dtype=torch.bool), 0),
            (t[:0], torch.zeros((0, 5), dtype=torch.bool), 0),
            (t[:, :0], torch.from_numpy(rng.random(7) > 0.5), 0),  # empty trailing axes
            (t, torch.tensor(True), 1),  # a 0-d mask adds an axis
            (t, torch.tensor(False), 0),
        ]
    problems = []
    try:
        for minimum, workers, chunk in ((1 << 30, 1, 1), (1, 2, 1 << 20), (1, 3, 16), (1, 9, 1)):
            monkeypatch.setattr(indexing, "_THREADED_SELECT_MIN", minimum)
            monkeypatch.setattr(indexing, "_SELECT_CHUNK", chunk)
            torch.set_num_threads(workers)
            for i, (t, mask, dim) in enumerate(cases):
                expected = t[(slice(None),) * dim + (mask,)]
                result = indexing._select_masked(t, mask, dim)
                if result.dtype != expected.dtype or not torch.equal(result, expected):
                    problems.append(f"case {i} ({t.dtype}, dim {dim}, {workers} threads)")
    finally:
        torch.set_num_threads(threads)
    collective_assert(not problems, "\n".join(problems[:8]))
    collective_assert(indexing._count_true(cases[0][1]) == int(cases[0][1].sum()))


@pytest.mark.parametrize("split", [None, 0, 1])
def test_getitem_mask_large(split, monkeypatch):
    """Masks split like the array, differently, or not at all, on the threaded selection."""
    monkeypatch.setattr(indexing, "_THREADED_SELECT_MIN", 64)
    monkeypatch.setattr(indexing, "_SELECT_CHUNK", 40)  # several chunks per thread
    rng = np.random.default_rng(8)
    a = rng.random((37, 11)).astype(np.float32)
    x = ht.array(a, split=split)
    keys = [
        H(a > 0.5, split=split),
        H(a > 0.5, split=None),
        H(a > 0.7, split=0),
        H(a > 0.2, split=1),
        a > 0.5,
        H(a[:, 0] > 0.5, split=0),
        a[:, 0] > 0.5,
        (slice(None), a[0] > 0.4),
        (slice(None), H(a[0] > 0.4, split=0)),
        (slice(3, None, 2), a[0] > 0.4),
        H(np.zeros((37, 11), bool), split=split),
        skewed(H(a > 0.5, split=split)),
    ]
    failures = run_getitem(x, a, keys)
    failures += run_getitem(skewed(x), a, keys[:4])
    collective_assert(not failures, "\n".join(failures[:8]))


@pytest.mark.parametrize("split", [None, 0, 1, 2])
def test_setitem_mask_one_value(split):
    """One value where a mask is true (filled in place): masks before, at and after the split."""
    rng = np.random.default_rng(9)
    base = rng.random((5, 4, 3))
    keys = [
        base > 0.5,
        H(base > 0.5, split=split),
        H(base > 0.3, split=0),
        H(base > 0.3, split=2),
        base[:, :, 0] > 0.5,
        H(base[:, :, 0] > 0.5, split=1),
        (slice(None), base[0] > 0.5),
        (slice(None), H(base[0] > 0.5, split=0)),
        (Ellipsis, base[0, 0] > 0.5),
        (slice(None, None, -2), base[0] > 0.5),
        np.zeros((5, 4, 3), bool),
    ]
    values = [7, np.float32(-1.5), np.array([2.0]), torch.tensor(3.0), H([4.0], split=0)]
    failures = []
    for i, key in enumerate(keys):
        for value in values:
            expected = base.copy()
            expected[to_numpy_key(key)] = to_numpy_key(value)
            for x in (ht.array(base, split=split), skewed(ht.array(base, split=split))):
                x[key] = value
                if not np.array_equal(x.numpy(), expected):
                    failures.append(f"key {i} value {value!r}, counts {x.lshape_map.tolist()}")
    collective_assert(not failures, "\n".join(failures[:8]))
    x = ht.zeros((5, 4, 3), split=split)
    assert_raises_then_collective_works(ValueError, x.__setitem__, base > 0.5, np.ones(2))
