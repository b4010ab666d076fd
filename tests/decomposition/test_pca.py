"""
Tests of heat/decomposition/pca.py; the oracle is scikit-learn's PCA and IncrementalPCA on the
same data. Every split (None, 0, 1, -1), float32 and float64 (and integers), uneven sizes, data
with fewer rows than processes, and bad input that must raise alike on every process.
"""

import numpy as np
import pytest

import heat as ht
from heat.core.base import NotFittedError
from tests.helpers import assert_raises_then_collective_works, collective_assert

sklearn_decomposition = pytest.importorskip("sklearn.decomposition")

SOLVERS = ["full", "hierarchical", "randomized"]
SPLITS = [None, 0, 1, -1]
DTYPES = [np.float32, np.float64]
# tall and uneven; wide; fewer rows than processes at 4 processes (an empty block)
SHAPES = [(23, 5), (6, 9), (3, 4)]
SHAPE_IDS = ["tall", "wide", "3rows"]


def _data(shape, dtype=np.float64, seed=0):
    """Data with well separated singular values (so that the components are well defined)."""
    rng = np.random.default_rng(seed)
    n, f = shape
    k = min(n, f)
    u, _ = np.linalg.qr(rng.standard_normal((n, k)))
    v, _ = np.linalg.qr(rng.standard_normal((f, k)))
    spectrum = 10.0 * 0.6 ** np.arange(k)
    data = (u * spectrum) @ v.T + rng.uniform(-3, 3, size=f)
    return data.astype(dtype)


def _tolerance(dtype):
    return dict(rtol=2e-3, atol=2e-3) if dtype == np.float32 else dict(rtol=1e-7, atol=1e-8)


def _value(x):
    return x.numpy() if isinstance(x, ht.DNDarray) else np.asarray(x)


def _compare(pairs, tolerance):
    """Collective check of (name, actual, expected) triples."""
    ok, message = True, ""
    for name, actual, expected in pairs:
        try:
            actual = _value(actual)
            np.testing.assert_allclose(actual, np.asarray(expected), **tolerance)
        except AssertionError as error:
            ok, message = False, f"{name}: {error}"
            break
    collective_assert(ok, message)


def _replicated(x, dtype=None):
    """A fitted attribute: a replicated DNDarray of the data's type."""
    ok = isinstance(x, ht.DNDarray) and x.split is None
    if ok and dtype is not None:
        ok = x.dtype is ht.types.canonical_heat_type(np.dtype(dtype))
    return ok


def _check_model(ours, theirs, dtype, x_np, x, ratio=True):
    """Fitted attributes, transform and inverse_transform of a heat model against sklearn's."""
    tolerance = _tolerance(dtype)
    k = theirs.n_components_
    collective_assert(ours.n_components_ == k, f"n_components_ {ours.n_components_} != {k}")
    for name in ("components_", "explained_variance_", "singular_values_", "mean_"):
        collective_assert(_replicated(getattr(ours, name), dtype), f"{name} not replicated/typed")
    components = ours.components_.numpy()
    # same sign convention as scikit-learn: largest-magnitude entry of each component positive
    largest = components[np.arange(k), np.abs(components).argmax(axis=1)]
    collective_assert(bool((largest > 0).all()), "components are not sign-normalized")
    # match up to sign (robust to a tie in the largest entry)
    signs = np.sign(np.sum(components * theirs.components_, axis=1))
    pairs = [
        ("components_", components * signs[:, None], theirs.components_),
        ("explained_variance_", ours.explained_variance_, theirs.explained_variance_),
        ("singular_values_", ours.singular_values_, theirs.singular_values_),
        ("mean_", ours.mean_, theirs.mean_),
        ("noise_variance_", ours.noise_variance_, theirs.noise_variance_),
    ]
    if ratio:
        pairs.append(
            (
                "explained_variance_ratio_",
                ours.explained_variance_ratio_,
                theirs.explained_variance_ratio_,
            )
        )
    projected = ours.transform(x)
    pairs.append(("transform", projected.numpy() * signs, theirs.transform(x_np)))
    pairs.append(
        (
            "inverse_transform",
            ours.inverse_transform(projected),
            theirs.inverse_transform(theirs.transform(x_np)),
        )
    )
    scale = max(1.0, float(np.abs(x_np).max()))
    tol = dict(rtol=tolerance["rtol"], atol=tolerance["atol"] * scale)
    _compare(pairs, tol)
    collective_assert(projected.shape == (x.shape[0], k), f"transform shape {projected.shape}")
    if x.split == 0:
        collective_assert(projected.split == 0, f"transform of split=0 has split {projected.split}")


# ---------------------------------------------------------------------------------------------
# PCA against scikit-learn
# ---------------------------------------------------------------------------------------------
# split=-1 is split=1 once the array exists (heat normalizes it); one solver suffices for it
CASES = [
    (solver, split) for solver in SOLVERS for split in SPLITS if split != -1 or solver == "full"
]


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("solver,split", CASES)
def test_pca_matches_sklearn(solver, split, dtype, shape):
    x_np = _data(shape, dtype)
    x = ht.array(x_np, split=split)
    k = min(shape) - 1
    ours = ht.decomposition.PCA(n_components=k, svd_solver=solver, random_state=3).fit(x)
    theirs = sklearn_decomposition.PCA(n_components=k, svd_solver="full").fit(x_np)
    _check_model(ours, theirs, dtype, x_np, x)
    collective_assert(ours.n_samples_ == shape[0] and ours.n_features_in_ == shape[1])
    collective_assert(isinstance(ours.noise_variance_, float), "noise_variance_ is not a float")


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("solver", SOLVERS)
def test_pca_all_components(solver, split):
    # n_components=None: every component; the round trip is then exact
    x_np = _data((13, 4), np.float64, seed=1)
    x = ht.array(x_np, split=split)
    ours = ht.decomposition.PCA(svd_solver=solver).fit(x)
    theirs = sklearn_decomposition.PCA(svd_solver="full").fit(x_np)
    _check_model(ours, theirs, np.float64, x_np, x)
    _compare(
        [("round trip", ours.inverse_transform(ours.transform(x)), x_np)],
        dict(rtol=1e-9, atol=1e-9),
    )
    collective_assert(ours.noise_variance_ == 0.0, "noise_variance_ must be 0 with all components")


@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("solver", SOLVERS)
def test_pca_whiten(solver, split):
    x_np = _data((17, 5), np.float64, seed=2)
    x = ht.array(x_np, split=split)
    ours = ht.decomposition.PCA(n_components=3, whiten=True, svd_solver=solver).fit(x)
    theirs = sklearn_decomposition.PCA(n_components=3, whiten=True).fit(x_np)
    _check_model(ours, theirs, np.float64, x_np, x)
    projected = ours.fit_transform(x).numpy()
    _compare(
        [
            ("unit variance", projected.var(axis=0, ddof=1), np.ones(3)),
            ("fit_transform", np.abs(projected), np.abs(theirs.transform(x_np))),
        ],
        dict(rtol=1e-7, atol=1e-8),
    )


@pytest.mark.parametrize("split", [None, 0, 1])
def test_pca_integer_data(split):
    x_np = np.round(_data((12, 4), seed=4) * 5).astype(np.int64)
    ours = ht.decomposition.PCA(n_components=2).fit(ht.array(x_np, split=split))
    theirs = sklearn_decomposition.PCA(n_components=2).fit(x_np)
    collective_assert(ours.components_.dtype is ht.float64, "integers are not promoted to float64")
    _compare(
        [("explained_variance_", ours.explained_variance_, theirs.explained_variance_)],
        dict(rtol=1e-9, atol=1e-9),
    )


@pytest.mark.parametrize("split", [None, 0, 1])
def test_pca_float_components_full(split):
    x_np = _data((20, 6), seed=5)
    for fraction in (0.5, 0.9, 0.99):
        ours = ht.decomposition.PCA(n_components=fraction).fit(ht.array(x_np, split=split))
        theirs = sklearn_decomposition.PCA(n_components=fraction, svd_solver="full").fit(x_np)
        collective_assert(
            ours.n_components_ == theirs.n_components_,
            f"{fraction}: {ours.n_components_} != {theirs.n_components_}",
        )
        _compare(
            [
                (
                    "explained_variance_ratio_",
                    ours.explained_variance_ratio_,
                    theirs.explained_variance_ratio_,
                ),
                ("noise_variance_", ours.noise_variance_, theirs.noise_variance_),
            ],
            dict(rtol=1e-7, atol=1e-9),
        )


@pytest.mark.parametrize("split", [None, 0, 1])
def test_pca_float_components_hierarchical(split):
    x_np = _data((20, 6), seed=6)
    full = sklearn_decomposition.PCA().fit(x_np)
    for fraction in (0.5, 0.9, 0.99):
        ours = ht.decomposition.PCA(n_components=fraction, svd_solver="hierarchical")
        ours.fit(ht.array(x_np, split=split))
        kept = float(ours.explained_variance_ratio_.sum().item())
        k = ours.n_components_
        collective_assert(kept >= fraction - 1e-9, f"kept {kept} < {fraction}")
        collective_assert(1 <= k <= 6 and ours.components_.shape == (k, 6))
        # an approximation from below: the leading partial sums cannot exceed the exact ones
        partial = np.cumsum(ours.explained_variance_ratio_.numpy())
        exact = np.cumsum(full.explained_variance_ratio_[:k])
        collective_assert(bool((partial <= exact + 1e-9).all()), f"{partial} > {exact}")


@pytest.mark.parametrize("solver", SOLVERS)
def test_pca_unbalanced_rows_with_an_empty_process(solver):
    # rows each process read itself (is_split=0): process 0 holds none, the last one most
    rank, size = ht.MPI_WORLD.rank, ht.MPI_WORLD.size
    x_np = _data((30, 3), seed=13)
    cuts = [0] + [0 if r == 1 else 5 * r for r in range(1, size)] + [30]
    x = ht.array(x_np[cuts[rank] : cuts[rank + 1]], is_split=0)
    ours = ht.decomposition.PCA(n_components=2, svd_solver=solver).fit(x)
    theirs = sklearn_decomposition.PCA(n_components=2).fit(x_np)
    _check_model(ours, theirs, np.float64, x_np, x)


def test_pca_randomized_random_state():
    x_np = np.random.default_rng(7).standard_normal((40, 12))  # no low-rank structure
    x = ht.array(x_np, split=0)
    ht.random.seed(11)
    state = ht.random.get_state()
    first = ht.decomposition.PCA(n_components=3, svd_solver="randomized", random_state=5).fit(x)
    collective_assert(ht.random.get_state() == state, "random_state changed heat's generator")
    second = ht.decomposition.PCA(n_components=3, svd_solver="randomized", random_state=5).fit(x)
    _compare(
        [("reproducible", first.components_, second.components_.numpy())], dict(rtol=0, atol=0)
    )
    auto = ht.decomposition.PCA(
        n_components=3, svd_solver="randomized", iterated_power="auto", random_state=5
    ).fit(x)
    theirs = sklearn_decomposition.PCA(n_components=3).fit(x_np)
    # with power iterations the randomized solver finds the leading spectrum of noise too
    _compare([("auto", auto.singular_values_, theirs.singular_values_)], dict(rtol=1e-2, atol=0))


def test_pca_fit_is_replicated_and_params():
    pca = ht.decomposition.PCA(n_components=2, svd_solver="hierarchical")
    collective_assert(pca.get_params()["svd_solver"] == "hierarchical")
    collective_assert(repr(pca) == "PCA(n_components=2, svd_solver='hierarchical')", repr(pca))
    collective_assert(ht.is_transformer(pca))
    fitted = pca.fit(ht.array(_data((9, 3)), split=0))
    collective_assert(fitted is pca, "fit must return self")
    gathered = ht.MPI_WORLD.allgather(pca.components_.larray.cpu().numpy().tobytes())
    collective_assert(all(g == gathered[0] for g in gathered), "components_ differ between ranks")


def test_pca_numpy_input_and_split_input_layout():
    x_np = _data((10, 3), seed=8)
    pca = ht.decomposition.PCA(n_components=2).fit(x_np)
    theirs = sklearn_decomposition.PCA(n_components=2).fit(x_np)
    _compare(
        [("numpy input", np.abs(pca.transform(x_np).numpy()), np.abs(theirs.transform(x_np)))],
        dict(rtol=1e-9, atol=1e-9),
    )


# ---------------------------------------------------------------------------------------------
# PCA: bad input, identical on every rank
# ---------------------------------------------------------------------------------------------
def test_pca_errors():
    x = ht.array(_data((6, 4)), split=0)
    PCA = ht.decomposition.PCA
    cases = [
        (ValueError, dict(n_components=5)),  # > min(n_samples, n_features)
        (ValueError, dict(n_components=0)),
        (ValueError, dict(n_components=5, svd_solver="randomized")),
        (ValueError, dict(n_components=5, svd_solver="hierarchical")),
        (ValueError, dict(svd_solver="arpack")),
        (TypeError, dict(svd_solver=3)),
        (ValueError, dict(n_components=1.5)),
        (ValueError, dict(n_components=0.5, svd_solver="randomized")),
        (TypeError, dict(n_components="mle")),
        (ValueError, dict(iterated_power=-1)),
        (ValueError, dict(iterated_power="many")),
        (ValueError, dict(power_iteration_normalizer="LU")),
        (ValueError, dict(tol=-1.0)),
        (TypeError, dict(random_state=1.5)),
        (TypeError, dict(whiten="yes")),
        (ValueError, dict(n_oversamples=-2)),
    ]
    for exception, kwargs in cases:
        assert_raises_then_collective_works(exception, PCA(**kwargs).fit, x)
    bad = _data((6, 4))
    bad[ht.MPI_WORLD.size % 6, 1] = np.nan  # a NaN that only one rank holds
    assert_raises_then_collective_works(ValueError, PCA().fit, ht.array(bad, split=0))
    assert_raises_then_collective_works(ValueError, PCA().fit, ht.array(_data((1, 4)), split=0))
    assert_raises_then_collective_works(ValueError, PCA().fit, ht.zeros((4, 3, 2), split=0))
    assert_raises_then_collective_works(TypeError, PCA().fit, "data")
    assert_raises_then_collective_works(NotFittedError, PCA().transform, x)
    assert_raises_then_collective_works(NotFittedError, PCA().inverse_transform, x)
    fitted = PCA(n_components=2).fit(x)
    assert_raises_then_collective_works(ValueError, fitted.transform, ht.zeros((3, 5), split=0))
    assert_raises_then_collective_works(
        ValueError, fitted.inverse_transform, ht.zeros((3, 3), split=0)
    )


# ---------------------------------------------------------------------------------------------
# IncrementalPCA
# ---------------------------------------------------------------------------------------------
def _check_incremental(ours, theirs, dtype, x_np, x):
    _check_model(ours, theirs, dtype, x_np, x)
    collective_assert(
        ours.n_samples_seen_ == theirs.n_samples_seen_,
        f"n_samples_seen_ {ours.n_samples_seen_} != {theirs.n_samples_seen_}",
    )
    _compare([("var_", ours.var_, theirs.var_)], _tolerance(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("split", SPLITS)
def test_incremental_fit_matches_sklearn(split, dtype):
    x_np = _data((31, 5), dtype, seed=9)
    x = ht.array(x_np, split=split)
    ours = ht.decomposition.IncrementalPCA(n_components=3, batch_size=8).fit(x)
    theirs = sklearn_decomposition.IncrementalPCA(n_components=3, batch_size=8).fit(x_np)
    _check_incremental(ours, theirs, dtype, x_np, x)
    collective_assert(ours.batch_size_ == 8)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_incremental_default_batch_and_components(split):
    x_np = _data((37, 4), seed=10)
    x = ht.array(x_np, split=split)
    ours = ht.decomposition.IncrementalPCA().fit(x)
    theirs = sklearn_decomposition.IncrementalPCA().fit(x_np)
    _check_incremental(ours, theirs, np.float64, x_np, x)
    collective_assert(ours.batch_size_ == 20, f"batch_size_ {ours.batch_size_}")


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_incremental_partial_fit_windows(dtype):
    # uneven windows, one with fewer rows than processes, rows spread over the processes
    x_np = _data((30, 6), dtype, seed=11)
    bounds = [0, 9, 12, 23, 30]
    ours = ht.decomposition.IncrementalPCA(n_components=2)
    theirs = sklearn_decomposition.IncrementalPCA(n_components=2)
    for start, stop in zip(bounds[:-1], bounds[1:]):
        window = ht.array(x_np[start:stop], split=0)
        collective_assert(ours.partial_fit(window) is ours, "partial_fit must return self")
        theirs.partial_fit(x_np[start:stop])
    _check_incremental(ours, theirs, dtype, x_np, ht.array(x_np, split=0))
    # a whole fit restarts from scratch
    ours.fit(ht.array(x_np[:10], split=0))
    collective_assert(ours.n_samples_seen_ == 10, f"fit did not reset: {ours.n_samples_seen_}")


def test_incremental_partial_fit_local_windows():
    # each process contributes its own, unevenly sized, rows (is_split=0)
    rank, size = ht.MPI_WORLD.rank, ht.MPI_WORLD.size
    x_np = _data((40, 5), seed=12)
    ours = ht.decomposition.IncrementalPCA(n_components=3, whiten=True)
    theirs = sklearn_decomposition.IncrementalPCA(n_components=3, whiten=True)
    for window in np.array_split(x_np, 2):
        pieces = np.array_split(window, [2 * (r + 1) for r in range(size - 1)])
        ours.partial_fit(ht.array(pieces[rank], is_split=0))
        theirs.partial_fit(window)
    _check_incremental(ours, theirs, np.float64, x_np, ht.array(x_np, split=0))


def test_incremental_errors():
    IPCA = ht.decomposition.IncrementalPCA
    x = ht.array(_data((10, 4)), split=0)
    assert_raises_then_collective_works(ValueError, IPCA(n_components=5).fit, x)
    assert_raises_then_collective_works(ValueError, IPCA(n_components=0).fit, x)
    assert_raises_then_collective_works(TypeError, IPCA(n_components=2.5).fit, x)
    assert_raises_then_collective_works(ValueError, IPCA(batch_size=0).fit, x)
    assert_raises_then_collective_works(ValueError, IPCA(n_components=3).partial_fit, x[:2])
    bad = _data((10, 4))
    bad[7, 2] = np.inf
    assert_raises_then_collective_works(ValueError, IPCA().fit, ht.array(bad, split=0))
    assert_raises_then_collective_works(NotFittedError, IPCA().transform, x)
    fitted = IPCA(n_components=2).partial_fit(x)
    assert_raises_then_collective_works(ValueError, fitted.partial_fit, ht.zeros((5, 3), split=0))
    # None: the first batch's number of components, kept for the later batches
    grown = IPCA().partial_fit(x[:3]).partial_fit(x[3:])
    collective_assert(grown.n_components_ == 3 and grown.n_samples_seen_ == 10)


def _shared_file(tmp_path, name):
    """A path in rank 0's tmp_path, the same on every process."""
    return ht.MPI_WORLD.bcast(str(tmp_path / name) if ht.MPI_WORLD.rank == 0 else None)


@pytest.mark.skipif(not ht.supports_hdf5(), reason="needs h5py")
@pytest.mark.parametrize("chunk_size", [8, 31])
def test_incremental_fit_from_hdf5_file(tmp_path, chunk_size):
    # HeAT's fit(path, chunk_size, dataset): the same model as fitting the array in batches of
    # chunk_size rows (the last one, of 7 < n_components rows, merged into the one before)
    x_np = _data((31, 5), seed=13)
    path = _shared_file(tmp_path, "samples.h5")
    ht.save_hdf5(ht.array(x_np, split=0), path, "DATA")
    ht.save_hdf5(ht.array(x_np, split=0), path, "other", mode="a")
    whole = ht.decomposition.IncrementalPCA(n_components=3, batch_size=chunk_size)
    whole.fit(ht.array(x_np, split=0))
    for fitted in (
        ht.decomposition.IncrementalPCA(n_components=3).fit(path, chunk_size=chunk_size),
        ht.decomposition.IncrementalPCA(n_components=3).fit(path, chunk_size, "other"),
    ):
        collective_assert(fitted.n_samples_seen_ == 31 and fitted.batch_size_ == chunk_size)
        _compare(
            [
                ("|components_|", abs(fitted.components_.numpy()), abs(whole.components_.numpy())),
                ("singular_values_", fitted.singular_values_, whole.singular_values_),
                ("mean_", fitted.mean_, whole.mean_),
            ],
            _tolerance(np.float64),
        )
    # a path-like works as well, and the model transforms like the one fitted from the array
    fitted = ht.decomposition.IncrementalPCA(n_components=3).fit(tmp_path.__class__(path), 10)
    whole = ht.decomposition.IncrementalPCA(n_components=3, batch_size=10)
    whole.fit(ht.array(x_np, split=0))
    _compare([("components_", fitted.components_, whole.components_)], _tolerance(np.float64))


@pytest.mark.skipif(not ht.supports_hdf5(), reason="needs h5py")
def test_incremental_fit_from_file_errors(tmp_path):
    IPCA = ht.decomposition.IncrementalPCA
    path = _shared_file(tmp_path, "samples.h5")
    ht.save_hdf5(ht.array(_data((12, 4)), split=0), path, "DATA")
    text = _shared_file(tmp_path, "samples.txt")
    if ht.MPI_WORLD.rank == 0:
        with open(text, "w") as handle:
            handle.write("not hdf5\n")
    ht.MPI_WORLD.Barrier()
    for error, args, kwargs, match in (
        (ValueError, (text,), {"chunk_size": 4}, "not an HDF5 file"),
        (ValueError, (path,), {"chunk_size": 13}, "chunk_size must be at most"),
        (ValueError, (path,), {}, "chunk_size is required"),
        (ValueError, (path,), {"chunk_size": 0}, "chunk_size"),
        (TypeError, (path,), {"chunk_size": 4.0}, "chunk_size"),
        (TypeError, (path,), {"chunk_size": 4, "dataset": 1}, "dataset"),
        (KeyError, (path,), {"chunk_size": 4, "dataset": "missing"}, "missing"),
        (FileNotFoundError, (path + ".gone",), {"chunk_size": 4}, "gone"),
    ):
        with pytest.raises(error, match=match):
            IPCA(n_components=2).fit(*args, **kwargs)
    with pytest.raises(ValueError, match="chunk_size must be >= n_components=3"):
        IPCA(n_components=3).fit(path, chunk_size=2)
    assert_raises_then_collective_works(ValueError, IPCA().fit, text, chunk_size=4)
    with pytest.warns(UserWarning, match="chunk_size=4 has no effect"):
        IPCA(n_components=2).fit(ht.array(_data((12, 4)), split=0), chunk_size=4)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_pca_total_explained_variance_ratio(split):
    # HeAT's attribute: the ratio summed for "full" (and "randomized"); for "hierarchical" a
    # lower estimate 1 - error**2, error being the hierarchical SVD's relative error bound
    x_np = _data((30, 6), seed=21)
    x = ht.array(x_np, split=split)
    reference = sklearn_decomposition.PCA(n_components=3).fit(x_np)
    full = ht.decomposition.PCA(n_components=3, svd_solver="full").fit(x)
    exact = reference.explained_variance_ratio_.sum()
    assert isinstance(full.total_explained_variance_ratio_, float)
    assert np.isclose(full.total_explained_variance_ratio_, exact, rtol=1e-5)
    randomized = ht.decomposition.PCA(n_components=3, svd_solver="randomized", random_state=0)
    randomized.fit(x)
    assert np.isclose(
        randomized.total_explained_variance_ratio_,
        randomized.explained_variance_ratio_.numpy().sum(),
        rtol=1e-5,
    )
    for fraction in (0.5, 0.9):
        ours = ht.decomposition.PCA(n_components=fraction, svd_solver="hierarchical").fit(x)
        estimate = ours.total_explained_variance_ratio_
        exact = sklearn_decomposition.PCA().fit(x_np).explained_variance_ratio_
        collective_assert(fraction - 1e-6 <= estimate <= exact[: ours.n_components_].sum() + 1e-6)
    ours = ht.decomposition.PCA(n_components=2, svd_solver="hierarchical").fit(x)
    _, error = ht.linalg.hsvd_rank(x - ht.mean(x, axis=0), 2)
    assert np.isclose(ours.total_explained_variance_ratio_, 1 - error**2, rtol=1e-6)
