"""
Products of DNDarrays: ``matmul`` (the ``@`` operator), ``dot``, ``vdot``, ``vecdot``, ``outer``,
``cross`` and ``projection``.

``matmul`` is distributed for every combination of layouts without gathering an operand (see
:mod:`heat.core.linalg._matmul` for the executions). The layout of the result, for 2-D operands
``A`` (m x k) and ``B`` (k x n) split along ``None``, ``0`` or ``1``:

=========  =========  =============  ===================================================
A.split    B.split    result         how
=========  =========  =============  ===================================================
None       None       None           local product on every process
0          None       0              local product of A's rows
None       1          1              local product with B's columns
0          0          0              ring: B's row blocks circulate, products accumulate
0          1          0 or 1         ring of the smaller operand (B's column blocks: 0;
                                     A's row blocks: 1); equal sizes give 0
1          1          1              ring: A's column blocks circulate
None       0          0 (or 0*)      ring of B with A's rows sliced, or reduce*
1          None       1 (or 0*)      ring of A with B's columns sliced, or reduce*
1          0          0 (or 1, 0*)   the smaller operand resplit along its free axis (one
                                     all-to-all: A along its rows gives 0, B along its
                                     columns 1), then the ring of the other; reduce* when
                                     the result is below half the size of the operands
=========  =========  =============  ===================================================

``*`` reduce: every process multiplies its part of the contracted axis; each block of the result
is summed onto its owner (``Ireduce``, overlapped with the next partial product); the result is
split along its longer axis (rows for equal lengths), or not at all for a 0-d result. For
``None x 0`` and ``1 x None`` the ring is chosen when it moves less data than the reduction
(the circulating operand is no larger than the result) and the sliced axis has at least a row
per process. 1-D operands are promoted as NumPy does (and the promoted axis removed again);
batched operands (more than two dimensions) broadcast their batch axes, and a batch axis that
one operand is split along becomes the result's split axis, the other operand being aligned to it
(sliced, or redistributed / resplit in one all-to-all).
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import torch

from .. import types
from .._operations import (
    _PYTHON_SCALARS,
    _UNSIGNED_TYPES,
    align_local,
    reduce_op,
    signed_bits,
    unsigned_from_bits,
    write_out,
)
from .._redistribution import balanced_counts, resplit_tensor
from ..arithmetics import divide, multiply
from ..communication import MPI
from ..complex_math import conj
from ..dndarray import DNDarray
from ..factories import array
from ..layout import resplit
from ..manipulations import expand_dims, flatten, moveaxis, reshape, transpose
from ..sanitation import broadcast_shapes, check_bool, sanitize_axis, sanitize_in
from ._matmul import distributed_matmul, matmul_result_layout

__all__ = ["cross", "dot", "matmul", "outer", "projection", "tensordot", "vdot", "vecdot"]


class _Automatic:
    def __repr__(self) -> str:
        return "automatic"


_AUTOMATIC = _Automatic()  # the default of ``outer``'s split: chosen from the inputs


def _as_array(value, other, name: str) -> DNDarray:
    """A DNDarray from ``value`` (array-likes become replicated arrays on ``other``'s comm)."""
    if isinstance(value, DNDarray):
        return value
    like = other if isinstance(other, DNDarray) else None
    try:
        return array(
            value,
            device=None if like is None else like.device,
            comm=None if like is None else like.comm,
        )
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{name} must be a DNDarray or array-like, but was {type(value).__name__}"
        ) from error


def _check_pair(x1: DNDarray, x2: DNDarray, names=("x1", "x2")) -> None:
    if x1.comm is not x2.comm and x1.comm.size != x2.comm.size:
        raise ValueError(
            f"{names[0]} and {names[1]} live on communicators of different sizes "
            f"({x1.comm.size} and {x2.comm.size})"
        )
    if x1.device is not x2.device and x1.device != x2.device:
        raise ValueError(
            f"{names[0]} and {names[1]} are on different devices ({x1.device} and {x2.device})"
        )


def _unsigned_product(function, x1: DNDarray, x2: DNDarray, out=None, **kwargs) -> DNDarray:
    """
    ``function(x1, x2, **kwargs)`` for operands of which one is uint16, uint32 or uint64, which
    torch has no product kernels for, in NumPy's promoted type of the two:

    * an unsigned type: computed in int64 (uint64 on its int64 bits; products and sums wrap
      modulo 2**64 alike) and returned in that type;
    * any other type (a signed integer, floating or complex type that holds both operands'
      values: int16 x uint16 -> int32, int64 x uint64 -> float64, float32 x uint16 ->
      float32): both operands cast to it, as NumPy's product loops do.
    """
    target = types.promote_types(x1.dtype, x2.dtype)
    if target is types.uint64:
        c1, c2 = (signed_bits(x.astype(types.uint64, copy=False)) for x in (x1, x2))
        result = unsigned_from_bits(function(c1, c2, **kwargs), types.uint64)
    elif target in _UNSIGNED_TYPES:
        c1, c2 = (x.astype(types.int64, copy=False) for x in (x1, x2))
        result = function(c1, c2, **kwargs).astype(target)
    else:
        # no operand is uint16/32/64 any more: the ordinary kernels of the target type
        c1, c2 = (x.astype(target, copy=False) for x in (x1, x2))
        result = function(c1, c2, **kwargs)
    return result if out is None else write_out(result, out)


def matmul(
    x1: DNDarray, x2: DNDarray, /, out: Optional[DNDarray] = None, allow_resplit: bool = False
) -> DNDarray:
    """
    Matrix product of two arrays, as :func:`numpy.matmul` (the ``@`` operator).

    1-D operands are promoted to matrices (a row on the left, a column on the right) and the
    promoted axis is removed from the result; operands with more than two dimensions are stacks
    of matrices whose batch axes broadcast. The result type follows NumPy's promotion (integer
    products stay integer and wrap on overflow as NumPy's do; booleans give booleans).

    Every layout of the operands is multiplied without gathering either of them: no process
    holds more than its share of the result, its own blocks and two blocks of the other operand.
    The module docstring (:mod:`heat.core.linalg.products`) tables the result's layout.

    Parameters
    ----------
    x1, x2 : DNDarray or array_like
        The operands; array-likes become replicated arrays. Neither may be 0-d.
    out : DNDarray, optional
        Where to store the result (cast to its dtype and layout).
    allow_resplit : bool
        HeAT's option: when neither operand is distributed and ``x1`` has at least two
        dimensions, first split ``x1`` along its first axis *in place* (``x1.resplit_(0)``), so
        each process computes only its rows of the product instead of all of it; the result is
        then split along axis 0. No effect when either operand is distributed.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If an operand is not array-like or ``allow_resplit`` is not a bool.
    ValueError
        If an operand is 0-d, the contracted dimensions differ, the batch axes do not
        broadcast, or the operands live on different communicators or devices.

    Examples
    --------
    >>> a = ht.arange(6, split=0).reshape((2, 3))
    >>> b = ht.ones((3, 2), dtype=ht.int64, split=1)
    >>> ht.matmul(a, b)
    DNDarray([[ 3,  3],
              [12, 12]], dtype=ht.int64, device=cpu:0, split=0)
    >>> (a @ ht.array([1, 0, 0])).tolist()
    [0, 3]
    >>> c = ht.ones((4, 3))
    >>> ht.matmul(c, ht.ones((3, 2)), allow_resplit=True).split, c.split
    (0, 0)
    """
    allow_resplit = check_bool(allow_resplit, "allow_resplit")
    x1 = _as_array(x1, x2, "x1")
    x2 = _as_array(x2, x1, "x2")
    _check_pair(x1, x2)
    if allow_resplit and x1.split is None and x2.split is None and x1.ndim >= 2:
        # validate the shapes before the in-place resplit touches x1
        matmul_result_layout(x1.gshape, x2.gshape)
        x1.resplit_(0)
    if x1._dtype in _UNSIGNED_TYPES or x2._dtype in _UNSIGNED_TYPES:
        return _unsigned_product(matmul, x1, x2, out=out)
    # distributed_matmul validates the shapes first, before any communication
    result = distributed_matmul(x1, x2, types.promote_types(x1.dtype, x2.dtype))
    return result if out is None else write_out(result, out)


def dot(a: DNDarray, b: DNDarray, out: Optional[DNDarray] = None) -> DNDarray:
    """
    Dot product of two arrays, as :func:`numpy.dot`.

    * 1-D and 1-D: the inner product (no complex conjugation), a 0-d array;
    * 2-D and 2-D, or a 1-D operand with an N-D one where the 1-D one is on the right or the
      other is 2-D: :func:`matmul`;
    * a 0-d operand (or a Python scalar): the elementwise product;
    * N-D and M-D (M >= 2) otherwise: the sum over the last axis of ``a`` and the second to
      last of ``b``, of shape ``a.shape[:-1] + b.shape[:-2] + b.shape[-1:]`` (reshaped to a
      matrix product, which moves data when the arrays are split along a reshaped axis).

    Parameters
    ----------
    a, b : DNDarray, array_like or scalar
    out : DNDarray, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If the contracted dimensions differ.

    Examples
    --------
    >>> ht.dot(ht.array([1, 2, 3], split=0), ht.array([4, 5, 6]))
    DNDarray(32, dtype=ht.int64, device=cpu:0, split=None)
    """
    if isinstance(a, _PYTHON_SCALARS) or isinstance(b, _PYTHON_SCALARS):
        result = multiply(a, b)
        return result if out is None else write_out(result, out)
    a = _as_array(a, b, "a")
    b = _as_array(b, a, "b")
    _check_pair(a, b, ("a", "b"))
    if a._dtype in _UNSIGNED_TYPES or b._dtype in _UNSIGNED_TYPES:
        return _unsigned_product(dot, a, b, out=out)
    if a.ndim == 0 or b.ndim == 0:
        result = multiply(a, b)
    elif b.ndim == 1 or (a.ndim <= 2 and b.ndim <= 2):
        if a.gshape[-1] != b.gshape[0 if b.ndim == 1 else -2]:
            raise ValueError(
                f"shapes {a.gshape} and {b.gshape} not aligned: {a.gshape[-1]} (dim "
                f"{a.ndim - 1}) != {b.gshape[0 if b.ndim == 1 else -2]} (dim "
                f"{0 if b.ndim == 1 else b.ndim - 2})"
            )
        result = matmul(a, b)
    else:
        k = a.gshape[-1]
        if k != b.gshape[-2]:
            raise ValueError(
                f"shapes {a.gshape} and {b.gshape} not aligned: {k} (dim {a.ndim - 1}) != "
                f"{b.gshape[-2]} (dim {b.ndim - 2})"
            )
        shape = a.gshape[:-1] + b.gshape[:-2] + b.gshape[-1:]
        columns = _prod(b.gshape[:-2] + b.gshape[-1:])
        left = a if a.ndim <= 2 else reshape(a, (_prod(a.gshape[:-1]), k))
        right = reshape(moveaxis(b, -2, 0), (k, columns))
        result = reshape(matmul(left, right), shape)
    return result if out is None else write_out(result, out)


def _prod(values: Sequence[int]) -> int:
    total = 1
    for v in values:
        total *= v
    return total


def vdot(x1: DNDarray, x2: DNDarray) -> DNDarray:
    """
    The dot product of two arrays flattened to vectors, with the first complex-conjugated
    (as :func:`numpy.vdot`).

    Parameters
    ----------
    x1, x2 : DNDarray or array_like
        Arrays with the same number of elements.

    Returns
    -------
    DNDarray
        0-d, replicated on every process.

    Raises
    ------
    ValueError
        If the sizes differ.

    Examples
    --------
    >>> ht.vdot(ht.array([1 + 2j, 3 - 1j]), ht.array([2j, 1]))
    DNDarray(7.+1.j, dtype=ht.complex64, device=cpu:0, split=None)
    """
    x1 = _as_array(x1, x2, "x1")
    x2 = _as_array(x2, x1, "x2")
    _check_pair(x1, x2)
    if x1.size != x2.size:
        raise ValueError(
            f"vdot: x1 and x2 must have the same number of elements, but have {x1.size} and "
            f"{x2.size}"
        )
    a = x1 if x1.ndim == 1 else flatten(x1)
    b = x2 if x2.ndim == 1 else flatten(x2)
    if types.heat_type_is_complexfloating(a.dtype):
        a = conj(a)
    return matmul(a, b)


def vecdot(
    x1: DNDarray, x2: DNDarray, axis: Optional[int] = -1, keepdims: Optional[bool] = False
) -> DNDarray:
    """
    The dot product of vectors along ``axis`` (the first operand complex-conjugated), with
    broadcasting of the other axes, as :func:`numpy.vecdot` and the array API.

    Parameters
    ----------
    x1, x2 : DNDarray or array_like
        Arrays of the same length along ``axis``, broadcastable along the other axes.
    axis : int, optional
        The axis of the vectors, counted in each operand's own dimensions (as NumPy's); default
        (also for None, as in HeAT) the last.
    keepdims : bool, optional
        Keep the reduced axis with length one.

    Returns
    -------
    DNDarray
        The broadcast shape without ``axis``; NumPy's result type of the operands.

    Raises
    ------
    ValueError
        If the lengths along ``axis`` differ, the shapes do not broadcast or ``axis`` is out of
        range.

    Examples
    --------
    >>> ht.vecdot(ht.full((3, 3, 3), 3), ht.ones((3, 3)), axis=0)
    DNDarray([[9, 9, 9],
              [9, 9, 9],
              [9, 9, 9]], dtype=ht.int64, device=cpu:0, split=None)
    """
    x1 = _as_array(x1, x2, "x1")
    x2 = _as_array(x2, x1, "x2")
    _check_pair(x1, x2)
    if x1._dtype in _UNSIGNED_TYPES or x2._dtype in _UNSIGNED_TYPES:
        return _unsigned_product(vecdot, x1, x2, axis=axis, keepdims=keepdims)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot: both operands need at least one dimension")
    axis = -1 if axis is None else axis
    keepdims = bool(keepdims)
    # as NumPy's gufunc: the axis counts in each operand's own dimensions, the other axes
    # broadcast
    axis1 = sanitize_axis(x1.gshape, axis)
    axis2 = sanitize_axis(x2.gshape, axis)
    if x1.gshape[axis1] != x2.gshape[axis2]:
        raise ValueError(
            f"vecdot: x1 and x2 must have the same length along axis {axis}, but have shapes "
            f"{x1.gshape} and {x2.gshape}"
        )
    x1 = moveaxis(x1, axis1, -1)
    x2 = moveaxis(x2, axis2, -1)
    batch = broadcast_shapes(x1.gshape[:-1], x2.gshape[:-1])
    keep_at = sanitize_axis(tuple(batch) + (1,), axis) if keepdims else None
    result_type = types.promote_types(x1.dtype, x2.dtype)
    if types.heat_type_is_complexfloating(x1.dtype):
        x1 = conj(x1)
    products = multiply(x1, x2)
    # summed in the result type (NumPy's vecdot keeps int32 int32, unlike np.sum); booleans
    # as counts, nonzero at the end
    torch_type = torch.int64 if result_type is types.bool else result_type.torch_type()

    def partial_sum(t: torch.Tensor, dims, keepdim: bool) -> torch.Tensor:
        return t.sum(dim=dims, keepdim=keepdim, dtype=torch_type)

    result = reduce_op(products, partial_sum, MPI.SUM, axis=-1, neutral=0)
    if result_type is types.bool:
        result = result.astype(types.bool)
    return result if keep_at is None else expand_dims(result, keep_at)


def outer(
    a: DNDarray,
    b: DNDarray,
    out: Optional[DNDarray] = None,
    split: Union[None, int, _Automatic] = _AUTOMATIC,
) -> DNDarray:
    """
    The outer product of two vectors, ``result[i, j] = a[i] * b[j]``, as :func:`numpy.outer`
    (arrays of more dimensions are flattened first).

    Each process computes only its block of the result: with the result split along 0 it
    needs its rows of ``a`` and all of ``b`` (a vector, at most the size of one of its rows),
    with split 1 its columns of ``b`` and all of ``a``.

    Parameters
    ----------
    a, b : DNDarray or array_like
    out : DNDarray, optional
    split : None, 0 or 1, optional
        The result's split axis; by default 0 if ``a`` is split, else 1 if ``b`` is split, else
        None (as HeAT's ``split`` argument).

    Returns
    -------
    DNDarray
        Shape ``(a.size, b.size)``, NumPy's result type.

    Raises
    ------
    ValueError
        If ``split`` is not None, 0 or 1.

    Examples
    --------
    >>> ht.outer(ht.arange(3, split=0), ht.array([1, 10]))
    DNDarray([[ 0,  0],
              [ 1, 10],
              [ 2, 20]], dtype=ht.int64, device=cpu:0, split=0)
    """
    a = _as_array(a, b, "a")
    b = _as_array(b, a, "b")
    _check_pair(a, b, ("a", "b"))
    if split is _AUTOMATIC:
        split = 0 if a.split is not None else (1 if b.split is not None else None)
    if split not in (None, 0, 1) or isinstance(split, bool):
        raise ValueError(f"split must be None, 0 or 1, but was {split!r}")
    a = a if a.ndim == 1 else flatten(a)
    b = b if b.ndim == 1 else flatten(b)
    result_type = types.promote_types(a.dtype, b.dtype)
    torch_type = result_type.torch_type()
    comm = a.comm
    gshape = (a.gshape[0], b.gshape[0])

    def block(x: DNDarray, keep: bool) -> torch.Tensor:
        # keep: this process's balanced rows of x (the result's split axis); else all of x
        if keep:
            local = align_local(x, (x.gshape[0],), 0, balanced_counts(comm, x.gshape[0]))
        else:
            local = resplit_tensor(x, None)[0]
        return local.to(torch_type) if local.dtype != torch_type else local

    a_local = block(a, split == 0 and comm.size > 1)
    b_local = block(b, split == 1 and comm.size > 1)
    local = a_local.unsqueeze(1) * b_local.unsqueeze(0)
    result = DNDarray(local, gshape, result_type, split, a.device, comm, True)
    return result if out is None else write_out(result, out)


def cross(
    a: DNDarray,
    b: DNDarray,
    axisa: int = -1,
    axisb: int = -1,
    axisc: int = -1,
    axis: Optional[int] = None,
) -> DNDarray:
    """
    The cross product of 3-element (or 2-element) vectors, as :func:`numpy.cross`.

    The vectors lie along ``axisa`` of ``a`` and ``axisb`` of ``b``; the other axes broadcast.
    2-element vectors count as 3-element ones with a zero third component; two 2-element vectors
    give the third component alone (a scalar per pair). An operand split along its vector axis
    is first resplit along another axis (one all-to-all); otherwise nothing moves beyond the
    alignment of the two layouts.

    Parameters
    ----------
    a, b : DNDarray or array_like
    axisa, axisb : int
        The vector axes of ``a`` and ``b``.
    axisc : int
        The vector axis of the result.
    axis : int, optional
        If given, overrides ``axisa``, ``axisb`` and ``axisc``.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        For boolean operands (NumPy cannot subtract booleans either).
    ValueError
        If a vector axis has a length other than 2 or 3, an axis is out of range, or the other
        axes do not broadcast.

    Examples
    --------
    >>> ht.cross(ht.array([1.0, 0.0, 0.0]), ht.array([0.0, 1.0, 0.0]))
    DNDarray([0., 0., 1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    a = _as_array(a, b, "a")
    b = _as_array(b, a, "b")
    _check_pair(a, b, ("a", "b"))
    if axis is not None:
        axisa = axisb = axisc = axis
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("cross: both operands need at least one dimension")
    axisa = sanitize_axis(a.gshape, axisa, "axisa")
    axisb = sanitize_axis(b.gshape, axisb, "axisb")
    la, lb = a.gshape[axisa], b.gshape[axisb]
    if la not in (2, 3) or lb not in (2, 3):
        raise ValueError(
            "incompatible dimensions for cross product (dimension must be 2 or 3), but the "
            f"vectors have lengths {la} and {lb}"
        )
    result_type = types.promote_types(a.dtype, b.dtype)
    if result_type is types.bool:
        raise TypeError("cross: boolean operands are not supported (booleans cannot be subtracted)")
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    batch = broadcast_shapes(a.gshape[:-1], b.gshape[:-1])
    vector = 1 if (la == 2 and lb == 2) else 3
    if vector == 3:
        axisc = sanitize_axis(batch + (3,), axisc, "axisc")
    a, b = _off_vector_axis(a), _off_vector_axis(b)
    target = tuple(batch) + (3,)
    split, leader = _cross_layout((a, b), target)
    torch_type = result_type.torch_type()

    def local_of(x: DNDarray) -> torch.Tensor:
        if split is None:
            t = resplit_tensor(x, None)[0]
        else:
            t = align_local(x, target, split, leader)
        return t.to(torch_type) if t.dtype != torch_type else t

    ta, tb = local_of(a), local_of(b)
    if vector == 1:
        local = ta[..., 0] * tb[..., 1] - ta[..., 1] * tb[..., 0]
        gshape = tuple(batch)
    else:
        ta = _to_three(ta)
        tb = _to_three(tb)
        ta, tb = torch.broadcast_tensors(ta, tb)
        local = torch.linalg.cross(ta, tb, dim=-1)
        gshape = target
    balanced = True
    if split is not None:
        counts = leader.counts_displs()[0] if isinstance(leader, DNDarray) else leader
        balanced = tuple(counts) == balanced_counts(a.comm, gshape[split])
    result = DNDarray(local.contiguous(), gshape, result_type, split, a.device, a.comm, balanced)
    if vector == 3 and axisc != len(gshape) - 1:
        result = moveaxis(result, -1, axisc)
    return result


def _to_three(t: torch.Tensor) -> torch.Tensor:
    if t.shape[-1] == 3:
        return t
    return torch.cat((t, t.new_zeros(t.shape[:-1] + (1,))), dim=-1)


def _off_vector_axis(x: DNDarray) -> DNDarray:
    """``x`` (vectors along its last axis) split along another axis or not at all."""
    if x.split is None or x.split != x.ndim - 1 or x.comm.size == 1:
        return x
    others = [i for i in range(x.ndim - 1)]
    return resplit(x, max(others, key=lambda i: x.gshape[i]) if others else None)


def _cross_layout(operands, target):
    """The result's split axis (in ``target``) and the operand whose counts it keeps."""
    ndim = len(target)
    for x in sorted(operands, key=lambda x: -x.size):
        if x.split is None:
            continue
        axis = x.split + ndim - x.ndim
        if x.gshape[x.split] == target[axis] and axis != ndim - 1:
            return axis, x
    return None, None


def projection(a: DNDarray, b: DNDarray) -> DNDarray:
    """
    The projection of vector ``a`` onto vector ``b``: ``(a . b) / (b . b) * b``.

    Parameters
    ----------
    a, b : DNDarray
        1-D arrays of equal length.

    Returns
    -------
    DNDarray
        A floating-point vector with ``b``'s layout.

    Raises
    ------
    TypeError
        If ``a`` or ``b`` is not a DNDarray.
    ValueError
        If they are not 1-D or their lengths differ.

    Examples
    --------
    >>> ht.projection(ht.array([1.0, 2.0]), ht.array([1.0, 0.0]))
    DNDarray([1., 0.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(a, "a")
    sanitize_in(b, "b")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"projection needs two vectors, but a is {a.ndim}-D and b is {b.ndim}-D")
    if a.gshape != b.gshape:
        raise ValueError(
            f"projection: a and b must have equal lengths, but have {a.gshape} and {b.gshape}"
        )
    return multiply(divide(dot(a, b), dot(b, b)), b)


# ---------------------------------------------------------------------------------------------
# tensordot
# ---------------------------------------------------------------------------------------------
def _tensordot_axes(axes, x1: DNDarray, x2: DNDarray):
    """The contracted axes of ``x1`` and ``x2`` (non-negative), validated from global shapes."""
    if isinstance(axes, bool):
        raise TypeError(f"axes must be an int or a pair of sequences of ints, not {axes!r}")
    if isinstance(axes, int):
        if axes < 0 or axes > min(x1.ndim, x2.ndim):
            raise ValueError(
                f"axes={axes} must be between 0 and min(x1.ndim, x2.ndim) = {min(x1.ndim, x2.ndim)}"
            )
        return list(range(x1.ndim - axes, x1.ndim)), list(range(axes))
    try:
        first, second = axes
        first = [first] if isinstance(first, int) else list(first)
        second = [second] if isinstance(second, int) else list(second)
    except (TypeError, ValueError):
        raise TypeError(
            f"axes must be an int or a pair of sequences of ints, not {axes!r}"
        ) from None
    if len(first) != len(second):
        raise ValueError(
            f"axes: the two sequences differ in length ({len(first)} and {len(second)})"
        )
    resolved = []
    for values, x, name in ((first, x1, "x1"), (second, x2, "x2")):
        out = []
        for axis in values:
            if isinstance(axis, bool) or not isinstance(axis, int):
                raise TypeError(f"axes: {axis!r} is not an int")
            if not -x.ndim <= axis < x.ndim:
                raise ValueError(
                    f"axes: axis {axis} is out of bounds for {name} of {x.ndim} dimensions"
                )
            out.append(axis % x.ndim)
        if len(set(out)) != len(out):
            raise ValueError(f"axes: repeated axis of {name} in {values}")
        resolved.append(out)
    return resolved[0], resolved[1]


def tensordot(x1: DNDarray, x2: DNDarray, /, *, axes=2) -> DNDarray:
    """
    Tensor contraction of ``x1`` and ``x2`` over the given axes, as :func:`numpy.tensordot`
    (the array API standard's ``tensordot``).

    The free axes of ``x1`` are moved to the front and its contracted axes to the back (those
    of ``x2`` the other way round), both are reshaped to matrices and multiplied with the
    distributed :func:`matmul`; the result is reshaped to ``x1``'s free axes followed by
    ``x2``'s. No operand is gathered: every split of either operand is handled by ``matmul``
    and the (distributed) reshapes.

    Parameters
    ----------
    x1, x2 : DNDarray
        The operands (array-likes become replicated arrays).
    axes : int or (sequence of int, sequence of int)
        An int ``N``: the last ``N`` axes of ``x1`` with the first ``N`` of ``x2``, in order;
        a pair: the axes of ``x1`` and of ``x2`` contracted with each other, pairwise.

    Returns
    -------
    DNDarray
        Shape ``x1``'s free axes + ``x2``'s free axes; NumPy's type promotion.

    Raises
    ------
    TypeError
        If an operand is not array-like or ``axes`` is neither an int nor a pair of sequences.
    ValueError
        If ``axes`` is out of range, repeats an axis, or the contracted lengths differ.

    Examples
    --------
    >>> a = ht.arange(24.0, split=0).reshape((2, 3, 4))
    >>> b = ht.ones((4, 3), split=1)
    >>> ht.tensordot(a, b, axes=([1, 2], [1, 0]))
    DNDarray([ 66., 210.], dtype=ht.float32, device=cpu:0, split=0)
    """
    x1 = _as_array(x1, x2, "x1")
    x2 = _as_array(x2, x1, "x2")
    _check_pair(x1, x2)
    if x1._dtype in _UNSIGNED_TYPES or x2._dtype in _UNSIGNED_TYPES:
        return _unsigned_product(tensordot, x1, x2, axes=axes)
    contracted1, contracted2 = _tensordot_axes(axes, x1, x2)
    for a, b in zip(contracted1, contracted2):
        if x1.gshape[a] != x2.gshape[b]:
            raise ValueError(
                f"tensordot: axis {a} of x1 (length {x1.gshape[a]}) does not match axis {b} of x2 "
                f"(length {x2.gshape[b]})"
            )
    free1 = [i for i in range(x1.ndim) if i not in contracted1]
    free2 = [i for i in range(x2.ndim) if i not in contracted2]
    shape1 = tuple(x1.gshape[i] for i in free1)
    shape2 = tuple(x2.gshape[i] for i in free2)
    k = _prod([x1.gshape[i] for i in contracted1])
    left = _as_matrix(x1, free1 + contracted1, (_prod(shape1), k))
    right = _as_matrix(x2, contracted2 + free2, (k, _prod(shape2)))
    result = matmul(left, right)
    return reshape(result, shape1 + shape2)


def _as_matrix(x: DNDarray, order, shape) -> DNDarray:
    """``x`` with its axes in ``order``, reshaped to the 2-D ``shape``."""
    if order != list(range(x.ndim)):
        x = transpose(x, order)
    return reshape(x, shape)
