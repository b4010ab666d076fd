"""ht.sparse add, mul and sparse @ dense against scipy.sparse / NumPy."""

import numpy as np
import pytest
import scipy.sparse as sp

import heat as ht
from tests.helpers import assert_raises_then_collective_works, collective_assert
from tests.sparse.test_sparse import FORMATS, balanced_counts, problems, random_sparse

SHAPES = ((7, 5), (2, 6), (6, 2))


def pruned(matrix):
    """scipy's result without explicitly stored zeros."""
    matrix = matrix.tocsr()
    matrix.eliminate_zeros()
    return matrix


def uneven(reference, axis):
    """``reference`` split with rank r holding r rows (columns): an unbalanced layout."""
    rank, size = ht.MPI_WORLD.rank, ht.MPI_WORLD.size
    counts = [0] * size
    n = reference.shape[axis]
    for i in range(n):  # rows go to the last ranks first
        counts[size - 1 - (i % size)] += 1
    start, stop = sum(counts[:rank]), sum(counts[: rank + 1])
    local = reference.tocsr()[start:stop] if axis == 0 else reference.tocsc()[:, start:stop]
    factory = FORMATS["csr" if axis == 0 else "csc"][0]
    return factory(local, is_split=axis), counts


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize(
    "layouts", ["none-none", "split-split", "none-split", "split-none", "split-uneven"]
)
def test_add_mul(fmt, layouts):
    factory, _, axis = FORMATS[fmt]
    first, second = layouts.split("-")
    errors = []
    case = 0
    for seed, shape in enumerate(SHAPES):
        for dtypes in ((np.float32, np.float32), (np.float64, np.int64), (np.int32, np.int32)):
            density = (0.0, 0.1, 0.5)[case % 3]  # every density with every shape over the loop
            s1 = random_sparse(shape, density, dtypes[0], seed)
            # s2: its own entries where s1 has none, and -s1 on every other entry of s1
            # (their sums cancel: scipy does not store those zeros)
            d1 = s1.toarray()
            d2 = random_sparse(shape, 0.5, dtypes[1], seed + 10).toarray()
            d2[d1 != 0] = 0
            cancel = np.zeros(d1.shape, dtype=bool)
            cancel.flat[::2] = True
            d2 = d2 - (d1 * (cancel & (d1 != 0))).astype(d2.dtype)
            s2 = sp.csr_matrix(d2.astype(dtypes[1]))
            a = factory(s1, split=axis if first == "split" else None)
            b_counts = None
            if second == "uneven":
                b, b_counts = uneven(s2, axis)
            else:
                b = factory(s2, split=axis if second == "split" else None)
            split = axis if "split" in layouts else None
            ref_type = ht.promote_types(a.dtype, b.dtype).numpy_type()
            r1, r2 = s1.astype(ref_type), s2.astype(ref_type)
            label = f"{shape} {density} {dtypes}"
            # the result takes the layout of the first distributed operand
            results = [(a + b, pruned(r1 + r2), None), (b * a, pruned(r2.multiply(r1)), b_counts)]
            if case % 3 == 0:
                results += [
                    (ht.sparse.add(b, a), pruned(r2 + r1), b_counts),
                    (ht.sparse.mul(a, b), pruned(r1.multiply(r2)), None),
                ]
            for result, reference, counts in results:
                if first == "none" and second != "none":
                    counts = None
                errors += [f"{label}: {e}" for e in problems(result, reference, fmt, split, counts)]
            case += 1
    collective_assert(not errors, "; ".join(errors[:5]))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_scalars(fmt):
    factory, _, axis = FORMATS[fmt]
    reference = random_sparse((7, 5), 0.4, np.int64, seed=4)
    a = factory(reference, split=axis)
    errors = problems(a * 3, reference * 3, fmt, axis)
    scaled_type = ht.result_type(a.dtype, 2.5).numpy_type()
    errors += problems(2.5 * a, (reference * 2.5).astype(scaled_type), fmt, axis)
    errors += problems(a + 0, reference, fmt, axis)
    errors += problems(0 + a, reference, fmt, axis)
    collective_assert(not errors, "; ".join(errors[:5]))
    assert_raises_then_collective_works(NotImplementedError, ht.sparse.add, a, 1)
    assert_raises_then_collective_works(TypeError, ht.sparse.add, a, "x")
    assert_raises_then_collective_works(TypeError, ht.sparse.mul, a, np.ones((7, 5)))
    assert_raises_then_collective_works(TypeError, ht.sparse.mul, 2, 3)


def test_add_mul_bad_operands():
    csr = ht.sparse.sparse_csr_matrix(random_sparse((4, 3), 0.5, np.float32), split=0)
    csc = ht.sparse.sparse_csc_matrix(random_sparse((4, 3), 0.5, np.float32), split=1)
    other = ht.sparse.sparse_csr_matrix(random_sparse((3, 4), 0.5, np.float32), split=0)
    assert_raises_then_collective_works(TypeError, ht.sparse.add, csr, csc)
    assert_raises_then_collective_works(TypeError, ht.sparse.mul, csc, csr)
    assert_raises_then_collective_works(ValueError, ht.sparse.add, csr, other)
    assert_raises_then_collective_works(ValueError, ht.sparse.mul, csr, other)
    assert_raises_then_collective_works(TypeError, ht.sparse.add, csr, ht.ones((4, 3)))


def _dense(values, split, unbalanced):
    if not unbalanced or split is None:
        return ht.array(values, split=split)
    # rank r holds more of the last part: an unbalanced layout of the dense operand
    rank, size = ht.MPI_WORLD.rank, ht.MPI_WORLD.size
    n = values.shape[split]
    counts = [0] * size
    for i in range(n):
        counts[size - 1 - (i % size)] += 1
    start, stop = sum(counts[:rank]), sum(counts[: rank + 1])
    block = values[start:stop] if split == 0 else values[:, start:stop]
    return ht.array(block, is_split=split)


@pytest.mark.parametrize("fmt_split", ["csr-split", "csr-none", "csc-split", "csc-none"])
@pytest.mark.parametrize("b_split", [None, 0, 1])
def test_matmul(fmt_split, b_split):
    fmt, layout = fmt_split.split("-")
    factory, _, axis = FORMATS[fmt]
    rng = np.random.default_rng(0)
    errors = []
    for seed, (m, n) in enumerate(((7, 5), (2, 6), (5, 0))):
        for k in (3, 1) if seed == 0 else (3,):
            all_dtypes = (
                (np.float64, np.float32),
                (np.int64, np.int64),
                (np.float32, np.float32),
                (np.int32, np.float64),
            )
            for dtypes in all_dtypes if seed == 0 else all_dtypes[:2]:
                for density in (0.0, 0.1, 0.5):
                    if density != 0.5 and dtypes[0] is not np.float64:
                        continue
                    s = random_sparse((m, n), density, dtypes[0], seed)
                    values = rng.integers(-5, 6, size=(n, k)).astype(dtypes[1])
                    a = factory(s, split=axis if layout == "split" else None)
                    b = _dense(values, b_split, unbalanced=seed % 2 == 1)
                    result = a @ b
                    expected = s.toarray() @ values
                    # the result's layout: rows of a row-split a; otherwise those of b
                    a_split = 0 if layout == "split" else None
                    if a_split == 0 or b_split == 0:
                        split = 0
                    elif b_split == 1:
                        split = 1
                    else:
                        split = None
                    label = f"{(m, n, k)} {dtypes} {density}"
                    errors += _check_dense(result, expected, split, label)
                    if k == 1 and b_split != 1:
                        vector = _dense(values[:, 0], b_split, unbalanced=False)
                        errors += _check_dense(
                            ht.sparse.sparse_matmul(a, vector),
                            expected[:, 0],
                            split if split != 1 else None,
                            label + " vector",
                        )
    collective_assert(not errors, "; ".join(errors[:5]))


def _check_dense(result, expected, split, label):
    errors = []
    if not isinstance(result, ht.DNDarray):
        return [f"{label}: not a DNDarray"]
    expected_type = ht.types.canonical_heat_type(expected.dtype)
    if result.dtype is not expected_type:
        errors.append(f"{label}: dtype {result.dtype} != {expected_type}")
    if result.split != split:
        errors.append(f"{label}: split {result.split} != {split}")
    if tuple(result.larray.shape) != result.lshape or result.shape != expected.shape:
        errors.append(f"{label}: shape {result.shape} != {expected.shape}")
    shapes = result.comm.allgather(tuple(result.larray.shape))
    if split is not None and sum(s[split] for s in shapes) != result.shape[split]:
        errors.append(f"{label}: local shapes {shapes}")
    if split is not None and result._balanced is not None:
        counts = [s[split] for s in shapes]
        if (counts == balanced_counts(result.shape[split])) != result._balanced:
            errors.append(f"{label}: balanced flag {result._balanced} for counts {counts}")
    if not np.allclose(result.numpy(), expected, rtol=1e-5, atol=1e-4):
        errors.append(f"{label}: values differ")
    return errors


def test_matmul_bad_operands():
    a = ht.sparse.sparse_csr_matrix(random_sparse((4, 3), 0.5, np.float32), split=0)
    assert_raises_then_collective_works(
        ValueError, ht.sparse.sparse_matmul, a, ht.ones((4, 2), split=0)
    )
    assert_raises_then_collective_works(
        ValueError, ht.sparse.sparse_matmul, a, ht.ones((3, 2, 2), split=0)
    )
    assert_raises_then_collective_works(TypeError, ht.sparse.sparse_matmul, a, np.ones((3, 2)))
    assert_raises_then_collective_works(
        TypeError, ht.sparse.sparse_matmul, np.ones((4, 3)), ht.ones((3, 2))
    )
    assert_raises_then_collective_works(TypeError, a.__matmul__, sp.eye(3))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_bool(fmt):
    """Booleans: + is a logical or, * a logical and, @ or-of-ands (as scipy.sparse)."""
    factory, _, axis = FORMATS[fmt]
    s1 = random_sparse((7, 5), 0.4, np.int64, seed=11).astype(bool)
    s2 = random_sparse((7, 5), 0.4, np.int64, seed=12).astype(bool)
    a, b = factory(s1, split=axis), factory(s2, split=axis)
    errors = problems(a + b, pruned(s1 + s2), fmt, axis) + problems(
        a * b, pruned(s1.multiply(s2)), fmt, axis
    )
    dense = np.random.default_rng(1).integers(0, 2, size=(5, 3)).astype(bool)
    errors += _check_dense(a @ ht.array(dense, split=0), s1.toarray() @ dense, 0, "bool @")
    collective_assert(not errors, "; ".join(errors[:5]))
