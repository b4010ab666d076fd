"""
Statistics: extrema and their positions, moments (mean, var, std, skew, kurtosis), weighted
averages and covariance, and the NaN-ignoring variants NumPy offers. Order statistics (median,
percentile, quantile) live in :mod:`heat.core.quantiles`, histograms and binning in
:mod:`heat.core.histograms`; both build on the small helpers of this module.

How the distributed pieces combine:

- extrema, sums and counts combine with a plain MPI operation: one call to
  :func:`~heat.core._operations.reduce_op`. Floating-point extrema are reduced as
  order-preserving integer keys, so that NaN propagates (or is ignored) exactly as in NumPy;
- arg-extrema: every process finds its local (value, global index) candidate, one all-gather of
  these small candidates picks the winner (NumPy's first-occurrence rule);
- moments: every process computes (count, mean, M2[, M3, M4]) of its block, one all-gather of
  these small tensors and the numerically stable pairwise merge formulas combine them.
"""

from __future__ import annotations

import builtins
import math
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from . import types
from ._operations import (
    _TORCH_TO_HEAT,
    _UNSIGNED_COMPUTE,
    _check_out,
    align_local,
    binary_op,
    from_order_key,
    order_key,
    reduce_op,
    register_unsigned,
    unsigned_call,
    write_out,
)
from .arithmetics import _sum_partial
from .arithmetics import sum as _sum
from .communication import MPI
from .dndarray import DNDarray
from .sanitation import sanitize_axis, sanitize_in

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "average",
    "count_nonzero",
    "cov",
    "fmax",
    "fmin",
    "kurtosis",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "nanargmax",
    "nanargmin",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanstd",
    "nanvar",
    "ptp",
    "skew",
    "std",
    "var",
]

Axis = Union[None, int, Tuple[int, ...]]

_FLOATING = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
# the integer type whose bit patterns order-preserving keys of a float type are built from
_KEY_TYPE = {
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.float32: torch.int32,
    torch.float64: torch.int64,
}


# ---------------------------------------------------------------------------------------------
# small shared helpers
# ---------------------------------------------------------------------------------------------
def _reduced_axes(x: DNDarray, axis: Axis, name: str = "axis") -> Tuple[int, ...]:
    """The sorted tuple of axes a reduction over ``axis`` removes (None: all of them)."""
    if x.ndim == 0:
        sanitize_axis(x.gshape, axis, name)
        return ()
    axes = sanitize_axis(x.gshape, axis, name)
    if axes is None:
        return tuple(range(x.ndim))
    if isinstance(axes, int):
        return (axes,)
    return tuple(sorted(axes))


def _reduced_shape(gshape: Tuple[int, ...], axes: Tuple[int, ...], keepdims: bool):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(gshape))
    return tuple(d for i, d in enumerate(gshape) if i not in axes)


def _reduced_split(split: Optional[int], axes: Tuple[int, ...], keepdims: bool) -> Optional[int]:
    """Where the split axis of the input ends up in the reduced result (None if reduced away)."""
    if split is None or split in axes:
        return None
    return split if keepdims else split - builtins.sum(1 for a in axes if a < split)


def _wrap(local: torch.Tensor, x: DNDarray, gshape, split: Optional[int]) -> DNDarray:
    """A DNDarray around a local result that keeps ``x``'s layout along ``split`` (or none)."""
    return DNDarray(
        local,
        tuple(gshape),
        _TORCH_TO_HEAT[local.dtype],
        split,
        x.device,
        x.comm,
        x._balanced if split is not None else True,
    )


def _finish(result: DNDarray, out: Optional[DNDarray]) -> DNDarray:
    return result if out is None else write_out(result, out)


def _is_distributed(x: DNDarray) -> bool:
    return x.split is not None and x.comm.size > 1


def _global_offset(x: DNDarray) -> int:
    return x.global_offset() if _is_distributed(x) else 0


def _reject_complex(x: DNDarray, name: str) -> None:
    if types.heat_type_is_complexfloating(x.dtype):
        raise TypeError(
            f"{name} does not support complex input, but x has dtype {x.dtype.__name__}"
        )


def _as_dndarray(value, like: DNDarray, name: str) -> DNDarray:
    """``value`` as a DNDarray on ``like``'s communicator and device (NumPy's dtype rules)."""
    if isinstance(value, DNDarray):
        return value
    from .factories import array

    try:
        if not isinstance(value, torch.Tensor):
            value = np.asarray(value)
        return array(value, device=like.device, comm=like.comm)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be array-like, but was {type(value).__name__}") from error


def _float_result_type(dtype):
    """NumPy's result type of mean/var of ``dtype``: integers and bool give float64."""
    if types.heat_type_is_exact(dtype):
        return types.float64
    return dtype


def _compute_type(dtype) -> torch.dtype:
    """Half-precision data is accumulated in float32 (as NumPy does)."""
    torch_type = dtype.torch_type()
    if torch_type in (torch.float16, torch.bfloat16):
        return torch.float32
    return torch_type


def _allgather_blocks(comm, tensor: torch.Tensor) -> torch.Tensor:
    """The equally shaped ``tensor`` of every process, stacked in rank order (one Allgather)."""
    tensor = tensor.contiguous()
    gathered = torch.empty(
        (comm.size,) + tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device
    )
    return comm.Allgather(tensor, gathered)


# ---------------------------------------------------------------------------------------------
# order-preserving integer keys of floating-point values
# ---------------------------------------------------------------------------------------------
def _to_key(tensor: torch.Tensor, nan_high: bool) -> torch.Tensor:
    """
    Integers that sort like the floats of ``tensor`` (``-inf < ... < -0.0 < 0.0 < ... < inf``).
    NaN becomes the largest key (``nan_high``) or the smallest; both keys map back to NaN.
    Integer tensors are returned as they are, bool as uint8.
    """
    if tensor.dtype == torch.bool:
        return tensor.to(torch.uint8)
    if tensor.dtype not in _KEY_TYPE:
        return order_key(tensor)  # unsigned types: signed keys; other integers unchanged
    key_type = _KEY_TYPE[tensor.dtype]
    info = torch.iinfo(key_type)
    bits = tensor.view(key_type)
    # negative floats: flip every bit but the sign, so larger magnitudes give smaller keys
    key = bits ^ ((bits >> (info.bits - 1)) & info.max)
    sentinel = torch.tensor(info.max if nan_high else info.min, dtype=key_type, device=key.device)
    return torch.where(torch.isnan(tensor), sentinel, key)


def _from_key(key: torch.Tensor, torch_type: torch.dtype) -> torch.Tensor:
    """The inverse of :func:`_to_key` (the key transform is an involution on the bits)."""
    if torch_type == torch.bool:
        return key.to(torch.bool)
    if torch_type not in _KEY_TYPE:
        return from_order_key(key, torch_type)
    info = torch.iinfo(key.dtype)
    bits = key ^ ((key >> (info.bits - 1)) & info.max)
    return bits.view(torch_type)


def _key_limits(torch_type: torch.dtype) -> Tuple[int, int]:
    """(smallest, largest) key of a type: the neutral elements of max and min."""
    if torch_type == torch.bool:
        return 0, 1
    key_type = _KEY_TYPE.get(torch_type) or _UNSIGNED_COMPUTE.get(torch_type, torch_type)
    info = torch.iinfo(key_type)
    return info.min, info.max


# ---------------------------------------------------------------------------------------------
# extrema
# ---------------------------------------------------------------------------------------------
def _extremum(x, axis, out, keepdims, largest: bool, ignore_nan: bool, name: str) -> DNDarray:
    sanitize_in(x)
    _reject_complex(x, name)
    axes = _reduced_axes(x, axis)
    if builtins.any(x.gshape[a] == 0 for a in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    gshape = _reduced_shape(x.gshape, axes, keepdims)
    _check_out(out, gshape)
    torch_type = x.larray.dtype
    if not axes:
        return _finish(_wrap(x.larray.clone(), x, gshape, x.split), out)

    local_reduce = torch.amax if largest else torch.amin
    if torch_type in _UNSIGNED_COMPUTE:
        # reduce signed keys that order like the unsigned values
        x = _wrap(order_key(x.larray), x, x.gshape, x.split)
    low, high = _key_limits(torch_type)
    floating = torch_type in _FLOATING
    if floating and ignore_nan:
        # NaN gets the neutral key, so it loses against every number; an all-NaN slice keeps the
        # neutral key, which maps back to NaN
        fill = -math.inf if largest else math.inf

        def partial(tensor, dims, keepdim=True):
            nan = torch.isnan(tensor)
            if not nan.any():
                return _to_key(local_reduce(tensor, dim=dims, keepdim=keepdim), not largest)
            reduced = local_reduce(tensor.masked_fill(nan, fill), dim=dims, keepdim=keepdim)
            reduced = reduced.masked_fill(nan.all(dim=dims, keepdim=keepdim), math.nan)
            return _to_key(reduced, not largest)

    else:
        # amax/amin propagate NaN locally; the NaN key wins the MPI reduction
        def partial(tensor, dims, keepdim=True):
            return _to_key(local_reduce(tensor, dim=dims, keepdim=keepdim), largest)

    keys = reduce_op(
        x,
        partial,
        MPI.MAX if largest else MPI.MIN,
        axis=axes,
        keepdims=keepdims,
        neutral=low if largest else high,
    )
    local = _from_key(keys.larray, torch_type)
    return _finish(_wrap(local, x, gshape, keys.split), out)


def max(
    x: DNDarray, axis: Axis = None, out: Optional[DNDarray] = None, keepdims: bool = False
) -> DNDarray:
    """
    The maximum of an array or maximums along the given axes (NaN propagates, as in NumPy).

    Parameters
    ----------
    x : DNDarray
        Input data (real numbers or bool).
    axis : int or tuple of ints, optional
        Axes to reduce; None (default) reduces all.
    out : DNDarray, optional
        Where to store the result (cast to its dtype, its layout kept).
    keepdims : bool
        Keep the reduced axes as size-1 dimensions.

    Returns
    -------
    DNDarray
        Same dtype as ``x``; not split if the split axis was reduced.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is complex, or ``axis`` is not an integer (tuple).
    ValueError
        If an axis is out of range, or a reduced axis has length zero.

    Examples
    --------
    >>> x = ht.array([[1, 5], [7, 2]], split=0)
    >>> ht.max(x)
    DNDarray(7, dtype=ht.int64, device=cpu:0, split=None)
    >>> ht.max(x, axis=1)
    DNDarray([5, 7], dtype=ht.int64, device=cpu:0, split=0)
    """
    return _extremum(x, axis, out, keepdims, True, False, "maximum")


def min(
    x: DNDarray, axis: Axis = None, out: Optional[DNDarray] = None, keepdims: bool = False
) -> DNDarray:
    """
    The minimum of an array or minimums along the given axes (NaN propagates, as in NumPy).

    Parameters
    ----------
    x : DNDarray
        Input data (real numbers or bool).
    axis : int or tuple of ints, optional
        Axes to reduce; None (default) reduces all.
    out : DNDarray, optional
        Where to store the result.
    keepdims : bool
        Keep the reduced axes as size-1 dimensions.

    Returns
    -------
    DNDarray
        Same dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is complex.
    ValueError
        If an axis is out of range, or a reduced axis has length zero.

    Examples
    --------
    >>> ht.min(ht.array([[1, 5], [7, 2]], split=1), axis=0)
    DNDarray([1, 2], dtype=ht.int64, device=cpu:0, split=0)
    """
    return _extremum(x, axis, out, keepdims, False, False, "minimum")


amax = max
amin = min


def nanmax(
    x: DNDarray, axis: Axis = None, out: Optional[DNDarray] = None, keepdims: bool = False
) -> DNDarray:
    """
    The maximum ignoring NaN; all-NaN slices give NaN (NumPy also warns).

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
    out : DNDarray, optional
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`max`.

    Examples
    --------
    >>> ht.nanmax(ht.array([1.0, float("nan"), 3.0], split=0))
    DNDarray(3., dtype=ht.float32, device=cpu:0, split=None)
    """
    return _extremum(x, axis, out, keepdims, True, True, "maximum")


def nanmin(
    x: DNDarray, axis: Axis = None, out: Optional[DNDarray] = None, keepdims: bool = False
) -> DNDarray:
    """
    The minimum ignoring NaN; all-NaN slices give NaN (NumPy also warns).

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
    out : DNDarray, optional
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`min`.

    Examples
    --------
    >>> ht.nanmin(ht.array([1.0, float("nan"), 3.0], split=0))
    DNDarray(1., dtype=ht.float32, device=cpu:0, split=None)
    """
    return _extremum(x, axis, out, keepdims, False, True, "minimum")


def ptp(
    x: DNDarray, axis: Axis = None, out: Optional[DNDarray] = None, keepdims: bool = False
) -> DNDarray:
    """
    Range of values (maximum minus minimum) along the given axes ("peak to peak").

    Parameters
    ----------
    x : DNDarray
        Real numbers (bool is rejected, as NumPy cannot subtract booleans).
    axis : int or tuple of ints, optional
    out : DNDarray, optional
    keepdims : bool

    Returns
    -------
    DNDarray
        Same dtype as ``x`` (integers wrap around on overflow, as in NumPy).

    Raises
    ------
    TypeError
        If ``x`` is bool or complex.
    ValueError
        If an axis is out of range or a reduced axis is empty.

    Examples
    --------
    >>> ht.ptp(ht.array([[4, 9, 2], [1, 3, 8]], split=0), axis=1)
    DNDarray([7, 7], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(x)
    if x.dtype is types.bool:
        raise TypeError("ptp does not support bool input (booleans cannot be subtracted)")
    gshape = _reduced_shape(x.gshape, _reduced_axes(x, axis), keepdims)
    _check_out(out, gshape)
    high = _extremum(x, axis, None, keepdims, True, False, "maximum")
    low = _extremum(x, axis, None, keepdims, False, False, "minimum")
    if high.larray.dtype in _UNSIGNED_COMPUTE:
        local = unsigned_call(torch.sub, (high.larray, low.larray), {})
    else:
        local = high.larray - low.larray
    return _finish(_wrap(local, high, gshape, high.split), out)


def _complex_pick(
    a: torch.Tensor, b: torch.Tensor, largest: bool, ignore_nan: bool
) -> torch.Tensor:
    """
    NumPy's complex maximum/minimum: values ordered lexicographically (real part, then imaginary
    part; a tie keeps ``a``). A value is NaN if either part is; ``maximum``/``minimum`` return
    the first NaN operand, ``fmax``/``fmin`` the other operand (``a`` if both are NaN).
    """
    if largest:
        a_wins = (a.real > b.real) | ((a.real == b.real) & (a.imag >= b.imag))
    else:
        a_wins = (a.real < b.real) | ((a.real == b.real) & (a.imag <= b.imag))
    a_nan, b_nan = torch.isnan(a), torch.isnan(b)
    # as in NumPy, no order holds where a part is NaN (1+nanj is not less than 2+2j)
    a_wins &= ~(a_nan | b_nan)
    a_wins |= b_nan if ignore_nan else a_nan
    return torch.where(a_wins, a, b)


# torch has no complex kernels for these: both operands arrive in the computation type
def _maximum(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _complex_pick(a, b, True, False) if a.is_complex() else torch.maximum(a, b)


def _minimum(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _complex_pick(a, b, False, False) if a.is_complex() else torch.minimum(a, b)


def _fmax(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _complex_pick(a, b, True, True) if a.is_complex() else torch.fmax(a, b)


def _fmin(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _complex_pick(a, b, False, True) if a.is_complex() else torch.fmin(a, b)


for _extremum_kernel in (_maximum, _minimum, _fmax, _fmin):
    register_unsigned(_extremum_kernel, "order")
del _extremum_kernel


def maximum(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise maximum of two arrays with broadcasting; NaN propagates (as NumPy).

    Complex values are compared as NumPy does: by real part, then by imaginary part; a complex
    value is NaN if either part is.

    Parameters
    ----------
    x1, x2 : DNDarray or scalar or array-like
    out : DNDarray, optional
    where : DNDarray or bool, optional
        NumPy's ``where=``: elements where False keep ``out``'s value.

    Returns
    -------
    DNDarray
        The promoted dtype of the operands.

    Raises
    ------
    ValueError
        If the shapes cannot be broadcast.

    Examples
    --------
    >>> ht.maximum(ht.array([1, 5, 3], split=0), 2)
    DNDarray([2, 5, 3], dtype=ht.int64, device=cpu:0, split=0)
    >>> ht.maximum(ht.array([1 + 2j, 2 + 0j]), ht.array([1 + 3j, 1 + 5j]))
    DNDarray([1.+3.j, 2.+0.j], dtype=ht.complex64, device=cpu:0, split=None)
    """
    return binary_op(_maximum, x1, x2, out=out, where=where)


def minimum(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise minimum of two arrays with broadcasting; NaN propagates (as NumPy). Complex
    values are ordered as in :func:`maximum`.

    Parameters
    ----------
    x1, x2 : DNDarray or scalar or array-like
    out : DNDarray, optional
    where : DNDarray or bool, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If the shapes cannot be broadcast.

    Examples
    --------
    >>> ht.minimum(ht.array([1, 5, 3], split=0), 2)
    DNDarray([1, 2, 2], dtype=ht.int64, device=cpu:0, split=0)
    """
    return binary_op(_minimum, x1, x2, out=out, where=where)


def fmax(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise maximum ignoring NaN: if one operand is NaN, the other is returned. Complex
    values are ordered as in :func:`maximum` (NaN if either part is).

    Parameters
    ----------
    x1, x2 : DNDarray or scalar or array-like
    out : DNDarray, optional
    where : DNDarray or bool, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If the shapes cannot be broadcast.

    Examples
    --------
    >>> ht.fmax(ht.array([1.0, float("nan")]), 0.5)
    DNDarray([1. , 0.5], dtype=ht.float32, device=cpu:0, split=None)
    """
    return binary_op(_fmax, x1, x2, out=out, where=where)


def fmin(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise minimum ignoring NaN: if one operand is NaN, the other is returned. Complex
    values are ordered as in :func:`maximum` (NaN if either part is).

    Parameters
    ----------
    x1, x2 : DNDarray or scalar or array-like
    out : DNDarray, optional
    where : DNDarray or bool, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If the shapes cannot be broadcast.

    Examples
    --------
    >>> ht.fmin(ht.array([1.0, float("nan")]), 0.5)
    DNDarray([0.5, 0.5], dtype=ht.float32, device=cpu:0, split=None)
    """
    return binary_op(_fmin, x1, x2, out=out, where=where)


# ---------------------------------------------------------------------------------------------
# positions of extrema
# ---------------------------------------------------------------------------------------------
# NumPy's argmax/argmin kernels are vectorised along contiguous runs and 5-25x faster than
# torch's CPU kernels there: on 2e7 float32, one thread, np.argmax takes 3.8 ms, torch.max(t, 0)
# 19 ms and torch.argmax 20 ms, while max itself takes 3.5 ms; the search was 85% of
# max + argmax (issue 12). torch.max(t, 0) also spreads over both threads of a 1-process run
# without getting faster (28 ms of CPU for 19 ms), so a busy second core slowed it further.
# NumPy has no bfloat16, and its float16 search is slower than torch's: those stay with torch.
# One thread: the search is memory-bound; NumPy pieces on two threads gained nothing measurable
# here (4.7 vs 4.9 ms).
_NUMPY_ARG_TYPES = frozenset(
    (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
    + (torch.float32, torch.float64)
)
# below this many elements per searched run, torch's kernel is as fast (measured on (n, k)
# float32 blocks: NumPy wins from k = 32 on)
_NUMPY_ARG_MIN_RUN = 64


def _numpy_arg_ok(tensor: torch.Tensor, run: int) -> bool:
    return (
        tensor.device.type == "cpu"
        and not tensor.requires_grad
        and tensor.dtype in _NUMPY_ARG_TYPES
        and tensor.is_contiguous()
        and run >= _NUMPY_ARG_MIN_RUN
    )


def _local_arg_extremum(tensor: torch.Tensor, axis: Optional[int], largest: bool):
    """
    ``(values, indices)`` of the first extremum of a non-empty local block along ``axis``, kept
    as a size-1 dimension; ``axis=None`` searches the flattened block and gives a 0-d value and
    a Python int. NaN counts as the extremum (the first NaN is found), as in NumPy.
    """
    if axis is None:
        if not _numpy_arg_ok(tensor, tensor.numel()):
            value, flat = (torch.max if largest else torch.min)(tensor.reshape(-1), 0)
            return value, int(flat)
        data = tensor.numpy().reshape(-1)  # a zero-copy view of the contiguous block
        flat = int(np.argmax(data) if largest else np.argmin(data))
        return torch.from_numpy(data[flat : flat + 1].copy()).reshape(()), flat
    if axis != tensor.dim() - 1 or not _numpy_arg_ok(tensor, tensor.shape[axis]):
        # torch.max/min with a dim return values and first-occurrence indices in one pass
        return (torch.max if largest else torch.min)(tensor, dim=axis, keepdim=True)
    data = tensor.numpy()
    indices = (np.argmax if largest else np.argmin)(data, axis=axis, keepdims=True)
    values = np.take_along_axis(data, indices, axis=axis)
    return torch.from_numpy(values), torch.from_numpy(indices.astype(np.int64, copy=False))


def _candidate_key(value: torch.Tensor, nan_high: bool) -> torch.Tensor:
    """
    int64 keys of local extrema, compared across processes. -0.0 and 0.0 are one value to
    argmax/argmin (the first of them wins, as in NumPy), so -0.0 is keyed as 0.0 (x + 0.0).
    """
    if value.dtype in _FLOATING:
        value = value + 0.0
    return _to_key(value, nan_high).to(torch.int64)


def _arg_extremum(x, axis, out, keepdims, largest: bool, ignore_nan: bool, name: str) -> DNDarray:
    sanitize_in(x)
    _reject_complex(x, name)
    if axis is not None:
        axis = sanitize_axis(x.gshape, axis)
        if not isinstance(axis, int):
            raise TypeError(f"axis must be None or an integer, but was {axis!r}")
        if x.ndim == 0:
            axis = None
    if (x.size == 0 and axis is None) or (axis is not None and x.gshape[axis] == 0):
        raise ValueError(f"attempt to get {name} of an empty sequence")
    if axis is None:
        gshape = (1,) * x.ndim if keepdims else ()
    else:
        gshape = _reduced_shape(x.gshape, (axis,), keepdims)
    _check_out(out, gshape)

    torch_type = x.larray.dtype
    floating = torch_type in _FLOATING
    # torch's argmax/argmin already return the first NaN, as NumPy; the nan variants search
    # order-preserving keys in which NaN loses against everything
    nan_high = largest != ignore_nan
    keys = order_key(x.larray)  # signed keys of unsigned data; other data as it is
    if floating and ignore_nan and torch.isnan(keys).any():
        # + 0.0 turns -0.0 into 0.0: the keys would order them, argmax/argmin tie them
        keys = _to_key(keys + 0.0, nan_high)
    low, high = _key_limits(torch_type)
    neutral = low if largest else high
    distributed = _is_distributed(x)
    # collective for layouts not known to be balanced: every process asks, empty or not
    offset = _global_offset(x)

    if axis is None:
        if keys.numel() > 0:
            value, flat = _local_arg_extremum(keys, None, largest)
            value = _candidate_key(value, nan_high)
            position = list(np.unravel_index(flat, tuple(keys.shape)))
            if x.split is not None:
                position[x.split] += offset
            index = int(np.ravel_multi_index(position, x.gshape)) if x.ndim else 0
        else:
            value = torch.tensor(neutral, dtype=torch.int64, device=keys.device)
            index = torch.iinfo(torch.int64).max
        index = torch.tensor(index, dtype=torch.int64, device=keys.device)
        candidate = torch.stack([value.reshape(()), index])
        if distributed:
            # flat indices of different processes interleave (split > 0): among the best values,
            # take the smallest index
            gathered = _allgather_blocks(x.comm, candidate)
            best = gathered[:, 0].max() if largest else gathered[:, 0].min()
            winners = gathered[:, 0] == best
            candidate = torch.stack([best, gathered[:, 1][winners].min()])
        winner_value, result = candidate[0], candidate[1].reshape(gshape)
        all_nan = floating and ignore_nan and int(winner_value) == neutral
    else:
        if keys.shape[axis] > 0:
            value, index = _local_arg_extremum(keys, axis, largest)
            value = _candidate_key(value, nan_high)
            if axis == x.split:
                index = index + offset
        else:
            shape = list(keys.shape)
            shape[axis] = 1
            value = torch.full(shape, neutral, dtype=torch.int64, device=keys.device)
            index = torch.full(
                shape, torch.iinfo(torch.int64).max, dtype=torch.int64, device=keys.device
            )
        if distributed and axis == x.split:
            gathered = _allgather_blocks(x.comm, torch.stack([value, index]))
            # the smallest global index among the processes holding the best value
            values, indices = gathered[:, 0], gathered[:, 1]
            value = values.amax(dim=0) if largest else values.amin(dim=0)
            no_index = torch.iinfo(torch.int64).max
            index = torch.where(values == value, indices, no_index).amin(dim=0)
        if not keepdims:
            index = index.squeeze(axis)
        result = index
        all_nan = None
        if floating and ignore_nan:
            all_nan = builtins.bool((value == neutral).any())
            if distributed and axis != x.split:
                all_nan = x.comm.allreduce(all_nan, MPI.LOR)
    if all_nan:
        raise ValueError("All-NaN slice encountered")
    split = None if axis is None else _reduced_split(x.split, (axis,), keepdims)
    return _finish(_wrap(result.contiguous(), x, gshape, split), out)


def argmax(
    x: DNDarray, axis: Optional[int] = None, out: Optional[DNDarray] = None, keepdims: bool = False
) -> DNDarray:
    """
    Indices of the maximum values along an axis (the first occurrence, as NumPy; NaN counts as
    the maximum). With ``axis=None`` the index is into the flattened array.

    Parameters
    ----------
    x : DNDarray
    axis : int, optional
    out : DNDarray, optional
        int64 array of the result's shape.
    keepdims : bool

    Returns
    -------
    DNDarray
        int64 indices.

    Raises
    ------
    TypeError
        If ``axis`` is a tuple or ``x`` is complex.
    ValueError
        If ``axis`` is out of range or the reduced axis is empty.

    Examples
    --------
    >>> ht.argmax(ht.array([[1, 9], [9, 2]], split=0))
    DNDarray(1, dtype=ht.int64, device=cpu:0, split=None)
    >>> ht.argmax(ht.array([[1, 9], [9, 2]], split=0), axis=0)
    DNDarray([1, 0], dtype=ht.int64, device=cpu:0, split=None)
    """
    return _arg_extremum(x, axis, out, keepdims, True, False, "argmax")


def argmin(
    x: DNDarray, axis: Optional[int] = None, out: Optional[DNDarray] = None, keepdims: bool = False
) -> DNDarray:
    """
    Indices of the minimum values along an axis (first occurrence; NaN counts as the minimum).

    Parameters
    ----------
    x : DNDarray
    axis : int, optional
    out : DNDarray, optional
    keepdims : bool

    Returns
    -------
    DNDarray
        int64 indices.

    Raises
    ------
    TypeError
        If ``axis`` is a tuple or ``x`` is complex.
    ValueError
        If ``axis`` is out of range or the reduced axis is empty.

    Examples
    --------
    >>> ht.argmin(ht.array([3, 1, 1], split=0))
    DNDarray(1, dtype=ht.int64, device=cpu:0, split=None)
    """
    return _arg_extremum(x, axis, out, keepdims, False, False, "argmin")


def nanargmax(
    x: DNDarray, axis: Optional[int] = None, out: Optional[DNDarray] = None, keepdims: bool = False
) -> DNDarray:
    """
    Indices of the maximum values ignoring NaN.

    Parameters
    ----------
    x : DNDarray
    axis : int, optional
    out : DNDarray, optional
    keepdims : bool

    Returns
    -------
    DNDarray
        int64 indices.

    Raises
    ------
    ValueError
        If a slice contains only NaN (on every process), or as :func:`argmax`.

    Examples
    --------
    >>> ht.nanargmax(ht.array([1.0, float("nan"), 3.0]))
    DNDarray(2, dtype=ht.int64, device=cpu:0, split=None)
    """
    return _arg_extremum(x, axis, out, keepdims, True, True, "nanargmax")


def nanargmin(
    x: DNDarray, axis: Optional[int] = None, out: Optional[DNDarray] = None, keepdims: bool = False
) -> DNDarray:
    """
    Indices of the minimum values ignoring NaN.

    Parameters
    ----------
    x : DNDarray
    axis : int, optional
    out : DNDarray, optional
    keepdims : bool

    Returns
    -------
    DNDarray
        int64 indices.

    Raises
    ------
    ValueError
        If a slice contains only NaN (on every process), or as :func:`argmin`.

    Examples
    --------
    >>> ht.nanargmin(ht.array([float("nan"), 2.0, 1.0]))
    DNDarray(2, dtype=ht.int64, device=cpu:0, split=None)
    """
    return _arg_extremum(x, axis, out, keepdims, False, True, "nanargmin")


# ---------------------------------------------------------------------------------------------
# mean and the moments
# ---------------------------------------------------------------------------------------------
def count_nonzero(x: DNDarray, /, *, axis: Axis = None, keepdims: bool = False) -> DNDarray:
    """
    The number of non-zero elements along the given axes, as :func:`numpy.count_nonzero` and the
    array API standard's ``count_nonzero``: a local count, then one Allreduce when the split axis
    is counted over.

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
        None (default): count all elements.
    keepdims : bool
        Keep the counted axes with length one.

    Returns
    -------
    DNDarray
        int64 (a 0-d array for ``axis=None``, where NumPy returns a Python int).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``axis`` is not an integer or tuple of integers.
    ValueError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> ht.count_nonzero(ht.array([[0, 1, 2], [3, 0, 0]], split=0), axis=1)
    DNDarray([2, 1], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(x)
    _reduced_axes(x, axis)  # validated before the count, identically on every process
    nonzero = DNDarray(x.larray != 0, x.gshape, types.bool, x.split, x.device, x.comm, x._balanced)
    return _sum(nonzero, axis=axis, keepdims=keepdims)


def _check_dtype_arg(dtype):
    return None if dtype is None else types.canonical_heat_type(dtype)


_FULL_MEAN_TYPES = (types.float32, types.float64)


def mean(
    x: DNDarray,
    axis: Axis = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    keepdims: bool = False,
) -> DNDarray:
    """
    Arithmetic mean along the given axes (one Allreduce of the partial sums).

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
        Axes to average over; None (default) averages all elements.
    dtype : heat type, optional
        Type to compute and return in. Default: float64 for integer and bool input, else the
        input type (half precision is accumulated in float32).
    out : DNDarray, optional
    keepdims : bool

    Returns
    -------
    DNDarray
        The means; NaN for empty slices (NumPy also warns).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``dtype`` is not understood.
    ValueError
        If an axis is out of range.

    Examples
    --------
    >>> ht.mean(ht.array([[1, 2], [3, 4]], split=0), axis=0)
    DNDarray([2., 3.], dtype=ht.float64, device=cpu:0, split=None)
    """
    if (
        axis is None
        and dtype is None
        and out is None
        and keepdims is False
        and type(x) is DNDarray
        and x._dtype in _FULL_MEAN_TYPES
        and x._gshape
    ):
        # the common x.mean() of float32/float64 data: reduce_op's full-reduction fast path
        total = reduce_op(x, _sum_partial, MPI.SUM, neutral=0)
        total.larray.div_(math.prod(x._gshape))
        return total
    sanitize_in(x)
    axes = _reduced_axes(x, axis)
    dtype = _check_dtype_arg(dtype)
    result_type = dtype if dtype is not None else _float_result_type(x.dtype)
    compute = _compute_type(result_type)
    gshape = _reduced_shape(x.gshape, axes, keepdims)
    _check_out(out, gshape)
    count = math.prod(x.gshape[a] for a in axes)
    total = reduce_op(
        x,
        _sum_partial,
        MPI.SUM,
        axis=axes,
        keepdims=keepdims,
        neutral=0,
        dtype=_TORCH_TO_HEAT[compute],
    )
    local = total.larray.div_(count)  # a fresh floating tensor: divide in place
    if local.dtype != result_type.torch_type():
        local = local.to(result_type.torch_type())
    return _finish(_wrap(local, x, gshape, total.split), out)


def nanmean(
    x: DNDarray,
    axis: Axis = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    keepdims: bool = False,
) -> DNDarray:
    """
    Arithmetic mean ignoring NaN; all-NaN slices give NaN (NumPy also warns).

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
    dtype : heat type, optional
    out : DNDarray, optional
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`mean`.

    Examples
    --------
    >>> ht.nanmean(ht.array([1.0, float("nan"), 3.0], split=0))
    DNDarray(2., dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if not types.heat_type_is_inexact(x.dtype):
        return mean(x, axis, dtype, out, keepdims)
    axes = _reduced_axes(x, axis)
    dtype = _check_dtype_arg(dtype)
    result_type = dtype if dtype is not None else x.dtype
    compute = _TORCH_TO_HEAT[_compute_type(result_type)]
    gshape = _reduced_shape(x.gshape, axes, keepdims)
    _check_out(out, gshape)

    def partial_sum(tensor, dims, keepdim=True):
        return torch.sum(torch.where(torch.isnan(tensor), 0, tensor), dim=dims, keepdim=keepdim)

    def partial_count(tensor, dims, keepdim=True):
        return torch.sum(~torch.isnan(tensor), dim=dims, keepdim=keepdim, dtype=torch.int64)

    total = reduce_op(
        x, partial_sum, MPI.SUM, axis=axes, keepdims=keepdims, neutral=0, dtype=compute
    )
    if axes:
        count = reduce_op(x, partial_count, MPI.SUM, axis=axes, keepdims=keepdims, neutral=0).larray
    else:
        count = (~torch.isnan(x.larray)).to(torch.int64)
    local = (total.larray / count).to(result_type.torch_type())
    return _finish(_wrap(local, x, gshape, total.split), out)


def _sum_axes(tensor: torch.Tensor, axes: Tuple[int, ...]) -> torch.Tensor:
    """Sum over ``axes`` keeping them as size-1 dimensions (no axes: the tensor itself)."""
    if not axes:
        return tensor.clone()
    return _sum_partial(tensor, axes, keepdim=True)


def _local_moments(tensor: torch.Tensor, axes, order: int, ignore_nan: bool) -> List[torch.Tensor]:
    """[count, mean, M2, ..., M_order] of the local block over ``axes`` (kept as size 1)."""
    real_type = tensor.real.dtype if tensor.is_complex() else tensor.dtype
    if ignore_nan:
        valid = ~torch.isnan(tensor)
        ignore_nan = not builtins.bool(valid.all())
    if ignore_nan:
        count = _sum_axes(valid.to(real_type), axes)
        tensor = torch.where(valid, tensor, 0)
    else:
        local_count = math.prod(tensor.shape[a] for a in axes)
        kshape = [1 if i in axes else d for i, d in enumerate(tensor.shape)]
        count = torch.full(kshape, local_count, dtype=real_type, device=tensor.device)
    if (
        order == 2
        and not ignore_nan
        and len(axes) == tensor.ndim
        and tensor.numel()
        and tensor.is_floating_point()
    ):
        # a full reduction: torch's own variance kernel is ~2x faster here and needs no
        # input-sized temporary
        kshape = (1,) * tensor.ndim
        center = tensor.mean().reshape(kshape)
        m2 = (torch.var(tensor, correction=0) * tensor.numel()).reshape(kshape)
        return [count, center, m2]
    center = _sum_axes(tensor, axes) / count.clamp_min(1)
    moments = [count, center]
    if order == 2 and not tensor.is_complex():
        # one input-sized temporary, squared in place
        deviation = tensor - center
        if ignore_nan:
            deviation = torch.where(valid, deviation, 0)
        moments.append(_sum_axes(deviation.square_(), axes))
    elif order >= 2:
        deviation = tensor - center
        if ignore_nan:
            deviation = torch.where(valid, deviation, 0)
        square = deviation.abs().square() if deviation.is_complex() else deviation.square()
        moments.append(_sum_axes(square, axes))
        if order >= 3:
            moments.append(_sum_axes(square * deviation, axes))
        if order >= 4:
            moments.append(_sum_axes(square.square(), axes))
    return moments


def _merge_moments(parts: Sequence[List[torch.Tensor]]) -> List[torch.Tensor]:
    """
    Combine the moments of consecutive blocks with the pairwise update formulas (Chan et al.
    for M2, Pebay for M3 and M4), in rank order, so every process gets the same bits.
    """
    n, mu, *m = parts[0]
    for n_b, mu_b, *m_b in parts[1:]:
        total = n + n_b
        safe = torch.where(total > 0, total, torch.ones_like(total))
        delta = mu_b - mu
        merged = [total, mu + delta * (n_b / safe)]
        if m:
            delta2 = delta.abs().square() if delta.is_complex() else delta.square()
            merged.append(m[0] + m_b[0] + delta2 * (n * n_b / safe))
        if len(m) >= 2:
            merged.append(
                m[1]
                + m_b[1]
                + delta * delta2 * (n * n_b * (n - n_b) / safe.square())
                + 3 * delta * (n * m_b[0] - n_b * m[0]) / safe
            )
        if len(m) >= 3:
            merged.append(
                m[2]
                + m_b[2]
                + delta2.square() * (n * n_b * (n * n - n * n_b + n_b * n_b) / safe.pow(3))
                + 6 * delta2 * (n * n * m_b[0] + n_b * n_b * m[0]) / safe.square()
                + 4 * delta * (n * m_b[1] - n_b * m[1]) / safe
            )
        n, mu, *m = merged
    return [n, mu, *m]


def _moments(x: DNDarray, axes, order: int, ignore_nan: bool, compute: torch.dtype):
    """
    Global [count, mean, M2, ...] over ``axes`` (kept as size-1 dimensions) as local tensors, and
    the split axis of that keepdims-shaped result. One all-gather if the split axis is reduced.
    """
    tensor = x.larray.to(compute)
    moments = _local_moments(
        tensor, axes, order, ignore_nan and (tensor.is_floating_point() or tensor.is_complex())
    )
    if _is_distributed(x) and x.split in axes:
        gathered = _allgather_blocks(x.comm, torch.stack([m.to(tensor.dtype) for m in moments]))
        real = [0] + list(builtins.range(2, len(moments)))
        parts = [
            [
                g[i].real if (i in real and g.is_complex()) else g[i]
                for i in builtins.range(len(moments))
            ]
            for g in gathered
        ]
        moments = _merge_moments(parts)
    return moments, _reduced_split(x.split, axes, True)


def _squeeze_axes(tensor: torch.Tensor, axes, keepdims: bool) -> torch.Tensor:
    if keepdims or not axes:
        return tensor
    return tensor.reshape([d for i, d in enumerate(tensor.shape) if i not in axes])


def _check_ddof(ddof) -> float:
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(
        ddof, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"ddof must be a real number, but was {type(ddof).__name__}")
    return ddof


def _ddof_or_correction(ddof, correction):
    """The degrees of freedom given as NumPy's ``ddof`` or the array API standard's ``correction``."""
    ddof = _check_ddof(ddof)
    correction = _check_ddof(correction)
    if ddof != 0 and correction != 0:
        raise ValueError("ddof and correction are two names of one parameter: give only one")
    return ddof if ddof != 0 else correction


def _variance(x, axis, dtype, out, ddof, keepdims, ignore_nan: bool, root: bool) -> DNDarray:
    sanitize_in(x)
    axes = _reduced_axes(x, axis)
    ddof = _check_ddof(ddof)
    dtype = _check_dtype_arg(dtype)
    base = dtype if dtype is not None else _float_result_type(x.dtype)
    compute = _compute_type(base)
    if types.heat_type_is_complexfloating(x.dtype) and not compute.is_complex:
        compute = types.complex_type_for(_TORCH_TO_HEAT[compute]).torch_type()
    result_type = types.real_type_of(base).torch_type()
    gshape = _reduced_shape(x.gshape, axes, keepdims)
    _check_out(out, gshape)
    (count, _, m2), split = _moments(x, axes, 2, ignore_nan, compute)
    local = m2 / (count - ddof).clamp_min(0)
    if root:
        local = local.sqrt()
    local = _squeeze_axes(local, axes, keepdims).to(result_type)
    split = _reduced_split(x.split, axes, keepdims)
    return _finish(_wrap(local, x, gshape, split), out)


def var(
    x: DNDarray,
    axis: Axis = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    ddof: Union[int, float] = 0,
    keepdims: bool = False,
    *,
    correction: Union[int, float] = 0.0,
) -> DNDarray:
    """
    Variance along the given axes: ``sum(|x - mean|**2) / (N - ddof)``.

    Each process computes (count, mean, M2) of its block; the blocks are combined with the
    numerically stable pairwise formula (one all-gather of these small tensors), not as
    ``sum(x**2)/N - mean**2``.

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
        None (default): the variance of all elements.
    dtype : heat type, optional
        Compute type; default float64 for integer and bool input, else the input type.
    out : DNDarray, optional
    ddof : int or float
        Delta degrees of freedom (1 gives the unbiased estimator). ``N - ddof <= 0`` gives
        inf or NaN, as in NumPy.
    keepdims : bool
    correction : int or float
        The array API standard's (and NumPy 2's) name of ``ddof``; give one of the two.

    Returns
    -------
    DNDarray
        Real floating point (complex input gives its real type).

    Raises
    ------
    TypeError
        If ``ddof`` is not a number or ``dtype`` not understood.
    ValueError
        If an axis is out of range.

    Examples
    --------
    >>> ht.var(ht.array([[1.0, 2.0], [3.0, 5.0]], split=1), axis=0)
    DNDarray([1.  , 2.25], dtype=ht.float32, device=cpu:0, split=0)
    """
    return _variance(
        x, axis, dtype, out, _ddof_or_correction(ddof, correction), keepdims, False, False
    )


def std(
    x: DNDarray,
    axis: Axis = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    ddof: Union[int, float] = 0,
    keepdims: bool = False,
    *,
    correction: Union[int, float] = 0.0,
) -> DNDarray:
    """
    Standard deviation along the given axes: the square root of :func:`var`.

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
    dtype : heat type, optional
    out : DNDarray, optional
    ddof : int or float
        Delta degrees of freedom.
    keepdims : bool
    correction : int or float
        The array API standard's name of ``ddof``; give one of the two.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`var`.

    Examples
    --------
    >>> ht.std(ht.array([1.0, 2.0, 3.0, 4.0], split=0), ddof=1)
    DNDarray(1.2909944, dtype=ht.float32, device=cpu:0, split=None)
    """
    return _variance(
        x, axis, dtype, out, _ddof_or_correction(ddof, correction), keepdims, False, True
    )


def nanvar(
    x: DNDarray,
    axis: Axis = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    ddof: Union[int, float] = 0,
    keepdims: bool = False,
) -> DNDarray:
    """
    Variance ignoring NaN (``N`` counts the non-NaN values of each slice).

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
    dtype : heat type, optional
    out : DNDarray, optional
    ddof : int or float
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`var`.

    Examples
    --------
    >>> ht.nanvar(ht.array([1.0, float("nan"), 3.0], split=0))
    DNDarray(1., dtype=ht.float32, device=cpu:0, split=None)
    """
    return _variance(x, axis, dtype, out, ddof, keepdims, True, False)


def nanstd(
    x: DNDarray,
    axis: Axis = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    ddof: Union[int, float] = 0,
    keepdims: bool = False,
) -> DNDarray:
    """
    Standard deviation ignoring NaN.

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
    dtype : heat type, optional
    out : DNDarray, optional
    ddof : int or float
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`var`.

    Examples
    --------
    >>> ht.nanstd(ht.array([1.0, float("nan"), 3.0], split=0))
    DNDarray(1., dtype=ht.float32, device=cpu:0, split=None)
    """
    return _variance(x, axis, dtype, out, ddof, keepdims, True, True)


def _shape_statistic(x, axis, unbiased, keepdims, order: int, fisher: bool, name: str) -> DNDarray:
    """Skewness (order 3) or kurtosis (order 4) with scipy.stats' conventions."""
    sanitize_in(x)
    _reject_complex(x, name)
    if not isinstance(unbiased, (bool, np.bool_)):
        raise TypeError(f"unbiased must be a bool, but was {type(unbiased).__name__}")
    axes = _reduced_axes(x, axis)
    result_type = _float_result_type(x.dtype)
    compute = _compute_type(result_type)
    gshape = _reduced_shape(x.gshape, axes, keepdims)
    (n, center, m2, *higher), split = _moments(x, axes, order, False, compute)
    m2 = m2 / n
    mk = higher[-1] / n
    eps = torch.finfo(compute).resolution * 10
    # (nearly) constant slices have no shape: NaN, as scipy
    zero = m2 <= (eps * center).square()
    nan = torch.tensor(float("nan"), dtype=compute, device=m2.device)
    if order == 3:
        values = torch.where(zero, nan, mk / m2.pow(1.5))
        if unbiased:
            corrected = torch.sqrt((n - 1) * n) / (n - 2) * mk / m2.pow(1.5)
            values = torch.where(~zero & (n > 2), corrected, values)
    else:
        values = torch.where(zero, nan, mk / m2.square())
        if unbiased:
            corrected = (
                1 / (n - 2) / (n - 3) * ((n * n - 1) * mk / m2.square() - 3 * (n - 1).square()) + 3
            )
            values = torch.where(~zero & (n > 3), corrected, values)
        if fisher:
            values = values - 3
    local = _squeeze_axes(values, axes, keepdims).to(result_type.torch_type())
    return _wrap(local, x, gshape, _reduced_split(x.split, axes, keepdims))


def skew(x: DNDarray, axis: Axis = None, unbiased: bool = True, keepdims: bool = False) -> DNDarray:
    """
    Sample skewness along the given axes, as ``scipy.stats.skew(x, axis, bias=not unbiased)``.

    The biased estimator is ``g1 = m3 / m2**1.5`` with the central moments ``mk``; the unbiased
    one (default) is ``G1 = g1 * sqrt(N (N - 1)) / (N - 2)`` where ``N > 2``. Slices whose
    variance is zero (to rounding) give NaN.

    Parameters
    ----------
    x : DNDarray
        Real input.
    axis : int or tuple of ints, optional
        None (default): all elements.
    unbiased : bool
        Apply the bias correction (scipy's ``bias=False``).
    keepdims : bool

    Returns
    -------
    DNDarray
        float64 for integer input, else the input type.

    Raises
    ------
    TypeError
        If ``x`` is complex or ``unbiased`` not a bool.
    ValueError
        If an axis is out of range.

    Examples
    --------
    >>> ht.skew(ht.array([1.0, 2.0, 3.0, 10.0], split=0), unbiased=False)
    DNDarray(1.0182338, dtype=ht.float32, device=cpu:0, split=None)
    """
    return _shape_statistic(x, axis, unbiased, keepdims, 3, False, "skew")


def kurtosis(
    x: DNDarray,
    axis: Axis = None,
    unbiased: bool = True,
    fisher: bool = True,
    keepdims: bool = False,
) -> DNDarray:
    """
    Sample kurtosis along the given axes, as ``scipy.stats.kurtosis(x, axis, fisher,
    bias=not unbiased)``.

    Parameters
    ----------
    x : DNDarray
        Real input.
    axis : int or tuple of ints, optional
        None (default): all elements.
    unbiased : bool
        Apply the bias correction (where ``N > 3``).
    fisher : bool
        Subtract 3 (excess kurtosis, 0 for a normal distribution); else Pearson's definition.
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is complex or ``unbiased`` not a bool.
    ValueError
        If an axis is out of range.

    Examples
    --------
    >>> ht.kurtosis(ht.array([1.0, 2.0, 3.0, 10.0], split=0), unbiased=False, fisher=False)
    DNDarray(2.2304, dtype=ht.float32, device=cpu:0, split=None)
    """
    return _shape_statistic(x, axis, unbiased, keepdims, 4, fisher, "kurtosis")


# ---------------------------------------------------------------------------------------------
# weighted average and covariance
# ---------------------------------------------------------------------------------------------
def _weights_along_axes(w: DNDarray, order: Sequence[int], ndim: int, gshape) -> DNDarray:
    """
    Weights given along the axes ``order`` of an ``ndim``-dimensional array, as an array that
    broadcasts against it: dimensions permuted into increasing axis order and size-1
    dimensions inserted elsewhere. Only metadata changes; no communication.
    """
    sorted_axes = sorted(order)
    permutation = [list(order).index(a) for a in sorted_axes]
    local = w.larray.permute(permutation) if w.ndim > 1 else w.larray
    split = None
    if w.split is not None:
        split = sorted_axes[permutation.index(w.split)]
    lshape = [
        local.shape[sorted_axes.index(a)] if a in sorted_axes else 1 for a in builtins.range(ndim)
    ]
    new_gshape = tuple(gshape[a] if a in sorted_axes else 1 for a in builtins.range(ndim))
    return DNDarray(
        local.reshape(lshape), new_gshape, w.dtype, split, w.device, w.comm, w._balanced
    )


def average(
    x: DNDarray,
    axis: Axis = None,
    weights=None,
    returned: bool = False,
    keepdims: bool = False,
) -> Union[DNDarray, Tuple[DNDarray, DNDarray]]:
    """
    Weighted average along the given axes: ``sum(x * weights) / sum(weights)``.

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
        None (default): average all elements.
    weights : DNDarray or array-like, optional
        Either the shape of ``x``, or the shape of ``x`` along ``axis`` (1-D for an integer
        axis). None: all weights are one (the plain :func:`mean`).
    returned : bool
        Also return the sum of the weights, broadcast to the shape of the average.
    keepdims : bool

    Returns
    -------
    DNDarray or (DNDarray, DNDarray)
        The average (float64 for integer or bool input), and the sum of weights if
        ``returned``.

    Raises
    ------
    TypeError
        If the shapes differ and ``axis`` is None, or ``weights`` is not array-like.
    ValueError
        If the shape of ``weights`` does not fit ``x`` along ``axis``, or an axis is out of range.
    ZeroDivisionError
        If weights sum to zero along an averaged slice (raised on every process).

    Examples
    --------
    >>> x = ht.array([[1.0, 2.0], [3.0, 4.0]], split=0)
    >>> ht.average(x, axis=1, weights=ht.array([3.0, 1.0]))
    DNDarray([1.25, 3.25], dtype=ht.float32, device=cpu:0, split=0)
    """
    sanitize_in(x)
    axes = _reduced_axes(x, axis)
    if weights is None:
        avg = mean(x, axes, keepdims=keepdims)
        if not returned:
            return avg
        count = math.prod(x.gshape[a] for a in axes)
        return avg, _wrap(torch.full_like(avg.larray, count), avg, avg.gshape, avg.split)

    w = _as_dndarray(weights, x, "weights")
    if w.gshape != x.gshape:
        if axis is None:
            raise TypeError("axis must be specified when the shapes of x and weights differ")
        normalized = sanitize_axis(x.gshape, axis)
        order = (normalized,) if isinstance(normalized, int) else tuple(normalized)
        expected = tuple(x.gshape[a] for a in order)
        if w.gshape != expected:
            raise ValueError(
                f"weights must have the shape of x ({x.gshape}) or its shape along axis "
                f"({expected}), but had shape {w.gshape}"
            )
        w = _weights_along_axes(w, order, x.ndim, x.gshape)
    if types.heat_type_is_exact(x.dtype):
        result_type = types.result_type(x.dtype, w.dtype, types.float64)
    else:
        result_type = types.result_type(x.dtype, w.dtype)
    w = w.astype(result_type, copy=False)
    product = binary_op(torch.mul, x, w, operand_type=result_type)
    numerator = reduce_op(product, _sum_partial, MPI.SUM, axis=axes, keepdims=keepdims, neutral=0)
    weight_sum = reduce_op(w, _sum_partial, MPI.SUM, axis=axes, keepdims=keepdims, neutral=0)
    zero = builtins.bool((weight_sum.larray == 0).any())
    if _is_distributed(weight_sum):
        zero = weight_sum.comm.allreduce(zero, MPI.LOR)
    if zero:
        raise ZeroDivisionError("weights sum to zero along an averaged slice, cannot normalize")
    avg = binary_op(torch.div, numerator, weight_sum)
    if not returned:
        return avg
    weight_sum = binary_op(lambda a, b: torch.zeros_like(a) + b, avg, weight_sum)
    return avg, weight_sum


def _as_variables(m: DNDarray, rowvar: bool) -> DNDarray:
    """``m`` as a 2-D (variables, observations) array; transposes are metadata only."""
    local, gshape, split = m.larray, m.gshape, m.split
    if m.ndim < 2:
        local = local.reshape(1, -1)
        gshape = (1, m.gshape[0] if m.ndim else 1)
        split = None if split is None else 1
    elif not rowvar:
        local, gshape = local.T, (gshape[1], gshape[0])
        split = None if split is None else 1 - split
    return DNDarray(local, gshape, m.dtype, split, m.device, m.comm, m._balanced)


def _observation_weights(weights, n_obs: int, like: DNDarray, name: str, integer: bool):
    """The weights of this process's observations (float64), aligned with ``like``."""
    w = _as_dndarray(weights, like, name)
    if w.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, but had {w.ndim} dimensions")
    if w.gshape[0] != n_obs:
        raise ValueError(
            f"{name} must have one weight per observation ({n_obs}), but had {w.gshape[0]}"
        )
    if types.heat_type_is_complexfloating(w.dtype):
        raise TypeError(f"{name} must be real, but had dtype {w.dtype.__name__}")
    row = DNDarray(
        w.larray.reshape(1, -1),
        (1, n_obs),
        w.dtype,
        None if w.split is None else 1,
        w.device,
        w.comm,
        w._balanced,
    )
    leader = like if like.split == 1 else None
    local = align_local(row, like.gshape, like.split if like.split == 1 else None, leader)
    local = local.reshape(-1).to(torch.float64)
    flags = 0
    if integer and not builtins.bool((local == local.round()).all()):
        flags |= 1
    if builtins.bool((local < 0).any()):
        flags |= 2
    return local, flags


def cov(
    m: DNDarray,
    y: Optional[DNDarray] = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: Optional[int] = None,
    fweights=None,
    aweights=None,
    dtype=None,
) -> DNDarray:
    """
    Covariance matrix of the variables in ``m`` (and ``y``), as :func:`numpy.cov`.

    The observations are distributed: each process builds the centered Gram matrix of its
    observations and one Allreduce sums them (plus one for the means). An array split along
    the variables is resplit along the observations first (one all-to-all).

    Parameters
    ----------
    m : DNDarray
        1-D or 2-D; each row is a variable, each column an observation (unless ``rowvar`` is
        False).
    y : DNDarray, optional
        More variables, stacked below those of ``m``.
    rowvar : bool
        True: rows are variables. False: columns are variables.
    bias : bool
        Normalize by N (True) instead of N - 1; overridden by ``ddof``.
    ddof : int, optional
        Delta degrees of freedom.
    fweights : array-like of int, optional
        Frequency weight of each observation.
    aweights : array-like, optional
        Importance weight of each observation.
    dtype : heat type, optional
        Default: at least float64 (as NumPy).

    Returns
    -------
    DNDarray
        ``(n_vars, n_vars)``, not split; 0-d for a single variable.

    Raises
    ------
    ValueError
        If ``m`` or ``y`` has more than 2 dimensions, the number of observations differ,
        ``ddof`` is not an integer, or weights have the wrong shape or negative values.
    TypeError
        If ``fweights`` are not integers.

    Examples
    --------
    >>> x = ht.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]], split=1)
    >>> ht.cov(x)
    DNDarray([[ 1., -1.],
              [-1.,  1.]], dtype=ht.float64, device=cpu:0, split=None)
    """
    sanitize_in(m, "m")
    if m.ndim > 2:
        raise ValueError(f"m has more than 2 dimensions ({m.ndim})")
    if y is not None:
        y = _as_dndarray(y, m, "y")
        if y.ndim > 2:
            raise ValueError(f"y has more than 2 dimensions ({y.ndim})")
    if ddof is not None and (isinstance(ddof, bool) or not isinstance(ddof, (int, np.integer))):
        raise ValueError(f"ddof must be an integer, but was {ddof!r}")
    if dtype is None:
        dtype = (
            types.result_type(m.dtype, types.float64)
            if y is None
            else types.result_type(m.dtype, y.dtype, types.float64)
        )
    dtype = types.canonical_heat_type(dtype)
    X = _as_variables(m, rowvar)
    Y = _as_variables(y, rowvar) if y is not None else None
    n_obs = X.gshape[1]
    if Y is not None and Y.gshape[1] != n_obs:
        raise ValueError(f"m has {n_obs} observations, but y has {Y.gshape[1]}")
    if ddof is None:
        ddof = 0 if bias else 1
    distributed = _is_distributed(X) or (Y is not None and _is_distributed(Y))
    if distributed and X.split != 1:
        from .layout import resplit

        X = resplit(X, 1)
    target_split = 1 if distributed else None
    torch_type = dtype.torch_type()
    blocks = [X.larray]
    if Y is not None:
        blocks.append(align_local(Y, Y.gshape, target_split, X if distributed else None))
    local = torch.cat([b.to(torch_type) for b in blocks], dim=0)
    n_vars = local.shape[0]

    w = aw = None
    flags = 0
    if fweights is not None:
        w, f = _observation_weights(fweights, n_obs, X, "fweights", True)
        flags |= f
    if aweights is not None:
        aw, f = _observation_weights(aweights, n_obs, X, "aweights", False)
        flags |= (f & 2) << 1
        w = aw if w is None else w * aw
    if distributed and (fweights is not None or aweights is not None):
        flags = X.comm.allreduce(flags, MPI.BOR)
    if flags & 1:
        raise TypeError("fweights must be integer")
    if flags & 2:
        raise ValueError("fweights cannot be negative")
    if flags & 4:
        raise ValueError("aweights cannot be negative")

    # one Allreduce for the weighted sums of each variable and the weight sums
    real_type = torch.empty((), dtype=torch_type).real.dtype
    if w is None:
        sums = local.sum(dim=1)
        extra = torch.zeros(2, dtype=real_type, device=local.device)
    else:
        w = w.to(real_type)
        sums = (local * w).sum(dim=1)
        extra = torch.stack(
            [w.sum(), (w * aw.to(real_type)).sum() if aw is not None else w.sum() * 0]
        )
    packed = torch.cat([sums, extra.to(torch_type)])
    if distributed:
        packed = X.comm.allreduce_tensor(packed, MPI.SUM)
    sums, w_sum, wa_sum = packed[:n_vars], packed[n_vars].real, packed[n_vars + 1].real
    center = sums / (n_obs if w is None else w_sum)
    centered = local - center[:, None]
    weighted = centered if w is None else centered * w
    gram = centered @ weighted.T.conj()
    if distributed:
        gram = X.comm.allreduce_tensor(gram.contiguous(), MPI.SUM)

    if w is None:
        fact = n_obs - ddof
    elif ddof == 0:
        fact = float(w_sum)
    elif aw is None:
        fact = float(w_sum) - ddof
    else:
        fact = float(w_sum) - ddof * float(wa_sum) / float(w_sum)
    fact = builtins.max(fact, 0.0)
    result = gram * (1.0 / fact if fact else float("inf"))
    result = result.squeeze()
    return DNDarray(result, tuple(result.shape), dtype, None, m.device, m.comm, True)
