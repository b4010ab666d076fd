"""
Dynamic mode decomposition of distributed time series (``ht.decomposition.DMD`` and ``DMDc``,
HeAT's interface).

A time series is a 2-D DNDarray of shape ``(n_features, n_timesteps)``: the snapshots are the
columns (unlike heat's convention of samples as rows). It may be split along the features
(split=0, many features) or the time steps (split=1, many snapshots), or not at all.

Exact DMD (Tu et al., 2014; Proctor, Brunton and Kutz, 2016, Sect. 2.2): with ``X_-`` the
snapshots but the last and ``X_+`` all but the first, the truncated SVD ``X_- ~ U S V^T`` (the
``svd_solver``: exact, hierarchical or randomized, all distributed) gives the reduced-order
model ``A_r = U^T X_+ V S^-1`` (``r x r``, replicated on every process), whose eigenvalues
approximate those of the linear map ``x_{k+1} = A x_k``. Predictions run in the ``r``-dimensional
space and are lifted with ``U``, so the only large products are with the data and the basis.

DMDc (Proctor, Brunton and Kutz, 2016, Sect. 3.4) fits ``x_{k+1} = A x_k + B u_k`` for a
measured control ``u``: the SVD of the stacked ``[X_-; U_-]`` gives both operators, projected on
the basis of ``X_+``.

Truncation: ``svd_rank`` keeps that many singular values; ``svd_tol`` keeps the fewest whose
discarded part has relative Frobenius norm at most ``svd_tol`` (for every solver alike; HeAT's
"full" solver reads ``svd_tol`` as the fraction of unexplained variance instead). Singular values
that are zero to working precision are always dropped, so rank-deficient data do not divide by
zero.
"""

from __future__ import annotations

import numbers
from typing import Optional, Sequence, Tuple, Union

import numpy as np
import torch

import heat as ht
from heat.core.base import BaseEstimator, RegressionMixin, check_is_fitted

__all__ = ["DMD", "DMDc"]

_SOLVERS = ("full", "hierarchical", "randomized")


# ---------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------
def _check_solver(estimator) -> None:
    """Validate ``svd_solver``, ``svd_rank``, ``svd_tol`` and ``random_state`` (no communication)."""
    solver, rank, tol = estimator.svd_solver, estimator.svd_rank, estimator.svd_tol
    if not isinstance(solver, str):
        raise TypeError(f"svd_solver must be a string, but was {type(solver).__name__}")
    if solver not in _SOLVERS:
        raise ValueError(f"svd_solver must be one of {_SOLVERS}, but was {solver!r}")
    if rank is not None:
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral):
            raise TypeError(f"svd_rank must be None or an integer, but was {type(rank).__name__}")
        if rank < 1:
            raise ValueError(f"svd_rank must be >= 1, but was {rank}")
    if tol is not None:
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real):
            raise TypeError(f"svd_tol must be None or a real number, but was {type(tol).__name__}")
        if not 0 < tol < 1:
            raise ValueError(f"svd_tol must be in (0, 1), but was {tol}")
    if rank is not None and tol is not None:
        raise ValueError("at most one of svd_rank and svd_tol may be given")
    if solver == "hierarchical" and rank is None and tol is None:
        raise ValueError('svd_solver="hierarchical" needs svd_rank or svd_tol')
    if solver == "randomized" and rank is None:
        raise ValueError('svd_solver="randomized" needs svd_rank (svd_tol is not supported)')
    state = estimator.random_state
    if state is not None and (isinstance(state, bool) or not isinstance(state, numbers.Integral)):
        raise TypeError(f"random_state must be None or an integer, but was {type(state).__name__}")
    if state is not None and not 0 <= state < 2**64:
        raise ValueError(f"random_state must be in [0, 2**64), but was {state}")


def _as_dndarray(x, name: str) -> ht.DNDarray:
    if isinstance(x, ht.DNDarray):
        return x
    if isinstance(x, (np.ndarray, torch.Tensor, list, tuple)):
        return ht.array(x)
    raise TypeError(f"{name} must be a DNDarray or array-like, but was {type(x).__name__}")


def _time_series(x, name: str, min_steps: int = 2) -> ht.DNDarray:
    """``x`` as a real floating-point ``(n_features, n_timesteps)`` DNDarray (checks shared
    metadata only, so every process raises alike)."""
    x = _as_dndarray(x, name)
    if ht.types.heat_type_is_complexfloating(x.dtype):
        raise TypeError(f"{name} must be real-valued, but has type {x.dtype.__name__}")
    if x.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n_features, n_timesteps), but has shape {tuple(x.shape)}"
        )
    if x.shape[1] < min_steps:
        raise ValueError(f"{name} must have at least {min_steps} time steps, but has {x.shape[1]}")
    if x.shape[0] < 1:
        raise ValueError(f"{name} must have at least one feature")
    if not ht.types.heat_type_is_realfloating(x.dtype):
        x = x.astype(ht.types.promote_types(x.dtype, ht.float32))
    local_ok = bool(torch.isfinite(x.larray).all()) if x.larray.numel() else True
    if not x.comm.allreduce(local_ok, op=ht.MPI.LAND):
        raise ValueError(f"{name} contains NaN or infinity")
    return x


def _columns(x: ht.DNDarray, start: int, stop: int) -> ht.DNDarray:
    """``x[:, start:stop]`` in the balanced layout (matrix products want it)."""
    part = x[:, start:stop]
    if part.split is not None and not part.is_balanced(force_check=True):
        part.balance_()
    return part


def _replicated(x: ht.DNDarray) -> torch.Tensor:
    """The whole (small) array on every process."""
    return (x if x.split is None else ht.resplit(x, None)).larray


def _keep(s: torch.Tensor, rank: Optional[int], tol: Optional[float], shape) -> int:
    """How many of the descending singular values ``s`` to keep."""
    if s.numel() == 0 or float(s[0]) == 0.0:
        return 0
    eps = torch.finfo(s.dtype).eps
    keep = int((s > s[0] * max(shape) * eps).sum())
    if rank is not None:
        keep = min(keep, rank)
    if tol is not None:
        energy = s.double() ** 2
        tails = torch.flip(
            torch.cumsum(torch.flip(energy, (0,)), 0), (0,)
        )  # tails[i] = sum s[i:]^2
        allowed = tol**2 * float(energy.sum())
        fits = (tails <= allowed).nonzero()
        keep = min(keep, max(1, int(fits[0]) if fits.numel() else s.numel()))
    return keep


def _truncated_svd(
    a: ht.DNDarray, estimator, rank: Optional[int], name: str
) -> Tuple[ht.DNDarray, torch.Tensor, ht.DNDarray]:
    """``U`` (``m x r``), ``s`` (replicated tensor) and ``V^T`` (``r x n``) of ``a``, truncated."""
    solver, tol = estimator.svd_solver, estimator.svd_tol
    if solver == "full":
        U, S, Vt = ht.linalg.svd(a, full_matrices=False)
    elif solver == "hierarchical":
        if rank is not None:
            U, S, Vt, _ = ht.linalg.hsvd_rank(a, rank, compute_sv=True)
        else:
            U, S, Vt, _ = ht.linalg.hsvd_rtol(a, float(tol), compute_sv=True)
    else:
        saved = None
        if estimator.random_state is not None:
            saved = ht.random.get_state()
            ht.random.seed(int(estimator.random_state))
        try:
            U, S, Vt = ht.linalg.rsvd(a, rank)
        finally:
            if saved is not None:
                ht.random.set_state(saved)
    s = _replicated(S)
    keep = _keep(s, rank, tol if solver == "full" else None, a.shape)
    if keep == 0:
        raise ValueError(f"{name} is zero: there are no dynamics to decompose")
    if keep < s.numel():
        U, Vt, s = U[:, :keep], Vt[:keep], s[:keep]
    return U, s, Vt


def _small(t: torch.Tensor, like: ht.DNDarray, dtype=None) -> ht.DNDarray:
    """A replicated DNDarray of the tensor ``t`` (the same on every process)."""
    t = t.contiguous()
    heat_type = dtype or ht.types.canonical_heat_type(t.dtype)
    return ht.DNDarray(t, tuple(t.shape), heat_type, None, like.device, like.comm, True)


def _lift(basis: ht.DNDarray, reduced: torch.Tensor, axis: int) -> ht.DNDarray:
    """
    ``basis @ reduced`` along ``axis`` of ``reduced`` (whose size is the number of modes),
    computed from the local rows of the basis: no communication; the result is split along the
    features where the basis is.
    """
    local = torch.tensordot(basis.larray.to(reduced.dtype), reduced, dims=([1], [axis]))
    local = torch.movedim(local, 0, axis)
    gshape = list(reduced.shape)
    gshape[axis] = basis.shape[0]
    split = axis if basis.split == 0 else None
    heat_type = ht.types.canonical_heat_type(local.dtype)
    balanced = basis.balanced if split is not None else True
    return ht.DNDarray(
        local.contiguous(), tuple(gshape), heat_type, split, basis.device, basis.comm, balanced
    )


def _row_basis(U: ht.DNDarray) -> ht.DNDarray:
    """The basis split along its rows (features) or replicated, never along its modes."""
    if U.split == 1:
        U = ht.resplit(U, 0 if U.comm.size > 1 else None)
    if U.split == 0 and not U.is_balanced(force_check=True):
        U.balance_()
    return U


def _check_state(x, n_features: int, dtype, name: str, batch_axis: int) -> Tuple[ht.DNDarray, bool]:
    """A state ``(n_features,)`` or a batch of states (along ``batch_axis``) as a 2-D array
    with the states as columns, and whether it was 1-D. Its type is the promotion of the
    model's type ``dtype`` and the states' (float32 model, float64 states: float64), the type
    the prediction is computed and returned in, as NumPy's products with the parameters of a
    scikit-learn model give it (and HeAT's ``predict_next``)."""
    x = _as_dndarray(x, name)
    if x.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D, but has shape {tuple(x.shape)}")
    if ht.types.heat_type_is_complexfloating(x.dtype):
        raise TypeError(f"{name} must be real-valued, but has type {x.dtype.__name__}")
    vector = x.ndim == 1
    features = x.shape[0] if vector else x.shape[1 - batch_axis]
    if features != n_features:
        raise ValueError(
            f"{name} has {features} features, but the model was fitted with {n_features}"
        )
    if vector:
        x = ht.expand_dims(x, 1)
    elif batch_axis == 0:
        x = x.T
    dtype = ht.types.promote_types(dtype, x.dtype)
    if x.dtype is not dtype:
        x = x.astype(dtype)
    return x, vector


def _in_type(x: ht.DNDarray, dtype) -> ht.DNDarray:
    """A fitted operator in the type of the prediction (no copy when it has it)."""
    return x if x.dtype is dtype else x.astype(dtype)


def _reduce(basis: ht.DNDarray, states: ht.DNDarray) -> torch.Tensor:
    """``basis^T @ states`` (``r x batch``), replicated."""
    return _replicated(ht.matmul(basis.T, states))


def _check_steps(value, name: str, backward: bool = False) -> int:
    """``value`` as an int; negative (steps backward in time) only where ``backward``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, but was {type(value).__name__}")
    if value < 0 and not backward:
        raise ValueError(f"{name} must be >= 0, but was {value}")
    return int(value)


def _powers(transfer: torch.Tensor, times: Sequence[int]) -> torch.Tensor:
    """
    ``transfer ** t`` for every ``t`` in ``times``, stacked; a negative ``t`` steps backward
    with the inverse of the reduced operator (HeAT's ``eigenvalues ** t``). The operator is
    replicated, so every process decides alike whether it can be inverted.
    """
    r = transfer.shape[0]
    powers = torch.empty((len(times), r, r), dtype=transfer.dtype, device=transfer.device)
    inverse = None
    if any(t < 0 for t in times):
        inverse, info = torch.linalg.inv_ex(transfer)
        if int(info) != 0 or not bool(torch.isfinite(inverse).all()):
            raise ValueError(
                "steps backward in time (negative steps) need the inverse of the reduced "
                "operator, which is singular for this model"
            )
    for i, t in enumerate(times):
        powers[i] = torch.linalg.matrix_power(transfer if t >= 0 else inverse, abs(t))
    return powers


def _eigen(transfer: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Eigenvalues and eigenvectors of the small transfer matrix (identical on every process)."""
    values, vectors = torch.linalg.eig(transfer)
    return values, vectors


# ---------------------------------------------------------------------------------------------
# DMD
# ---------------------------------------------------------------------------------------------
class DMD(RegressionMixin, BaseEstimator):
    """
    Dynamic mode decomposition (exact DMD): a linear reduced-order model
    ``x_{k+1} ~ A x_k`` of a time series, its eigenvalues and modes, and predictions.

    The time series is a 2-D DNDarray ``(n_features, n_timesteps)``: the snapshots are the
    columns. See the module documentation for the algorithm and the truncation.

    Parameters
    ----------
    svd_solver : {"full", "hierarchical", "randomized"}
        The SVD of the snapshots: exact (:func:`heat.linalg.svd`), hierarchical
        (:func:`heat.linalg.hsvd_rank` / :func:`heat.linalg.hsvd_rtol`; needs ``svd_rank`` or
        ``svd_tol``) or randomized (:func:`heat.linalg.rsvd`; needs ``svd_rank``).
    svd_rank : int, optional
        The number of modes to keep (at most).
    svd_tol : float, optional
        In (0, 1): keep the fewest modes whose discarded part of the snapshots has relative
        Frobenius norm at most ``svd_tol``. At most one of ``svd_rank`` and ``svd_tol``.
    random_state : int, optional
        Seed of the randomized SVD (heat's generator is restored afterwards).

    Attributes
    ----------
    rom_basis_ : DNDarray
        ``(n_features, n_modes_)`` orthonormal basis of the model (the left singular vectors),
        split along the features like the data (or replicated).
    rom_transfer_matrix_ : DNDarray
        ``(n_modes_, n_modes_)`` reduced-order model ``A_r = U^T X_+ V S^-1``, replicated.
    rom_eigenvalues_ : DNDarray
        ``(n_modes_,)`` complex eigenvalues of ``A_r`` (the DMD eigenvalues), replicated.
    rom_eigenmodes_ : DNDarray
        ``(n_modes_, n_modes_)`` complex eigenvectors of ``A_r`` (columns), replicated.
    dmdmodes_ : DNDarray
        ``(n_features, n_modes_)`` complex DMD modes ``rom_basis_ @ rom_eigenmodes_`` (HeAT's
        projected modes), split like ``rom_basis_``.
    n_modes_ : int
        The number of modes kept.
    n_features_in_ : int
        The number of features (rows of the time series).

    Raises
    ------
    TypeError, ValueError
        From :meth:`fit`, for bad parameters or data, on every process alike.

    Examples
    --------
    >>> A = ht.array([[0.9, 0.2], [0.0, 0.5]])
    >>> states = [ht.array([1.0, 1.0])]
    >>> for _ in range(9):
    ...     states.append(A @ states[-1])
    >>> X = ht.stack(states, axis=1).resplit_(1)  # 2 features, 10 snapshots
    >>> dmd = ht.decomposition.DMD().fit(X)
    >>> sorted(round(v, 4) for v in dmd.rom_eigenvalues_.numpy().real.tolist())
    [0.5, 0.9]
    >>> dmd.predict_next(states[-1]).shape
    (2,)
    """

    def __init__(
        self,
        svd_solver: str = "full",
        svd_rank: Optional[int] = None,
        svd_tol: Optional[float] = None,
        random_state: Optional[int] = None,
    ):
        self.svd_solver = svd_solver
        self.svd_rank = svd_rank
        self.svd_tol = svd_tol
        self.random_state = random_state

    def fit(self, X, y=None) -> "DMD":
        """
        Fit the model to the time series ``X``. Collective.

        Parameters
        ----------
        X : DNDarray
            ``(n_features, n_timesteps)``, at least two time steps; real (integers become
            floats).
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        TypeError, ValueError
            For bad parameters, data that is not a real 2-D array with at least two time steps,
            holds NaN or infinity, or has no dynamics (all snapshots but the last zero); on
            every process alike.
        """
        _check_solver(self)
        X = _time_series(X, "X")
        m = X.shape[1] - 1
        before, after = _columns(X, 0, m), _columns(X, 1, m + 1)
        U, s, Vt = _truncated_svd(before, self, self.svd_rank, "X[:, :-1]")
        U = _row_basis(U)
        # A_r = U^T X_+ V S^-1 (r x r): (U^T X_+) is r x m, then the small product with V
        projected = ht.matmul(U.T, after)
        transfer = _replicated(ht.matmul(projected, Vt.T)) / s.to(X.larray.dtype)
        values, vectors = _eigen(transfer)
        self.rom_basis_ = U
        self.rom_transfer_matrix_ = _small(transfer, X, X.dtype)
        self.rom_eigenvalues_ = _small(values, X)
        self.rom_eigenmodes_ = _small(vectors, X)
        self.dmdmodes_ = _lift(U, vectors, 0)
        self.n_modes_ = int(transfer.shape[0])
        self.n_features_in_ = int(X.shape[0])
        return self

    def predict_next(self, X, n_steps: int = 1) -> ht.DNDarray:
        """
        The state(s) ``n_steps`` time steps after the state(s) ``X``:
        ``U A_r^n_steps U^T X``. Collective.

        Parameters
        ----------
        X : DNDarray
            A state ``(n_features,)`` or states as columns ``(n_features, n_states)``.
        n_steps : int
            Time steps to advance; negative: steps backward in time, with the inverse of the
            reduced operator (ValueError where it is singular).

        Returns
        -------
        DNDarray
            The same shape as ``X``, split along the features like :attr:`rom_basis_`; of
            the promoted type of the model and ``X`` (a float32 fit predicts float64 states
            in float64, as scikit-learn's products and HeAT do).

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        TypeError, ValueError
            For a non-integer ``n_steps``, ``X`` of the wrong shape, or negative steps with
            a singular reduced operator.

        Examples
        --------
        >>> dmd = ht.decomposition.DMD().fit(ht.array([[1.0, 0.5, 0.25, 0.125]]))
        >>> round(dmd.predict_next(ht.array([2.0]), n_steps=2).item(), 4)
        0.5
        """
        check_is_fitted(self, ["rom_basis_"])
        n_steps = _check_steps(n_steps, "n_steps", backward=True)
        states, vector = _check_state(X, self.n_features_in_, self.rom_basis_.dtype, "X", 1)
        basis = _in_type(self.rom_basis_, states.dtype)
        transfer = _in_type(self.rom_transfer_matrix_, states.dtype).larray
        power = _powers(transfer, [n_steps])[0]
        reduced = _reduce(basis, states)
        advanced = power @ reduced
        result = _lift(basis, advanced, 0)
        return result[:, 0] if vector else result

    def predict(self, X, steps: Union[int, Sequence[int]]) -> ht.DNDarray:
        """
        The trajectories from the state(s) ``X`` at several time steps at once (no time-stepping
        loop over the large arrays): ``U A_r^k U^T X`` for every ``k`` in ``steps``. Collective.

        Parameters
        ----------
        X : DNDarray
            A state ``(n_features,)`` or states as columns ``(n_features, n_states)``.
        steps : int or sequence of int
            An integer ``n`` (>= 0): the steps ``0, 1, ..., n - 1``; a sequence: those steps,
            where negative ones (as in HeAT) go backward in time with the inverse of the
            reduced operator, e.g. ``dmd.predict(x0, [-2, -1, 0, 1])``.

        Returns
        -------
        DNDarray
            ``(n_features, n_steps)`` for one state, ``(n_states, n_features, n_steps)`` for
            several (as HeAT), split along the features like :attr:`rom_basis_`; of the
            promoted type of the model and ``X`` (as :meth:`predict_next`).

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        TypeError, ValueError
            For bad ``steps``, ``X`` of the wrong shape, or negative steps with a singular
            reduced operator.

        Examples
        --------
        >>> dmd = ht.decomposition.DMD().fit(ht.array([[1.0, 0.5, 0.25, 0.125]]))
        >>> dmd.predict(ht.array([2.0]), 3).numpy().round(4)
        array([[2. , 1. , 0.5]], dtype=float32)
        """
        check_is_fitted(self, ["rom_basis_"])
        if isinstance(steps, numbers.Integral) and not isinstance(steps, bool):
            times = list(range(_check_steps(steps, "steps")))
        elif isinstance(steps, (list, tuple, range, np.ndarray, torch.Tensor)):
            times = [
                _check_steps(t.item() if hasattr(t, "item") else t, "steps[i]", backward=True)
                for t in steps
            ]
        else:
            raise TypeError(
                f"steps must be an integer or a sequence of integers, but was {type(steps).__name__}"
            )
        states, vector = _check_state(X, self.n_features_in_, self.rom_basis_.dtype, "X", 1)
        basis = _in_type(self.rom_basis_, states.dtype)
        transfer = _in_type(self.rom_transfer_matrix_, states.dtype).larray
        powers = _powers(transfer, times)
        reduced = _reduce(basis, states)  # r x b
        trajectories = (powers @ reduced).permute(2, 1, 0)  # b x r x n_steps
        result = _lift(basis, trajectories, 1)  # b x n_features x n_steps
        return result[0] if vector else result


# ---------------------------------------------------------------------------------------------
# DMDc
# ---------------------------------------------------------------------------------------------
class DMDc(RegressionMixin, BaseEstimator):
    """
    Dynamic mode decomposition with control: a linear reduced-order model
    ``x_{k+1} ~ A x_k + B u_k`` of a time series ``x`` driven by a measured control ``u``
    (Proctor, Brunton and Kutz, 2016, Sect. 3.4; the control matrix is learned, not given).

    States ``(n_state_features, n_timesteps)`` and controls ``(n_control_features,
    n_timesteps)`` (the last control is then unused) or ``(n_control_features, n_timesteps - 1)``,
    snapshots as columns.

    Parameters
    ----------
    svd_solver : {"full", "hierarchical", "randomized"}
        As :class:`DMD`.
    svd_rank : int, optional
        Modes of the state basis (the SVD of ``X_+``); the SVD of the stacked states and
        controls keeps ``svd_rank + n_control_features``.
    svd_tol : float, optional
        As :class:`DMD`, for both SVDs.
    random_state : int, optional
        Seed of the randomized SVDs.

    Attributes
    ----------
    rom_basis_ : DNDarray
        ``(n_state_features, n_modes_)`` basis (left singular vectors of ``X_+``).
    rom_transfer_matrix_ : DNDarray
        ``(n_modes_, n_modes_)`` reduced state matrix, replicated.
    rom_control_matrix_ : DNDarray
        ``(n_modes_, n_control_features)`` reduced control matrix, replicated.
    rom_eigenvalues_, rom_eigenmodes_ : DNDarray
        Eigenvalues and eigenvectors of ``rom_transfer_matrix_`` (complex, replicated).
    dmdmodes_ : DNDarray
        ``(n_state_features, n_modes_)`` complex DMD modes
        ``X_+ V~ S~^-1 U~_1^T U W`` (Proctor et al., eq. 3.14).
    n_modes_ : int
        Modes of the state basis.
    n_modes_system_ : int
        Modes kept of the stacked states and controls.
    n_features_in_ : int
        State features.

    Examples
    --------
    >>> A, B = ht.array([[0.9, 0.0], [0.1, 0.5]]), ht.array([[1.0], [0.0]])
    >>> controls = ht.array([[1.0, -1.0, 0.5, 0.0, 2.0, -0.5, 1.0, 0.3]])
    >>> states = [ht.array([1.0, 2.0])]
    >>> for k in range(7):
    ...     states.append(A @ states[-1] + B @ controls[:, k])
    >>> dmdc = ht.decomposition.DMDc().fit(ht.stack(states, axis=1), controls)
    >>> sorted(round(v, 4) for v in dmdc.rom_eigenvalues_.numpy().real.tolist())
    [0.5, 0.9]
    """

    def __init__(
        self,
        svd_solver: str = "full",
        svd_rank: Optional[int] = None,
        svd_tol: Optional[float] = None,
        random_state: Optional[int] = None,
    ):
        self.svd_solver = svd_solver
        self.svd_rank = svd_rank
        self.svd_tol = svd_tol
        self.random_state = random_state

    def fit(self, X, C) -> "DMDc":
        """
        Fit the model to the states ``X`` and controls ``C``. Collective.

        Parameters
        ----------
        X : DNDarray
            States ``(n_state_features, n_timesteps)``, at least two time steps.
        C : DNDarray
            Controls ``(n_control_features, n_timesteps)`` or ``(n_control_features,
            n_timesteps - 1)``.

        Returns
        -------
        self

        Raises
        ------
        TypeError, ValueError
            For bad parameters or data (shapes that do not match, no dynamics); on every
            process alike.
        """
        _check_solver(self)
        X = _time_series(X, "X")
        C = _time_series(C, "C", min_steps=1)
        m = X.shape[1] - 1
        if C.shape[1] not in (m, m + 1):
            raise ValueError(
                f"C must have {m + 1} or {m} time steps like X (n_timesteps = {m + 1}), but has "
                f"{C.shape[1]}"
            )
        dtype = ht.types.promote_types(X.dtype, C.dtype)
        X, C = X.astype(dtype, copy=False), C.astype(dtype, copy=False)
        n, q = X.shape[0], C.shape[0]
        before, after = _columns(X, 0, m), _columns(X, 1, m + 1)
        controls = _columns(C, 0, m)
        if controls.split != before.split:
            controls = ht.resplit(controls, before.split)
        stacked = ht.concatenate([before, controls], axis=0)
        if stacked.split is not None and not stacked.is_balanced(force_check=True):
            stacked.balance_()
        system_rank = None if self.svd_rank is None else self.svd_rank + q
        Us, ss, Vst = _truncated_svd(stacked, self, system_rank, "[X[:, :-1]; C]")
        U, _, _ = _truncated_svd(after, self, self.svd_rank, "X[:, 1:]")
        U = _row_basis(U)
        Us = _row_basis(Us)
        Us_state = _row_basis(Us[:n])
        Us_control = _replicated(Us[n:])  # q x p, small
        # G = X_+ V~ S~^-1 (n x p), split along the features like X_+ (or replicated)
        G = ht.matmul(after, Vst.T / _small(ss.to(X.larray.dtype), X, dtype))
        projected = _reduce(U, G)  # U^T G, r x p
        state_to_basis = _reduce(Us_state, U)  # U~_1^T U, p x r
        transfer = projected @ state_to_basis
        control = projected @ Us_control.T
        values, vectors = _eigen(transfer)
        self.rom_basis_ = U
        self.rom_transfer_matrix_ = _small(transfer, X, dtype)
        self.rom_control_matrix_ = _small(control, X, dtype)
        self.rom_eigenvalues_ = _small(values, X)
        self.rom_eigenmodes_ = _small(vectors, X)
        G = _row_basis(G)
        self.dmdmodes_ = _lift(G, (state_to_basis.to(vectors.dtype) @ vectors), 0)
        self.n_modes_ = int(transfer.shape[0])
        self.n_modes_system_ = int(ss.numel())
        self.n_features_in_ = int(n)
        self.n_control_features_ = int(q)
        return self

    def predict(self, X, C) -> ht.DNDarray:
        """
        The trajectories from the state(s) ``X`` under the controls ``C``: step 0 is ``X``
        (projected on the basis), step ``k`` follows from step ``k - 1`` and ``C[:, k - 1]``.
        Collective.

        Parameters
        ----------
        X : DNDarray
            A state ``(n_state_features,)`` or states as rows ``(n_states, n_state_features)``
            (as HeAT's DMDc).
        C : DNDarray
            Controls ``(n_control_features, n_timesteps)`` (the last one is unused), or
            ``(n_control_features,)`` for one time step.

        Returns
        -------
        DNDarray
            ``(n_state_features, n_timesteps)`` for one state, ``(n_states, n_state_features,
            n_timesteps)`` for several, split along the features like :attr:`rom_basis_`;
            of the promoted type of the model, ``X`` and ``C``.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        TypeError, ValueError
            For inputs of the wrong shape.
        """
        check_is_fitted(self, ["rom_basis_"])
        C = _as_dndarray(C, "C")
        if C.ndim == 1:
            C = ht.expand_dims(C, 1)
        if C.ndim != 2 or C.shape[0] != self.n_control_features_:
            raise ValueError(
                f"C must have shape ({self.n_control_features_}, n_timesteps), but has "
                f"{tuple(C.shape)}"
            )
        if ht.types.heat_type_is_complexfloating(C.dtype):
            raise TypeError(f"C must be real-valued, but has type {C.dtype.__name__}")
        model_type = ht.types.promote_types(self.rom_basis_.dtype, C.dtype)
        states, vector = _check_state(X, self.n_features_in_, model_type, "X", 0)
        basis = _in_type(self.rom_basis_, states.dtype)
        controls = _replicated(C).to(states.larray.dtype)
        reduced = _reduce(basis, states)  # r x b
        A = _in_type(self.rom_transfer_matrix_, states.dtype).larray
        B = _in_type(self.rom_control_matrix_, states.dtype).larray
        steps = C.shape[1]
        trajectory = torch.empty(
            (reduced.shape[1], A.shape[0], steps), dtype=A.dtype, device=A.device
        )
        current = reduced
        for k in range(steps):
            if k > 0:
                current = A @ current + (B @ controls[:, k - 1]).unsqueeze(1)
            trajectory[:, :, k] = current.T
        result = _lift(basis, trajectory, 1)
        return result[0] if vector else result
