"""
The generic engines that nearly every heat function is one call to.

- :func:`local_op`: elementwise unary operations, no communication.
- :func:`binary_op`: broadcasting, type promotion and alignment of two operands' layouts.
- :func:`reduce_op`: local partial reduction, then one Allreduce if the split axis is reduced.
- :func:`cum_op`: local scan, then an exclusive scan of the block totals.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Tuple, Union

import torch

from . import types
from ._conversion import to_tensor
from ._redistribution import redistribute_tensor, resplit_tensor
from .communication import MPI, sanitize_comm
from .devices import sanitize_device
from .dndarray import DNDarray
from .sanitation import broadcast_shapes, sanitize_axis

__all__ = ["binary_op", "cum_op", "local_op", "reduce_op", "wrap_result", "write_out"]

_TORCH_TO_HEAT = {}
for _t in (
    types.bool,
    types.uint8,
    types.uint16,
    types.uint32,
    types.uint64,
    types.int8,
    types.int16,
    types.int32,
    types.int64,
    types.float16,
    types.bfloat16,
    types.float32,
    types.float64,
    types.complex64,
    types.complex128,
):
    _TORCH_TO_HEAT[_t.torch_type()] = _t
_INEXACT = frozenset(
    (types.float16, types.bfloat16, types.float32, types.float64, types.complex64, types.complex128)
)
_PYTHON_SCALARS = (bool, int, float, complex)


# ---------------------------------------------------------------------------------------------
# unsigned integers wider than 8 bits: stored as torch.uint16/32/64, computed in signed types
# ---------------------------------------------------------------------------------------------
# torch stores uint16/uint32/uint64 but has few CPU kernels for them (no +, -, <, max, abs, ...).
# This is the one place that maps such storage to a type torch computes in and back:
# uint16 -> int32 and uint32 -> int64 hold every value, results cast back wrap modulo 2**k as in
# NumPy; uint64 is computed on its bits read as int64, which gives the same bits for +, -, *,
# bitwise operations and left shifts; ordering uses keys with the sign bit flipped, and
# division, remainder and right shift have unsigned kernels below.
_UNSIGNED_COMPUTE = {
    torch.uint16: torch.int32,
    torch.uint32: torch.int64,
    torch.uint64: torch.int64,
}
_UNSIGNED_TYPES = frozenset((types.uint16, types.uint32, types.uint64))
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# operations whose result depends on the order of values only (their uint64 keys are flipped)
_ORDER_OPERATIONS = set()
# operations that give the same bits on uint64 and on its int64 reading
_WRAPPING_OPERATIONS = set()
# operation -> kernel on uint64 tensors, for operations that need the unsigned reading
_UINT64_KERNELS = {}


def register_unsigned(operation: Callable, kind) -> Callable:
    """
    Declare how ``operation`` (a torch function or a heat wrapper of one, as the engines receive
    it) computes on uint64 data: ``"order"`` (depends on the order of values only: comparisons,
    maximum, clamp, ...), ``"wrap"`` (gives the same bits on the int64 reading: +, -, *, bitwise,
    left shift) or a kernel ``kernel(*uint64 tensors, **kwargs)``. uint16 and uint32 need no
    declaration: any operation computes on their widened values. Operations never declared run
    on uint64 tensors as torch has them, and raise a TypeError naming uint64 where torch lacks
    a kernel.

    Examples
    --------
    >>> register_unsigned(torch.maximum, "order")
    <built-in method maximum of type object at ...>
    """
    if kind == "order":
        _ORDER_OPERATIONS.add(operation)
    elif kind == "wrap":
        _WRAPPING_OPERATIONS.add(operation)
    elif callable(kind):
        _UINT64_KERNELS[operation] = kind
    else:
        raise ValueError(f"kind must be 'order', 'wrap' or a callable, but was {kind!r}")
    return operation


def compute_tensor(tensor: torch.Tensor) -> torch.Tensor:
    """
    ``tensor`` in the type torch computes in: uint16 -> int32 and uint32 -> int64 (values kept),
    uint64 -> its bits read as int64 (no copy); any other tensor as it is.

    Examples
    --------
    >>> compute_tensor(torch.tensor([2**64 - 1], dtype=torch.uint64))
    tensor([-1])
    """
    dtype = tensor.dtype
    if dtype == torch.uint64:
        return tensor.view(torch.int64)
    wide = _UNSIGNED_COMPUTE.get(dtype)
    return tensor if wide is None else tensor.to(wide)


def storage_tensor(result: torch.Tensor, storage: torch.dtype) -> torch.Tensor:
    """
    The inverse of :func:`compute_tensor`: a ``result`` computed from values of type
    ``storage`` back in that type if it is in the computation type (wrapping modulo 2**k as
    NumPy); results of other types (bool, float) unchanged.

    Examples
    --------
    >>> storage_tensor(torch.tensor([-1], dtype=torch.int32), torch.uint16)
    tensor([65535], dtype=torch.uint16)
    """
    if result.dtype != _UNSIGNED_COMPUTE.get(storage):
        return result
    if storage == torch.uint64:
        return result.view(torch.uint64)
    return result.to(storage)


def order_key(tensor: torch.Tensor) -> torch.Tensor:
    """
    Signed integers ordered as the values of an unsigned ``tensor`` (uint64: the sign bit
    flipped; uint16/uint32: the widened values); other tensors unchanged.

    Examples
    --------
    >>> order_key(torch.tensor([0, 2**63], dtype=torch.uint64))
    tensor([-9223372036854775808,                    0])
    """
    if tensor.dtype == torch.uint64:
        return tensor.view(torch.int64) ^ _INT64_MIN
    return compute_tensor(tensor)


def from_order_key(key: torch.Tensor, storage: torch.dtype) -> torch.Tensor:
    """The inverse of :func:`order_key` for keys of values of type ``storage``."""
    if storage == torch.uint64 and key.dtype == torch.int64:
        return (key ^ _INT64_MIN).view(torch.uint64)
    return storage_tensor(key, storage)


_SIGNED_BITS = {types.uint16: types.int16, types.uint32: types.int32, types.uint64: types.int64}
_SIGNED_TORCH_BITS = {
    torch.uint16: torch.int16,
    torch.uint32: torch.int32,
    torch.uint64: torch.int64,
}


def signed_view(tensor: torch.Tensor) -> torch.Tensor:
    """
    A uint16/32/64 ``tensor`` as the signed type of its width, sharing its memory (other tensors
    unchanged): for kernels that only move or select elements (roll, where, ...), which torch
    lacks for these types on CUDA. ``result.view(tensor.dtype)`` undoes it.

    Examples
    --------
    >>> signed_view(torch.tensor([65535], dtype=torch.uint16))
    tensor([-1], dtype=torch.int16)
    """
    signed = _SIGNED_TORCH_BITS.get(tensor.dtype)
    return tensor if signed is None else tensor.view(signed)


def signed_bits(x: DNDarray) -> DNDarray:
    """
    ``x`` (uint16, uint32 or uint64) as the signed type of its width, sharing its memory: for
    functions that only move or select elements (indexing, flips, ...), which torch has no
    unsigned kernels for. Undo with :func:`unsigned_from_bits`.

    Examples
    --------
    >>> signed_bits(ht.array([65535], dtype=ht.uint16)).larray
    tensor([-1], dtype=torch.int16)
    """
    signed = _SIGNED_BITS[x._dtype]
    return DNDarray(
        x._array.view(signed.torch_type()),
        x._gshape,
        signed,
        x._split,
        x._device,
        x._comm,
        x._balanced,
    )


def unsigned_from_bits(result, dtype):
    """The inverse of :func:`signed_bits` for results (a DNDarray, or a tuple/list of them) of
    the signed type; other results unchanged."""
    if isinstance(result, (tuple, list)):
        return type(result)(unsigned_from_bits(r, dtype) for r in result)
    if not isinstance(result, DNDarray) or result._dtype is not _SIGNED_BITS[dtype]:
        return result
    return DNDarray(
        result._array.view(dtype.torch_type()),
        result._gshape,
        dtype,
        result._split,
        result._device,
        result._comm,
        result._balanced,
    )


def _unsupported_uint64(operation, error: Exception) -> TypeError:
    name = getattr(operation, "__name__", repr(operation))
    return TypeError(f"{name} is not supported for uint64 operands ({error})")


def unsigned_call(
    operation: Callable, tensors: Sequence[torch.Tensor], kwargs: dict
) -> torch.Tensor:
    """
    ``operation(*tensors, **kwargs)`` for tensors of one unsigned storage type (uint16, uint32 or
    uint64; the first tensor's type), through the computation types; the result in the storage
    type where it is of the computation type.

    Examples
    --------
    >>> a = torch.tensor([2**64 - 1], dtype=torch.uint64)
    >>> unsigned_call(torch.add, (a, torch.ones(1, dtype=torch.uint64)), {})
    tensor([0], dtype=torch.uint64)
    """
    storage = tensors[0].dtype
    if storage != torch.uint64:
        return storage_tensor(operation(*(compute_tensor(t) for t in tensors), **kwargs), storage)
    kernel = _UINT64_KERNELS.get(operation)
    if kernel is not None:
        return kernel(*tensors, **kwargs)
    if operation in _ORDER_OPERATIONS:
        return from_order_key(operation(*(order_key(t) for t in tensors), **kwargs), storage)
    if operation in _WRAPPING_OPERATIONS:
        result = operation(*(t.view(torch.int64) for t in tensors), **kwargs)
        return storage_tensor(result, storage)
    try:
        return operation(*tensors, **kwargs)  # torch's own uint64 kernel, where it has one
    except (RuntimeError, NotImplementedError) as error:
        raise _unsupported_uint64(operation, error) from None


def _uint64_divmod(a: torch.Tensor, b: torch.Tensor):
    """Unsigned quotient and remainder of uint64 tensors (0 and 0 for a zero divisor, as NumPy)."""
    x = a.view(torch.int64)
    y = b.view(torch.int64)
    zero = y == 0
    y = torch.where(zero, 1, y)
    large = y < 0  # divisor >= 2**63: the quotient is 0 or 1
    small_y = torch.where(large, 1, y)
    # halve the dividend (a logical shift, so it is a nonnegative int64), divide, double: the
    # remainder is then below 2 * divisor and one correction step finishes
    quotient = torch.div((x >> 1) & _INT64_MAX, small_y, rounding_mode="floor") << 1
    remainder = x - quotient * small_y
    step = ((remainder ^ _INT64_MIN) >= (small_y ^ _INT64_MIN)).to(torch.int64)
    quotient = quotient + step
    remainder = remainder - step * small_y
    large_quotient = ((x ^ _INT64_MIN) >= (y ^ _INT64_MIN)).to(torch.int64)
    quotient = torch.where(large, large_quotient, quotient).masked_fill(zero, 0)
    remainder = torch.where(large, x - large_quotient * y, remainder).masked_fill(zero, 0)
    return quotient.view(torch.uint64), remainder.view(torch.uint64)


def uint64_floor_divide(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a // b`` of uint64 tensors; 0 where ``b`` is 0, as NumPy."""
    return _uint64_divmod(a, b)[0]


def uint64_remainder(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a % b`` of uint64 tensors; 0 where ``b`` is 0, as NumPy."""
    return _uint64_divmod(a, b)[1]


def uint64_right_shift(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Logical ``a >> b`` of uint64 tensors; 0 for shifts of 64 bits or more, as NumPy."""
    x = a.view(torch.int64)
    n = b.view(torch.int64)
    out_of_range = (n < 0) | (n >= 64)
    n = torch.where(out_of_range, 0, n)
    # one logical step clears the sign bit, then the arithmetic shift does the rest
    shifted = ((x >> 1) & _INT64_MAX) >> (n - 1).clamp(min=0)
    shifted = torch.where(n == 0, x, shifted)
    return torch.where(out_of_range, 0, shifted).view(torch.uint64)


def _uint64_sign(a: torch.Tensor) -> torch.Tensor:
    return (a != 0).to(torch.uint8).to(torch.uint64)


for _operation in (
    torch.lt,
    torch.le,
    torch.gt,
    torch.ge,
    torch.less,
    torch.greater,
    torch.less_equal,
    torch.greater_equal,
    torch.maximum,
    torch.minimum,
    torch.fmax,
    torch.fmin,
    torch.clamp,
    torch.clip,
    torch.eq,
    torch.ne,
):
    register_unsigned(_operation, "order")
for _operation in (
    torch.add,
    torch.sub,
    torch.subtract,
    torch.mul,
    torch.multiply,
    torch.neg,
    torch.negative,
    torch.bitwise_and,
    torch.bitwise_or,
    torch.bitwise_xor,
    torch.bitwise_not,
    torch.bitwise_left_shift,
    torch.square,
    torch.pow,
    torch.logical_not,
    torch.logical_and,
    torch.logical_or,
    torch.logical_xor,
):
    register_unsigned(_operation, "wrap")
for _operation, _kernel in (
    (torch.floor_divide, uint64_floor_divide),
    (torch.remainder, uint64_remainder),
    (torch.fmod, uint64_remainder),
    (torch.bitwise_right_shift, uint64_right_shift),
    (torch.abs, torch.clone),
    (torch.absolute, torch.clone),
    (torch.sign, _uint64_sign),
    (torch.sgn, _uint64_sign),
):
    register_unsigned(_operation, _kernel)
del _operation, _kernel


def heat_type_of_tensor(tensor: torch.Tensor):
    """The heat type of a torch tensor (fast lookup)."""
    return _TORCH_TO_HEAT[tensor.dtype]


def wrap_result(
    result: torch.Tensor, like: DNDarray, gshape=None, split="same", balanced="same"
) -> DNDarray:
    """Wrap a local result tensor as a DNDarray with the layout of ``like`` (or the one given)."""
    return DNDarray(
        result,
        like.gshape if gshape is None else gshape,
        _TORCH_TO_HEAT[result.dtype],
        like.split if split == "same" else split,
        like.device,
        like.comm,
        like._balanced if balanced == "same" else balanced,
    )


# ---------------------------------------------------------------------------------------------
# alignment of operands to a target layout
# ---------------------------------------------------------------------------------------------
def _target_counts(leader) -> Tuple[int, ...]:
    if isinstance(leader, DNDarray):
        return leader.counts_displs()[0]
    return tuple(leader)


def align_local(
    x: DNDarray,
    gshape: Tuple[int, ...],
    split: Optional[int],
    leader: Union[None, DNDarray, Sequence[int]],
) -> torch.Tensor:
    """
    The local tensor of ``x`` that broadcasts against this process's block of an array of
    global shape ``gshape`` distributed along ``split`` with the layout of ``leader``: an
    array with that layout, or the counts along ``split`` of every process.

    Moves data only when ``x``'s layout differs (resplit or redistribute, one collective).

    Examples
    --------
    >>> x = ht.arange(6, split=0)
    >>> align_local(x, (6,), 0, (6, 0)).shape  # rank 0 of 2 gets all six, rank 1 none
    torch.Size([6])
    """
    ndim = len(gshape)
    if split is None:
        return resplit_tensor(x, None)[0]
    x_dim = split - (ndim - x.ndim)
    if x_dim < 0 or (x.gshape[x_dim] == 1 and gshape[split] != 1):
        # x is broadcast along the split axis: every process needs all of it
        return resplit_tensor(x, None)[0]
    counts = _target_counts(leader)
    if x.split is None or x.comm.size == 1:
        offset = sum(counts[: x.comm.rank])
        return x.larray.narrow(x_dim, offset, counts[x.comm.rank])
    if x.split != x_dim:
        local, balanced = resplit_tensor(x, x_dim)
        x = DNDarray(local, x.gshape, x.dtype, x_dim, x.device, x.comm, balanced)
    return redistribute_tensor(x, counts)


def _result_layout(operands: Sequence[DNDarray], gshape: Tuple[int, ...]):
    """Choose the split axis (in output dims) and the operand whose layout the result takes."""
    ndim = len(gshape)
    candidates = []
    for x in operands:
        if x.split is None or x.comm.size == 1:
            continue
        out_axis = x.split + ndim - x.ndim
        if x.gshape[x.split] == 1 and gshape[out_axis] != 1:
            continue  # split along a broadcast axis: not a usable layout
        candidates.append((x, out_axis))
    if not candidates:
        # size-1 communicators, or only non-split operands
        for x in operands:
            if x.split is not None:
                out_axis = x.split + ndim - x.ndim
                if not (x.gshape[x.split] == 1 and gshape[out_axis] != 1):
                    return out_axis, x
        return None, None
    if len(candidates) == 1:
        return candidates[0][1], candidates[0][0]
    # several split operands: keep the layout of the largest one, so the smaller ones move
    leader, axis = max(candidates, key=lambda c: c[0].size)
    if leader is not candidates[0][0] and candidates[0][0].size == leader.size:
        leader, axis = candidates[0]
    return axis, leader


# ---------------------------------------------------------------------------------------------
# output handling
# ---------------------------------------------------------------------------------------------
def write_out(result: DNDarray, out: DNDarray, name: str = "out") -> DNDarray:
    """
    Copy ``result`` into ``out`` (casting to out's dtype, matching out's layout) and return out.
    """
    if not isinstance(out, DNDarray):
        raise TypeError(f"{name} must be a DNDarray, but was {type(out).__name__}")
    if out.gshape != result.gshape:
        raise ValueError(f"{name} has shape {out.gshape}, but the result has shape {result.gshape}")
    local = align_local(result, out.gshape, out.split, out if out.split is not None else None)
    if out.larray.shape != local.shape:
        local = local.expand(out.larray.shape)
    out.larray.copy_(local)
    return out


def _check_out(out, gshape: Tuple[int, ...]) -> None:
    if out is not None:
        if not isinstance(out, DNDarray):
            raise TypeError(f"out must be a DNDarray, but was {type(out).__name__}")
        if out.gshape != gshape:
            raise ValueError(f"out has shape {out.gshape}, but the result has shape {gshape}")


def _check_elementwise_out(out, gshape: Tuple[int, ...]) -> None:
    """
    ``out=`` of an elementwise engine: as in NumPy's ufuncs, of the result's shape or of a larger
    one the result broadcasts to (``ht.sqrt(ht.arange(4.), out=ht.zeros((3, 4)))`` fills every
    row).
    """
    if out is not None:
        if not isinstance(out, DNDarray):
            raise TypeError(f"out must be a DNDarray, but was {type(out).__name__}")
        if out.gshape != gshape:
            try:
                fits = broadcast_shapes(gshape, out.gshape) == out.gshape
            except ValueError:
                fits = False
            if not fits:
                raise ValueError(
                    f"out has shape {out.gshape}, which the result of shape {gshape} does not "
                    f"broadcast to"
                )


def _finish_elementwise(result: DNDarray, where, out: Optional[DNDarray]) -> DNDarray:
    """``where=`` and ``out=`` of the elementwise engines; ``out`` may be larger (broadcast)."""
    if out is not None and out.gshape != result.gshape:
        # the result broadcast to out's shape and layout: every process's block of out, a view
        local = align_local(result, out.gshape, out.split, out if out.split is not None else None)
        if where is None:
            out.larray.copy_(local.expand(out.lshape))
            return out
        result = DNDarray(
            local.expand(out.lshape),
            out.gshape,
            result.dtype,
            out.split,
            out.device,
            out.comm,
            out._balanced,
        )
    result = _apply_where(result, where, out)
    return result if out is None else write_out(result, out)


def _apply_where(result: DNDarray, where, out: Optional[DNDarray]) -> DNDarray:
    """NumPy's ``where=``: keep ``out``'s values (zeros without out) where the mask is False."""
    if where is None or where is True:
        return result
    if not isinstance(where, DNDarray):
        where = as_replicated_array(where, types.bool, result.device, result.comm)
    broadcast_shapes(where.gshape, result.gshape)
    leader = result if result.split is not None else None
    mask = align_local(where, result.gshape, result.split, leader).to(torch.bool)
    if out is not None:
        keep = align_local(out, result.gshape, result.split, leader)
    else:
        keep = torch.zeros((), dtype=result.larray.dtype, device=result.larray.device)
    local = torch.where(mask, result.larray, keep.to(result.larray.dtype))
    return wrap_result(local, result)


# ---------------------------------------------------------------------------------------------
# the engines
# ---------------------------------------------------------------------------------------------
def local_op(
    operation: Callable[..., torch.Tensor],
    x: DNDarray,
    out: Optional[DNDarray] = None,
    no_cast: bool = False,
    where=None,
    **kwargs,
) -> DNDarray:
    """
    Apply an elementwise unary torch ``operation`` to the local block; no communication.

    Parameters
    ----------
    operation : callable
        ``operation(tensor, **kwargs) -> tensor`` of the same shape.
    x : DNDarray
        The input.
    out : DNDarray, optional
        Where to store the result (cast to its dtype).
    no_cast : bool
        If False, integer and bool inputs are turned into floats first, as NumPy does for
        floating-point functions (int32/int64 -> float64, int16 -> float32, int8/bool -> float16).
    where : DNDarray or bool, optional
        NumPy's ``where=``: elements where False keep ``out``'s value.

    Examples
    --------
    >>> local_op(torch.exp, ht.zeros(3))
    DNDarray([1., 1., 1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    if type(x) is not DNDarray:
        if not isinstance(x, DNDarray):
            raise TypeError(f"x must be a DNDarray, but was {type(x).__name__}")
    tensor = x._array
    if x._dtype not in _INEXACT:
        if not no_cast:
            tensor = tensor.to(types.float_type_for(x._dtype).torch_type())
            result = operation(tensor, **kwargs)
        elif x._dtype in _UNSIGNED_TYPES:
            result = unsigned_call(operation, (tensor,), kwargs)
        else:
            result = operation(tensor, **kwargs)
    else:
        result = operation(tensor, **kwargs)
    wrapped = DNDarray(
        result, x._gshape, _TORCH_TO_HEAT[result.dtype], x._split, x._device, x._comm, x._balanced
    )
    if out is None and where is None:
        return wrapped
    _check_elementwise_out(out, x.gshape)
    return _finish_elementwise(wrapped, where, out)


def as_replicated_array(value, dtype=None, device=None, comm=None) -> DNDarray:
    """
    Array-like ``value`` (nested sequence, scalar, NumPy array, tensor) as a DNDarray that every
    process holds whole (``split=None``), as ``ht.array(value, dtype=dtype, copy=None, ...)``
    gives it: the operands of the engines that are not arrays yet. May share ``value``'s memory.

    Examples
    --------
    >>> as_replicated_array([1, 2, 3]).dtype
    <class 'heat.core.types.int64'>
    """
    if dtype is not None:
        dtype = types.canonical_heat_type(dtype)
    tensor, _ = to_tensor(value, dtype)
    if dtype is not None and tensor.dtype != dtype.torch_type():
        tensor = tensor.to(dtype.torch_type())
    if tensor.dtype not in _TORCH_TO_HEAT:
        raise TypeError(f"value has dtype {tensor.dtype}, which heat cannot hold")
    device = sanitize_device(device)
    return DNDarray(
        tensor.to(device.torch_device),
        tuple(tensor.shape),
        _TORCH_TO_HEAT[tensor.dtype],
        None,
        device,
        sanitize_comm(comm),
        True,
    )


def _as_operand(value, other: Optional[DNDarray], name: str):
    """Python scalars stay (weak) scalars; anything else becomes a DNDarray."""
    if isinstance(value, DNDarray) or isinstance(value, _PYTHON_SCALARS):
        return value
    try:
        return as_replicated_array(
            value,
            None,
            None if other is None else other.device,
            None if other is None else other.comm,
        )
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{name} must be a DNDarray, a scalar or array-like, but was {type(value).__name__}"
        ) from error


def binary_op(
    operation: Callable[..., torch.Tensor],
    t1,
    t2,
    out: Optional[DNDarray] = None,
    where=None,
    fn_kwargs: Optional[dict] = None,
    promote_to_float: bool = False,
    operand_type=None,
) -> DNDarray:
    """
    Apply a binary torch ``operation`` elementwise with NumPy broadcasting and type promotion.

    Operands distributed differently are aligned first: a non-split operand is sliced to the
    local block (no communication); an operand split along another axis is resplit, one split
    along the same axis with another layout is redistributed (one collective each). The result
    takes the layout of the larger split operand.

    Parameters
    ----------
    operation : callable
        ``operation(tensor1, tensor2, **fn_kwargs)``.
    t1, t2 : DNDarray, scalar or array-like
    out : DNDarray, optional
    where : DNDarray or bool, optional
    fn_kwargs : dict, optional
        Extra keyword arguments for ``operation``.
    promote_to_float : bool
        Compute in the float type NumPy uses for integer inputs (true division, hypot, ...).
    operand_type : heat type, optional
        Compute in this type instead of the promoted one.

    Examples
    --------
    >>> binary_op(torch.add, ht.ones(3, split=0), 1)
    DNDarray([2., 2., 2.], dtype=ht.float32, device=cpu:0, split=0)
    """
    kwargs = fn_kwargs or {}
    # fast path: two arrays of the same shape, dtype and layout
    if (
        type(t1) is DNDarray
        and type(t2) is DNDarray
        and out is None
        and where is None
        and operand_type is None
        and t1._dtype is t2._dtype
        and t1._gshape == t2._gshape
        and t1._split == t2._split
        and t1._comm is t2._comm
        and t1._device is t2._device
        and (t1._split is None or (t1._balanced and t2._balanced))
        and (not promote_to_float or t1._dtype in _INEXACT)
    ):
        if t1._dtype in _UNSIGNED_TYPES:
            result = unsigned_call(operation, (t1._array, t2._array), kwargs)
        else:
            result = operation(t1._array, t2._array, **kwargs)
        return DNDarray(
            result,
            t1._gshape,
            _TORCH_TO_HEAT[result.dtype],
            t1._split,
            t1._device,
            t1._comm,
            t1._balanced,
        )

    # fast path: an array and a Python scalar
    if out is None and where is None and operand_type is None:
        if type(t1) is DNDarray and type(t2) in _PYTHON_SCALARS:
            return _scalar_op(operation, t1, t2, kwargs, promote_to_float, scalar_first=False)
        if type(t2) is DNDarray and type(t1) in _PYTHON_SCALARS:
            return _scalar_op(operation, t2, t1, kwargs, promote_to_float, scalar_first=True)

    if not isinstance(t1, DNDarray) and not isinstance(t2, DNDarray):
        t1 = as_replicated_array(t1)
    t1 = _as_operand(t1, t2 if isinstance(t2, DNDarray) else None, "x1")
    t2 = _as_operand(t2, t1 if isinstance(t1, DNDarray) else None, "x2")

    arrays = [t for t in (t1, t2) if isinstance(t, DNDarray)]
    first = arrays[0]
    for other in arrays[1:]:
        if other.comm.size != first.comm.size:
            raise ValueError("x1 and x2 live on communicators of different sizes")
        if other.device != first.device:
            raise ValueError(
                f"x1 and x2 live on different devices: {first.device} and {other.device}"
            )
    gshape = broadcast_shapes(*(t.gshape for t in arrays))
    _check_elementwise_out(out, gshape)

    if operand_type is None:
        operand_type = types.result_type(t1, t2)
        if promote_to_float:
            operand_type = types.float_type_for(operand_type)
    torch_type = operand_type.torch_type()

    split, leader = _result_layout(arrays, gshape)
    locals_ = []
    for t in (t1, t2):
        if isinstance(t, DNDarray):
            local = align_local(t, gshape, split, leader)
            if local.dtype != torch_type:
                local = local.to(torch_type)
            locals_.append(local)
        else:
            locals_.append(_weak_scalar(t, operand_type, first.larray.device))
    if operand_type in _UNSIGNED_TYPES:
        result = unsigned_call(operation, locals_, kwargs)
    else:
        result = operation(locals_[0], locals_[1], **kwargs)
    if not isinstance(result, torch.Tensor):
        result = torch.tensor(result)
    if split is not None:
        lshape = list(gshape)
        lshape[split] = leader.lshape[leader.split]
        balanced = leader._balanced
    else:
        lshape = list(gshape)
        balanced = True
    if tuple(result.shape) != tuple(lshape):
        result = result.expand(lshape).contiguous()
    wrapped = DNDarray(
        result,
        gshape,
        _TORCH_TO_HEAT[result.dtype],
        split,
        first.device,
        first.comm,
        balanced,
    )
    if out is None and where is None:
        return wrapped
    return _finish_elementwise(wrapped, where, out)


# torch functions known to accept a Python scalar as their second argument (cheaper than a tensor)
_ACCEPTS_SCALAR = frozenset(
    (
        torch.add,
        torch.sub,
        torch.mul,
        torch.div,
        torch.true_divide,
        torch.floor_divide,
        torch.remainder,
        torch.fmod,
        torch.pow,
        torch.eq,
        torch.ne,
        torch.lt,
        torch.le,
        torch.gt,
        torch.ge,
        torch.bitwise_and,
        torch.bitwise_or,
        torch.bitwise_xor,
    )
)
# (array dtype, scalar type, promote_to_float) -> computation type, following NEP 50
_SCALAR_RESULT_TYPES = {}


def _scalar_op(operation, x: DNDarray, scalar, kwargs, promote_to_float: bool, scalar_first: bool):
    """``operation`` of an array and a weak Python scalar: no alignment, no communication."""
    key = (x._dtype, type(scalar), promote_to_float)
    operand_type = _SCALAR_RESULT_TYPES.get(key)
    if operand_type is None:
        operand_type = types.result_type(x, scalar)
        if promote_to_float:
            operand_type = types.float_type_for(operand_type)
        _SCALAR_RESULT_TYPES[key] = operand_type
    tensor = x._array
    if x._dtype is not operand_type:
        tensor = tensor.to(operand_type.torch_type())
    if type(scalar) is int and operand_type in _INEXACT and not -(2**63) <= scalar < 2**63:
        scalar = float(scalar)  # torch converts Python ints through int64
    if operand_type in _UNSIGNED_TYPES:
        scalar = _weak_scalar(scalar, operand_type, tensor.device)
        operands = (scalar, tensor) if scalar_first else (tensor, scalar)
        result = unsigned_call(operation, operands, kwargs)
    elif scalar_first:
        result = operation(_weak_scalar(scalar, operand_type, tensor.device), tensor, **kwargs)
    elif operation in _ACCEPTS_SCALAR:
        _check_integer_range(scalar, operand_type)
        result = operation(tensor, scalar, **kwargs)
    else:
        result = operation(tensor, _weak_scalar(scalar, operand_type, tensor.device), **kwargs)
    return DNDarray(
        result, x._gshape, _TORCH_TO_HEAT[result.dtype], x._split, x._device, x._comm, x._balanced
    )


def _check_integer_range(value, operand_type) -> None:
    """NumPy 2 raises OverflowError for a Python int outside the array's integer type."""
    if type(value) is int and operand_type in _INTEGER_TYPES:
        info = torch.iinfo(operand_type.torch_type())
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python integer {value} out of bounds for {operand_type.__name__}")


_INTEGER_TYPES = frozenset(
    (
        types.uint8,
        types.uint16,
        types.uint32,
        types.uint64,
        types.int8,
        types.int16,
        types.int32,
        types.int64,
    )
)


def _weak_scalar(value, operand_type, device: torch.device = None):
    """
    A Python scalar in the computation type (a 0-d tensor keeps torch from re-promoting), on
    ``device``: the array operand's (several CUDA kernels, e.g. gcd, logaddexp and masked_fill's
    mask, refuse a CPU tensor beside CUDA ones, 0-d or not).
    """
    _check_integer_range(value, operand_type)
    return torch.tensor(value, dtype=operand_type.torch_type(), device=device)


# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------
def reduce_op(
    x: DNDarray,
    partial_op: Callable[..., torch.Tensor],
    reduction_op: MPI.Op,
    axis: Union[None, int, Tuple[int, ...]] = None,
    out: Optional[DNDarray] = None,
    keepdims: bool = False,
    neutral=None,
    dtype=None,
) -> DNDarray:
    """
    Reduce ``x`` along ``axis``: a local partial reduction, then one Allreduce with
    ``reduction_op`` if the split axis is among the reduced axes.

    Parameters
    ----------
    x : DNDarray
    partial_op : callable
        ``partial_op(tensor, dims: tuple, keepdim) -> tensor``. Not called when no axis is
        reduced (``axis=()`` or 0-d input): the result is then a copy of the input (torch
        reads ``dim=()`` as "all dimensions", so the engine never passes it).
    reduction_op : MPI.Op
        How the partial results combine across processes (``MPI.SUM``, ``MPI.MAX``, ...).
    axis : int or tuple of int, optional
        Axes to reduce; None reduces all.
    out : DNDarray, optional
    keepdims : bool
    neutral : scalar
        The neutral element, contributed by processes whose block is empty.
    dtype : heat type, optional
        Cast the input to this type first, and return the result in it, as NumPy's ``dtype=``
        (torch sums and multiplies bools and small integers in int64: the result wraps to the
        type afterwards, which for sums and products gives the same values as accumulating in
        it; bools become ``!= 0``, i.e. any for a sum and all for a product).

    Examples
    --------
    >>> reduce_op(ht.ones((2, 3), split=0), lambda t, dims, keepdim: t.sum(dims, keepdim=keepdim), MPI.SUM)
    DNDarray(6., dtype=ht.float32, device=cpu:0, split=None)
    """
    if not isinstance(x, DNDarray):
        raise TypeError(f"x must be a DNDarray, but was {type(x).__name__}")
    ndim = len(x._gshape)
    if axis is None and out is None and not keepdims and ndim and x._array.numel():
        # fast path: a full reduction of a non-empty block (x.sum(), x.max(), ...)
        tensor = x._array
        if dtype is not None:
            torch_type = types.canonical_heat_type(dtype).torch_type()
            if tensor.dtype != torch_type:
                tensor = tensor.to(torch_type)
        if tensor.dtype in _UNSIGNED_COMPUTE:
            storage = tensor.dtype
            partial = _reduced_storage(
                partial_op(compute_tensor(tensor), _ALL_AXES[ndim], keepdim=False), storage
            )
        else:
            partial = partial_op(tensor, _ALL_AXES[ndim], keepdim=False)
        if partial.dim():
            partial = partial.reshape(())
        if x._split is not None and x._comm.size > 1:
            partial = x._comm.allreduce_tensor(partial, reduction_op)
        if dtype is not None:
            partial = _reduced_storage(partial, tensor.dtype)
        return DNDarray(partial, (), _TORCH_TO_HEAT[partial.dtype], None, x._device, x._comm, True)
    if axis is None or ndim == 0:
        if axis is not None:
            sanitize_axis(x._gshape, axis)
        axes = tuple(range(ndim))
    else:
        axes = sanitize_axis(x._gshape, axis)
        if type(axes) is int:
            axes = (axes,)
    if keepdims:
        gshape = tuple(1 if i in axes else d for i, d in enumerate(x._gshape))
    else:
        gshape = tuple(d for i, d in enumerate(x._gshape) if i not in axes)
    if out is not None:
        _check_out(out, gshape)

    tensor = x._array
    if dtype is not None:
        torch_type = types.canonical_heat_type(dtype).torch_type()
        if tensor.dtype != torch_type:
            tensor = tensor.to(torch_type)
    storage = tensor.dtype
    if storage in _UNSIGNED_COMPUTE:
        # partial_op sees the computation type; sums and products wrap as in the storage type
        tensor = compute_tensor(tensor)
    if neutral is None and any(x._gshape[i] == 0 for i in axes):
        # decided from global information, so every rank raises alike
        raise ValueError("zero-size array to reduction operation which has no identity")
    if keepdims:
        local_shape = tuple(1 if i in axes else d for i, d in enumerate(tensor.shape))
    else:
        local_shape = tuple(d for i, d in enumerate(tensor.shape) if i not in axes)
    if tensor.numel() == 0 and any(tensor.shape[i] == 0 for i in axes):
        if neutral is None:
            raise RuntimeError("reduce_op needs a neutral element for processes without rows")
        partial = _neutral_like(tensor, local_shape, neutral, partial_op)
    elif axes:
        partial = partial_op(tensor, axes, keepdim=keepdims)
        if partial.dim() != len(local_shape):
            partial = partial.reshape(local_shape)
    else:
        partial = tensor.clone()
    if storage in _UNSIGNED_COMPUTE:
        partial = _reduced_storage(partial, storage)

    split = x._split
    if split is not None and split in axes:
        if x._comm.size > 1:
            partial = x._comm.allreduce_tensor(partial, reduction_op)
        split = None
    elif split is not None and not keepdims:
        split -= sum(1 for a in axes if a < split)
    if dtype is not None:
        partial = _reduced_storage(partial, storage)
    result = DNDarray(
        partial,
        gshape,
        _TORCH_TO_HEAT[partial.dtype],
        split,
        x.device,
        x.comm,
        x._balanced if split is not None else True,
    )
    return result if out is None else write_out(result, out)


def _reduced_storage(partial: torch.Tensor, storage: torch.dtype) -> torch.Tensor:
    """
    A sum, product or scan of data of type ``storage`` back in that type, where torch computed
    it in a wider integer type (unsigned data in its computation type, bools and small integers
    in int64): wrapped modulo 2**bits as NumPy's accumulation in ``storage`` (uint64 read from
    the int64 bits), bools as ``!= 0``. Results of other types (floating) are unchanged.
    """
    if partial.dtype in (torch.int32, torch.int64) and partial.dtype != storage:
        return partial.view(storage) if storage == torch.uint64 else partial.to(storage)
    return partial


_ALL_AXES = tuple(tuple(range(ndim)) for ndim in range(65))


def _neutral_like(tensor: torch.Tensor, shape, neutral, partial_op) -> torch.Tensor:
    """A tensor of the reduction's output dtype filled with ``neutral``."""
    probe = partial_op(
        torch.zeros((1,) * max(tensor.ndim, 1), dtype=tensor.dtype, device=tensor.device),
        tuple(range(max(tensor.ndim, 1))),
        keepdim=True,
    )
    return torch.full(shape, neutral, dtype=probe.dtype, device=tensor.device)


# ---------------------------------------------------------------------------------------------
# cumulative operations
# ---------------------------------------------------------------------------------------------
def cum_op(
    x: DNDarray,
    partial_op: Callable[..., torch.Tensor],
    exscan_op: MPI.Op,
    final_op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    neutral,
    axis: Optional[int],
    dtype=None,
    out: Optional[DNDarray] = None,
) -> DNDarray:
    """
    Cumulative operation along ``axis``: local scan, then an exclusive scan (``exscan_op``) of the
    block totals across processes, combined into the local scan in place with
    ``final_op(scan, offset, out=scan)`` (``torch.add``, ``torch.mul``, ...).

    ``axis`` is an integer: NumPy's ``axis=None`` (the flattened array) is the caller's to flatten.

    Examples
    --------
    >>> cum_op(ht.ones(4, split=0), torch.cumsum, MPI.SUM, torch.add, 0, axis=0)
    DNDarray([1., 2., 3., 4.], dtype=ht.float32, device=cpu:0, split=0)
    """
    if not isinstance(x, DNDarray):
        raise TypeError(f"x must be a DNDarray, but was {type(x).__name__}")
    axis = sanitize_axis(x.gshape, axis)
    if not isinstance(axis, int):
        raise TypeError(f"axis must be an integer, but was {axis!r}")
    gshape = x.gshape
    _check_out(out, gshape)
    tensor = x.larray
    if dtype is not None:
        tensor = tensor.to(types.canonical_heat_type(dtype).torch_type())
    elif tensor.dtype in (torch.bool, torch.int8, torch.int16, torch.int32):
        # NumPy accumulates small integers (and bools) in the default integer type
        tensor = tensor.to(torch.int64)
    elif tensor.dtype in (torch.uint8, torch.uint16, torch.uint32):
        # ... and small unsigned integers in the default unsigned one
        tensor = tensor.to(torch.uint64)
    storage = tensor.dtype
    tensor = compute_tensor(tensor)  # unsigned scans wrap alike in the computation type
    if x.ndim == 0:
        result = tensor.clone()
    else:
        result = partial_op(tensor, dim=axis)
    if x.split is not None and x.split == axis and x.comm.size > 1:
        if result.shape[axis] > 0:
            total = result.narrow(axis, result.shape[axis] - 1, 1)
        else:
            total_shape = list(result.shape)
            total_shape[axis] = 1
            total = torch.full(total_shape, neutral, dtype=result.dtype, device=result.device)
        offset = x.comm.exscan_tensor(total.contiguous(), exscan_op)
        if x.comm.rank > 0 and result.numel() > 0:
            # the local scan is a fresh tensor: combine in place, no second block-sized tensor
            final_op(result, offset, out=result)
    # back in the accumulation type (torch scans small integers, bools, uint16 in int64)
    result = _reduced_storage(result, storage)
    wrapped = DNDarray(
        result, gshape, _TORCH_TO_HEAT[result.dtype], x.split, x.device, x.comm, x._balanced
    )
    return wrapped if out is None else write_out(wrapped, out)
