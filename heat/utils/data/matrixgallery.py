"""
Test matrices of known spectrum or rank, as (split) DNDarrays: ``parter``, ``hermitian``,
``random_orthogonal``, ``random_known_singularvalues`` and ``random_known_rank``.

The matrices come from NumPy's generator, seeded on every process alike: with ``random_state``,
or without it from heat's global generator (:mod:`heat.random`, so ``ht.random.seed`` fixes
them too). So they do not depend on the number of processes; each process keeps only its block.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import numpy as np

import heat as ht

__all__ = [
    "parter",
    "hermitian",
    "random_orthogonal",
    "random_known_singularvalues",
    "random_known_rank",
]


def _size(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def _generator(random_state: Optional[int], comm=None) -> np.random.Generator:
    """
    NumPy's generator seeded with ``random_state``, or with a number drawn from heat's global
    generator if it is None: the same on every process, whatever their number (collective then).
    """
    if random_state is None:
        random_state = int(ht.random.randint(0, 2**62, (1,), split=None, comm=comm).item())
    return np.random.default_rng(random_state)


def _orthonormal(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
    """An m x n matrix (m >= n) with orthonormal columns, Haar-distributed."""
    q, r = np.linalg.qr(rng.standard_normal((m, n)))
    return q * np.sign(np.diag(r))  # the sign fix makes the distribution uniform


def parter(
    n: int, split: Optional[int] = None, device=None, comm=None, dtype=ht.float32
) -> ht.DNDarray:
    """
    The Parter matrix ``A[i, j] = 1 / (i - j + 0.5)``, a Cauchy and Toeplitz matrix most of whose
    singular values lie very close to pi.

    Examples
    --------
    >>> ht.utils.data.matrixgallery.parter(3).numpy()[0]
    array([ 2.       , -2.       , -0.6666667], dtype=float32)
    """
    n = _size(n, "n")
    i = np.arange(n, dtype=np.float64)
    return ht.array(
        1.0 / (i[:, None] - i[None, :] + 0.5), dtype=dtype, split=split, device=device, comm=comm
    )


def hermitian(
    n: int,
    dtype=ht.complex64,
    split: Optional[int] = None,
    device=None,
    comm=None,
    positive_definite: bool = False,
    random_state: Optional[int] = None,
) -> ht.DNDarray:
    """
    A random Hermitian (symmetric for a real ``dtype``) n x n matrix; with
    ``positive_definite=True`` its eigenvalues are in [1, 2). Without ``random_state`` it
    comes from heat's global generator (as every matrix here; collective).

    Examples
    --------
    >>> a = ht.utils.data.matrixgallery.hermitian(4, positive_definite=True, random_state=0)
    >>> a.shape
    (4, 4)
    """
    n = _size(n, "n")
    rng = _generator(random_state, comm)
    complex_ = (
        ht.heat_type_is_complexfloating(dtype)
        if hasattr(ht, "heat_type_is_complexfloating")
        else "complex" in str(dtype)
    )
    a = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if complex_ else 0)
    if positive_definite:
        q = np.linalg.qr(a)[0]
        a = (q * (1 + rng.random(n))) @ q.conj().T
    a = (a + a.conj().T) / 2
    return ht.array(a, dtype=dtype, split=split, device=device, comm=comm)


def random_orthogonal(
    m: int,
    n: int,
    split: Optional[int] = None,
    device=None,
    comm=None,
    dtype=ht.float32,
    random_state: Optional[int] = None,
) -> ht.DNDarray:
    """
    A random m x n matrix with orthonormal columns (m >= n), Haar-distributed; from heat's
    global generator without ``random_state``.

    Examples
    --------
    >>> q = ht.utils.data.matrixgallery.random_orthogonal(5, 3, random_state=0)
    >>> q.shape
    (5, 3)
    """
    m, n = _size(m, "m"), _size(n, "n")
    if m < n:
        raise ValueError(f"random_orthogonal needs m >= n, got m={m}, n={n}")
    q = _orthonormal(_generator(random_state, comm), m, n)
    return ht.array(q, dtype=dtype, split=split, device=device, comm=comm)


def random_known_singularvalues(
    m: int,
    n: int,
    singular_values: Any,
    split: Optional[int] = None,
    device=None,
    comm=None,
    dtype=ht.float32,
    random_state: Optional[int] = None,
) -> Tuple[ht.DNDarray, Tuple[ht.DNDarray, ht.DNDarray, ht.DNDarray]]:
    """
    A random m x n matrix ``A = U diag(S) V^T`` with the given non-negative singular values
    (``k <= min(m, n)`` of them; the rank is the number of non-zero ones); from heat's global
    generator without ``random_state``.

    Returns
    -------
    A : DNDarray
    (U, S, V) : DNDarrays of shapes (m, k), (k,), (n, k); U and V with orthonormal columns.

    Examples
    --------
    >>> a, (u, s, v) = ht.utils.data.matrixgallery.random_known_singularvalues(6, 4, [3.0, 2.0, 1.0])
    >>> a.shape, s.shape
    ((6, 4), (3,))
    """
    m, n = _size(m, "m"), _size(n, "n")
    if isinstance(singular_values, ht.DNDarray):
        singular_values = singular_values.numpy()
    s = np.asarray(singular_values, dtype=np.float64).reshape(-1)
    if s.size < 1 or s.size > min(m, n):
        raise ValueError(
            f"singular_values must hold 1 to min(m, n) = {min(m, n)} values, got {s.size}"
        )
    if not np.isfinite(s).all() or (s < 0).any():
        raise ValueError("singular_values must be finite and non-negative")
    rng = _generator(random_state, comm)
    u, v = _orthonormal(rng, m, s.size), _orthonormal(rng, n, s.size)
    a = (u * s) @ v.T
    make = lambda x, sp: ht.array(x, dtype=dtype, split=sp, device=device, comm=comm)  # noqa: E731
    return make(a, split), (make(u, split), make(s, None), make(v, split))


def random_known_rank(
    m: int,
    n: int,
    r: int,
    quantile_function: Optional[Callable] = None,
    split: Optional[int] = None,
    device=None,
    comm=None,
    dtype=ht.float32,
    random_state: Optional[int] = None,
) -> Tuple[ht.DNDarray, Tuple[ht.DNDarray, ht.DNDarray, ht.DNDarray]]:
    """
    A random m x n matrix of rank ``r``: its non-zero singular values are ``quantile_function``
    (default ``-log``, i.e. exponentially distributed) of ``r`` uniform samples, sorted
    descending. Returns ``A, (U, S, V)`` as :func:`random_known_singularvalues`.

    Examples
    --------
    >>> a, (u, s, v) = ht.utils.data.matrixgallery.random_known_rank(8, 5, 2, random_state=0)
    >>> s.shape
    (2,)
    """
    m, n, r = _size(m, "m"), _size(n, "n"), _size(r, "r")
    if r > min(m, n):
        raise ValueError(f"r must be <= min(m, n) = {min(m, n)}, got {r}")
    if quantile_function is not None and not callable(quantile_function):
        raise TypeError("quantile_function must be callable or None")
    rng = _generator(random_state, comm)
    samples = 1.0 - rng.random(r)  # in (0, 1]
    s = np.asarray((quantile_function or (lambda x: -np.log(x)))(samples), dtype=np.float64)
    s = np.sort(np.abs(s))[::-1]
    s[s == 0] = np.finfo(np.float32).eps  # the rank must be exactly r
    return random_known_singularvalues(
        m,
        n,
        s,
        split=split,
        device=device,
        comm=comm,
        dtype=dtype,
        random_state=int(rng.integers(0, 2**62)),
    )
