"""
Tests of heat/graph/laplacian.py; the oracle is a NumPy construction of the same Laplacian
(scipy.sparse.csgraph.laplacian for the two definitions). Every split of the samples, float32
and float64, uneven sizes, fewer samples than processes, and bad parameters.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_array_equal, assert_raises_then_collective_works, collective_assert

csgraph = pytest.importorskip("scipy.sparse.csgraph")
SPLITS = [None, 0, 1, -1]
DTYPES = [np.float32, np.float64]
SIZES = [2, 7, 11]


def _samples(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, size=(n, 3)).astype(dtype)


def _distances(x):
    return np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))


def _expected(x, definition, mode, key, value, weighted, measure):
    d = _distances(x.astype(np.float64))
    s = np.exp(-(d**2) / 2.0) if measure == "rbf" else d
    if mode == "eNeighbour":
        connected = s < value if key == "upper" else s > value
        s = np.where(connected, s if weighted else 1.0, 0.0)
    np.fill_diagonal(s, 0.0)
    expected = csgraph.laplacian(s, normed=definition == "norm_sym")
    if definition == "norm_sym":
        # an isolated node has L_ii = 1 (I - D^-1/2 W D^-1/2; SciPy leaves 0 there)
        isolated = s.sum(axis=1) == 0
        expected[isolated, isolated] = 1.0
    return expected


def _similarity(measure, split_result="keep"):
    def similarity(x):
        if measure == "rbf":
            result = ht.spatial.rbf(x, sigma=1.0)
        else:
            result = ht.spatial.cdist(x)
        return result if split_result == "keep" else ht.resplit(result, split_result)

    return similarity


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("definition", ["norm_sym", "simple"])
def test_fully_connected(n, dtype, definition):
    x = _samples(n, dtype)
    expected = _expected(x, definition, "fully_connected", "upper", 1.0, True, "rbf")
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    for split in SPLITS:
        laplacian = ht.graph.Laplacian(_similarity("rbf"), definition=definition)
        L = laplacian.construct(ht.array(x, split=split))
        assert_array_equal(L, expected.astype(dtype), **tol)
        collective_assert(L.split == (None if split is None else 0) or x.shape[0] == 0)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("key", ["upper", "lower"])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("definition", ["norm_sym", "simple"])
def test_epsilon_neighbour(n, key, weighted, definition):
    x = _samples(n, np.float64, seed=n)
    value = 1.5
    expected = _expected(x, definition, "eNeighbour", key, value, weighted, "euclidean")
    for split in SPLITS:
        laplacian = ht.graph.Laplacian(
            _similarity("euclidean"),
            weighted=weighted,
            definition=definition,
            mode="eNeighbour",
            threshold_key=key,
            threshold_value=value,
        )
        L = laplacian.construct(ht.array(x, split=split))
        assert_array_equal(L, expected, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("split_result", [None, 0, 1])
@pytest.mark.parametrize("definition", ["norm_sym", "simple"])
def test_similarity_in_any_layout(split_result, definition):
    x = _samples(9, np.float64, seed=3)
    expected = _expected(x, definition, "eNeighbour", "upper", 2.0, True, "euclidean")
    laplacian = ht.graph.Laplacian(
        _similarity("euclidean", split_result),
        definition=definition,
        mode="eNeighbour",
        threshold_value=2.0,
    )
    L = laplacian.construct(ht.array(x, split=0))
    assert_array_equal(L, expected, rtol=1e-9, atol=1e-10)
    collective_assert(L.split == split_result, f"split {L.split} != {split_result}")


def test_isolated_nodes_and_properties():
    x = np.array([[0.0], [0.1], [5.0]])
    laplacian = ht.graph.Laplacian(
        _similarity("euclidean"), weighted=False, mode="eNeighbour", threshold_value=1.0
    )
    L = laplacian.construct(ht.array(x, split=0))
    # the isolated third sample: 1 on the diagonal of the normalized Laplacian
    assert_array_equal(L, np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    collective_assert(laplacian.threshold_key == "upper" and laplacian.threshold_value == 1.0)
    # rows sum to zero for the simple Laplacian
    simple = ht.graph.Laplacian(_similarity("rbf"), definition="simple")
    sums = ht.sum(simple.construct(ht.array(_samples(7, np.float64), split=0)), axis=1)
    assert_array_equal(sums, np.zeros(7), atol=1e-12)


def test_bad_parameters():
    similarity = _similarity("rbf")
    for kwargs, error in [
        (dict(similarity=3), TypeError),
        (dict(similarity=similarity, weighted="yes"), TypeError),
        (dict(similarity=similarity, definition="norm"), ValueError),
        (dict(similarity=similarity, mode="kNN"), ValueError),
        (dict(similarity=similarity, threshold_key="middle"), ValueError),
        (dict(similarity=similarity, threshold_value="1"), TypeError),
        (dict(similarity=similarity, neighbours=0), ValueError),
        (dict(similarity=similarity, neighbours=2.5), TypeError),
    ]:
        assert_raises_then_collective_works(error, ht.graph.Laplacian, **kwargs)
    not_square = ht.graph.Laplacian(lambda x: x)
    assert_raises_then_collective_works(ValueError, not_square.construct, ht.ones((4, 3), split=0))
    not_array = ht.graph.Laplacian(lambda x: np.ones((3, 3)))
    assert_raises_then_collective_works(TypeError, not_array.construct, ht.ones((3, 3), split=0))


def test_docstring_examples():
    """The Examples sections of heat/graph/laplacian.py run and show what they claim."""
    import doctest

    from heat.graph import laplacian

    result = doctest.testmod(
        laplacian,
        extraglobs={"ht": ht},
        optionflags=doctest.NORMALIZE_WHITESPACE,
        verbose=False,
        report=False,
    )
    collective_assert(result.failed == 0, f"{result.failed} docstring examples of Laplacian failed")
