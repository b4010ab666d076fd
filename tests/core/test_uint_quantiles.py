"""
median / percentile / quantile (and the NaN variants) of uint16, uint32 and uint64 arrays, with
NumPy as the oracle. Values near 2**63 and 2**64 - 1 check that the selection orders unsigned
keys correctly and picks the exact element (float64 cannot hold them), and that the
interpolation gives NumPy's float64 to the last bit. Every split, uneven sizes and arrays with
fewer rows than processes; the distributed radix selection (all axes of a split array reduced)
is forced through several rounds by small chunk and gather limits.
"""

import numpy as np
import pytest

import heat as ht
from heat.core import quantiles as quantiles_module
from tests.helpers import assert_array_equal, collective_assert, rotate

METHODS = quantiles_module._QUANTILE_METHODS  # all of NumPy's
UNSIGNED = (np.uint16, np.uint32, np.uint64)
# values where a float64 detour, a signed reading or a wrong key order would show
EDGES = {
    np.uint16: [0, 1, 2**15 - 1, 2**15, 2**15 + 1, 2**16 - 2, 2**16 - 1],
    np.uint32: [0, 1, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 2, 2**32 - 1],
    np.uint64: [
        0,
        1,
        2**53 + 1,
        2**63 - 3,
        2**63 - 1,
        2**63,
        2**63 + 1,
        2**63 + 7,
        2**64 - 3,
        2**64 - 2,
        2**64 - 1,
    ],
}
SHAPES_SPLITS = [
    ((7, 5), None),
    ((7, 5), 0),
    ((7, 5), 1),
    ((7, 5), -1),
    ((2, 9), 0),  # fewer rows than processes
    ((9, 2), 1),
    ((2, 3), 1),
    ((13,), 0),
    ((1,), 0),
]
IDS = [f"{'x'.join(map(str, s))}-split{p}" for s, p in SHAPES_SPLITS]
Q = [0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0]


def unsigned_data(shape, dtype, seed):
    """Random values of the whole range of ``dtype`` mixed with its edge values (duplicates)."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    data = rng.integers(0, info.max, size=shape, dtype=dtype, endpoint=True)
    edges = np.array(EDGES[dtype], dtype=dtype)
    mask = rng.random(shape) < 0.6
    data[mask] = rng.choice(edges, size=int(mask.sum()))
    return data


def assert_exact(actual, expected, rtol=0):
    """Same dtype and shape as NumPy's result and the same values (to the last bit by default)."""
    assert_array_equal(actual, expected, rtol=rtol, atol=0)


# NumPy's median averages the two middle values, (a + b) / 2, where quantile interpolates from
# the nearer end: the two can differ in the last bit
MEDIAN_RTOL = 1e-15


def axes_of(ndim):
    return [None, 0, -1] if ndim == 1 else [None, 0, 1, (0, 1)]


@pytest.mark.parametrize("dtype", UNSIGNED, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape,split", SHAPES_SPLITS, ids=IDS)
def test_quantile_all_methods(shape, split, dtype):
    data = unsigned_data(shape, dtype, seed=len(shape) + 3 * abs(split or 0) + data_seed(dtype))
    x = ht.array(data, split=split)
    for i, axis in enumerate(axes_of(len(shape))):
        keepdims = i % 2 == 1
        for method in METHODS:
            assert_exact(
                ht.quantile(x, Q, axis=axis, method=method, keepdims=keepdims),
                np.quantile(data, Q, axis=axis, method=method, keepdims=keepdims),
            )
        assert_exact(
            ht.median(x, axis=axis, keepdims=keepdims),
            np.median(data, axis=axis, keepdims=keepdims),
            MEDIAN_RTOL,
        )
        method = rotate(METHODS, i + (split or 0))
        assert_exact(
            ht.percentile(x, 37.5, axis=axis, method=method, keepdims=keepdims),
            np.percentile(data, 37.5, axis=axis, method=method, keepdims=keepdims),
        )
        assert_exact(
            ht.nanquantile(x, [0.2, 0.8], axis=axis, method=method, keepdims=keepdims),
            np.nanquantile(data, [0.2, 0.8], axis=axis, method=method, keepdims=keepdims),
        )
        assert_exact(ht.nanmedian(x, axis=axis), np.nanmedian(data, axis=axis), MEDIAN_RTOL)
    # the input is unchanged
    assert_exact(x, data)


def data_seed(dtype):
    return UNSIGNED.index(dtype) * 17


@pytest.mark.parametrize("dtype", UNSIGNED, ids=lambda d: d.__name__)
@pytest.mark.parametrize("split", [None, 0, 1])
def test_radix_selection_rounds(monkeypatch, dtype, split):
    """The distributed selection with several digit rounds and candidate pools."""
    monkeypatch.setattr(quantiles_module, "_SCAN_CHUNK", 16)
    monkeypatch.setattr(quantiles_module, "_GATHER_LIMIT", 0 if split == 0 else 4)
    data = unsigned_data((41, 3), dtype, seed=5 + data_seed(dtype))
    x = ht.array(data, split=split)
    for method in METHODS:
        assert_exact(ht.quantile(x, Q, method=method), np.quantile(data, Q, method=method))
    assert_exact(ht.median(x, keepdims=True), np.median(data, keepdims=True), MEDIAN_RTOL)


def test_uint64_picks_exact_elements():
    """Neighbours above 2**63 that float64 cannot tell apart are picked exactly."""
    values = np.array([2**64 - 1, 2**64 - 2, 2**63 + 1, 2**63, 2**63 - 1, 3], dtype=np.uint64)
    for split in (None, 0):
        x = ht.array(values, split=split)
        for q, expected in [(1.0, 2**64 - 1), (0.8, 2**64 - 2), (0.6, 2**63 + 1), (0.4, 2**63)]:
            picked = ht.quantile(x, q, method="lower")
            collective_assert(picked.dtype is ht.uint64, f"dtype {picked.dtype}")
            collective_assert(int(picked.item()) == expected, f"{picked.item()} != {expected}")
        assert_exact(ht.median(x), np.median(values), MEDIAN_RTOL)


@pytest.mark.parametrize("dtype", UNSIGNED, ids=lambda d: d.__name__)
def test_out_and_float32_q(dtype):
    data = unsigned_data((6, 4), dtype, seed=11)
    x = ht.array(data, split=0)
    out = ht.empty((4,), dtype=ht.float64)
    result = ht.median(x, axis=0, out=out)
    collective_assert(result is out, "out was not returned")
    assert_exact(out, np.median(data, axis=0), MEDIAN_RTOL)
    q = np.array([0.25, 0.75], dtype=np.float32)
    assert_exact(ht.quantile(x, ht.array(q), axis=1), np.quantile(data, q, axis=1))
    lower = ht.empty((4,), dtype=ht.types.canonical_heat_type(dtype))
    ht.quantile(x, 0.5, axis=0, method="lower", out=lower)
    assert_exact(lower, np.quantile(data, 0.5, axis=0, method="lower"))
