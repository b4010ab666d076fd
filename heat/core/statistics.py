"""
Statistics: extrema and their positions, moments (mean, var, std, skew, kurtosis), weighted
averages, order statistics (median, percentile, quantile), covariance, histograms and binning,
and the NaN-ignoring variants NumPy offers.

How the distributed pieces combine:

- extrema, sums and counts combine with a plain MPI operation: one call to
  :func:`~heat.core._operations.reduce_op`. Floating-point extrema are reduced as
  order-preserving integer keys, so that NaN propagates (or is ignored) exactly as in NumPy;
- arg-extrema: every process finds its local (value, global index) candidate, one all-gather of
  these small candidates picks the winner (NumPy's first-occurrence rule);
- moments: every process computes (count, mean, M2[, M3, M4]) of its block, one all-gather of
  these small tensors and the numerically stable pairwise merge formulas combine them;
- order statistics along a split axis: one all-to-all makes the reduced axes process-local
  (resplit along a kept axis); when every axis is reduced, a distributed radix selection finds
  the needed order statistics with a few small Allreduces of digit histograms (and one
  all-gather of the few candidates left), without moving the data.
"""

from __future__ import annotations

import builtins
import math
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from mpi4py import MPI

from . import types
from ._operations import _TORCH_TO_HEAT, _check_out, align_local, binary_op, local_op, reduce_op
from ._operations import write_out
from .dndarray import DNDarray
from .sanitation import sanitize_axis, sanitize_in
from .sorting import _sort_

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "average",
    "bincount",
    "bucketize",
    "cov",
    "digitize",
    "fmax",
    "fmin",
    "histc",
    "histogram",
    "kurtosis",
    "max",
    "maximum",
    "mean",
    "median",
    "min",
    "minimum",
    "nanargmax",
    "nanargmin",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanquantile",
    "nanstd",
    "nanvar",
    "percentile",
    "ptp",
    "quantile",
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


def _replicated_tensor(value, like: DNDarray, name: str) -> torch.Tensor:
    """The whole of a small array (bins, edges) as a local tensor on every process."""
    if isinstance(value, DNDarray):
        if _is_distributed(value):
            from .layout import resplit

            value = resplit(value, None)
        return value.larray
    if isinstance(value, torch.Tensor):
        return value.detach().to(like.larray.device)
    try:
        data = np.asarray(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be array-like, but was {type(value).__name__}") from error
    if data.dtype.kind not in "biuf":
        raise TypeError(f"{name} must contain real numbers, but has dtype {data.dtype}")
    return torch.from_numpy(np.ascontiguousarray(data)).to(like.larray.device)


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


def _sum_partial(tensor: torch.Tensor, dims, keepdim: bool = True) -> torch.Tensor:
    return torch.sum(tensor, dim=dims, keepdim=keepdim)


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
        return tensor
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
        return key
    info = torch.iinfo(key.dtype)
    bits = key ^ ((key >> (info.bits - 1)) & info.max)
    return bits.view(torch_type)


def _key_limits(torch_type: torch.dtype) -> Tuple[int, int]:
    """(smallest, largest) key of a type: the neutral elements of max and min."""
    if torch_type == torch.bool:
        return 0, 1
    info = torch.iinfo(_KEY_TYPE.get(torch_type, torch_type))
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
    return _finish(_wrap(high.larray - low.larray, high, gshape, high.split), out)


def maximum(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise maximum of two arrays with broadcasting; NaN propagates (as NumPy).

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
    """
    return binary_op(torch.maximum, x1, x2, out=out, where=where)


def minimum(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise minimum of two arrays with broadcasting; NaN propagates (as NumPy).

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
    return binary_op(torch.minimum, x1, x2, out=out, where=where)


def fmax(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise maximum ignoring NaN: if one operand is NaN, the other is returned.

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
    return binary_op(torch.fmax, x1, x2, out=out, where=where)


def fmin(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise minimum ignoring NaN: if one operand is NaN, the other is returned.

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
    return binary_op(torch.fmin, x1, x2, out=out, where=where)


# ---------------------------------------------------------------------------------------------
# positions of extrema
# ---------------------------------------------------------------------------------------------
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
    keys = x.larray
    if floating and ignore_nan and torch.isnan(keys).any():
        keys = _to_key(keys, nan_high)
    low, high = _key_limits(torch_type)
    neutral = low if largest else high
    # torch.max/min with a dim return values and first-occurrence indices in one pass
    local_arg = torch.max if largest else torch.min
    distributed = _is_distributed(x)
    # collective for layouts not known to be balanced: every process asks, empty or not
    offset = _global_offset(x)

    if axis is None:
        if keys.numel() > 0:
            value, flat = local_arg(keys.reshape(-1), 0)
            value = _to_key(value, nan_high).to(torch.int64)
            position = list(np.unravel_index(int(flat), tuple(keys.shape)))
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
            value, index = local_arg(keys, dim=axis, keepdim=True)
            value = _to_key(value, nan_high).to(torch.int64)
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
def _check_dtype_arg(dtype):
    return None if dtype is None else types.canonical_heat_type(dtype)


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
    local = (total.larray / count).to(result_type.torch_type())
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
    return tensor.sum(dim=axes, keepdim=True)


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
    return _variance(x, axis, dtype, out, ddof, keepdims, False, False)


def std(
    x: DNDarray,
    axis: Axis = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    ddof: Union[int, float] = 0,
    keepdims: bool = False,
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
    return _variance(x, axis, dtype, out, ddof, keepdims, False, True)


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


# ---------------------------------------------------------------------------------------------
# order statistics: median, percentile, quantile
# ---------------------------------------------------------------------------------------------
_QUANTILE_METHODS = (
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
)
# methods that pick an observation (the result keeps the input dtype)
_DISCRETE_METHODS = frozenset(("inverted_cdf", "closest_observation", "lower", "higher", "nearest"))
# Hyndman & Fan's continuous methods: virtual index n*q + alpha + q*(1 - alpha - beta) - 1
_ALPHA_BETA = {
    "interpolated_inverted_cdf": (0.0, 1.0),
    "hazen": (0.5, 0.5),
    "weibull": (0.0, 0.0),
    "median_unbiased": (1.0 / 3.0, 1.0 / 3.0),
    "normal_unbiased": (3.0 / 8.0, 3.0 / 8.0),
}


def _quantile_positions(n: torch.Tensor, q: torch.Tensor, method: str):
    """
    For sorted slices of ``n`` values (float64) and quantiles ``q`` (float64, broadcasting),
    the 0-based positions (lower, upper) of the two order statistics and the interpolation
    weight ``gamma`` of the upper one.
    """
    n, q = torch.broadcast_tensors(n, q)
    if method in ("inverted_cdf", "closest_observation"):
        index = n * q - 1 if method == "inverted_cdf" else n * q - 1.5
        below = torch.floor(index)
        exact = index == below
        if method == "closest_observation":
            exact = exact & (torch.remainder(below, 2) == 1)
        position = torch.where(exact, below, below + 1)
        position = torch.minimum(position.clamp_min(0), (n - 1).clamp_min(0)).to(torch.int64)
        return position, position, torch.zeros_like(q)
    if method in _ALPHA_BETA:
        alpha, beta = _ALPHA_BETA[method]
        virtual = n * q + alpha + q * (1 - alpha - beta) - 1
    elif method == "averaged_inverted_cdf":
        virtual = n * q - 1
    else:
        virtual = (n - 1) * q
        if method == "lower":
            virtual = torch.floor(virtual)
        elif method == "higher":
            virtual = torch.ceil(virtual)
        elif method == "nearest":
            virtual = torch.round(virtual)  # halves to even, as NumPy
        elif method == "midpoint":
            virtual = 0.5 * (torch.floor(virtual) + torch.ceil(virtual))
    lower = torch.floor(virtual)
    gamma = virtual - lower
    if method == "averaged_inverted_cdf":
        gamma = torch.where(gamma == 0, 0.5, 1.0).to(virtual.dtype)
    upper = lower + 1
    below_range = virtual < 0
    above_range = virtual >= n - 1
    lower = torch.where(below_range, 0, torch.where(above_range, n - 1, lower))
    upper = torch.where(below_range, 0, torch.where(above_range, n - 1, upper))
    if method in _DISCRETE_METHODS:
        upper = lower
    return lower.clamp_min(0).to(torch.int64), upper.clamp_min(0).to(torch.int64), gamma


def _lerp(a: torch.Tensor, b: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """a + (b - a) t, computed from the nearer end for accuracy (as NumPy)."""
    difference = b - a
    return torch.where(t >= 0.5, b - difference * (1 - t), a + difference * t)


def _prepare_q(q, scale: float, name: str):
    """(q as a flat float64 tensor in [0, 1], the shape of q, its heat type or None if weak)."""
    if isinstance(q, DNDarray):
        q_type, data = q.dtype, q.numpy()
    elif isinstance(q, torch.Tensor):
        q_type, data = _TORCH_TO_HEAT.get(q.dtype), q.detach().cpu().numpy()
    elif isinstance(q, (bool, np.bool_)):
        raise TypeError(f"q must be a real number or array of them, but was {type(q).__name__}")
    elif isinstance(q, (int, float)):
        q_type, data = None, np.asarray(q, dtype=np.float64)
    else:
        try:
            data = np.asarray(q)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"q must be a real number or array-like, but was {type(q).__name__}"
            ) from error
        if data.dtype.kind not in "iuf":
            raise TypeError(f"q must contain real numbers, but had dtype {data.dtype}")
        q_type = types.canonical_heat_type(data.dtype)
    if q_type is not None and not (
        types.issubdtype(q_type, types.integer) or types.issubdtype(q_type, types.floating)
    ):
        raise TypeError(f"q must contain real numbers, but had dtype {q_type.__name__}")
    shape = tuple(data.shape)
    values = torch.from_numpy(np.ascontiguousarray(data, dtype=np.float64)).reshape(-1) / scale
    if not builtins.bool(((values >= 0) & (values <= 1)).all()):
        bounds = "[0, 100]" if scale == 100 else "[0, 1]"
        raise ValueError(f"{name}s must be in the range {bounds}, but q was {data.tolist()}")
    return values, shape, q_type


def _quantile_local(
    tensor, axes, q, method, ignore_nan, result_type, owned: bool = False
) -> torch.Tensor:
    """
    Quantiles over the (process-local) ``axes`` of ``tensor``: shape ``(len(q), *kept)``.

    The data is sorted in place (NaN last): in ``tensor`` itself when the caller ``owned`` it
    (a private copy), otherwise in one copy. A single reduced axis is sorted where it is.
    """
    kept = [i for i in builtins.range(tensor.ndim) if i not in axes]
    kept_shape = [tensor.shape[i] for i in kept]
    if len(axes) == 1:
        if not (owned and tensor.is_contiguous()):
            tensor = tensor.clone(memory_format=torch.contiguous_format)
        _sort_(tensor, axes[0])
        ordered = tensor.movedim(axes[0], -1)
    else:
        source = tensor
        if tensor.ndim:
            tensor = tensor.permute(kept + list(axes))
        tensor = tensor.reshape(kept_shape + [math.prod(tensor.shape[len(kept) :])])
        if not owned and tensor.untyped_storage().data_ptr() == source.untyped_storage().data_ptr():
            tensor = tensor.clone(memory_format=torch.contiguous_format)
        elif not tensor.is_contiguous():
            tensor = tensor.contiguous()
        _sort_(tensor, -1)
        ordered = tensor
    floating = ordered.is_floating_point()
    length = ordered.shape[-1]
    if floating and ignore_nan:
        n = (length - torch.isnan(ordered).sum(dim=-1)).to(torch.float64)
    else:
        n = torch.full(kept_shape, float(length), dtype=torch.float64, device=ordered.device)
    q = q.to(ordered.device).reshape([-1] + [1] * len(kept_shape))
    lower, upper, gamma = _quantile_positions(n.unsqueeze(0), q, method)
    source = ordered.unsqueeze(0).expand([q.shape[0]] + list(ordered.shape))
    low = source.gather(-1, lower.unsqueeze(-1)).squeeze(-1).to(result_type)
    if method in _DISCRETE_METHODS:
        result = low
    else:
        high = source.gather(-1, upper.unsqueeze(-1)).squeeze(-1).to(result_type)
        result = _lerp(low, high, gamma.to(result_type))
    if floating:
        missing = (n == 0) if ignore_nan else torch.isnan(ordered[..., -1])
        result = result.masked_fill(missing.unsqueeze(0), math.nan)
    return result


# below this many candidates in all, the radix selection gathers them instead of another round
_GATHER_LIMIT = 4096
# elements per step of the radix selection's scans of the local data (bounds its temporaries)
_SCAN_CHUNK = 1 << 16


def _radix_bits(tensor: torch.Tensor):
    """
    A zero-copy integer view of the 1-D ``tensor``'s data (NumPy on the CPU, torch elsewhere),
    its width in bits, whether it holds floats, whether its integer type is signed, and the
    bits of +inf (floats).
    """
    floating = tensor.dtype in _KEY_TYPE
    if tensor.dtype == torch.bool:
        view = tensor.view(torch.uint8)
    elif floating:
        view = tensor.view(_KEY_TYPE[tensor.dtype])
    else:
        view = tensor
    inf_bits = None
    if floating:
        inf_bits = torch.tensor(math.inf, dtype=tensor.dtype).view(view.dtype).item()
    bits = view.numpy() if view.device.type == "cpu" else view
    return bits, 8 * view.element_size(), floating, view.dtype != torch.uint8, inf_bits


def _unsigned_keys(chunk, width: int, floating: bool, signed: bool, inf_bits, check_nan: bool):
    """
    Keys of the integer view ``chunk`` whose *unsigned* order (of their ``width``-bit patterns)
    is the order of the data, and the number of NaNs among them. NaNs of any sign and payload
    get the largest key (all bits set). Keys of 32 and 64 bits are kept in ``chunk``'s signed
    type (the leading bit wraps around), narrower ones as non-negative int32 values.
    ``chunk`` is not changed. Without ``check_nan`` the caller knows there are no NaNs.
    """
    sign = -(1 << (width - 1))  # the sign bit, as a value of the signed type
    count = 0
    if floating:
        # negative: flip all bits; positive: flip the sign bit
        keys = chunk >> (width - 1)
        keys |= sign
        keys ^= chunk
        if check_nan:
            nan = (chunk & ~sign) > inf_bits
            count = int(np.count_nonzero(nan) if isinstance(nan, np.ndarray) else nan.sum())
            if count:
                keys[nan] = -1
    elif signed:
        keys = chunk ^ sign
    else:
        keys = chunk
    if width <= 16:
        keys = keys.astype(np.int32) if isinstance(keys, np.ndarray) else keys.to(torch.int32)
        keys &= (1 << width) - 1
    return keys, count


def _select_order_statistics(bits, width, floating, signed, inf_bits, comm, total, choose):
    """
    Distributed radix selection of order statistics of the ``total`` elements whose local part
    is the integer view ``bits`` (see :func:`_radix_bits`). The data never moves, and no
    temporary larger than a chunk (or than an eighth of the local data) is made.

    Each round reads one digit of the keys (16 bits first for wide types, then 8) of the
    current candidates: a local histogram, one Allreduce, and every wanted order statistic
    keeps the candidates with its digit. The first round also counts the NaNs and calls
    ``choose(nan_count)``, which returns the 0-based ranks wanted (None: stop). The local data
    is scanned chunk by chunk until few enough candidates are left to be kept in a small array;
    once few candidates are left anywhere, one all-gather of those finishes.

    Returns ``{rank: unsigned key}`` (keys as made by :func:`_unsigned_keys`), or None.
    """
    all_ones = (1 << width) - 1
    on_cpu = isinstance(bits, np.ndarray)

    def top_bits(prefix: int, resolved: int) -> int:
        # the leading ``resolved`` bits of an unsigned key, as the arithmetic shift sees them
        top = prefix >> (width - resolved)
        if width >= 32 and top >= 1 << (resolved - 1):
            top -= 1 << resolved
        return top

    def scan(pool, check_nan=True):
        if pool is not None:
            yield pool, 0
            return
        for start in builtins.range(0, bits.shape[0], _SCAN_CHUNK):
            chunk = bits[start : start + _SCAN_CHUNK]
            yield _unsigned_keys(chunk, width, floating, signed, inf_bits, check_nan)

    def members(keys, prefix: int, resolved: int):
        if resolved == 0:
            return keys
        return keys[(keys >> (width - resolved)) == top_bits(prefix, resolved)]

    def as_list(keys) -> List[int]:
        keys = keys if on_cpu else keys.cpu().numpy()
        return [builtins.int(k) & all_ones for k in keys.tolist()]

    def gather(groups, resolved, pool):
        local = [[] for _ in groups]
        for keys, _ in scan(pool, nan_total != 0):
            for g, prefix in enumerate(groups):
                local[g].extend(as_list(members(keys, prefix, resolved)))
        gathered = comm.allgather(local)
        return [sorted(k for part in gathered for k in part[g]) for g in builtins.range(len(groups))]

    nan_total = None  # not known yet
    if total <= _GATHER_LIMIT:
        (candidates,) = gather([0], 0, None)
        ranks = choose(sum(1 for k in candidates if k == all_ones) if floating else 0)
        return None if ranks is None else {r: candidates[r] for r in ranks}

    ranks = remaining = prefixes = None
    groups, resolved, pool, local_left = [0], 0, None, bits.shape[0]
    while True:
        digit_bits = builtins.min(16 if resolved == 0 and width >= 32 else 8, width - resolved)
        shift = width - resolved - digit_bits
        size = 1 << digit_bits
        # the candidates of this round are kept once they are few (never in the first round)
        collect = pool is None and resolved > 0 and local_left <= bits.shape[0] // 8
        kept = []
        histogram = np.zeros((len(groups), size), dtype=np.int64) if on_cpu else None
        if not on_cpu:
            histogram = torch.zeros((len(groups), size), dtype=torch.int64, device=bits.device)
        nan_local = 0
        for keys, nan_count in scan(pool, nan_total != 0):
            nan_local += nan_count
            for g, prefix in enumerate(groups):
                chosen = members(keys, prefix, resolved)
                digits = (chosen >> shift) & (size - 1)
                if on_cpu:
                    histogram[g] += np.bincount(digits, minlength=size)
                else:
                    histogram[g] += torch.bincount(digits.long(), minlength=size)
                if collect:
                    kept.append(chosen)
        if collect:
            if not kept:  # no local data
                kept = [_unsigned_keys(bits[:0], width, floating, signed, inf_bits, False)[0]]
            pool = np.concatenate(kept) if on_cpu else torch.cat(kept)
            del kept
        local_histogram = torch.from_numpy(histogram) if on_cpu else histogram.cpu()
        if resolved == 0:
            message = torch.cat([local_histogram.reshape(-1), torch.tensor([nan_local])])
            reduced = comm.allreduce_tensor(message, MPI.SUM)
            global_histogram = reduced[:-1].reshape(1, size)
            nan_total = builtins.int(reduced[-1])
            ranks = choose(nan_total)
            if ranks is None:
                return None
            remaining, prefixes = list(ranks), [0] * len(ranks)
        else:
            global_histogram = comm.allreduce_tensor(local_histogram, MPI.SUM)
        cumulative = global_histogram.cumsum(dim=1)
        counts, local_counts = {}, {}
        for j in builtins.range(len(ranks)):
            g = groups.index(prefixes[j])
            digit = builtins.int(torch.searchsorted(cumulative[g], remaining[j], right=True))
            if digit > 0:
                remaining[j] -= builtins.int(cumulative[g, digit - 1])
            prefixes[j] |= digit << shift
            counts[prefixes[j]] = builtins.int(global_histogram[g, digit])
            local_counts[prefixes[j]] = builtins.int(local_histogram[g, digit])
        resolved += digit_bits
        if resolved == width:
            return dict(zip(ranks, prefixes))
        groups = sorted(counts)
        local_left = sum(local_counts.values())
        if pool is not None:
            # drop the candidates no order statistic needs any more
            keep = None
            for prefix in groups:
                match = (pool >> (width - resolved)) == top_bits(prefix, resolved)
                keep = match if keep is None else keep | match
            pool = pool[keep]
        if sum(counts.values()) <= _GATHER_LIMIT:
            candidates = gather(groups, resolved, pool)
            return {
                r: candidates[groups.index(prefixes[j])][remaining[j]] for j, r in enumerate(ranks)
            }


def _key_value(key: int, width: int, floating: bool, signed: bool) -> int:
    """The bit pattern (as a value of the signed or unsigned integer view) of an unsigned key."""
    sign = 1 << (width - 1)
    if floating:
        pattern = key ^ sign if key & sign else ~key & ((1 << width) - 1)
    elif signed:
        pattern = key ^ sign
    else:
        pattern = key
    if (floating or signed) and pattern & sign:
        pattern -= 1 << width
    return pattern


def _quantile_distributed(x: DNDarray, q, method, ignore_nan, result_type) -> torch.Tensor:
    """Quantiles of all elements of a split array, found without moving its data."""
    tensor = x.larray.reshape(-1)
    torch_type = tensor.dtype
    bits, width, floating, signed, inf_bits = _radix_bits(tensor)
    chosen = {}

    def choose(nan_count: int):
        n_valid = x.size - nan_count
        if (nan_count and not ignore_nan) or n_valid == 0:
            return None
        lower, upper, gamma = _quantile_positions(
            torch.tensor(float(n_valid), dtype=torch.float64), q, method
        )
        chosen.update(lower=lower, upper=upper, gamma=gamma)
        return sorted(set(lower.tolist()) | set(upper.tolist()))

    by_rank = _select_order_statistics(
        bits, width, floating, signed, inf_bits, x.comm, x.size, choose
    )
    if by_rank is None:
        return torch.full((q.numel(),), math.nan, dtype=result_type, device=tensor.device)
    view_type = torch.uint8 if torch_type == torch.bool else _KEY_TYPE.get(torch_type, torch_type)

    def values_at(positions):
        patterns = [_key_value(by_rank[int(p)], width, floating, signed) for p in positions]
        patterns = torch.tensor(patterns, dtype=view_type, device=tensor.device)
        return patterns.view(torch_type).to(result_type)

    low = values_at(chosen["lower"])
    if method in _DISCRETE_METHODS:
        return low
    gamma = chosen["gamma"].to(device=tensor.device, dtype=result_type)
    return _lerp(low, values_at(chosen["upper"]), gamma)


def _quantile(
    x, q, axis, out, method, keepdims, ignore_nan: bool, scale: float, name: str
) -> DNDarray:
    sanitize_in(x)
    _reject_complex(x, name)
    if not isinstance(method, str) or method not in _QUANTILE_METHODS:
        raise ValueError(
            f"method must be one of {', '.join(_QUANTILE_METHODS)}, but was {method!r}"
        )
    q, q_shape, q_type = _prepare_q(q, scale, "percentile" if scale == 100 else "quantile")
    axes = _reduced_axes(x, axis)
    if math.prod(x.gshape[a] for a in axes) == 0:
        raise ValueError(
            f"cannot compute the {name} of an empty axis (shape {x.gshape}, axis {axis})"
        )
    if method in _DISCRETE_METHODS:
        result_type = x.dtype
    else:
        if x.dtype is types.bool:
            raise TypeError(f"{name} with method {method!r} does not support bool input")
        result_type = _float_result_type(x.dtype)
        if q_type is not None:
            result_type = types.promote_types(result_type, q_type)
    torch_type = result_type.torch_type()
    gshape = q_shape + _reduced_shape(x.gshape, axes, keepdims)
    _check_out(out, gshape)

    owned = False
    if _is_distributed(x) and x.split in axes:
        kept = [a for a in builtins.range(x.ndim) if a not in axes]
        if not kept:
            local = _quantile_distributed(x, q, method, ignore_nan, torch_type)
            return _finish(_wrap(local.reshape(gshape), x, gshape, None), out)
        from .layout import resplit

        # one all-to-all makes the reduced axes process-local; the copy is ours to sort
        x = resplit(x, builtins.max(kept, key=lambda a: x.gshape[a]))
        owned = True
    local = _quantile_local(x.larray, axes, q, method, ignore_nan, torch_type, owned)
    local_kept = _reduced_shape(tuple(x.larray.shape), axes, keepdims)
    local = local.reshape(q_shape + local_kept)
    split = _reduced_split(x.split, axes, keepdims)
    if split is not None:
        split += len(q_shape)
    return _finish(_wrap(local, x, gshape, split), out)


def quantile(
    x: DNDarray,
    q,
    axis: Axis = None,
    out: Optional[DNDarray] = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> DNDarray:
    """
    The ``q``-th quantiles of the data along the given axes, as :func:`numpy.quantile`.

    Along a split axis, one all-to-all first makes the reduced axes process-local (resplit
    along the longest kept axis). When every axis is reduced, a distributed radix selection
    finds the needed order statistics with a few small Allreduces; the data never moves.

    Parameters
    ----------
    x : DNDarray
        Real input.
    q : float or array-like or DNDarray
        Quantiles in ``[0, 1]``; the result has ``q``'s dimensions first.
    axis : int or tuple of ints, optional
        None (default): quantiles of all elements.
    out : DNDarray, optional
    overwrite_input : bool
        Accepted for NumPy compatibility; the input is never modified.
    method : str
        One of NumPy's methods: ``"linear"`` (default), ``"lower"``, ``"higher"``,
        ``"nearest"``, ``"midpoint"``, ``"inverted_cdf"``, ``"averaged_inverted_cdf"``,
        ``"closest_observation"``, ``"interpolated_inverted_cdf"``, ``"hazen"``,
        ``"weibull"``, ``"median_unbiased"``, ``"normal_unbiased"``.
    keepdims : bool

    Returns
    -------
    DNDarray
        Methods that pick an observation (lower, higher, nearest, inverted_cdf,
        closest_observation) keep the input dtype; the others give floats (float64 for
        integers). Slices containing NaN give NaN.

    Raises
    ------
    TypeError
        If ``x`` is complex or ``q`` is not real.
    ValueError
        If ``q`` is outside ``[0, 1]``, ``method`` is unknown, an axis is out of range, or a
        reduced axis is empty.

    Examples
    --------
    >>> ht.quantile(ht.arange(10, split=0), [0.25, 0.5])
    DNDarray([2.25, 4.5 ], dtype=ht.float64, device=cpu:0, split=None)
    """
    return _quantile(x, q, axis, out, method, keepdims, False, 1.0, "quantile")


def percentile(
    x: DNDarray,
    q,
    axis: Axis = None,
    out: Optional[DNDarray] = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> DNDarray:
    """
    The ``q``-th percentiles of the data along the given axes, as :func:`numpy.percentile`
    (see :func:`quantile`; ``q`` is in ``[0, 100]``).

    Parameters
    ----------
    x : DNDarray
    q : float or array-like or DNDarray
        Percentiles in ``[0, 100]``.
    axis : int or tuple of ints, optional
    out : DNDarray, optional
    overwrite_input : bool
        Ignored.
    method : str
        See :func:`quantile`.
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`quantile` (``q`` outside ``[0, 100]``).

    Examples
    --------
    >>> ht.percentile(ht.array([[10.0, 7.0, 4.0], [3.0, 2.0, 1.0]], split=0), 50, axis=1)
    DNDarray([7., 2.], dtype=ht.float32, device=cpu:0, split=0)
    """
    return _quantile(x, q, axis, out, method, keepdims, False, 100.0, "percentile")


def median(
    x: DNDarray,
    axis: Axis = None,
    out: Optional[DNDarray] = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> DNDarray:
    """
    The median along the given axes (the mean of the two middle values for even lengths).

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
        None (default): the median of all elements.
    out : DNDarray, optional
    overwrite_input : bool
        Ignored.
    keepdims : bool

    Returns
    -------
    DNDarray
        float64 for integer input, else the input type; NaN for slices containing NaN.

    Raises
    ------
    TypeError, ValueError
        As :func:`quantile`.

    Examples
    --------
    >>> ht.median(ht.array([3, 1, 4, 1, 5], split=0))
    DNDarray(3., dtype=ht.float64, device=cpu:0, split=None)
    """
    return _quantile(x, 0.5, axis, out, "linear", keepdims, False, 1.0, "median")


def nanquantile(
    x: DNDarray,
    q,
    axis: Axis = None,
    out: Optional[DNDarray] = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> DNDarray:
    """
    Quantiles ignoring NaN (all-NaN slices give NaN); see :func:`quantile`.

    Parameters
    ----------
    x : DNDarray
    q : float or array-like or DNDarray
    axis : int or tuple of ints, optional
    out : DNDarray, optional
    overwrite_input : bool
    method : str
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`quantile`.

    Examples
    --------
    >>> ht.nanquantile(ht.array([1.0, float("nan"), 3.0], split=0), 0.5)
    DNDarray(2., dtype=ht.float32, device=cpu:0, split=None)
    """
    return _quantile(x, q, axis, out, method, keepdims, True, 1.0, "nanquantile")


def nanpercentile(
    x: DNDarray,
    q,
    axis: Axis = None,
    out: Optional[DNDarray] = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> DNDarray:
    """
    Percentiles ignoring NaN (all-NaN slices give NaN); see :func:`percentile`.

    Parameters
    ----------
    x : DNDarray
    q : float or array-like or DNDarray
    axis : int or tuple of ints, optional
    out : DNDarray, optional
    overwrite_input : bool
    method : str
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`percentile`.

    Examples
    --------
    >>> ht.nanpercentile(ht.array([1.0, float("nan"), 3.0], split=0), 50)
    DNDarray(2., dtype=ht.float32, device=cpu:0, split=None)
    """
    return _quantile(x, q, axis, out, method, keepdims, True, 100.0, "nanpercentile")


def nanmedian(
    x: DNDarray,
    axis: Axis = None,
    out: Optional[DNDarray] = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> DNDarray:
    """
    The median ignoring NaN (all-NaN slices give NaN).

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of ints, optional
    out : DNDarray, optional
    overwrite_input : bool
    keepdims : bool

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`median`.

    Examples
    --------
    >>> ht.nanmedian(ht.array([1.0, float("nan"), 3.0, 4.0], split=0))
    DNDarray(3., dtype=ht.float32, device=cpu:0, split=None)
    """
    return _quantile(x, 0.5, axis, out, "linear", keepdims, True, 1.0, "nanmedian")


# ---------------------------------------------------------------------------------------------
# histograms and binning
# ---------------------------------------------------------------------------------------------
def _global_range(x: DNDarray) -> Tuple[float, float]:
    """(min, max) of all elements as Python numbers (NaN makes them infinite); one Allreduce."""
    tensor = x.larray.reshape(-1)
    if tensor.numel():
        if tensor.dtype == torch.bool:
            tensor = tensor.to(torch.uint8)
        extremes = torch.stack([tensor.min(), tensor.max()]).to(torch.float64)
        extremes[1] = -extremes[1]
        # NaN anywhere: a range of [-inf, inf], rejected as not finite
        extremes = extremes.masked_fill(torch.isnan(extremes).any(), -math.inf)
    else:
        extremes = torch.full((2,), math.inf, dtype=torch.float64, device=tensor.device)
    if _is_distributed(x):
        extremes = x.comm.allreduce_tensor(extremes, MPI.MIN)
    low, high = float(extremes[0]), -float(extremes[1])
    if math.isfinite(low) and math.isfinite(high) and types.heat_type_is_exact(x.dtype):
        return int(low), int(high)
    return low, high


def histogram(
    a: DNDarray,
    bins: Union[int, Sequence[float], DNDarray] = 10,
    range: Optional[Tuple[float, float]] = None,
    density: Optional[bool] = None,
    weights: Optional[DNDarray] = None,
) -> Tuple[DNDarray, DNDarray]:
    """
    Histogram of the values of ``a``, as :func:`numpy.histogram`.

    Each process counts its own elements; one Allreduce sums the counts (plus one for the
    data range if ``bins`` is an integer and ``range`` is not given).

    Parameters
    ----------
    a : DNDarray
        Real input; flattened.
    bins : int or sequence of scalars or DNDarray
        Number of equal-width bins, or the monotonically increasing bin edges (all bins are
        half-open ``[left, right)`` except the last, which includes its right edge).
    range : (float, float), optional
        Lower and upper edge for equal-width bins; default ``(a.min(), a.max())``. Values
        outside are ignored.
    density : bool, optional
        Return the probability density (the integral over the range is 1).
    weights : DNDarray or array-like, optional
        One weight per element of ``a``; each element counts with its weight.

    Returns
    -------
    hist : DNDarray
        The counts (int64), the summed weights (weights' dtype) or the density (float64);
        not split.
    bin_edges : DNDarray
        ``len(hist) + 1`` edges (float64 for integer data, else the data's float type).

    Raises
    ------
    TypeError
        If ``a`` is complex, or ``bins`` is neither an integer nor a sequence.
    ValueError
        If ``bins`` is not positive or its edges do not increase, ``range`` is invalid, the
        automatic range is not finite, or ``weights`` do not have the shape of ``a``.

    Examples
    --------
    >>> hist, edges = ht.histogram(ht.array([1, 2, 1], split=0), bins=[0, 1, 2, 3])
    >>> hist
    DNDarray([0, 2, 1], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(a, "a")
    _reject_complex(a, "histogram")
    uniform = isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_))
    if isinstance(bins, str):
        raise TypeError(
            f"bins must be an integer or a sequence of edges; estimators such as {bins!r} are "
            "not supported"
        )
    if uniform and bins < 1:
        raise ValueError(f"bins must be a positive integer, but was {bins}")
    w = None
    if weights is not None:
        w = _as_dndarray(weights, a, "weights")
        if w.gshape != a.gshape:
            raise ValueError(
                f"weights must have the shape of a ({a.gshape}), but had shape {w.gshape}"
            )
        _reject_complex(w, "histogram weights")
    data_type = a.dtype.torch_type()
    if data_type == torch.bool:
        data_type = torch.uint8
    if uniform:
        if range is not None:
            try:
                first, last = (float(v) for v in range)
            except (TypeError, ValueError) as error:
                raise ValueError(f"range must be a pair (min, max), but was {range!r}") from error
            if first > last:
                raise ValueError(f"max must be larger than min in range, but range was {range!r}")
            if not (math.isfinite(first) and math.isfinite(last)):
                raise ValueError(f"range must be finite, but was {range!r}")
            first, last = range
        elif a.size == 0:
            first, last = 0, 1
        else:
            first, last = _global_range(a)
            if not (math.isfinite(first) and math.isfinite(last)):
                raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
        if first == last:
            first, last = first - 0.5, last + 0.5
        numpy_type = a.dtype.numpy_type() if a.dtype is not types.bfloat16 else np.float32
        edge_type = np.result_type(first, last, np.empty(0, dtype=numpy_type))
        if edge_type.kind in "biu":
            edge_type = np.result_type(edge_type, float)
        edges = torch.from_numpy(np.linspace(first, last, bins + 1, endpoint=True, dtype=edge_type))
        if a.dtype is types.bfloat16:
            edges = edges.to(torch.bfloat16)
        n_bins = bins
    else:
        edges = _replicated_tensor(bins, a, "bins")
        if edges.ndim != 1 or edges.numel() < 1:
            raise ValueError(
                f"bins must be a 1-D sequence of edges, but had shape {tuple(edges.shape)}"
            )
        if builtins.bool((edges[1:] < edges[:-1]).any()):
            raise ValueError("bins must increase monotonically, when an array")
        n_bins = edges.numel() - 1
    edges = edges.to(a.larray.device)
    compare_type = types.promote_types(
        _TORCH_TO_HEAT[data_type], _TORCH_TO_HEAT[edges.dtype]
    ).torch_type()
    values = a.larray.reshape(-1).to(compare_type)
    boundaries = edges.to(compare_type)
    local_weights = None
    if w is not None:
        local_weights = align_local(
            w, a.gshape, a.split, a if a.split is not None else None
        ).reshape(-1)
    if not (uniform and range is None):
        # values outside the edges are dropped (with an automatic range, none are outside)
        inside = (values >= boundaries[0]) & (values <= boundaries[-1])
        values = values[inside]
        if local_weights is not None:
            local_weights = local_weights[inside]
    if uniform:
        # NumPy's arithmetic guess of the bin, then corrected by comparing with the edges, so
        # that bin i holds exactly edges[i] <= v < edges[i + 1] (the last bin also its right edge)
        scale = n_bins / (float(last) - float(first))
        index = (
            ((values.to(torch.float64) - float(first)) * scale)
            .to(torch.int64)
            .clamp_(0, n_bins - 1)
        )
        index -= (values < boundaries[index]).to(torch.int64)
        index += ((values >= boundaries[index + 1]) & (index != n_bins - 1)).to(torch.int64)
    else:
        index = torch.searchsorted(boundaries, values, right=True) - 1
        index = torch.where(values == boundaries[-1], n_bins - 1, index)
    if local_weights is None:
        counts = torch.bincount(index, minlength=n_bins)
    else:
        counts = torch.zeros(n_bins, dtype=local_weights.dtype, device=values.device)
        counts.index_add_(0, index, local_weights)
    if _is_distributed(a):
        counts = a.comm.allreduce_tensor(counts, MPI.SUM)
    if density:
        widths = torch.diff(edges.to(torch.float64))
        counts = counts.to(torch.float64) / widths / counts.sum()
    hist = DNDarray(counts, (n_bins,), _TORCH_TO_HEAT[counts.dtype], None, a.device, a.comm, True)
    edge_array = DNDarray(
        edges, (n_bins + 1,), _TORCH_TO_HEAT[edges.dtype], None, a.device, a.comm, True
    )
    return hist, edge_array


def histc(
    input: DNDarray,
    bins: int = 100,
    min: Union[int, float] = 0,
    max: Union[int, float] = 0,
    out: Optional[DNDarray] = None,
) -> DNDarray:
    """
    Histogram with equal-width bins between ``min`` and ``max``, as :func:`torch.histc`.

    If ``min`` equals ``max`` (default: both zero), the data's minimum and maximum are used
    (one extra Allreduce); if these are equal, the range is widened by one on each side.
    Elements outside ``[min, max]`` are ignored.

    Parameters
    ----------
    input : DNDarray
        Floating-point input; flattened.
    bins : int
        Number of bins.
    min, max : scalar
        The range.
    out : DNDarray, optional

    Returns
    -------
    DNDarray
        ``bins`` counts of the input's dtype, not split.

    Raises
    ------
    TypeError
        If ``input`` is not floating point or ``bins`` is not an integer.
    ValueError
        If ``bins`` is not positive or ``min > max``.

    Examples
    --------
    >>> ht.histc(ht.array([1.0, 2.0, 1.0], split=0), bins=4, min=0, max=3)
    DNDarray([0., 2., 1., 0.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(input, "input")
    if input.larray.dtype not in _FLOATING:
        raise TypeError(
            f"histc needs floating-point input, but input has dtype {input.dtype.__name__}"
        )
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"bins must be an integer, but was {type(bins).__name__}")
    if bins < 1:
        raise ValueError(f"bins must be positive, but was {bins}")
    low, high = float(min), float(max)
    if low > high:
        raise ValueError(f"max must be larger than min, but min={min} and max={max}")
    _check_out(out, (int(bins),))
    if low == high and input.size > 0:
        low, high = _global_range(input)
    if low == high:
        low, high = low - 1, high + 1
    local = torch.histc(input.larray.reshape(-1), bins=int(bins), min=low, max=high)
    if _is_distributed(input):
        local = input.comm.allreduce_tensor(local, MPI.SUM)
    result = DNDarray(local, (int(bins),), input.dtype, None, input.device, input.comm, True)
    return _finish(result, out)


def bincount(x: DNDarray, weights=None, minlength: int = 0) -> DNDarray:
    """
    Number of occurrences of each value in an array of non-negative integers, as
    :func:`numpy.bincount`.

    The result has ``max(x.max() + 1, minlength)`` entries; the global maximum and minimum are
    found with one Allreduce, the counts summed with a second.

    Parameters
    ----------
    x : DNDarray
        1-D, non-negative integers (or bool).
    weights : DNDarray or array-like, optional
        One weight per element; the result then sums weights (float64).
    minlength : int
        Minimum number of bins.

    Returns
    -------
    DNDarray
        int64 counts (float64 with weights), not split.

    Raises
    ------
    TypeError
        If ``x`` is not of an integer type or ``minlength`` not an integer.
    ValueError
        If ``x`` is not 1-D, contains negative values (on every process), ``minlength`` is
        negative, or ``weights`` has another shape.

    Examples
    --------
    >>> ht.bincount(ht.array([0, 1, 1, 3], split=0))
    DNDarray([1, 2, 0, 1], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if not (types.issubdtype(x.dtype, types.integer) or x.dtype is types.bool):
        raise TypeError(f"x must contain integers, but had dtype {x.dtype.__name__}")
    if x.ndim != 1:
        raise ValueError(f"x must be 1-dimensional, but had {x.ndim} dimensions")
    if isinstance(minlength, bool) or not isinstance(minlength, (int, np.integer)):
        raise TypeError(f"minlength must be an integer, but was {type(minlength).__name__}")
    if minlength < 0:
        raise ValueError(f"minlength must be non-negative, but was {minlength}")
    w = None
    if weights is not None:
        w = _as_dndarray(weights, x, "weights")
        if w.gshape != x.gshape:
            raise ValueError(
                f"weights must have the shape of x ({x.gshape}), but had shape {w.gshape}"
            )
    values = x.larray.to(torch.int64)
    if values.numel():
        # max and the bitwise complement of min (order reversing, no overflow): one MAX
        extremes = torch.stack([values.max(), ~values.min()])
    else:
        extremes = torch.tensor(
            [-1, torch.iinfo(torch.int64).min], dtype=torch.int64, device=values.device
        )
    if _is_distributed(x):
        extremes = x.comm.allreduce_tensor(extremes, MPI.MAX)
    highest, lowest = int(extremes[0]), ~int(extremes[1])
    if x.size and lowest < 0:
        raise ValueError(f"x must contain only non-negative values, but contained {lowest}")
    length = builtins.max(highest + 1, int(minlength))
    if w is None or x.size == 0:
        # NumPy gives int64 zeros for empty input, with weights or not
        counts = torch.bincount(values, minlength=length)
    else:
        local_weights = align_local(w, x.gshape, x.split, x if x.split is not None else None)
        # (torch.bincount returns int64 for empty input even with weights)
        counts = torch.zeros(length, dtype=torch.float64, device=values.device)
        counts.index_add_(0, values, local_weights.reshape(-1).to(torch.float64))
    if _is_distributed(x):
        counts = x.comm.allreduce_tensor(counts, MPI.SUM)
    return DNDarray(counts, (length,), _TORCH_TO_HEAT[counts.dtype], None, x.device, x.comm, True)


def digitize(x: DNDarray, bins, right: bool = False) -> DNDarray:
    """
    Indices of the bins each value of ``x`` belongs to, as :func:`numpy.digitize`.

    For increasing ``bins``: ``i`` with ``bins[i-1] <= x < bins[i]`` (``right=False``) or
    ``bins[i-1] < x <= bins[i]`` (``right=True``); decreasing bins reverse the inequalities.
    Elementwise; no communication (``bins`` is small and needed whole on every process).

    Parameters
    ----------
    x : DNDarray
        Real input.
    bins : array-like or DNDarray
        1-D, monotonically increasing or decreasing.
    right : bool
        Whether the intervals include their right edge.

    Returns
    -------
    DNDarray
        int64 indices with the layout of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is complex or ``bins`` not array-like.
    ValueError
        If ``bins`` is not 1-D or not monotonic.

    Examples
    --------
    >>> ht.digitize(ht.array([0.2, 6.4, 3.0, 1.6], split=0), [0.0, 1.0, 2.5, 4.0, 10.0])
    DNDarray([1, 4, 3, 2], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(x)
    _reject_complex(x, "digitize")
    edges = _replicated_tensor(bins, x, "bins")
    if edges.ndim != 1:
        raise ValueError(f"bins must be 1-dimensional, but had shape {tuple(edges.shape)}")
    if edges.is_complex():
        raise TypeError("bins must be real")
    steps = (
        edges[1:] - edges[:-1] if edges.dtype != torch.bool else edges[1:].int() - edges[:-1].int()
    )
    increasing = builtins.bool((steps >= 0).all())
    if not increasing and not builtins.bool((steps <= 0).all()):
        raise ValueError("bins must be monotonically increasing or decreasing")
    compare = types.promote_types(x.dtype, _TORCH_TO_HEAT[edges.dtype]).torch_type()
    if compare == torch.bool:
        compare = torch.uint8
    edges = edges.to(compare)
    if not increasing:
        edges = edges.flip(0)
    count = edges.numel()

    def locate(tensor):
        index = torch.searchsorted(edges, tensor.to(compare), right=not right)
        return index if increasing else count - index

    return local_op(locate, x, no_cast=True)


def bucketize(
    input: DNDarray,
    boundaries,
    out_int32: bool = False,
    right: bool = False,
    out: Optional[DNDarray] = None,
) -> DNDarray:
    """
    Indices of the buckets the values of ``input`` fall into, as :func:`torch.bucketize`.

    With increasing ``boundaries``: ``i`` with ``boundaries[i-1] < x <= boundaries[i]``
    (``right=False``) or ``boundaries[i-1] <= x < boundaries[i]`` (``right=True``).
    Elementwise; no communication.

    Parameters
    ----------
    input : DNDarray
    boundaries : array-like or DNDarray
        1-D, monotonically increasing.
    out_int32 : bool
        Return int32 instead of int64 indices.
    right : bool
        See above.
    out : DNDarray, optional

    Returns
    -------
    DNDarray
        Indices with the layout of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is complex.
    ValueError
        If ``boundaries`` is not 1-D.

    Examples
    --------
    >>> ht.bucketize(ht.array([1, 5, 9], split=0), [1, 3, 5, 7, 9])
    DNDarray([0, 2, 4], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(input, "input")
    _reject_complex(input, "bucketize")
    edges = _replicated_tensor(boundaries, input, "boundaries")
    if edges.ndim != 1:
        raise ValueError(f"boundaries must be 1-dimensional, but had shape {tuple(edges.shape)}")
    compare = types.promote_types(input.dtype, _TORCH_TO_HEAT[edges.dtype]).torch_type()
    if compare == torch.bool:
        compare = torch.uint8
    edges = edges.to(compare)

    def locate(tensor):
        return torch.bucketize(
            tensor.to(compare),
            edges,
            out_int32=builtins.bool(out_int32),
            right=builtins.bool(right),
        )

    return local_op(locate, input, out=out, no_cast=True)
