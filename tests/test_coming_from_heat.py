"""
docs/coming_from_heat.rst lists heat's deliberate differences from HeAT 1.8 (issue 18, item 21);
each heat behaviour it states, and each replacement it offers, is checked here, so the page stays
true. NumPy is the oracle where the page says "as NumPy".
"""

import numpy as np
import pytest

import heat as ht

SPLITS = [None, 0]


def values(x):
    return x.numpy() if isinstance(x, ht.DNDarray) else x


@pytest.mark.parametrize("split", SPLITS)
def test_comparisons_and_results(split):
    a, b = np.array([1, 2, 3, 4]), np.array([1, 5, 3, 0])
    x, y = ht.array(a, split=split), ht.array(b, split=split)
    equal = ht.equal(x, y)
    assert isinstance(equal, ht.DNDarray) and equal.dtype is ht.bool
    np.testing.assert_array_equal(values(equal), np.equal(a, b))
    assert ht.array_equal(x, x) is True and ht.array_equal(x, y) is False
    # sort: values only; the pair through argsort
    assert isinstance(ht.sort(y), ht.DNDarray)
    np.testing.assert_array_equal(values(ht.sort(y, 0)), np.sort(b))
    np.testing.assert_array_equal(values(ht.argsort(y, 0)), np.argsort(b, kind="stable"))
    # nonzero / where: a tuple; HeAT's (n, ndim) through stack
    m = np.array([[0, 1, 0], [2, 0, 3], [0, 0, 4], [5, 0, 0]])
    xm = ht.array(m, split=split)
    nz = ht.nonzero(xm)
    assert isinstance(nz, tuple) and len(nz) == 2
    np.testing.assert_array_equal(values(xm[nz]), m[np.nonzero(m)])
    np.testing.assert_array_equal(values(ht.stack(nz, axis=1)), np.argwhere(m))
    assert isinstance(ht.where(y > 1), tuple)
    # 0-d reductions
    for result in (
        ht.argmax(y),
        ht.argmin(y),
        ht.std(ht.array(a * 1.0, split=split)),
        ht.trace(ht.ones((2, 2), split=split)),
    ):
        assert isinstance(result, ht.DNDarray) and result.shape == ()
    assert ht.argmax(y).item() == 1 and isinstance(float(ht.std(x)), float)
    z = ht.array(a, split=split)
    assert z.balance_() is z


@pytest.mark.parametrize("split", SPLITS)
def test_types_and_promotion(split):
    a = np.array([1, 2, 3])
    x = ht.array(a, split=split)
    for result, expected in (
        (x / x, a / a),
        (x / 2, a / 2),
        (x * 0.5, a * 0.5),
        (x // 2.0, a // 2.0),
    ):
        assert result.dtype is ht.float64 and expected.dtype == np.float64
        np.testing.assert_array_equal(values(result), expected)
    assert (x / x).astype(ht.float32).dtype is ht.float32
    assert (x.astype(ht.float32) / x.astype(ht.float32)).dtype is ht.float32
    assert (x.astype(ht.float32) / x).dtype is ht.float64  # float32 with int64, as NumPy
    assert (ht.ones(3, split=split) * 0.5).dtype is ht.float32
    assert (
        ht.cov(ht.array([[1.0, 2.0, 3.0], [1.0, 0.0, 1.0]], dtype=ht.float64)).dtype is ht.float64
    )
    single = np.array([[1.0, 2.0, 3.0], [1.0, 0.0, 1.0]], dtype=np.float32)
    assert ht.cov(ht.array(single)).dtype is ht.float64 and np.cov(single).dtype == np.float64
    assert ht.cov(ht.array(single)).astype(ht.float32).dtype is ht.float32
    small = np.array([100, 100, 100], dtype=np.int8)
    s = ht.array(small, split=split)
    assert ht.cumsum(s, 0).dtype is ht.int64 and np.cumsum(small).dtype == np.int64
    np.testing.assert_array_equal(values(ht.cumsum(s, 0)), np.cumsum(small))
    assert ht.cumsum(ht.array(small.astype(np.uint8), split=split), 0).dtype is ht.uint64
    wrapped = ht.cumsum(s, 0, dtype=ht.int8)
    assert wrapped.dtype is ht.int8
    np.testing.assert_array_equal(values(wrapped), np.cumsum(small, dtype=np.int8))
    for function in (ht.floor, ht.ceil, ht.trunc, ht.round):
        assert function(x).dtype is ht.int64, function.__name__
    assert ht.floor(x).astype(ht.float64).dtype is ht.float64
    assert ht.vdot(x, x).dtype is ht.int64 and ht.vdot(x, x).item() == 14
    assert ht.random.randint(0, 5, (4,), split=split).dtype is ht.int64
    assert ht.random.randint(0, 5, (4,), dtype=ht.int32, split=split).dtype is ht.int32
    assert ht.float32 == np.float32 and ht.array([1.0], dtype=ht.float64).dtype == np.float64
    c = ht.array([1 + 1j, -2j], split=split)
    np.testing.assert_allclose(values(ht.sign(c)), np.sign(np.array([1 + 1j, -2j])), rtol=1e-6)
    np.testing.assert_array_equal(values(ht.sign(c.real)), [1.0, 0.0])


def test_shapes_of_scalars():
    for function, args in (
        (ht.empty_like, (3,)),
        (ht.zeros_like, (2.0,)),
        (ht.ones_like, (2,)),
        (ht.full_like, (2, 3)),
    ):
        result = function(*args)
        assert result.shape == (), function.__name__
    assert ht.full_like(2, 3).dtype is ht.int64 and ht.zeros_like(2.0).dtype is ht.float32
    assert ht.zeros((1,)).shape == (1,)


def test_random_numbers_do_not_depend_on_the_process_count():
    # the numbers at this process count are those of one process: split=0 gathers the same
    # values as split=None, which every process draws whole
    ht.random.seed(5)
    split = ht.random.randn(11, 3, split=0).numpy()
    ht.random.seed(5)
    whole = ht.random.randn(11, 3).numpy()
    np.testing.assert_array_equal(split, whole)


@pytest.mark.parametrize("split", SPLITS)
def test_what_heat_accepts_that_heat_refused(split):
    a = np.arange(5)
    x = ht.array(a, split=split)
    np.testing.assert_array_equal(values(x[::-1]), a[::-1])
    np.testing.assert_array_equal(values(abs(ht.array(-a, split=split))), a)
    joined = ht.concatenate((ht.ones((2, 2), split=0), ht.ones((2, 2), split=1)))
    assert joined.shape == (4, 2) and joined.split == 0
    with pytest.raises(ValueError):
        ht.array([2], split=split) ** -1


def test_the_aliases_and_ignored_arguments():
    from heat.core.communication import Request

    assert ht.MPIRequest is Request
    assert ht.comm is ht.MPI_WORLD
    for name in ("hsvd", "flexible", "sub", "mul", "div", "floordiv", "cumproduct"):
        assert hasattr(ht, name), name
    assert hasattr(ht.utils.data, "DistributedDataset")
    assert hasattr(ht.utils.data, "create_train_val_split")
    A = ht.random.randn(20, 30, split=1)
    with pytest.warns(UserWarning, match="maxmergedim"):
        ht.hsvd(A, maxrank=2, maxmergedim=4, silent=True)


def test_the_page_is_in_the_docs():
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    assert "coming_from_heat" in (docs / "index.rst").read_text()
    page = (docs / "coming_from_heat.rst").read_text()
    for claim in (
        "ht.array_equal(a, b)",
        "ht.stack(ht.nonzero(x), axis=1)",
        "float64",
        "ht.datasets.load_iris()",
    ):
        assert claim in page
