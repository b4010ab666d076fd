"""
Order statistics: quantile, percentile and median, and their NaN-ignoring variants, with all of
NumPy's interpolation methods.

How the distributed pieces combine:

- along a split axis that is reduced while another axis is kept, one all-to-all makes the
  reduced axes process-local (resplit along the longest kept axis); each process then sorts its
  private copy in place and picks the order statistics;
- when every axis of a split array is reduced, a distributed radix selection finds the needed
  order statistics with a few small Allreduces of digit histograms (and one all-gather of the
  few candidates left), without moving the data;
- otherwise the reduction is process-local.

uint16/32/64 data (which torch stores but cannot sort or gather) is selected on signed keys that
order as the values, so the exact element is picked even above 2**53; the difference of two
unsigned order statistics is taken exactly before it becomes a float, as in NumPy.
"""

from __future__ import annotations

import builtins
import math
from typing import List, Optional

import numpy as np
import torch

from . import types
from ._operations import (
    _TORCH_TO_HEAT,
    _UNSIGNED_COMPUTE,
    _check_out,
    from_order_key,
    order_key,
)
from ._sort_engine import _sort_
from .communication import MPI
from .dndarray import DNDarray
from .sanitation import sanitize_in
from .statistics import (
    _KEY_TYPE,
    Axis,
    _finish,
    _float_result_type,
    _is_distributed,
    _reduced_axes,
    _reduced_shape,
    _reduced_split,
    _reject_complex,
    _wrap,
)

__all__ = [
    "median",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "percentile",
    "quantile",
]


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
        virtual = n * q + (alpha + q * (1 - alpha - beta)) - 1  # NumPy's order of operations
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


def _lerp(a: torch.Tensor, b: torch.Tensor, t: torch.Tensor, difference=None) -> torch.Tensor:
    """
    a + (b - a) t, computed from the nearer end for accuracy (as NumPy); ``difference`` is
    ``b - a`` where the caller has it more exactly than the subtraction of ``a`` and ``b``.
    """
    if difference is None:
        difference = b - a
    return torch.where(t >= 0.5, b - difference * (1 - t), a + difference * t)


def _combine(low, high, gamma, method, result_type, storage) -> torch.Tensor:
    """
    The quantiles from the order statistics ``low`` and ``high`` (``high`` is ignored by the
    methods that pick an observation) and the weights ``gamma`` of ``high``, in
    ``result_type``. For unsigned ``storage`` (uint16/32/64) ``low`` and ``high`` are order keys
    (see :func:`order_key`) and ``high - low`` is taken exactly before it becomes a float, as
    NumPy subtracts unsigned values in their own type.
    """
    if storage in _UNSIGNED_COMPUTE:
        low_value = from_order_key(low, storage).to(result_type)
        if method in _DISCRETE_METHODS:
            return low_value
        # the keys' difference (wrapping for uint64) is the unsigned difference of the values
        difference = high - low
        if storage == torch.uint64:
            difference = difference.view(torch.uint64)
        return _lerp(
            low_value,
            from_order_key(high, storage).to(result_type),
            gamma.to(result_type),
            difference.to(result_type),
        )
    low = low.to(result_type)
    if method in _DISCRETE_METHODS:
        return low
    return _lerp(low, high.to(result_type), gamma.to(result_type))


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
    tensor, axes, q, method, ignore_nan, result_type, owned: bool = False, storage=None
) -> torch.Tensor:
    """
    Quantiles over the (process-local) ``axes`` of ``tensor``: shape ``(len(q), *kept)``.
    ``tensor`` holds the order keys of unsigned data of type ``storage`` (see :func:`_combine`).

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
    low = source.gather(-1, lower.unsqueeze(-1)).squeeze(-1)
    high = low
    if method not in _DISCRETE_METHODS:
        high = source.gather(-1, upper.unsqueeze(-1)).squeeze(-1)
    result = _combine(low, high, gamma, method, result_type, storage)
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
        return [
            sorted(k for part in gathered for k in part[g]) for g in builtins.range(len(groups))
        ]

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


def _quantile_distributed(
    x: DNDarray, q, method, ignore_nan, result_type, storage=None
) -> torch.Tensor:
    """
    Quantiles of all elements of a split array, found without moving its data (``x`` holds
    the order keys of unsigned data of type ``storage``, see :func:`_combine`).
    """
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
        return patterns.view(torch_type)

    low = values_at(chosen["lower"])
    high = low if method in _DISCRETE_METHODS else values_at(chosen["upper"])
    gamma = chosen["gamma"].to(tensor.device)
    return _combine(low, high, gamma, method, result_type, storage)


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
        if q_type is not None and types.issubdtype(q_type, types.floating):
            # as NumPy: a float q's type promotes with x's (int16 data, float32 q: float32)
            result_type = types.promote_types(x.dtype, q_type)
        elif q_type is not None:
            result_type = types.promote_types(result_type, q_type)
    torch_type = result_type.torch_type()
    gshape = q_shape + _reduced_shape(x.gshape, axes, keepdims)
    _check_out(out, gshape)

    storage = x.larray.dtype
    if storage in _UNSIGNED_COMPUTE:
        # torch lacks sort and gather kernels for uint16/32/64: select on signed keys that
        # order as the values (exact, also above 2**53) and map the picks back
        x = _wrap(order_key(x.larray), x, x.gshape, x.split)
    owned = False
    if _is_distributed(x) and x.split in axes:
        kept = [a for a in builtins.range(x.ndim) if a not in axes]
        if not kept:
            local = _quantile_distributed(x, q, method, ignore_nan, torch_type, storage)
            return _finish(_wrap(local.reshape(gshape), x, gshape, None), out)
        from .layout import resplit

        # one all-to-all makes the reduced axes process-local; the copy is ours to sort
        x = resplit(x, builtins.max(kept, key=lambda a: x.gshape[a]))
        owned = True
    local = _quantile_local(x.larray, axes, q, method, ignore_nan, torch_type, owned, storage)
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
