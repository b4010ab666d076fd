"""ht.sparse against scipy.sparse: creation, every attribute (global and local), conversions."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import heat as ht
from tests.helpers import assert_raises_then_collective_works, collective_assert

DTYPES = (np.float32, np.float64, np.int64, np.int32)
DENSITIES = (0.0, 0.1, 0.5)
# uneven at 2-4 processes; (2, 6)/(6, 2): fewer rows/columns than processes at 3-4; (0, 3) empty
SHAPES = ((7, 5), (2, 6), (6, 2), (0, 3))
FORMATS = {
    "csr": (ht.sparse.sparse_csr_matrix, ht.sparse.DCSR_matrix, 0),
    "csc": (ht.sparse.sparse_csc_matrix, ht.sparse.DCSC_matrix, 1),
}


def random_sparse(shape, density, dtype, seed=0):
    """A scipy CSR matrix with values in 1..9 (no zero stored), identical on every rank."""
    matrix = sp.random(*shape, density=density, random_state=seed, format="csr")
    matrix.data = np.floor(matrix.data * 9 + 1)
    return matrix.astype(dtype)


def balanced_counts(n):
    p = ht.MPI_WORLD.size
    return [n // p + (1 if r < n % p else 0) for r in range(p)]


def problems(matrix, reference, fmt, split, counts=None):
    """What is wrong with ``matrix`` against the scipy ``reference`` (empty: nothing). Collective."""
    _, cls, axis = FORMATS[fmt]
    ref = reference.tocsr() if axis == 0 else reference.tocsc()
    ref.sum_duplicates()
    rank, size = ht.MPI_WORLD.rank, ht.MPI_WORLD.size
    errors = []

    def expect(ok, message):
        if not ok:
            errors.append(message)

    expect(type(matrix) is cls, f"type {type(matrix).__name__}")
    expect(matrix.shape == ref.shape and matrix.gshape == ref.shape, f"shape {matrix.shape}")
    expect(matrix.gnnz == ref.nnz and matrix.nnz == ref.nnz, f"gnnz {matrix.gnnz} != {ref.nnz}")
    expect(matrix.dtype is ht.types.canonical_heat_type(ref.dtype), f"dtype {matrix.dtype}")
    expect(matrix.split == split, f"split {matrix.split} != {split}")
    expect(matrix.ndim == 2, "ndim")
    expect(matrix.is_distributed() == (split is not None and size > 1), "is_distributed")
    expect(matrix.larray.layout == (torch.sparse_csr if axis == 0 else torch.sparse_csc), "layout")
    expect(matrix.larray.dtype == matrix.dtype.torch_type(), "larray dtype")
    # the global compressed parts (collective)
    # (indptr, indices, data are the same properties: test_aliases checks them)
    expect(
        np.array_equal(matrix.gindptr.cpu().numpy(), ref.indptr),
        f"gindptr {matrix.gindptr} != {ref.indptr}",
    )
    expect(np.array_equal(matrix.gindices.cpu().numpy(), ref.indices), "gindices")
    expect(
        np.array_equal(matrix.gdata.cpu().numpy(), ref.data), f"gdata {matrix.gdata} != {ref.data}"
    )
    # this process's block
    if split is None:
        start, stop = 0, ref.shape[axis]
    else:
        counts = balanced_counts(ref.shape[axis]) if counts is None else counts
        start, stop = sum(counts[:rank]), sum(counts[: rank + 1])
    lshape = list(ref.shape)
    lshape[axis] = stop - start
    first, last = ref.indptr[start], ref.indptr[stop]
    expect(matrix.lshape == tuple(lshape), f"lshape {matrix.lshape} != {tuple(lshape)}")
    expect(tuple(matrix.larray.shape) == tuple(lshape), "larray shape")
    expect(matrix.lnnz == last - first, f"lnnz {matrix.lnnz} != {last - first}")
    expect(
        np.array_equal(matrix.lindptr.cpu().numpy(), ref.indptr[start : stop + 1] - first),
        "lindptr",
    )
    expect(np.array_equal(matrix.lindices.cpu().numpy(), ref.indices[first:last]), "lindices")
    expect(np.array_equal(matrix.ldata.cpu().numpy(), ref.data[first:last]), "ldata")
    if split is not None:
        nnz_counts = [
            int(ref.indptr[sum(counts[: r + 1])] - ref.indptr[sum(counts[:r])]) for r in range(size)
        ]
        displs = [sum(nnz_counts[:r]) for r in range(size)]
        expect(
            matrix.counts_displs_nnz() == (tuple(nnz_counts), tuple(displs)), "counts_displs_nnz"
        )
        expect(matrix.balanced == (list(counts) == balanced_counts(ref.shape[axis])), "balanced")
    else:
        expect(matrix.balanced, "balanced")
    dense = matrix.todense()
    expect(dense.split == split and dense.shape == ref.shape, f"dense split {dense.split}")
    expect(tuple(dense.larray.shape) == tuple(lshape), "dense lshape")
    expect(np.array_equal(dense.numpy(), ref.toarray()), "todense values")
    return errors


def check(matrix, reference, fmt, split, counts=None):
    errors = problems(matrix, reference, fmt, split, counts)
    collective_assert(not errors, "; ".join(errors[:5]))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("distributed", [False, True])
def test_from_scipy(fmt, distributed):
    factory, _, axis = FORMATS[fmt]
    split = axis if distributed else None
    errors = []
    for seed, shape in enumerate(SHAPES):
        for density in DENSITIES:
            for dtype in DTYPES:
                reference = random_sparse(shape, density, dtype, seed)
                # every scipy format in turn (a collective check per matrix keeps this short)
                sources = (reference, reference.tocsc(), reference.tocoo(), sp.csr_array(reference))
                source = sources[(seed + len(errors) + DTYPES.index(dtype)) % len(sources)]
                matrix = factory(source, split=split)
                errors += [
                    f"{shape} {density} {dtype.__name__}: {e}"
                    for e in problems(matrix, reference, fmt, split)
                ]
    collective_assert(not errors, "; ".join(errors[:5]))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("split", [None, "axis", "negative"])
def test_from_torch_numpy_lists(fmt, split):
    factory, _, axis = FORMATS[fmt]
    split = {None: None, "axis": axis, "negative": axis - 2}[split]
    expected_split = None if split is None else axis
    reference = random_sparse((7, 5), 0.4, np.float32, seed=3)
    dense = reference.toarray()
    tensor = torch.from_numpy(dense)
    for source in (
        tensor,
        tensor.to_sparse_csr(),
        tensor.to_sparse_csc(),
        tensor.to_sparse(),
        dense,
    ):
        check(factory(source, split=split), reference, fmt, expected_split)
    check(factory(dense.tolist(), split=split), reference.astype(np.float32), fmt, expected_split)
    check(
        factory(dense, dtype=ht.float64, split=split),
        reference.astype(np.float64),
        fmt,
        expected_split,
    )
    check(
        factory(dense.astype(np.int32).tolist(), split=split),
        reference.astype(np.int64),
        fmt,
        expected_split,
    )


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("dense_split", [None, 0, 1])
def test_from_dndarray(fmt, dense_split):
    factory, _, axis = FORMATS[fmt]
    to_sparse = ht.sparse.to_sparse_csr if axis == 0 else ht.sparse.to_sparse_csc
    for shape in ((7, 5), (2, 6), (6, 2)):
        for dtype in (np.float64, np.int32):
            reference = random_sparse(shape, 0.5, dtype, seed=1)
            x = ht.array(reference.toarray(), split=dense_split)
            expected = None if dense_split is None else axis
            check(to_sparse(x), reference, fmt, expected)
            check(factory(x), reference, fmt, expected)
            check(factory(x, split=axis), reference, fmt, axis)
            check(factory(x, dtype=ht.float32), reference.astype(np.float32), fmt, expected)
            # dense -> sparse -> dense keeps the split of a matching dense array
            back = ht.sparse.to_dense(to_sparse(x))
            collective_assert(
                back.split == expected and np.array_equal(back.numpy(), reference.toarray())
            )


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_is_split(fmt):
    """Rank r passes r rows (rank 0 none): an unbalanced layout, stacked in rank order."""
    factory, _, axis = FORMATS[fmt]
    rank, size = ht.MPI_WORLD.rank, ht.MPI_WORLD.size
    counts = list(range(size))
    total = sum(counts)
    for dtype in (np.float32, np.int64):
        reference = random_sparse((total, 4) if axis == 0 else (4, total), 0.5, dtype, seed=5)
        start, stop = sum(counts[:rank]), sum(counts[: rank + 1])
        if axis == 0:
            local = reference[start:stop]
        else:
            local = reference.tocsc()[:, start:stop]
        for source in (local, torch.from_numpy(local.toarray())):
            check(factory(source, is_split=axis), reference, fmt, axis, counts)
        check(factory(local, is_split=axis - 2), reference, fmt, axis, counts)
    # blocks of different types are promoted to a common one
    reference = random_sparse((total, 4) if axis == 0 else (4, total), 0.5, np.float64, seed=6)
    local = reference.tocsr()[start:stop] if axis == 0 else reference.tocsc()[:, start:stop]
    local = local.astype(np.float64 if rank == size - 1 else np.float32)
    check(factory(local, is_split=axis), reference, fmt, axis, counts)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_astype(fmt):
    factory, _, axis = FORMATS[fmt]
    reference = random_sparse((7, 5), 0.5, np.float64, seed=2)
    matrix = factory(reference, split=axis)
    for dtype, numpy_type in ((ht.float32, np.float32), (ht.int32, np.int32), (np.int64, np.int64)):
        cast = matrix.astype(dtype)
        check(cast, reference.astype(numpy_type), fmt, axis)
        check(matrix, reference, fmt, axis)  # unchanged
    same = matrix.astype(ht.float32, copy=False)
    collective_assert(same is matrix)
    check(matrix, reference.astype(np.float32), fmt, axis)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_aliases(fmt):
    factory, _, axis = FORMATS[fmt]
    reference = random_sparse((7, 5), 0.3, np.float64, seed=8)
    ref = reference.tocsr() if axis == 0 else reference.tocsc()
    matrix = factory(reference, split=axis)
    ok = (
        np.array_equal(matrix.indptr.cpu().numpy(), ref.indptr)
        and np.array_equal(matrix.indices.cpu().numpy(), ref.indices)
        and np.array_equal(matrix.data.cpu().numpy(), ref.data)
        and matrix.nnz == matrix.gnnz == ref.nnz
        and matrix.shape == matrix.gshape
    )
    for dense in (matrix.to_dense(), ht.sparse.to_dense(matrix), ht.sparse.todense(matrix)):
        ok = ok and dense.split == axis and np.array_equal(dense.numpy(), ref.toarray())
    collective_assert(ok, "aliases differ")


def test_repr_is_local():
    matrix = ht.sparse.sparse_csr_matrix(random_sparse((5, 3), 0.5, np.float32), split=0)
    text = repr(matrix) if ht.MPI_WORLD.rank == 0 else ""  # only rank 0: must not communicate
    ok = ht.MPI_WORLD.rank != 0 or ("DCSR_matrix" in text and "split=0" in text)
    collective_assert(ok, text)


def test_counts_displs_nnz_of_non_split_raises():
    matrix = ht.sparse.sparse_csr_matrix(random_sparse((5, 3), 0.5, np.float32))
    assert_raises_then_collective_works(ValueError, matrix.counts_displs_nnz)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_bad_input(fmt):
    factory, _, axis = FORMATS[fmt]
    good = random_sparse((4, 4), 0.5, np.float32)
    other = 1 - axis
    assert_raises_then_collective_works(ValueError, factory, good, split=other)
    assert_raises_then_collective_works(ValueError, factory, good, is_split=other)
    assert_raises_then_collective_works(ValueError, factory, good, split=axis, is_split=axis)
    assert_raises_then_collective_works(TypeError, factory, good, split=0.0)
    assert_raises_then_collective_works(TypeError, factory, good, split=True)
    assert_raises_then_collective_works(ValueError, factory, np.zeros((2, 3, 4)))
    assert_raises_then_collective_works(ValueError, factory, np.zeros(3), split=axis)
    assert_raises_then_collective_works(TypeError, factory, {"a": 1})
    assert_raises_then_collective_works(TypeError, factory, good, dtype="no type")
    assert_raises_then_collective_works(TypeError, factory, good, comm="world")
    assert_raises_then_collective_works(ValueError, factory, ht.zeros((2, 3, 4), split=0))
    assert_raises_then_collective_works(
        ValueError, factory, ht.zeros((3, 4), split=0), is_split=axis
    )
    assert_raises_then_collective_works(TypeError, ht.sparse.to_sparse_csr, np.zeros((2, 2)))
    assert_raises_then_collective_works(TypeError, ht.sparse.to_sparse_csc, good)
    assert_raises_then_collective_works(TypeError, ht.sparse.to_dense, good)
    rank = ht.MPI_WORLD.rank
    # is_split: one rank's block is bad, or does not fit: the same error on every rank
    size = ht.MPI_WORLD.size
    shape = [2, 2]
    shape[other] = 3 if rank == size - 1 and size > 1 else 2
    bad_fit = np.ones(shape)
    if size > 1:
        assert_raises_then_collective_works(ValueError, factory, bad_fit, is_split=axis)
    bad_block = np.ones((2, 2, 2)) if rank == size - 1 else np.ones((2, 2))
    assert_raises_then_collective_works(ValueError, factory, bad_block, is_split=axis)
    bad_type = {"a": 1} if rank == 0 else np.ones((2, 2))
    assert_raises_then_collective_works(TypeError, factory, bad_type, is_split=axis)


# ---------------------------------------------------------------------------------------------
# HeAT 1.8's DNDarray.to_sparse_csr() / to_sparse_csc() and todense(order, out)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("split", [None, 0, 1])
def test_dndarray_to_sparse_methods(fmt, split):
    _, _, axis = FORMATS[fmt]
    errors = []
    for seed, shape in enumerate(SHAPES):
        reference = random_sparse(shape, 0.4, np.float64, seed)
        x = ht.array(reference.toarray(), split=split)
        matrix = x.to_sparse_csr() if fmt == "csr" else x.to_sparse_csc()
        errors += [
            f"{shape}: {e}"
            for e in problems(matrix, reference, fmt, None if split is None else axis)
        ]
    collective_assert(not errors, "; ".join(errors[:5]))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("distributed", [False, True])
def test_todense_into_out(fmt, distributed):
    factory, _, axis = FORMATS[fmt]
    split = axis if distributed else None
    ok = True
    for seed, shape in enumerate(SHAPES):
        reference = random_sparse(shape, 0.4, np.float32, seed)
        matrix = factory(reference, split=split)
        out = ht.full(shape, -1.0, dtype=ht.float32, split=split)
        result = matrix.todense(order="C", out=out)
        ok = ok and result is out and np.array_equal(out.numpy(), reference.toarray())
        ok = ok and ht.sparse.to_dense(matrix, out=out) is out
    collective_assert(ok, "todense(out=) differs from scipy")


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_todense_into_out_of_another_distribution(fmt):
    # out split like the matrix, but with every row / column on the last process
    factory, _, axis = FORMATS[fmt]
    reference = random_sparse((7, 5), 0.5, np.float64, seed=4)
    matrix = factory(reference, split=axis)
    rank, size = ht.MPI_WORLD.rank, ht.MPI_WORLD.size
    block = [7, 5]
    block[axis] = reference.shape[axis] if rank == size - 1 else 0
    out = ht.array(np.zeros(block), is_split=axis)
    map_before = out.lshape_map.clone()
    result = matrix.todense(out=out)
    collective_assert(result is out and np.array_equal(out.numpy(), reference.toarray()), "values")
    collective_assert(bool((out.lshape_map == map_before).all()), "out keeps its distribution")


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_todense_bad_out_raises_everywhere(fmt):
    factory, _, axis = FORMATS[fmt]
    matrix = factory(random_sparse((4, 3), 0.5, np.float32), split=axis)
    for bad in (
        ht.zeros((3, 4), split=axis),
        ht.zeros((4, 3), dtype=ht.float64, split=axis),
        ht.zeros((4, 3), split=None),
        ht.zeros((4, 3), split=1 - axis),
    ):
        assert_raises_then_collective_works(ValueError, matrix.todense, out=bad)
    assert_raises_then_collective_works(TypeError, matrix.todense, out=np.zeros((4, 3), np.float32))
    assert_raises_then_collective_works(ValueError, matrix.todense, order="X")
    assert_raises_then_collective_works(NotImplementedError, matrix.todense, order="F")
    assert_raises_then_collective_works(ValueError, ht.zeros((2, 3, 4), split=0).to_sparse_csr)
    assert_raises_then_collective_works(ValueError, ht.zeros(4, split=0).to_sparse_csc)
