"""
Tests of heat/preprocessing/preprocessing.py; the oracle is scikit-learn's sklearn.preprocessing
on the same data. Every split (samples, features, none), float32, float64 and integers, uneven
sizes and fewer rows than processes.
"""

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
)

sklearn_preprocessing = pytest.importorskip("sklearn.preprocessing")

SCALERS = [
    ("StandardScaler", {}),
    ("StandardScaler", {"with_mean": False}),
    ("StandardScaler", {"with_std": False}),
    ("MinMaxScaler", {}),
    ("MinMaxScaler", {"feature_range": (-2, 3), "clip": True}),
    ("MaxAbsScaler", {}),
    ("RobustScaler", {}),
    ("RobustScaler", {"quantile_range": (10.0, 80.0), "unit_variance": True}),
    ("RobustScaler", {"with_centering": False}),
    ("Normalizer", {}),
    ("Normalizer", {"norm": "l1"}),
    ("Normalizer", {"norm": "max"}),
]
SCALER_IDS = [
    f"{name}-{'-'.join(map(str, kwargs.values())) or 'default'}" for name, kwargs in SCALERS
]
# uneven at 2-4 processes, and fewer rows than processes
SHAPES = [(11, 4), (2, 3)]
DTYPES = [np.float32, np.float64, np.int64]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.normal(3.0, 2.0, size=shape) * rng.uniform(0.5, 5.0, size=shape[1])
    data[:, 0] = 7.0  # a constant feature
    if np.dtype(dtype).kind in "iu":
        data = np.round(data * 3)
    return data.astype(dtype)


def _tolerance(dtype):
    return (2e-5, 2e-5) if dtype == np.float32 else (1e-10, 1e-10)


def _fitted_attributes(estimator):
    return {
        name: value
        for name, value in vars(estimator).items()
        if name.endswith("_") and not name.startswith("_")
    }


@pytest.mark.parametrize("name,kwargs", SCALERS, ids=SCALER_IDS)
@pytest.mark.parametrize("split", [None, 0, 1])
def test_scalers_match_sklearn(name, kwargs, split):
    for shape in SHAPES:
        for dtype in DTYPES:
            data = _data(shape, dtype)
            x = ht.array(data, split=split)
            ours = getattr(ht.preprocessing, name)(**kwargs).fit(x)
            reference = getattr(sklearn_preprocessing, name)(**kwargs).fit(data)
            rtol, atol = _tolerance(np.result_type(dtype, np.float32))
            expected = reference.transform(data)
            transformed = ours.transform(x)
            # floats keep their type, integers become floating point
            float_type = np.float32 if dtype == np.float32 else np.float64
            assert_array_equal(transformed, expected.astype(float_type), rtol=rtol, atol=atol)
            assert transformed.split == split
            ok = ours.n_features_in_ == reference.n_features_in_
            for attribute, value in _fitted_attributes(reference).items():
                if attribute == "n_samples_seen_":
                    ok = ok and int(np.max(value)) == ours.n_samples_seen_
                elif isinstance(value, np.ndarray):
                    ours_value = getattr(ours, attribute)
                    ok = ok and np.allclose(ours_value.numpy(), value, rtol=rtol, atol=atol)
                    ok = ok and ours_value.split is None
            collective_assert(ok, f"fitted attributes differ from scikit-learn's for {name}")
            if hasattr(reference, "inverse_transform") and name != "Normalizer":
                back = ours.inverse_transform(transformed)
                assert_array_equal(
                    back,
                    reference.inverse_transform(expected).astype(float_type),
                    rtol=rtol,
                    atol=max(atol, 1e-4 if dtype == np.float32 else 1e-9),
                )


@pytest.mark.parametrize("name", ["StandardScaler", "MinMaxScaler", "MaxAbsScaler"])
@pytest.mark.parametrize("split", [None, 0, 1])
def test_partial_fit_windows_match_sklearn(name, split):
    # windows of a "file": the running statistics after every window match scikit-learn's
    data = _data((23, 5), np.float64, seed=4)
    data[:, 2] += 1e6  # a large offset: the textbook variance formula would cancel here
    ours = getattr(ht.preprocessing, name)()
    reference = getattr(sklearn_preprocessing, name)()
    for start in range(0, 23, 6):
        window = data[start : start + 6]
        ours.partial_fit(ht.array(window, split=split))
        reference.partial_fit(window)
        assert ours.n_samples_seen_ == int(np.max(reference.n_samples_seen_))
        for attribute, value in _fitted_attributes(reference).items():
            if isinstance(value, np.ndarray):
                ok = np.allclose(getattr(ours, attribute).numpy(), value, rtol=1e-12, atol=1e-9)
                collective_assert(ok, f"{attribute} after the window at {start}")
    # fit starts over
    ours.fit(ht.array(data[:5], split=split))
    assert ours.n_samples_seen_ == 5


def test_partial_fit_of_windows_each_process_read():
    # every process streams its own window (possibly empty) and joins them with is_split
    comm = ht.MPI_WORLD
    data = _data((37, 3), np.float32, seed=5)
    scaler = ht.preprocessing.StandardScaler()
    for window in range(3):
        rows = np.arange(37)[
            (np.arange(37) // 4) % (3 * comm.size) == window * comm.size + comm.rank
        ]
        local = torch.from_numpy(data[rows])
        scaler.partial_fit(ht.array(local, is_split=0))
    assert scaler.n_samples_seen_ == sum(
        1 for i in range(37) if (i // 4) % (3 * comm.size) < 3 * comm.size
    )
    seen = np.concatenate(
        [
            data[np.arange(37)[(np.arange(37) // 4) % (3 * comm.size) == w * comm.size + r]]
            for w in range(3)
            for r in range(comm.size)
        ]
    )
    reference = sklearn_preprocessing.StandardScaler().fit(seen.astype(np.float64))
    assert np.allclose(scaler.mean_.numpy(), reference.mean_, rtol=1e-6)
    assert np.allclose(scaler.var_.numpy(), reference.var_, rtol=1e-5)


def test_transform_of_local_numpy_and_torch_data():
    data = _data((9, 3), np.float32, seed=6)
    scaler = ht.preprocessing.StandardScaler().fit(ht.array(data, split=0))
    reference = sklearn_preprocessing.StandardScaler().fit(data)
    batch = data[ht.MPI_WORLD.rank % 9 :][:4]  # a different batch on every process
    for local, kind in ((batch.copy(), np.ndarray), (torch.from_numpy(batch.copy()), torch.Tensor)):
        result = scaler.transform(local)
        assert isinstance(result, kind)
        assert np.allclose(np.asarray(result), reference.transform(batch), rtol=1e-5, atol=1e-5)
        back = scaler.inverse_transform(result)
        assert isinstance(back, kind) and np.allclose(np.asarray(back), batch, rtol=1e-5, atol=1e-4)


def test_copy_false_writes_in_place():
    data = _data((6, 3), np.float64, seed=7)
    x = ht.array(data, split=0)
    scaler = ht.preprocessing.MinMaxScaler(copy=False).fit(x)
    result = scaler.transform(x)
    assert result.larray.data_ptr() == x.larray.data_ptr()
    assert_array_equal(x, sklearn_preprocessing.MinMaxScaler().fit_transform(data))
    local = data.copy()
    scaler.transform(local)
    assert np.allclose(local, sklearn_preprocessing.MinMaxScaler().fit_transform(data))
    # copy=True leaves the input alone
    y = ht.array(data, split=0)
    ht.preprocessing.MinMaxScaler().fit(y).transform(y)
    assert_array_equal(y, data)


def test_fit_transform_and_params():
    data = _data((8, 3), np.float32, seed=8)
    x = ht.array(data, split=0)
    scaler = ht.preprocessing.RobustScaler(quantile_range=(20.0, 70.0))
    assert_array_equal(
        scaler.fit_transform(x),
        sklearn_preprocessing.RobustScaler(quantile_range=(20.0, 70.0)).fit_transform(data),
        rtol=1e-5,
        atol=1e-5,
    )
    assert scaler.get_params()["quantile_range"] == (20.0, 70.0)
    assert ht.is_transformer(scaler)


@pytest.mark.parametrize(
    "name", ["StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "Normalizer"]
)
def test_errors_raise_on_every_process(name):
    x = ht.array(_data((5, 3), np.float32), split=0)
    scaler = getattr(ht.preprocessing, name)()
    if name != "Normalizer":  # stateless: transform needs no fit (test_normalizer_without_fit)
        assert_raises_then_collective_works(ht.NotFittedError, scaler.transform, x)
    bad = _data((5, 3), np.float64)
    bad[4, 1] = np.nan  # only the last process holds it
    assert_raises_then_collective_works(ValueError, scaler.fit, ht.array(bad, split=0))
    scaler.fit(x)
    assert_raises_then_collective_works(ValueError, scaler.transform, ht.ones((4, 2), split=0))
    if hasattr(scaler, "partial_fit"):
        assert_raises_then_collective_works(
            ValueError, scaler.partial_fit, ht.ones((3, 4), split=0)
        )
    assert_raises_then_collective_works(ValueError, scaler.fit, ht.ones(5, split=0))
    assert_raises_then_collective_works(TypeError, scaler.fit, "x")


@pytest.mark.parametrize("norm", ["l2", "l1", "max"])
def test_normalizer_without_fit(norm):
    """Normalizer is stateless: transform works unfitted, as in scikit-learn and HeAT."""
    assert ht.is_transformer(ht.preprocessing.Normalizer())
    ht.check_is_fitted(ht.preprocessing.Normalizer())  # counts as fitted, as scikit-learn's
    for shape in SHAPES:
        for dtype in DTYPES:
            data = _data(shape, dtype)
            data[-1] = 0  # a row of norm zero stays zero
            expected = sklearn_preprocessing.Normalizer(norm=norm).transform(data)
            float_type = np.float32 if dtype == np.float32 else np.float64
            rtol, atol = _tolerance(float_type)
            for split in (None, 0, 1, -1):
                transformed = ht.preprocessing.Normalizer(norm=norm).transform(
                    ht.array(data, split=split)
                )
                assert_array_equal(transformed, expected.astype(float_type), rtol=rtol, atol=atol)
            local = ht.preprocessing.Normalizer(norm=norm).transform(data.astype(float_type))
            np.testing.assert_allclose(local, expected, rtol=rtol, atol=atol)
            assert isinstance(local, np.ndarray)
    # once fitted, the number of features is checked; a bad norm fails either way
    fitted = ht.preprocessing.Normalizer(norm=norm).fit(ht.ones((4, 3), split=0))
    assert_raises_then_collective_works(ValueError, fitted.transform, ht.ones((4, 2), split=0))
    assert_raises_then_collective_works(
        ValueError, ht.preprocessing.Normalizer("l3").transform, ht.ones((4, 2), split=0)
    )


def test_bad_parameters():
    x = ht.ones((4, 2), split=0)
    assert_raises_then_collective_works(ValueError, ht.preprocessing.MinMaxScaler((1, 0)).fit, x)
    assert_raises_then_collective_works(TypeError, ht.preprocessing.MinMaxScaler("ab").fit, x)
    assert_raises_then_collective_works(
        ValueError, ht.preprocessing.RobustScaler(quantile_range=(80, 20)).fit, x
    )
    assert_raises_then_collective_works(
        TypeError, ht.preprocessing.RobustScaler(quantile_range=None).fit, x
    )
    assert_raises_then_collective_works(ValueError, ht.preprocessing.Normalizer("l3").fit, x)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_robust_scaler_sketch_of_all_rows_is_exact(split):
    # HeAT's sketched RobustScaler: a sketch of every row gives the exact statistics
    data = np.random.default_rng(7).normal(size=(23, 3)) * [1.0, 5.0, 0.1]
    x = ht.array(data, split=split)
    exact = ht.preprocessing.RobustScaler(unit_variance=True).fit(x)
    sketched = ht.preprocessing.RobustScaler(unit_variance=True, sketched=True, sketch_size=1.0)
    sketched.fit(x)
    ok = np.allclose(sketched.center_.numpy(), exact.center_.numpy())
    ok = ok and np.allclose(sketched.scale_.numpy(), exact.scale_.numpy())
    collective_assert(ok, "sketch_size=1.0 differs from the exact scaler")


@pytest.mark.parametrize("split", [None, 0, 1])
def test_robust_scaler_sketch_approximates(split):
    data = np.random.default_rng(8).normal(loc=[0.0, 3.0], scale=[1.0, 2.0], size=(4000, 2))
    x = ht.array(data, split=split)
    exact = ht.preprocessing.RobustScaler().fit(x)
    ht.random.seed(11)
    sketched = ht.preprocessing.RobustScaler(sketched=True, sketch_size=0.2).fit(x)
    center, scale = sketched.center_.numpy(), sketched.scale_.numpy()
    # the quartiles of 800 of 4000 normal samples: within a few percent of the scale
    ok = np.allclose(center, exact.center_.numpy(), atol=0.15 * scale.max())
    ok = ok and np.allclose(scale, exact.scale_.numpy(), rtol=0.15)
    collective_assert(ok, f"sketch {center}, {scale} far from the exact statistics")
    # not the exact statistics (a true subset), the same rows again after the same seed, and
    # the same at every process count (heat's counter-based generator): recorded at 1 process
    ht.random.seed(11)
    again = ht.preprocessing.RobustScaler(sketched=True, sketch_size=0.2).fit(x)
    collective_assert(np.array_equal(again.center_.numpy(), center), "sketch not reproducible")
    collective_assert(not np.allclose(center, exact.center_.numpy(), rtol=0, atol=1e-12))
    # the default size, 1 / processes, and a fraction that leaves one row
    ht.preprocessing.RobustScaler(sketched=True).fit(x)
    tiny = ht.preprocessing.RobustScaler(sketched=True, sketch_size=1e-6).fit(x)
    collective_assert(np.all(tiny.scale_.numpy() == 1.0), "a one-row sketch has no spread")


def test_robust_scaler_sketch_is_the_same_at_every_process_count():
    # the sketch rows depend on the seed only: the median of the sketch of 0..99 is known
    x = ht.arange(100, dtype=ht.float64, split=0).reshape((100, 1))
    ht.random.seed(3)
    keys = ht.random.rand(100, dtype=ht.float64).numpy()
    chosen = np.sort(np.argsort(keys, kind="stable")[:10]).astype(np.float64)
    ht.random.seed(3)
    scaler = ht.preprocessing.RobustScaler(sketched=True, sketch_size=0.1).fit(x)
    collective_assert(scaler.center_.numpy()[0] == np.median(chosen), "another sketch was drawn")


def test_robust_scaler_bad_sketch_parameters():
    x = ht.ones((4, 2), split=0)
    RobustScaler = ht.preprocessing.RobustScaler
    for error, params in (
        (ValueError, {"sketch_size": 0.0}),
        (ValueError, {"sketch_size": -0.5}),
        (ValueError, {"sketch_size": 1.5}),
        (TypeError, {"sketch_size": "half"}),
        (TypeError, {"sketch_size": True}),
    ):
        with pytest.raises(error, match="sketch_size"):
            RobustScaler(sketched=True, **params).fit(x)
    with pytest.raises(TypeError, match="sketched"):
        RobustScaler(sketched=1).fit(x)
    assert_raises_then_collective_works(
        ValueError, RobustScaler(sketched=True, sketch_size=2).fit, x
    )
    with pytest.warns(UserWarning, match="sketch_size=0.5 has no effect"):
        RobustScaler(sketch_size=0.5).fit(x)
