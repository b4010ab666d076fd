"""
Array creation: from data (``array``, ``asarray``), filled (``zeros``, ``ones``, ``empty``,
``full`` and their ``*_like``), ranges (``arange``, ``linspace``, ``logspace``), ``eye`` and
``meshgrid``.

Every factory with ``split=`` creates only the local block of each process; nothing is
communicated.
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from . import types
from ._conversion import to_tensor
from ._operations import _TORCH_TO_HEAT as _TORCH_TYPES
from ._operations import _UNSIGNED_TYPES, signed_bits
from .communication import MPICommunication, sanitize_comm
from .devices import Device, sanitize_device
from .dndarray import DNDarray
from .sanitation import sanitize_shape, sanitize_split

__all__ = [
    "arange",
    "array",
    "asarray",
    "copy",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "logspace",
    "meshgrid",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def copy(x: DNDarray, /) -> DNDarray:
    """
    A copy of ``x`` with the same dtype, device and layout (no communication); HeAT's and
    NumPy's ``copy``, the same as ``x.copy()``.

    Parameters
    ----------
    x : DNDarray

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray.

    Examples
    --------
    >>> x = ht.arange(4, split=0)
    >>> y = ht.copy(x); y[0] = 9
    >>> x
    DNDarray([0, 1, 2, 3], dtype=ht.int64, device=cpu:0, split=0)
    """
    if not isinstance(x, DNDarray):
        raise TypeError(f"x must be a DNDarray, but was {type(x).__name__}")
    return x.copy()


def array(
    obj,
    dtype=None,
    copy: Optional[bool] = True,
    ndmin: int = 0,
    order: str = "C",
    split: Optional[int] = None,
    is_split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Create a DNDarray from data.

    Parameters
    ----------
    obj : array_like
        A DNDarray, torch tensor, NumPy array, scalar or nested sequence.
    dtype : heat type, optional
        The data type; inferred from ``obj`` if None (Python floats give float32, Python ints
        int64, NumPy arrays and tensors keep theirs).
    copy : bool or None
        True (default): always copy. None: copy only if needed. False: never copy, as NumPy 2;
        raises ValueError if a copy is needed: for Python sequences and scalars, a cast to
        another ``dtype``, a move to another device, NumPy data heat cannot view (read-only,
        negative strides, non-native byte order, a type heat widens), or a DNDarray whose
        split axis changes (``split=`` of an array split along another axis; slicing a
        non-split one needs no copy).
    ndmin : int
        Minimum number of dimensions; ones are prepended.
    order : str
        Only "C" is supported (torch tensors are row-major).
    split : int, optional
        Every process holds the whole ``obj``; the result is distributed along ``split``
        (each process keeps its balanced block).
    is_split : int, optional
        Each process passes its own block; the blocks are joined along ``is_split``. The
        local shapes must agree in every other dimension.
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If both ``split`` and ``is_split`` are given, local blocks do not fit together, a
        nested sequence is ragged, or ``copy=False`` and a copy is needed.
    TypeError
        If ``obj`` cannot be converted or ``dtype`` is not understood.

    Examples
    --------
    >>> ht.array([[1, 2], [3, 4]], split=0)
    DNDarray([[1, 2],
              [3, 4]], dtype=ht.int64, device=cpu:0, split=0)
    """
    if split is not None and is_split is not None:
        raise ValueError(f"split and is_split are mutually exclusive, got {split} and {is_split}")
    if order != "C":
        raise NotImplementedError("only order='C' is supported (torch tensors are row-major)")
    if not isinstance(ndmin, int) or isinstance(ndmin, bool):
        raise TypeError(f"ndmin must be an integer, but was {type(ndmin).__name__}")
    if dtype is not None:
        dtype = types.canonical_heat_type(dtype)
    comm = sanitize_comm(comm if comm is not None or not isinstance(obj, DNDarray) else obj.comm)
    if device is None and isinstance(obj, DNDarray):
        device = obj.device
    device = sanitize_device(device)

    if isinstance(obj, DNDarray):
        return _array_from_dndarray(obj, dtype, copy, ndmin, split, is_split, device)

    tensor, copy_reason = to_tensor(obj, dtype)
    if dtype is not None and tensor.dtype != dtype.torch_type():
        tensor = tensor.to(dtype.torch_type())
        copy_reason = copy_reason or f"obj's values must be cast to {dtype.__name__}"
    if tensor.device != torch.device(device.torch_device):
        tensor = tensor.to(device.torch_device)
        copy_reason = copy_reason or f"obj must be moved to {device}"
    if tensor.dtype not in _TORCH_TYPES:
        raise TypeError(f"obj has dtype {tensor.dtype}, which heat cannot hold")
    dtype = _TORCH_TYPES[tensor.dtype]
    if tensor.ndim < ndmin:
        tensor = tensor.reshape((1,) * (ndmin - tensor.ndim) + tuple(tensor.shape))

    if is_split is not None:
        return _array_from_blocks(tensor, dtype, is_split, device, comm, copy, copy_reason)
    _check_no_copy_needed(copy, copy_reason)
    gshape = tuple(tensor.shape)
    split = sanitize_split(gshape, split)
    if split is not None and comm.size > 1:
        offset, lshape, _ = comm.chunk(gshape, split)
        tensor = tensor.narrow(split, offset, lshape[split])
        if copy or copy_reason is not None:
            # a copy anyway: keep only this process's block, not the whole of obj
            tensor = tensor.clone()
    elif copy and copy_reason is None:
        tensor = tensor.clone()
    return DNDarray(tensor, gshape, dtype, split, device, comm, True)


def from_dlpack(
    x,
    /,
    *,
    device=None,
    copy: Optional[bool] = None,
    split: Optional[int] = None,
    is_split: Optional[int] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    A DNDarray from an object that supports the DLPack protocol (``__dlpack__``), as the array
    API standard's ``from_dlpack``: a torch tensor, a NumPy array, a CuPy or JAX array, a
    (non-distributed) DNDarray, ...

    Like :func:`array`, every process passes the whole array (the result is not split, or split
    along ``split``), or with ``is_split`` its own block of it. No data is copied where none has
    to be (``copy=None``).

    Parameters
    ----------
    x : object with ``__dlpack__``
        The data.
    device : str or Device, optional
        The device of the result; default: where ``x`` lives (the CPU or this process's GPU).
    copy : bool, optional
        True: always copy; None (default): copy only if needed; False: never copy (ValueError if
        a copy is needed).
    split, is_split, comm : optional
        As :func:`array`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` does not support DLPack.

    Examples
    --------
    >>> t = torch.arange(4)
    >>> y = ht.from_dlpack(t)
    >>> y
    DNDarray([0, 1, 2, 3], dtype=ht.int64, device=cpu:0, split=None)
    >>> y.larray.data_ptr() == t.data_ptr()
    True
    """
    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"x must support the DLPack protocol (__dlpack__), but was {type(x).__name__}"
        )
    if isinstance(x, DNDarray):
        x.__dlpack_device__()  # raises for a distributed array, as x.__dlpack__() does
        tensor = x.larray
    else:
        tensor = torch.from_dlpack(x)
    if device is None:
        device = "gpu" if tensor.device.type != "cpu" else "cpu"
    return array(tensor, copy=copy, split=split, is_split=is_split, device=device, comm=comm)


def _check_no_copy_needed(copy, copy_reason: Optional[str]) -> None:
    """NumPy 2's ``copy=False``: never copy, raise ValueError where a copy is needed."""
    if copy is False and copy_reason is not None:
        raise ValueError(
            f"copy=False, but the array cannot be made without a copy: {copy_reason} "
            f"(copy=None copies only when needed)"
        )


def _array_from_dndarray(obj: DNDarray, dtype, copy, ndmin, split, is_split, device) -> DNDarray:
    """:func:`array` of a DNDarray: shares ``obj``'s memory unless a copy is asked for or needed."""
    if is_split is not None:
        raise ValueError("is_split cannot be used when obj is a DNDarray (its layout is known)")
    prepend = max(0, ndmin - obj.ndim)
    gshape = (1,) * prepend + obj.gshape
    current_split = None if obj.split is None else obj.split + prepend
    if split is not None:
        split = sanitize_split(gshape, split)
    copy_reason = None
    if dtype is not None and dtype is not obj.dtype:
        copy_reason = f"obj's values must be cast to {dtype.__name__}"
    elif device != obj.device:
        copy_reason = f"obj must be moved to {device}"
    elif split is not None and split != current_split and current_split is not None:
        # decided from the split axes alone, so a script behaves alike at every process count
        copy_reason = f"changing the split axis from {current_split} to {split} moves data"
    _check_no_copy_needed(copy, copy_reason)

    dtype = obj.dtype if dtype is None else dtype
    local = obj.larray
    if dtype is not obj.dtype or device != obj.device:
        local = local.to(device=device.torch_device, dtype=dtype.torch_type())
    if prepend:
        local = local.reshape((1,) * prepend + tuple(local.shape))
    fresh = copy_reason is not None
    result = DNDarray(local, gshape, dtype, current_split, device, obj.comm, obj._balanced)
    if split is not None and split != current_split:
        if current_split is None:
            # every process holds all of obj: its block is a slice, no data moves
            offset, lshape, _ = obj.comm.chunk(gshape, split)
            local = local.narrow(split, offset, lshape[split])
            if fresh and obj.comm.size > 1:
                local = local.clone()  # keep only this process's block of the converted copy
            result = DNDarray(local, gshape, dtype, split, device, obj.comm, True)
        else:
            from .layout import resplit

            return resplit(result, split)
    if copy and not fresh:
        result = DNDarray(
            result.larray.clone(), gshape, dtype, result.split, device, obj.comm, result._balanced
        )
    return result


def _array_from_blocks(
    tensor: torch.Tensor, dtype, is_split, device, comm, copy, copy_reason: Optional[str]
) -> DNDarray:
    """Join each process's block along ``is_split``; validated identically on every rank."""
    is_split = sanitize_split(tuple(tensor.shape), is_split, name="is_split")
    if comm.size == 1:
        _check_no_copy_needed(copy, copy_reason)
        if copy and copy_reason is None:
            tensor = tensor.clone()
        return DNDarray(tensor, tuple(tensor.shape), dtype, is_split, device, comm, True)
    infos = comm.allgather((tuple(tensor.shape), dtype.__name__, copy_reason))
    # every rank raises alike, also when only one rank's block needs a copy
    _check_no_copy_needed(copy, next((info[2] for info in infos if info[2] is not None), None))
    shapes = [info[0] for info in infos]
    reference = shapes[0]
    for rank, shape in enumerate(shapes):
        if len(shape) != len(reference) or any(
            a != b for i, (a, b) in enumerate(zip(shape, reference)) if i != is_split
        ):
            raise ValueError(
                f"local blocks do not fit together along is_split={is_split}: rank 0 has shape "
                f"{reference}, rank {rank} has shape {shape}"
            )
    common = dtype
    for _, name, _ in infos:
        common = types.promote_types(common, getattr(types, name))
    if any(name != common.__name__ for _, name, _ in infos):
        _check_no_copy_needed(copy, f"the blocks' types are promoted to {common.__name__}")
    if common is not dtype:
        tensor = tensor.to(common.torch_type())
    elif copy and copy_reason is None:
        tensor = tensor.clone()
    gshape = list(reference)
    gshape[is_split] = sum(shape[is_split] for shape in shapes)
    counts = tuple(shape[is_split] for shape in shapes)
    balanced = counts == tuple(comm.counts_displs_shape(tuple(gshape), is_split)[0])
    return DNDarray(tensor, tuple(gshape), common, is_split, device, comm, balanced)


def asarray(
    obj,
    dtype=None,
    copy: Optional[bool] = None,
    order: str = "C",
    is_split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
) -> DNDarray:
    """
    Convert ``obj`` to a DNDarray, copying only when needed (``obj`` itself if it already is
    one of the requested dtype and device).

    Parameters
    ----------
    obj : array_like
        See :func:`array`.
    dtype : heat type, optional
    copy : bool or None
        None (default): copy only if needed; True: always; False: never (ValueError if a copy
        is needed, e.g. for a Python list), see :func:`array`.
    order : str
        Only "C".
    is_split : int, optional
        See :func:`array`.
    device : str or Device, optional

    Raises
    ------
    ValueError
        If ``copy=False`` and a copy is needed.

    Examples
    --------
    >>> a = ht.arange(3); ht.asarray(a) is a
    True
    >>> ht.asarray(np.ones(3, np.float32), copy=False).dtype
    <class 'heat.core.types.float32'>
    """
    if (
        isinstance(obj, DNDarray)
        and (dtype is None or types.canonical_heat_type(dtype) is obj.dtype)
        and (device is None or sanitize_device(device) == obj.device)
        and not copy
    ):
        return obj
    return array(obj, dtype=dtype, copy=copy, order=order, is_split=is_split, device=device)


def _filled(
    fill: Callable[..., torch.Tensor], shape, dtype, split, device, comm, order="C"
) -> DNDarray:
    if order != "C":
        raise NotImplementedError("only order='C' is supported (torch tensors are row-major)")
    gshape = sanitize_shape(shape)
    split = sanitize_split(gshape, split)
    dtype = types.float32 if dtype is None else types.canonical_heat_type(dtype)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    _, lshape, _ = comm.chunk(gshape, split)
    tensor = fill(lshape, dtype=dtype.torch_type(), device=device.torch_device)
    return DNDarray(tensor, gshape, dtype, split, device, comm, True)


def zeros(shape, dtype=None, split=None, device=None, comm=None, order="C") -> DNDarray:
    """
    A new array of zeros.

    Parameters
    ----------
    shape : int or sequence of int
    dtype : heat type, optional
        Default (None): float32, heat's default floating type.
    split : int, optional
    device : str or Device, optional
    comm : MPICommunication, optional
    order : str
        Only "C".

    Examples
    --------
    >>> ht.zeros((2, 3), split=1).shape
    (2, 3)
    """
    return _filled(torch.zeros, shape, dtype, split, device, comm, order)


def ones(shape, dtype=None, split=None, device=None, comm=None, order="C") -> DNDarray:
    """
    A new array of ones (see :func:`zeros` for the parameters).

    Examples
    --------
    >>> ht.ones(3)
    DNDarray([1., 1., 1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _filled(torch.ones, shape, dtype, split, device, comm, order)


def empty(shape, dtype=None, split=None, device=None, comm=None, order="C") -> DNDarray:
    """
    A new array whose values are not initialized (see :func:`zeros` for the parameters).

    Examples
    --------
    >>> ht.empty((2, 2)).shape
    (2, 2)
    """
    return _filled(torch.empty, shape, dtype, split, device, comm, order)


def full(shape, fill_value, dtype=None, split=None, device=None, comm=None, order="C") -> DNDarray:
    """
    A new array filled with ``fill_value``.

    The value is converted to ``dtype`` as :func:`numpy.full` converts it (unsafe casting): a
    complex value for a real type keeps its real part with NumPy's ``ComplexWarning``, a float
    for an integer type is truncated, a Python int out of the type's range raises
    ``OverflowError``.

    Parameters
    ----------
    shape : int or sequence of int
    fill_value : scalar
        A number (or a 0-d array).
    dtype : heat type, optional
        Default: the type of ``fill_value`` (bool -> bool, int -> int64 or, above its range,
        uint64, float -> float32, complex -> complex64, NumPy scalars their own type).
    split : int, optional
    device : str or Device, optional
    comm : MPICommunication, optional
    order : str
        Only "C".

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``fill_value`` has no heat type and ``dtype`` is None.
    ValueError, OverflowError
        As NumPy's, if ``fill_value`` cannot be converted to ``dtype``.

    Warns
    -----
    numpy.exceptions.ComplexWarning
        If a complex ``fill_value`` is cast to a real type (not to bool), as NumPy warns.

    Examples
    --------
    >>> ht.full((2,), 7)
    DNDarray([7, 7], dtype=ht.int64, device=cpu:0, split=None)
    >>> ht.full((2,), 1 + 1j, dtype=ht.int64)  # warns: ComplexWarning
    DNDarray([1, 1], dtype=ht.int64, device=cpu:0, split=None)
    """
    if isinstance(fill_value, DNDarray):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = types.heat_type_of(fill_value)
        if dtype is types.int64 and isinstance(fill_value, int) and fill_value >= 2**63:
            dtype = types.uint64  # as NumPy's choice for Python ints above int64
    value = _fill_value(fill_value, types.canonical_heat_type(dtype))

    def fill(lshape, dtype, device):
        return torch.empty(lshape, dtype=dtype, device=device).fill_(value)

    return _filled(fill, shape, dtype, split, device, comm, order)


def _fill_value(fill_value, heat_type) -> torch.Tensor:
    """``fill_value`` as a 0-d tensor of ``heat_type``, converted as NumPy's ``full`` does."""
    numpy_type = heat_type.numpy_type()  # bfloat16 has none: through float32
    converted = np.empty((), dtype=np.float32 if numpy_type is None else numpy_type)
    np.copyto(converted, fill_value, casting="unsafe")  # NumPy's rules, warnings and errors
    return torch.from_numpy(converted).to(heat_type.torch_type())


def _like(a, dtype, split, device, comm):
    if not isinstance(a, DNDarray):
        a = array(a)
    return (
        a.gshape,
        a.dtype if dtype is None else dtype,
        a.split if split is None else split,
        a.device if device is None else device,
        a.comm if comm is None else comm,
    )


def zeros_like(a, dtype=None, split=None, device=None, comm=None, order="C") -> DNDarray:
    """
    Zeros with the shape, dtype, split and device of ``a`` unless given.

    Examples
    --------
    >>> ht.zeros_like(ht.ones((2, 2), split=0)).split
    0
    """
    return _filled(torch.zeros, *_like(a, dtype, split, device, comm), order)


def ones_like(a, dtype=None, split=None, device=None, comm=None, order="C") -> DNDarray:
    """
    Ones with the shape, dtype, split and device of ``a`` unless given.

    Examples
    --------
    >>> ht.ones_like(ht.zeros(3, dtype=ht.int32)).dtype
    <class 'heat.core.types.int32'>
    """
    return _filled(torch.ones, *_like(a, dtype, split, device, comm), order)


def empty_like(a, dtype=None, split=None, device=None, comm=None, order="C") -> DNDarray:
    """
    An uninitialized array with the shape, dtype, split and device of ``a`` unless given.

    Examples
    --------
    >>> ht.empty_like(ht.zeros((2, 3))).shape
    (2, 3)
    """
    return _filled(torch.empty, *_like(a, dtype, split, device, comm), order)


def full_like(a, fill_value, dtype=None, split=None, device=None, comm=None, order="C") -> DNDarray:
    """
    ``fill_value`` everywhere, with the shape, dtype, split and device of ``a`` unless given.

    Examples
    --------
    >>> ht.full_like(ht.zeros(2), 3.5)
    DNDarray([3.5000, 3.5000], dtype=ht.float32, device=cpu:0, split=None)
    """
    shape, dtype, split, device, comm = _like(a, dtype, split, device, comm)
    return full(shape, fill_value, dtype, split, device, comm, order)


def _is_integer_scalar(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _range_values(offset: int, count: int, start, step, torch_type, device) -> torch.Tensor:
    """start + i * step for the global indices i of this block, computed in double precision."""
    index = torch.arange(offset, offset + count, dtype=torch.float64, device=device)
    return (start + index * step).to(torch_type)


def arange(
    start, /, stop=None, step=1, *, dtype=None, split=None, device=None, comm=None
) -> DNDarray:
    """
    Evenly spaced values in ``[start, stop)`` with spacing ``step``, as :func:`numpy.arange`.

    Parameters
    ----------
    start : scalar
        The first value; with ``stop`` None, the end of the range (which then starts at 0).
    stop : scalar, optional
        The end (excluded).
    step : scalar, optional
        Default 1; must not be 0.
    dtype : heat type, optional
        Default int64 if all arguments are integers, else float32.
    split, device, comm : optional

    Examples
    --------
    >>> ht.arange(1, 10, 3)
    DNDarray([1, 4, 7], dtype=ht.int64, device=cpu:0, split=None)
    """
    if stop is None:
        # arange(n) counts from 0 to n, as NumPy and the array API standard
        start, stop = 0, start
    values = [a.item() if isinstance(a, DNDarray) else a for a in (start, stop, step)]
    for name, value in zip(("start", "stop", "step"), values):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a real number, but was {type(value).__name__}")
    start, stop, step = values
    if step == 0:
        raise ValueError("step must not be zero")
    all_integers = all(_is_integer_scalar(v) for v in values)
    if dtype is None:
        dtype = types.int64 if all_integers else types.float32
    dtype = types.canonical_heat_type(dtype)
    num = max(0, math.ceil((stop - start) / step))
    gshape = (num,)
    split = sanitize_split(gshape, split)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    offset, lshape, _ = comm.chunk(gshape, split)
    if all_integers and types.heat_type_is_exact(dtype):
        local = torch.arange(
            int(start) + offset * int(step),
            int(start) + (offset + lshape[0]) * int(step),
            int(step),
            dtype=torch.int64,
            device=device.torch_device,
        )[: lshape[0]].to(dtype.torch_type())
    else:
        local = _range_values(
            offset, lshape[0], start, step, dtype.torch_type(), device.torch_device
        )
    return DNDarray(local, gshape, dtype, split, device, comm, True)


def linspace(
    start,
    stop,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype=None,
    split=None,
    device=None,
    comm=None,
) -> Union[DNDarray, Tuple[DNDarray, float]]:
    """
    ``num`` evenly spaced values from ``start`` to ``stop``, as :func:`numpy.linspace`.

    Parameters
    ----------
    start, stop : scalar
    num : int
        Number of samples, non-negative.
    endpoint : bool
        Whether ``stop`` is the last sample.
    retstep : bool
        Also return the spacing.
    dtype : heat type, optional
        Default float32.

    Examples
    --------
    >>> ht.linspace(0, 1, 5)
    DNDarray([0.0000, 0.2500, 0.5000, 0.7500, 1.0000], dtype=ht.float32, device=cpu:0, split=None)
    """
    start = start.item() if isinstance(start, DNDarray) else start
    stop = stop.item() if isinstance(stop, DNDarray) else stop
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)):
        raise TypeError(f"num must be an integer, but was {type(num).__name__}")
    if num < 0:
        raise ValueError(f"num must be non-negative, but was {num}")
    dtype = types.float32 if dtype is None else types.canonical_heat_type(dtype)
    divisor = (num - 1) if endpoint else num
    step = (stop - start) / divisor if divisor > 0 else float("nan")
    gshape = (int(num),)
    split = sanitize_split(gshape, split)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    offset, lshape, _ = comm.chunk(gshape, split)
    index = torch.arange(
        offset, offset + lshape[0], dtype=torch.float64, device=device.torch_device
    )
    if divisor > 0:
        values = start + index * step
        if endpoint and offset + lshape[0] == num and lshape[0] > 0:
            values[-1] = stop
    else:
        values = torch.full_like(index, float(start))
    if types.heat_type_is_exact(dtype):
        values = torch.floor(values)
    local = values.to(dtype.torch_type())
    result = DNDarray(local, gshape, dtype, split, device, comm, True)
    return (result, step) if retstep else result


def logspace(
    start,
    stop,
    num: int = 50,
    endpoint: bool = True,
    base: float = 10.0,
    dtype=None,
    split=None,
    device=None,
    comm=None,
) -> DNDarray:
    """
    ``base ** linspace(start, stop, num)``, as :func:`numpy.logspace`.

    Examples
    --------
    >>> ht.logspace(0, 2, 3)
    DNDarray([  1.,  10., 100.], dtype=ht.float32, device=cpu:0, split=None)
    """
    exponents = linspace(
        start, stop, num, endpoint, dtype=types.float64, split=split, device=device, comm=comm
    )
    dtype = types.float32 if dtype is None else types.canonical_heat_type(dtype)
    local = torch.pow(float(base), exponents.larray)
    if types.heat_type_is_exact(dtype):
        local = torch.floor(local)
    return DNDarray(
        local.to(dtype.torch_type()),
        exponents.gshape,
        dtype,
        exponents.split,
        exponents.device,
        exponents.comm,
        True,
    )


def eye(
    n_rows,
    n_cols: Optional[int] = None,
    /,
    *,
    k: int = 0,
    dtype=None,
    split=None,
    device=None,
    comm=None,
    order="C",
) -> DNDarray:
    """
    A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere, as the array API
    standard's ``eye`` (and :func:`numpy.eye`).

    Parameters
    ----------
    n_rows : int or (int, int)
        The number of rows; a pair ``(N, M)`` (HeAT's ``shape``) gives both.
    n_cols : int, optional
        The number of columns; default ``n_rows``.
    k : int
        Diagonal offset (positive: above the main diagonal).
    dtype : heat type, optional
        Default float32.
    split, device, comm, order : optional
        As :func:`zeros`.

    Examples
    --------
    >>> ht.eye(2, dtype=ht.int32)
    DNDarray([[1, 0],
              [0, 1]], dtype=ht.int32, device=cpu:0, split=None)
    """
    gshape = sanitize_shape(n_rows, name="n_rows")
    if len(gshape) == 1:
        columns = gshape if n_cols is None else sanitize_shape(n_cols, name="n_cols")
        if len(columns) != 1:
            raise ValueError(f"n_cols must be an integer, but was {n_cols}")
        gshape = gshape + columns
    elif n_cols is not None:
        raise ValueError("n_cols must be None when n_rows is a shape (n_rows, n_cols)")
    if len(gshape) != 2:
        raise ValueError(f"n_rows must be an integer or a pair of integers, but was {n_rows}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, but was {type(k).__name__}")
    result = zeros(gshape, dtype=dtype, split=split, device=device, comm=comm, order=order)
    offset, lshape, _ = result.comm.chunk(gshape, result.split)
    rows = torch.arange(lshape[0], device=result.larray.device)
    cols = torch.arange(lshape[1], device=result.larray.device)
    row_offset = offset if result.split == 0 else 0
    col_offset = offset if result.split == 1 else 0
    mask = (cols[None, :] + col_offset) - (rows[:, None] + row_offset) == k
    # uint16/32/64, which torch only stores, are written through a signed view of their bits
    local = signed_bits(result).larray if result.dtype in _UNSIGNED_TYPES else result.larray
    local[mask] = 1
    return result


def meshgrid(*arrays: Sequence[DNDarray], indexing: str = "xy") -> Tuple[DNDarray, ...]:
    """
    Coordinate matrices from 1-D coordinate vectors, as :func:`numpy.meshgrid`.

    If one input is split, every output is split along the axis that input spans; each
    process builds only its block.

    Parameters
    ----------
    arrays : 1-D DNDarrays
    indexing : {"xy", "ij"}
        Cartesian ("xy", default) or matrix ("ij") indexing.

    Examples
    --------
    >>> xx, yy = ht.meshgrid(ht.arange(3), ht.arange(2))
    >>> xx.shape
    (2, 3)
    """
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = tuple(arrays[0])
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', but was {indexing!r}")
    arrays = [a if isinstance(a, DNDarray) else array(a) for a in arrays]
    for i, a in enumerate(arrays):
        if a.ndim != 1:
            raise ValueError(f"meshgrid needs 1-D arrays, but array {i} has shape {a.gshape}")
    if not arrays:
        return ()
    out_dims = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) > 1:
        out_dims[0], out_dims[1] = 1, 0
    gshape = [0] * len(arrays)
    for i, a in enumerate(arrays):
        gshape[out_dims[i]] = a.gshape[0]
    gshape = tuple(gshape)
    split_input = next((i for i, a in enumerate(arrays) if a.split is not None), None)
    split = None if split_input is None else out_dims[split_input]
    comm = arrays[0].comm
    offset, lshape, _ = comm.chunk(gshape, split)
    vectors = []
    for i, a in enumerate(arrays):
        vector = (
            a.larray
            if a.split is None or comm.size == 1
            else comm.allgather_tensors(a.larray, axis=0)
        )
        if i == split_input:
            vector = vector[offset : offset + lshape[split]]
        vectors.append(vector)
    local_shape = list(gshape)
    if split is not None:
        local_shape[split] = lshape[split]
    grids = []
    for i, vector in enumerate(vectors):
        view_shape = [1] * len(arrays)
        view_shape[out_dims[i]] = vector.shape[0]
        grids.append(vector.reshape(view_shape).expand(local_shape))
    return tuple(
        DNDarray(g.contiguous(), gshape, arrays[i].dtype, split, arrays[i].device, comm, True)
        for i, g in enumerate(grids)
    )
