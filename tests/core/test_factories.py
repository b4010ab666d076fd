import warnings

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_arrays_equal,
    assert_raises_then_collective_works,
    check_layout,
    collective_assert,
    random_array,
    splits_for,
)

SHAPES = [(7,), (5, 6), (2, 3, 4), (1, 5), (0, 3), ()]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_, np.complex64])
def test_array_split(shape, dtype):
    data = random_array(shape, dtype)
    for split in splits_for(len(shape)):
        x = ht.array(data, split=split)
        assert x.split == (None if split is None else split % len(shape))
        assert_array_equal(x, data)
        assert x.balanced


@pytest.mark.parametrize("shape", [(7,), (5, 6), (2, 3, 4)])
def test_array_is_split(shape):
    size, rank = ht.MPI_WORLD.size, ht.MPI_WORLD.rank
    for axis in range(len(shape)):
        # rank r contributes r + 1 rows along the axis: unbalanced, uneven
        local_shape = list(shape)
        local_shape[axis] = rank + 1
        block = np.full(local_shape, rank, dtype=np.int32)
        x = ht.array(block, is_split=axis)
        expected = np.concatenate(
            [
                np.full([*shape[:axis], r + 1, *shape[axis + 1 :]], r, dtype=np.int32)
                for r in range(size)
            ],
            axis=axis,
        )
        assert_array_equal(x, expected)
        assert x.split == axis
        collective_assert(x.balanced == (size == 1 or shape[axis] is None) or not x.balanced)


def test_array_is_split_mismatch_raises_everywhere():
    rank = ht.MPI_WORLD.rank
    if ht.MPI_WORLD.size == 1:
        pytest.skip("needs several processes")
    block = np.zeros((2, 3 + rank))
    assert_raises_then_collective_works(ValueError, ht.array, block, is_split=0)


def test_array_inference_and_copy():
    assert ht.array([1, 2]).dtype is ht.int64
    assert ht.array([1.0, 2]).dtype is ht.float32
    assert ht.array([True]).dtype is ht.bool
    assert ht.array(np.zeros(2, dtype=np.float64)).dtype is ht.float64
    assert ht.array(torch.zeros(2, dtype=torch.bfloat16)).dtype is ht.bfloat16
    assert ht.array(np.arange(3, dtype=np.uint16)).dtype is ht.uint16
    data = np.arange(4.0)
    x = ht.array(data)
    data[0] = 100
    assert x.numpy()[0] == 0  # copied
    y = ht.asarray(data)
    data[1] = 50
    assert y.numpy()[1] == 50  # shares memory
    assert ht.asarray(x) is x
    z = ht.array(x, dtype=ht.float32, split=0)
    assert_array_equal(z, np.array([0, 1, 2, 3], dtype=np.float32))
    assert ht.array([[1]], ndmin=4).gshape == (1, 1, 1, 1)
    assert ht.array(5.0).gshape == ()
    assert ht.float32([1, 2]).dtype is ht.float32


def test_array_bad_input():
    assert_raises_then_collective_works(ValueError, ht.array, [1, 2], split=0, is_split=0)
    assert_raises_then_collective_works(ValueError, ht.array, [1, 2], split=1)
    assert_raises_then_collective_works(TypeError, ht.array, [1, 2], split="0")
    assert_raises_then_collective_works(TypeError, ht.array, [1, 2], dtype="no-such-type")
    assert_raises_then_collective_works(TypeError, ht.array, np.array(["a", "b"]))
    assert_raises_then_collective_works(ValueError, ht.array, [1, 2], device="tpu")


def _raises_value_error(function, *args, **kwargs) -> bool:
    try:
        function(*args, **kwargs)
    except ValueError:
        return True
    return False


def _shares(x: ht.DNDarray, data) -> bool:
    """Whether x's local block lies in the memory of ``data`` (a NumPy array or a DNDarray)."""
    if isinstance(data, ht.DNDarray):
        data = data.larray
    if x.larray.numel() == 0:
        return True
    if isinstance(data, torch.Tensor):
        return x.larray.untyped_storage().data_ptr() == data.untyped_storage().data_ptr()
    return x.larray.device.type == "cpu" and np.shares_memory(x.larray.numpy(), data)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex64, np.bool_])
def test_array_copy_false_raises_as_numpy(dtype):
    base = random_array((5, 6), dtype)
    other = {np.complex64: np.complex128, np.int64: np.int32}.get(dtype, np.float64)
    # (data, keyword arguments): NumPy 2 is the oracle for whether a copy is needed
    cases = [
        (base, {}),
        (base, {"dtype": other}),
        (base, {"dtype": dtype}),
        (base.tolist(), {}),
        (base[0, 0], {}),  # a NumPy scalar
        (np.array(base[0, 0]), {}),  # a 0-d array
        (base[:, ::2], {}),  # a strided view
        (base.T, {}),  # Fortran order
        (base, {"ndmin": 4}),
    ]
    for data, kwargs in cases:
        heat_kwargs = dict(kwargs)
        if "dtype" in heat_kwargs:
            heat_kwargs["dtype"] = ht.types.canonical_heat_type(heat_kwargs["dtype"])
        numpy_raises = _raises_value_error(np.array, data, copy=False, **kwargs)
        if numpy_raises and "ndmin" not in kwargs:
            assert_raises_then_collective_works(
                ValueError, ht.asarray, data, copy=False, **heat_kwargs
            )
        for split in splits_for(max(np.ndim(data), kwargs.get("ndmin", 0))):
            if numpy_raises:
                assert_raises_then_collective_works(
                    ValueError, ht.array, data, copy=False, split=split, **heat_kwargs
                )
                continue
            expected = np.array(data, copy=True, **kwargs)
            x = ht.array(data, copy=False, split=split, **heat_kwargs)
            assert_array_equal(x, expected)
            collective_assert(_shares(x, data), f"copy=False copied {kwargs} split={split}")
            # copy=None shares too, copy=True never does
            collective_assert(_shares(ht.array(data, copy=None, split=split, **heat_kwargs), data))
            y = ht.array(data, copy=True, split=split, **heat_kwargs)
            assert_array_equal(y, expected)
            collective_assert(y.larray.numel() == 0 or not _shares(y, data))
            if np.ndim(data):
                # a write through the source shows in the array that shares its memory
                data.flat[0] = data.flat[1]
                expected.flat[0] = expected.flat[1]
                assert_array_equal(x, expected)


def test_array_copy_false_where_heat_cannot_view():
    # NumPy views these; a torch tensor cannot (or a DNDarray could write to read-only data)
    read_only = np.arange(6.0)
    read_only.flags.writeable = False
    for data in (np.arange(6.0)[::-1], read_only, np.arange(6.0).astype(">f8")):
        assert_raises_then_collective_works(ValueError, ht.array, data, copy=False)
        x = ht.array(data, copy=None, split=0)  # copies where needed
        assert_array_equal(x, np.asarray(data).astype(x.dtype.numpy_type()))


@pytest.mark.parametrize("shape", [(7,), (5, 6), (1, 5), (0, 3)])
@pytest.mark.parametrize("dtype", [ht.float32, ht.int32, ht.complex128])
def test_array_of_dndarray_copy(shape, dtype):
    data = random_array(shape, dtype.numpy_type())
    for split in splits_for(len(shape)):
        d = ht.array(data, split=split)
        # nothing to change: copy=False and copy=None share the blocks, copy=True copies
        for copy in (False, None):
            for kwargs in ({}, {"dtype": dtype}, {"split": split}, {"ndmin": len(shape) + 1}):
                x = ht.array(d, copy=copy, **kwargs)
                collective_assert(_shares(x, d), f"copy={copy} {kwargs} copied")
                assert_array_equal(x, np.array(data, ndmin=kwargs.get("ndmin", 0)))
        collective_assert(ht.asarray(d, copy=False) is d)
        y = ht.array(d)
        collective_assert(y.larray.numel() == 0 or not _shares(y, d))
        # a cast needs a copy (as NumPy)
        assert_raises_then_collective_works(ValueError, ht.array, d, dtype=ht.int8, copy=False)
        assert_raises_then_collective_works(ValueError, ht.asarray, d, dtype=ht.int8, copy=False)
        for new_split in splits_for(len(shape)):
            expected_split = None if new_split is None else new_split % len(shape)
            if new_split is None or expected_split == d.split:
                continue
            if d.split is None:
                # every process holds all of d: its block is a slice, no copy needed
                x = ht.array(d, split=new_split, copy=False)
                collective_assert(x.split == expected_split and _shares(x, d))
                assert_array_equal(x, data)
            else:
                # decided by the split axes, so the same at every process count
                assert_raises_then_collective_works(
                    ValueError, ht.array, d, split=new_split, copy=False
                )
            for copy in (None, True):
                x = ht.array(d, split=new_split, copy=copy)
                assert x.split == expected_split
                assert_array_equal(x, data)
                shared = x.larray.numel() > 0 and _shares(x, d)
                expected_shared = d.split is None and copy is None
                collective_assert(shared == expected_shared or x.larray.numel() == 0)


def test_asarray_copy_false():
    assert_raises_then_collective_works(ValueError, ht.asarray, [1, 2, 3], copy=False)
    assert_raises_then_collective_works(ValueError, ht.asarray, 3.0, copy=False)
    data = np.ones(3, np.float32)
    assert_raises_then_collective_works(ValueError, ht.array, data, dtype=ht.float64, copy=False)
    x = ht.asarray(data, copy=False)
    data[1] = 5
    assert_array_equal(x, data)


def test_array_is_split_copy_false():
    rank = ht.MPI_WORLD.rank
    block = np.full((2, 3), rank, dtype=np.float32)
    x = ht.array(block, is_split=0, copy=False)
    collective_assert(_shares(x, block))
    assert_raises_then_collective_works(
        ValueError, ht.array, block.tolist(), is_split=0, copy=False
    )
    if ht.MPI_WORLD.size > 1:
        # only rank 0's block needs a copy (a list), yet every rank raises
        mixed = block.tolist() if rank == 0 else block
        assert_raises_then_collective_works(ValueError, ht.array, mixed, is_split=0, copy=False)
        # the blocks' types differ: promotion needs a copy on some ranks, every rank raises
        typed = block.astype(np.float64) if rank == 0 else block
        assert_raises_then_collective_works(ValueError, ht.array, typed, is_split=0, copy=False)
    y = ht.array(block, is_split=0)
    collective_assert(not _shares(y, block))


def test_array_ragged_raises_value_error():
    for ragged in ([[1, 2], [3]], [[1, 2], 3], [[[1], [2]], [[3], [4, 5]]], [[1, 2], [[3, 4]]]):
        with pytest.raises(ValueError):
            np.array(ragged)
        assert_raises_then_collective_works(ValueError, ht.array, ragged)
    # not ragged, but not numbers either: a TypeError
    assert_raises_then_collective_works(TypeError, ht.array, [[1, 2], ["a", "b"]])
    assert_array_equal(ht.array([[1, 2], [3, 4]], split=0), np.array([[1, 2], [3, 4]]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_, np.complex64])
def test_arrays_in_a_list(dtype):
    """0-d (and other) arrays as elements of a list, as NumPy accepts them (HeAT 1.8 too)."""
    values = random_array((5, 3), dtype=dtype, seed=4)
    pairs = []
    for rows in (5, 2, 1):  # 2 and 1: fewer rows than processes
        block = values[:rows]
        for split in splits_for(2):
            zero_d = [[ht.array(v) for v in row] for row in block]
            pairs.append((ht.array(zero_d, split=split), np.asarray(block)))
            pairs.append(
                (
                    ht.array([[np.asarray(v) for v in row] for row in block], split=split),
                    np.asarray([[np.asarray(v) for v in row] for row in block]),
                )
            )
            pairs.append((ht.array([ht.array(row) for row in block], split=split), block))
            pairs.append(
                (ht.array([torch.from_numpy(row.copy()) for row in block], split=split), block)
            )
        pairs.append((ht.array([ht.array(v) for v in block[:, 0]], split=0), block[:, 0]))
        pairs.append((ht.asarray([ht.array(v) for v in block[:, 0]]), block[:, 0]))
    # the element types promote as NumPy's
    pairs.append(
        (ht.asarray([ht.array(1.5, dtype=ht.float32), 2]), np.asarray([np.float32(1.5), 2]))
    )
    pairs.append(
        (
            ht.asarray([np.array(1, dtype=np.int8), np.array(2, dtype=np.uint8)]),
            np.asarray([np.array(1, dtype=np.int8), np.array(2, dtype=np.uint8)]),
        )
    )
    pairs.append(
        (ht.asarray([ht.array(1.5), 2], dtype=ht.int32), np.asarray([1.5, 2], dtype=np.int32))
    )
    assert_arrays_equal(pairs)
    assert_raises_then_collective_works(
        ValueError, ht.asarray, [ht.array(1.5), ht.array([1.0, 2.0])]
    )
    assert_raises_then_collective_works(TypeError, ht.asarray, [np.array("a")])


@pytest.mark.parametrize("factory,np_factory", [(ht.zeros, np.zeros), (ht.ones, np.ones)])
def test_zeros_ones(factory, np_factory):
    for shape in [(7,), (5, 6), (2, 3, 4), (0,), 3]:
        nd = 1 if isinstance(shape, int) else len(shape)
        for split in splits_for(nd):
            for dtype in (ht.float32, ht.int64, ht.bool, ht.complex128):
                x = factory(shape, dtype=dtype, split=split)
                assert_array_equal(x, np_factory(shape, dtype=dtype.numpy_type()))
    assert ht.zeros(3).dtype is ht.float32


def test_empty_full_like():
    for split in splits_for(2):
        x = ht.empty((5, 4), split=split, dtype=ht.int32)
        check_layout(x)
        assert x.gshape == (5, 4) and x.dtype is ht.int32
        f = ht.full((5, 4), 7, split=split)
        assert_array_equal(f, np.full((5, 4), 7))
        f = ht.full((5, 4), 2.5, split=split, dtype=ht.float64)
        assert_array_equal(f, np.full((5, 4), 2.5))
        for like, np_like in [(ht.zeros_like, np.zeros_like), (ht.ones_like, np.ones_like)]:
            y = like(f)
            assert y.split == f.split
            assert_array_equal(y, np_like(np.full((5, 4), 2.5)))
        assert_array_equal(ht.full_like(f, 3), np.full((5, 4), 3.0))
        assert ht.empty_like(f).gshape == f.gshape
    assert_raises_then_collective_works(ValueError, ht.zeros, (2, -1))
    assert_raises_then_collective_works(TypeError, ht.zeros, (2, 1.5))
    assert_raises_then_collective_works(ValueError, ht.ones, (3, 4), split=2)


FILL_VALUES = [
    1 + 1j,
    -1.5 + 3j,
    2.5 + 0j,
    np.complex64(1 + 2j),
    1.5,
    -1.5,
    np.nan,
    True,
    7,
    np.int64(300),
    np.uint64(2**64 - 1),
]
FILL_TYPES = [
    np.int64,
    np.int8,
    np.uint8,
    np.int16,
    np.float32,
    np.float64,
    np.bool_,
    np.complex64,
    np.complex128,
]


@pytest.mark.parametrize("fill_value", FILL_VALUES, ids=repr)
def test_full_converts_as_numpy(fill_value):
    """
    ``full`` converts the value to ``dtype`` as NumPy (unsafe casting): complex to real keeps
    the real part and warns ComplexWarning, floats truncate, NumPy integers wrap.
    """
    pairs, problems = [], []
    for dtype in FILL_TYPES:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            expected = np.full((5, 4), fill_value, dtype=dtype)
        expected_warnings = sorted({w.category.__name__ for w in caught})
        for shape in ((5, 4), (2, 3)):  # (2, 3): fewer rows than processes
            for split in splits_for(2):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    result = ht.full(shape, fill_value, dtype=dtype, split=split)
                seen = sorted({w.category.__name__ for w in caught})
                if seen != expected_warnings:
                    problems.append(f"{dtype.__name__}: warnings {seen}, NumPy {expected_warnings}")
                pairs.append((result, expected[: shape[0], : shape[1]]))
        like = ht.full_like(ht.zeros((3,), dtype=dtype, split=0), fill_value)
        pairs.append((like, np.full_like(np.zeros(3, dtype=dtype), fill_value)))
    assert_arrays_equal(pairs)
    collective_assert(not problems, "; ".join(sorted(set(problems))[:4]))


def test_full_errors_and_default_type():
    assert_arrays_equal(
        [
            (ht.full((3,), 2**63, split=0), np.full((3,), 2**63)),  # uint64, as NumPy
            (ht.full((3,), np.float64(2.5), split=0), np.full((3,), np.float64(2.5))),
            (ht.full((3,), 1 + 2j), np.full((3,), 1 + 2j, dtype=np.complex64)),
            (ht.full((2,), ht.array(-3)), np.full((2,), -3)),
        ]
    )
    assert ht.full((2,), 1.5, dtype=ht.bfloat16).numpy().tolist() == [1.5, 1.5]
    # out of range for the type: NumPy's OverflowError, on every rank before anything else
    assert_raises_then_collective_works(OverflowError, ht.full, (4,), 300, dtype=ht.int8, split=0)
    assert_raises_then_collective_works(OverflowError, ht.full, (4,), -1, dtype=ht.uint8, split=0)
    assert_raises_then_collective_works(ValueError, ht.full, (4,), "a", dtype=ht.float32, split=0)
    assert_raises_then_collective_works(TypeError, ht.full, (4,), "a", split=0)


@pytest.mark.parametrize(
    "args",
    [(10,), (1, 10, 3), (10, 1, -2), (0.5, 4.0, 0.5), (5, 5), (-3, 4), (0, 1, 0.1), (2,)],
)
def test_arange(args):
    expected = np.arange(*args)
    if expected.dtype == np.float64:
        expected = expected.astype(np.float32)
    for split in (None, 0):
        assert_array_equal(ht.arange(*args, split=split), expected, rtol=1e-6)
    assert_array_equal(
        ht.arange(*args, dtype=ht.float64, split=0), np.arange(*args, dtype=np.float64)
    )


def test_arange_bad_input():
    assert_raises_then_collective_works(ValueError, ht.arange, 1, 5, 0)
    assert_raises_then_collective_works(TypeError, ht.arange, "5")
    assert_raises_then_collective_works(TypeError, ht.arange)


@pytest.mark.parametrize("num", [0, 1, 2, 7, 50])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_logspace(num, endpoint):
    for split in (None, 0):
        x = ht.linspace(-2, 3, num, endpoint=endpoint, split=split, dtype=ht.float64)
        assert_array_equal(x, np.linspace(-2, 3, num, endpoint=endpoint))
        y, step = ht.linspace(0, 1, num, endpoint=endpoint, retstep=True, split=split)
        _, np_step = np.linspace(0, 1, num, endpoint=endpoint, retstep=True)
        collective_assert(np.isnan(step) and np.isnan(np_step) or np.isclose(step, np_step))
        z = ht.logspace(0, 2, num, endpoint=endpoint, split=split, dtype=ht.float64)
        assert_array_equal(z, np.logspace(0, 2, num, endpoint=endpoint))
        w = ht.logspace(0, 3, num, base=2.0, split=split)
        assert_array_equal(w, np.logspace(0, 3, num, base=2.0).astype(np.float32), rtol=1e-5)
    assert ht.linspace(0, 10, 5, dtype=ht.int64).numpy().tolist() == [0, 2, 5, 7, 10]
    assert_raises_then_collective_works(ValueError, ht.linspace, 0, 1, -1)
    assert_raises_then_collective_works(TypeError, ht.linspace, 0, 1, 2.5)


@pytest.mark.parametrize("shape,k", [(4, 0), ((3, 5), 1), ((5, 3), -2), ((2, 6), 3), (1, 0)])
def test_eye(shape, k):
    n, m = (shape, shape) if isinstance(shape, int) else shape
    for split in (None, 0, 1):
        assert_array_equal(ht.eye(shape, k=k, split=split), np.eye(n, m, k=k, dtype=np.float32))
    assert_array_equal(
        ht.eye(shape, k=k, dtype=ht.int32, split=0), np.eye(n, m, k=k, dtype=np.int32)
    )
    assert_raises_then_collective_works(ValueError, ht.eye, (2, 3, 4))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    a, b, c = np.arange(4.0), np.arange(3), np.arange(5.0) * 2
    expected = np.meshgrid(a, b, c, indexing=indexing)
    for splits in [(None, None, None), (0, None, None), (None, 0, None), (None, None, 0)]:
        arrays = [ht.array(v, split=s) for v, s in zip((a, b, c), splits)]
        result = ht.meshgrid(*arrays, indexing=indexing)
        for r, e in zip(result, expected):
            assert_array_equal(r, e)
    assert_raises_then_collective_works(ValueError, ht.meshgrid, ht.arange(3), indexing="yx")
    assert_raises_then_collective_works(ValueError, ht.meshgrid, ht.zeros((2, 2)))
