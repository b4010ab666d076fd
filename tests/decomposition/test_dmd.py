"""
Tests of heat/decomposition/dmd.py. The oracle is a NumPy implementation of exact DMD (and of
DMDc) on synthetic linear systems ``x_{k+1} = A x_k (+ B u_k)`` of known eigenvalues. Every
split of the time series (None, 0, 1, -1), float32 and float64, uneven sizes, fewer features than
processes, the three SVD solvers, and bad input that must raise alike on every process.
"""

import numpy as np
import pytest

import heat as ht
from heat.core.base import NotFittedError
from tests.helpers import assert_raises_then_collective_works, collective_assert

SPLITS = [None, 0, 1, -1]
DTYPES = [np.float32, np.float64]
EIGENVALUES = np.array([0.95, 0.8, 0.6, 0.85 * np.exp(0.5j), 0.85 * np.exp(-0.5j)])


def _tolerance(dtype):
    return dict(rtol=2e-3, atol=2e-3) if dtype == np.float32 else dict(rtol=1e-8, atol=1e-9)


def _system(n_features, eigenvalues=EIGENVALUES, seed=0):
    """A real ``n x n`` map of rank ``len(eigenvalues)`` with these (nonzero) eigenvalues."""
    rng = np.random.default_rng(seed)
    k = len(eigenvalues)
    blocks = np.zeros((k, k))
    i = 0
    while i < k:
        value = eigenvalues[i]
        if abs(value.imag) > 0:
            blocks[i : i + 2, i : i + 2] = [[value.real, value.imag], [-value.imag, value.real]]
            i += 2
        else:
            blocks[i, i] = value.real
            i += 1
    modes, _ = np.linalg.qr(rng.standard_normal((n_features, k)))
    mix = np.eye(k) + 0.3 * rng.standard_normal((k, k))
    basis = modes @ mix
    return basis @ blocks @ np.linalg.pinv(basis), basis


def _series(A, basis, n_steps, seed=1):
    rng = np.random.default_rng(seed)
    x = basis @ rng.uniform(0.5, 1.5, basis.shape[1])
    states = [x]
    for _ in range(n_steps - 1):
        states.append(A @ states[-1])
    return np.stack(states, axis=1)


def _numpy_dmd(X, rank):
    """Exact DMD: the basis, the reduced matrix and its eigenvalues."""
    U, s, Vt = np.linalg.svd(X[:, :-1], full_matrices=False)
    U, s, Vt = U[:, :rank], s[:rank], Vt[:rank]
    transfer = U.T @ X[:, 1:] @ Vt.T / s
    return U, transfer, np.linalg.eigvals(transfer)


def _sorted(values):
    values = np.asarray(values)
    return values[np.lexsort((np.round(values.imag, 3), np.round(values.real, 3)))]


def _close(actual, expected, dtype, message):
    tol = _tolerance(dtype)
    ok = np.allclose(actual, expected, **tol)
    collective_assert(ok, f"{message}: {actual} != {expected}")


def _in_precision(arrays, dtype, message):
    """heat's results are in ``dtype``'s precision: float32 data give float32/complex64 results,
    float64 data float64/complex128 (a float32 slip would pass every value check above)."""
    got = {name: x.numpy().dtype for name, x in arrays.items()}
    wrong = [
        f"{name}: {d}" for name, d in got.items() if np.finfo(d).dtype != np.finfo(dtype).dtype
    ]
    collective_assert(not wrong, f"{message}: results not in {np.dtype(dtype)}: {wrong}")


def _fit(X, split, dtype, **kwargs):
    return ht.decomposition.DMD(**kwargs).fit(ht.array(X.astype(dtype), split=split))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n_features", [11, 5])
def test_recovers_the_eigenvalues_of_a_linear_system(dtype, n_features):
    A, basis = _system(n_features)
    X = _series(A, basis, 17)
    _, transfer, expected = _numpy_dmd(X, len(EIGENVALUES))
    np.testing.assert_allclose(_sorted(expected), _sorted(EIGENVALUES), rtol=1e-6)
    for split in SPLITS:
        for solver, kwargs in [
            ("full", {}),
            ("full", dict(svd_rank=5)),
            ("full", dict(svd_tol=1e-6)),
            ("hierarchical", dict(svd_rank=5)),
            ("randomized", dict(svd_rank=5, random_state=3)),
        ]:
            dmd = _fit(X, split, dtype, svd_solver=solver, **kwargs)
            message = f"split {split} {solver} {kwargs}"
            collective_assert(dmd.n_modes_ == 5, f"{message}: {dmd.n_modes_} modes")
            values = dmd.rom_eigenvalues_.numpy()
            _close(_sorted(values), _sorted(EIGENVALUES), dtype, message)
            # the reduced matrices agree up to the basis: same spectrum and norm
            _close(
                np.linalg.norm(dmd.rom_transfer_matrix_.numpy()),
                np.linalg.norm(transfer),
                dtype,
                message,
            )
            basis_ = dmd.rom_basis_.numpy()
            _close(basis_.T @ basis_, np.eye(5), dtype, f"{message}: basis not orthonormal")
            # the DMD modes are eigenvectors of A
            modes = dmd.dmdmodes_.numpy()
            _close(A @ modes, modes * values, dtype, f"{message}: modes")
            _in_precision(
                {"rom_eigenvalues_": dmd.rom_eigenvalues_, "dmdmodes_": dmd.dmdmodes_,
                 "rom_basis_": dmd.rom_basis_, "rom_transfer_matrix_": dmd.rom_transfer_matrix_},
                dtype, message,
            )  # fmt: skip
            collective_assert(dmd.rom_transfer_matrix_.split is None)
            collective_assert(dmd.rom_basis_.split in (None, 0))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_predictions_match_the_system(dtype):
    A, basis = _system(7, EIGENVALUES[:3], seed=4)
    X = _series(A, basis, 12)
    U, transfer, _ = _numpy_dmd(X, 3)
    starts = _series(A, basis, 3, seed=9)  # three states in the system's range, as columns
    for split in SPLITS:
        dmd = _fit(X, split, dtype)
        collective_assert(dmd.n_modes_ == 3, f"rank-deficient data kept {dmd.n_modes_} modes")
        for state_split in (None, 0):
            state = ht.array(starts[:, 0].astype(dtype), split=state_split)
            batch = ht.array(starts.astype(dtype), split=state_split)
            for n_steps in (0, 1, 4):
                power = np.linalg.matrix_power(A, n_steps)
                nxt = dmd.predict_next(state, n_steps=n_steps)
                collective_assert(nxt.shape == (7,), f"shape {nxt.shape}")
                _close(nxt.numpy(), power @ starts[:, 0], dtype, f"predict_next {n_steps}")
                numpy_dmd = U @ np.linalg.matrix_power(transfer, n_steps) @ U.T @ starts
                _close(dmd.predict_next(batch, n_steps).numpy(), numpy_dmd, dtype, "batch")
            trajectory = dmd.predict(state, 5)
            expected = np.stack([np.linalg.matrix_power(A, k) @ starts[:, 0] for k in range(5)], 1)
            collective_assert(trajectory.shape == (7, 5), f"shape {trajectory.shape}")
            _close(trajectory.numpy(), expected, dtype, "predict")
            chosen = dmd.predict(batch, [0, 2, 3])
            expected = np.stack(
                [
                    np.stack([np.linalg.matrix_power(A, k) @ starts[:, j] for k in (0, 2, 3)], 1)
                    for j in range(3)
                ]
            )
            collective_assert(chosen.shape == (3, 7, 3), f"shape {chosen.shape}")
            _close(chosen.numpy(), expected, dtype, "predict with a list of steps")


@pytest.mark.parametrize(
    "fit_type,state_type,expected",
    [
        (np.float32, np.float64, np.float64),  # the case of issue 18: float32 came back
        (np.float32, np.float32, np.float32),
        (np.float32, np.int64, np.float64),  # integers: NumPy's promotion, as scikit-learn's
        (np.float64, np.float32, np.float64),
    ],
)
def test_predictions_in_the_promoted_type(fit_type, state_type, expected):
    """
    A prediction has the promoted type of the model and the states and is computed in it (from
    the fitted operators converted to it), as NumPy's products with a scikit-learn model's
    parameters, and HeAT's predict_next, give it.
    """
    A, basis = _system(7, EIGENVALUES[:3], seed=4)
    X = _series(A, basis, 12)
    starts = np.round(_series(A, basis, 3, seed=9) * 4)  # exact in every state type
    heat_expected = ht.types.canonical_heat_type(expected)
    for split in SPLITS:
        dmd = _fit(X, split, fit_type)
        U = dmd.rom_basis_.numpy().astype(expected)
        T = dmd.rom_transfer_matrix_.numpy().astype(expected)
        for state_split in (None, 0):
            batch = ht.array(starts.astype(state_type), split=state_split)
            state = ht.array(starts[:, 0].astype(state_type), split=state_split)
            own = starts.astype(state_type).astype(expected)
            results = [
                (dmd.predict_next(state, 2), U @ np.linalg.matrix_power(T, 2) @ U.T @ own[:, 0]),
                (dmd.predict_next(batch, 1), U @ T @ U.T @ own),
                (
                    dmd.predict(state, 3),
                    np.stack(
                        [U @ np.linalg.matrix_power(T, k) @ U.T @ own[:, 0] for k in range(3)], 1
                    ),
                ),
                (dmd.predict(batch, [1]), (U @ T @ U.T @ own).T[:, :, None]),
            ]
            for result, numpy_result in results:
                collective_assert(
                    result.dtype is heat_expected,
                    f"{fit_type.__name__} fit, {state_type.__name__} states: "
                    f"{result.dtype.__name__}, expected {expected.__name__}",
                )
                _close(result.numpy(), numpy_result, expected, f"split {split}, {state_split}")
    # DMDc: the promotion of the model, the states and the controls
    A, B, X, C, _ = _controlled(5, 2, 20)
    dmdc = ht.decomposition.DMDc().fit(
        ht.array(X.astype(fit_type), split=0), ht.array(C.astype(fit_type), split=0)
    )
    for x_type, c_type in ((state_type, fit_type), (fit_type, state_type)):
        result = dmdc.predict(ht.array(X[:, 0].astype(x_type)), ht.array(C[:, :4].astype(c_type)))
        collective_assert(
            result.dtype is ht.types.canonical_heat_type(np.result_type(fit_type, x_type, c_type)),
            f"DMDc: {result.dtype.__name__}",
        )
        if {np.dtype(x_type).kind, np.dtype(c_type).kind} == {"f"}:  # (integers: another path)
            least = np.float32 if np.float32 in (fit_type, x_type, c_type) else np.float64
            _close(result.numpy(), X[:, :4], least, "DMDc predict")


def test_fewer_features_than_processes_and_integer_data():
    A = np.array([[0.5, 0.25], [0.0, 0.75]])
    states = [np.array([4.0, 8.0])]
    for _ in range(7):
        states.append(A @ states[-1])
    X = np.stack(states, 1)
    for split in SPLITS:
        dmd = _fit(X, split, np.float64)
        _close(_sorted(dmd.rom_eigenvalues_.numpy()), [0.5, 0.75], np.float64, f"split {split}")
    # integers become floats
    ints = ht.array(np.array([[8, 4, 2, 1], [16, 8, 4, 2]]), split=1)
    dmd = ht.decomposition.DMD().fit(ints)
    collective_assert(dmd.rom_basis_.dtype is ht.float64 or dmd.rom_basis_.dtype is ht.float32)
    _close(dmd.rom_eigenvalues_.numpy().real, [0.5], np.float32, "integer data")


def test_truncation_by_rank_and_tolerance():
    A, basis = _system(9, seed=2)
    X = _series(A, basis, 14)
    for split in SPLITS:
        Xh = ht.array(X, split=split)
        collective_assert(ht.decomposition.DMD(svd_rank=2).fit(Xh).n_modes_ == 2)
        coarse = ht.decomposition.DMD(svd_tol=0.5).fit(Xh)
        s = np.linalg.svd(X[:, :-1], compute_uv=False)
        tails = np.sqrt(np.cumsum((s**2)[::-1])[::-1] / (s**2).sum())
        expected = int(np.argmax(tails <= 0.5)) if (tails <= 0.5).any() else len(s)
        collective_assert(coarse.n_modes_ == max(1, expected), f"{coarse.n_modes_} != {expected}")
        fine = ht.decomposition.DMD("hierarchical", svd_tol=1e-8).fit(Xh)
        collective_assert(fine.n_modes_ == 5, f"hierarchical kept {fine.n_modes_}")


def _controlled(n_features, n_controls, n_steps, seed=5):
    rng = np.random.default_rng(seed)
    eigenvalues = np.linspace(0.4, 0.9, n_features)
    Q, _ = np.linalg.qr(rng.standard_normal((n_features, n_features)))
    A = Q @ np.diag(eigenvalues) @ Q.T
    B = rng.standard_normal((n_features, n_controls))
    C = rng.standard_normal((n_controls, n_steps))
    states = [rng.standard_normal(n_features)]
    for k in range(n_steps - 1):
        states.append(A @ states[-1] + B @ C[:, k])
    return A, B, np.stack(states, 1), C, eigenvalues


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n_features", [5, 2])
def test_dmdc_recovers_state_and_control_matrices(dtype, n_features):
    A, B, X, C, eigenvalues = _controlled(n_features, 2, 20)
    for split in SPLITS:
        for solver, kwargs in [
            ("full", {}),
            ("hierarchical", dict(svd_rank=n_features)),
            ("randomized", dict(svd_rank=n_features, random_state=1)),
        ]:
            for controls in (C, C[:, :-1]):
                dmdc = ht.decomposition.DMDc(svd_solver=solver, **kwargs).fit(
                    ht.array(X.astype(dtype), split=split),
                    ht.array(controls.astype(dtype), split=split),
                )
                message = f"split {split} {solver}"
                _close(np.sort(dmdc.rom_eigenvalues_.numpy().real), eigenvalues, dtype, message)
                basis = dmdc.rom_basis_.numpy()
                _close(basis @ dmdc.rom_control_matrix_.numpy(), B, dtype, f"{message}: B")
                _close(
                    basis @ dmdc.rom_transfer_matrix_.numpy() @ basis.T, A, dtype, f"{message}: A"
                )
                modes, values = dmdc.dmdmodes_.numpy(), dmdc.rom_eigenvalues_.numpy()
                _close(A @ modes, modes * values, dtype, f"{message}: modes")
        # prediction: the system's trajectory under the same controls
        dmdc = ht.decomposition.DMDc().fit(
            ht.array(X.astype(dtype), split=split), ht.array(C.astype(dtype), split=split)
        )
        single = dmdc.predict(ht.array(X[:, 0].astype(dtype)), ht.array(C[:, :6].astype(dtype)))
        collective_assert(single.shape == (n_features, 6), f"shape {single.shape}")
        _close(single.numpy(), X[:, :6], dtype, "DMDc predict")
        starts = ht.array(np.stack([X[:, 0], X[:, 3]]).astype(dtype), split=0)
        batch = dmdc.predict(starts, ht.array(C[:, :4].astype(dtype)))
        collective_assert(batch.shape == (2, n_features, 4), f"shape {batch.shape}")
        _close(batch.numpy()[0], X[:, :4], dtype, "DMDc batch predict")


def test_bad_input_raises_on_every_process():
    X = ht.array(_series(*_system(6), 8), split=0)
    for kwargs, error in [
        (dict(svd_solver=3), TypeError),
        (dict(svd_solver="qr"), ValueError),
        (dict(svd_rank=0), ValueError),
        (dict(svd_rank=2.0), TypeError),
        (dict(svd_tol=1.5), ValueError),
        (dict(svd_tol="small"), TypeError),
        (dict(svd_rank=2, svd_tol=0.1), ValueError),
        (dict(svd_solver="hierarchical"), ValueError),
        (dict(svd_solver="randomized", svd_tol=0.1), ValueError),
        (dict(random_state=1.5), TypeError),
    ]:
        assert_raises_then_collective_works(error, ht.decomposition.DMD(**kwargs).fit, X)
    dmd = ht.decomposition.DMD()
    assert_raises_then_collective_works(ValueError, dmd.fit, ht.ones((3, 1), split=0))
    assert_raises_then_collective_works(ValueError, dmd.fit, ht.ones((3,), split=0))
    assert_raises_then_collective_works(TypeError, dmd.fit, "data")
    assert_raises_then_collective_works(ValueError, dmd.fit, ht.zeros((4, 5), split=1))
    with_nan = np.ones((4, 5))
    with_nan[3, 4] = np.nan  # on the last process only, for either split
    for split in SPLITS:
        assert_raises_then_collective_works(ValueError, dmd.fit, ht.array(with_nan, split=split))
    assert_raises_then_collective_works(NotFittedError, dmd.predict_next, X[:, 0])
    dmd.fit(X)
    assert_raises_then_collective_works(ValueError, dmd.predict_next, ht.ones(5))
    assert_raises_then_collective_works(TypeError, dmd.predict_next, X[:, 0], 1.5)
    assert_raises_then_collective_works(TypeError, dmd.predict, X[:, 0], 2.5)
    assert_raises_then_collective_works(ValueError, dmd.predict, X[:, 0], -2)
    dmdc = ht.decomposition.DMDc()
    assert_raises_then_collective_works(ValueError, dmdc.fit, X, ht.ones((2, 3)))
    assert_raises_then_collective_works(NotFittedError, dmdc.predict, X[:, 0], ht.ones((2, 3)))
    dmdc.fit(X, ht.ones((2, 8), split=1))
    assert_raises_then_collective_works(ValueError, dmdc.predict, X[:, 0], ht.ones((3, 3)))
    assert_raises_then_collective_works(ValueError, dmdc.predict, ht.ones(4), ht.ones((2, 3)))
    # parameters are stored unchanged (scikit-learn conventions)
    params = ht.decomposition.DMD("randomized", svd_rank=3, random_state=0).get_params()
    collective_assert(
        params == dict(svd_solver="randomized", svd_rank=3, svd_tol=None, random_state=0),
        f"{params}",
    )


def test_docstring_examples():
    """The Examples sections of heat/decomposition/dmd.py run and show what they claim."""
    import doctest

    from heat.decomposition import dmd

    result = doctest.testmod(
        dmd,
        extraglobs={"ht": ht},
        optionflags=doctest.NORMALIZE_WHITESPACE,
        verbose=False,
        report=False,
    )
    collective_assert(result.failed == 0, f"{result.failed} docstring examples of dmd failed")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_backward_steps(dtype):
    # HeAT's negative steps: backward in time with the inverse of the reduced operator; from a
    # state of the series, k steps back is the state k time steps earlier
    A, basis = _system(7, EIGENVALUES[:3], seed=4)
    X = _series(A, basis, 12)
    U, transfer, _ = _numpy_dmd(X, 3)
    for split in SPLITS:
        dmd = _fit(X, split, dtype)
        for state_split in (None, 0):
            state = ht.array(X[:, 8].astype(dtype), split=state_split)
            back = dmd.predict_next(state, n_steps=-3)
            _close(back.numpy(), X[:, 5], dtype, "predict_next backward")
            trajectory = dmd.predict(state, [-4, -1, 0, 2])
            _close(trajectory.numpy(), X[:, [4, 7, 8, 10]], dtype, "predict backward")
            batch = ht.array(X[:, [8, 9]].astype(dtype), split=state_split)
            inverse = np.linalg.inv(transfer)
            expected = np.stack(
                [U @ np.linalg.matrix_power(inverse, 2) @ U.T @ X[:, j] for j in (8, 9)]
            )
            _close(dmd.predict(batch, [-2]).numpy()[..., 0], expected, dtype, "batch backward")
    # a singular reduced operator has no inverse: every process raises alike
    singular = ht.decomposition.DMD().fit(ht.array([[1.0, 0.0, 0.0]]))
    start = ht.array([1.0])
    assert_raises_then_collective_works(ValueError, singular.predict_next, start, -1)
    assert_raises_then_collective_works(ValueError, singular.predict, start, [0, -1])
    collective_assert(singular.predict(start, [0, 1]).shape == (1, 2))
