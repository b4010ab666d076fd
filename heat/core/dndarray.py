"""
The distributed n-dimensional array, :class:`DNDarray`.

A DNDarray is metadata (global shape, dtype, split axis, device, communicator) around the
process-local ``torch.Tensor`` block, plus thin methods that delegate to the families
(arithmetics, statistics, manipulations, ...).
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union

import numpy as np
import torch

from . import types
from .communication import MPICommunication
from .devices import Device

__all__ = ["DNDarray"]


class DNDarray:
    """
    Distributed N-dimensional array.

    Each process holds one block of the global array as a ``torch.Tensor``; the blocks are
    concatenated along the ``split`` axis (``split=None``: every process holds the whole array).

    Parameters
    ----------
    array : torch.Tensor
        The process-local block.
    gshape : tuple of int
        The global shape.
    dtype : heat type
        The heat data type (matches ``array.dtype``).
    split : int or None
        The axis along which the array is distributed.
    device : Device
        The device the local block lives on.
    comm : MPICommunication
        The communicator the array is distributed over.
    balanced : bool or None
        Whether the blocks follow the default balanced layout; None when not known yet
        (computed on demand).

    Examples
    --------
    >>> x = ht.arange(10, split=0)
    >>> x.gshape, x.split
    ((10,), 0)
    """

    __slots__ = (
        "_array",
        "_gshape",
        "_dtype",
        "_split",
        "_device",
        "_comm",
        "_balanced",
        "_lshape_map",
        "__weakref__",
    )

    # NumPy defers to our reflected operators instead of converting us element by element
    __array_ufunc__ = None

    def __init__(
        self,
        array: torch.Tensor,
        gshape: Tuple[int, ...],
        dtype,
        split: Optional[int],
        device: Device,
        comm: MPICommunication,
        balanced: Optional[bool] = None,
    ):
        self._array = array
        self._gshape = gshape
        self._dtype = dtype
        self._split = split
        self._device = device
        self._comm = comm
        self._balanced = True if split is None else balanced
        self._lshape_map = None

    # ------------------------------------------------------------------ metadata
    @property
    def larray(self) -> torch.Tensor:
        """The process-local ``torch.Tensor`` block."""
        return self._array

    @larray.setter
    def larray(self, array: torch.Tensor) -> None:
        if not isinstance(array, torch.Tensor):
            raise TypeError(f"larray must be a torch.Tensor, but was {type(array).__name__}")
        self._array = array
        self._lshape_map = None
        if self._split is not None:
            self._balanced = None

    @property
    def gshape(self) -> Tuple[int, ...]:
        """The global shape."""
        return self._gshape

    @property
    def shape(self) -> Tuple[int, ...]:
        """The global shape (same as :attr:`gshape`)."""
        return self._gshape

    @property
    def lshape(self) -> Tuple[int, ...]:
        """The shape of the process-local block."""
        return tuple(self._array.shape)

    @property
    def split(self) -> Optional[int]:
        """The distribution axis, or None when every process holds the whole array."""
        return self._split

    @property
    def comm(self) -> MPICommunication:
        """The communicator the array is distributed over."""
        return self._comm

    @property
    def device(self) -> Device:
        """The device of the local block."""
        return self._device

    @property
    def dtype(self):
        """The heat data type."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._gshape)

    @property
    def size(self) -> int:
        """Number of elements of the global array."""
        n = 1
        for d in self._gshape:
            n *= d
        return n

    gnumel = size

    @property
    def lnumel(self) -> int:
        """Number of elements of the local block."""
        return self._array.numel()

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._array.element_size()

    @property
    def nbytes(self) -> int:
        """Bytes of the global array."""
        return self.size * self._array.element_size()

    gnbytes = nbytes

    @property
    def lnbytes(self) -> int:
        """Bytes of the local block."""
        return self._array.numel() * self._array.element_size()

    @property
    def lshape_map(self) -> torch.Tensor:
        """
        The local shapes of all processes, a ``(comm.size, ndim)`` int64 tensor (cached).
        Collective when the array is split and its layout is not known to be balanced.
        """
        if self._lshape_map is None:
            size = self._comm.size
            if self._split is None:
                lmap = torch.tensor([self._gshape] * size, dtype=torch.int64).reshape(
                    size, self.ndim
                )
            elif self._balanced:
                lmap = torch.tensor(self._gshape, dtype=torch.int64).repeat(size, 1)
                lmap[:, self._split] = torch.tensor(
                    self._comm.counts_displs_shape(self._gshape, self._split)[0], dtype=torch.int64
                )
            else:
                lmap = torch.tensor(self._comm.allgather(self.lshape), dtype=torch.int64).reshape(
                    size, self.ndim
                )
            self._lshape_map = lmap
        return self._lshape_map

    def counts_displs(self) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        """
        Counts and displacements of the local blocks along the split axis.

        Collective (one allgather) when the layout is not known to be balanced: call it on
        every process.

        Raises
        ------
        ValueError
            If the array is not split.

        Examples
        --------
        >>> ht.arange(10, split=0).counts_displs()  # at 3 processes
        ((4, 3, 3), (0, 4, 7))
        """
        if self._split is None:
            raise ValueError("counts_displs() needs a split array, but split is None")
        counts = tuple(int(c) for c in self.lshape_map[:, self._split].tolist())
        displs = [0]
        for c in counts[:-1]:
            displs.append(displs[-1] + c)
        return counts, tuple(displs)

    def global_offset(self) -> int:
        """
        The global index along ``split`` of this process's first local row (0 if not split).

        Collective (one allgather) when the layout is not known to be balanced: call it on
        every process.
        """
        if self._split is None:
            return 0
        if self._balanced:
            return self._comm.chunk(self._gshape, self._split)[0]
        return self.counts_displs()[1][self._comm.rank]

    @property
    def balanced(self) -> bool:
        """Whether the layout is the default balanced one (checked collectively if unknown)."""
        return self.is_balanced()

    def is_balanced(self, force_check: bool = False) -> bool:
        """
        Whether every process holds the rows the default balanced layout assigns it.

        Parameters
        ----------
        force_check : bool
            Recompute (collectively) even if the answer is cached.

        Examples
        --------
        >>> ht.zeros((5, 2), split=0).is_balanced()
        True
        """
        if self._split is None or self._comm.size == 1:
            self._balanced = True
            return True
        if self._balanced is None or force_check:
            if force_check:
                self._lshape_map = None
                self._balanced = None
            counts = tuple(self.lshape_map[:, self._split].tolist())
            self._balanced = counts == tuple(
                self._comm.counts_displs_shape(self._gshape, self._split)[0]
            )
        return self._balanced

    def _set_layout(self, array: torch.Tensor, split: Optional[int], balanced: Optional[bool]):
        """Replace the local block and its layout in place (used by the layout primitives)."""
        self._array = array
        self._split = split
        self._balanced = True if split is None else balanced
        self._lshape_map = None

    def balance_(self) -> "DNDarray":
        """
        Redistribute in place to the default balanced layout (one collective).

        Examples
        --------
        >>> x = ht.arange(10, split=0); x.balance_().balanced
        True
        """
        from . import layout

        layout.balance_(self)
        return self

    def redistribute_(
        self, lshape_map: Optional[torch.Tensor] = None, target_map: Optional[torch.Tensor] = None
    ) -> "DNDarray":
        """
        Redistribute in place so that the local shapes match ``target_map`` (a
        ``(comm.size, ndim)`` tensor, as :attr:`lshape_map`); one all-to-all.

        Examples
        --------
        >>> x = ht.arange(6, split=0)
        >>> target = x.lshape_map.clone(); target[:, 0] = torch.tensor([6] + [0] * (x.comm.size - 1))
        >>> x.redistribute_(target_map=target).lshape  # on rank 0
        (6,)
        """
        from . import layout

        if target_map is None:
            return self.balance_()
        layout.redistribute_(self, target_map)
        return self

    def resplit_(self, axis: Optional[int] = None) -> "DNDarray":
        """
        Change the split axis in place (see :func:`heat.resplit`).

        Examples
        --------
        >>> x = ht.zeros((4, 6), split=0); x.resplit_(1).split
        1
        """
        from . import layout

        layout.resplit_(self, axis)
        return self

    # ------------------------------------------------------------------ conversion
    def astype(self, dtype, copy: bool = True) -> "DNDarray":
        """
        Cast to ``dtype``.

        Parameters
        ----------
        dtype : heat type or anything :func:`heat.core.types.canonical_heat_type` accepts
        copy : bool
            If False and the dtype matches, return ``self``.

        Examples
        --------
        >>> ht.arange(3).astype(ht.float32).dtype
        <class 'heat.core.types.float32'>
        """
        dtype = types.canonical_heat_type(dtype)
        if not copy and dtype is self._dtype:
            return self
        casted = self._array.to(dtype.torch_type(), copy=copy)
        return DNDarray(
            casted, self._gshape, dtype, self._split, self._device, self._comm, self._balanced
        )

    def numpy(self) -> np.ndarray:
        """
        The global array as a NumPy array on every process.

        This gathers the whole array on every process: use it for small arrays, results and
        tests. bfloat16 data is returned as float32 (NumPy has no bfloat16).

        Examples
        --------
        >>> ht.arange(4, split=0).numpy()
        array([0, 1, 2, 3])
        """
        if self._split is None or self._comm.size == 1:
            local = self._array
        else:
            local = self._comm.allgather_tensors(self._array, axis=self._split)
        local = local.detach().cpu()
        if local.dtype is torch.bfloat16:
            local = local.float()
        result = local.resolve_conj().resolve_neg().numpy()
        return result.reshape(self._gshape)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        result = self.numpy()
        if dtype is not None:
            result = result.astype(dtype, copy=False)
        return result

    def tolist(self) -> Union[List, Any]:
        """
        The global array as (nested) Python lists; gathers on every process.

        Examples
        --------
        >>> ht.arange(3).tolist()
        [0, 1, 2]
        """
        return self.numpy().tolist()

    def item(self) -> Union[bool, int, float, complex]:
        """
        The single element of a size-1 array as a Python scalar (one broadcast from its owner).

        Raises
        ------
        ValueError
            If the array does not have exactly one element.

        Examples
        --------
        >>> ht.array([[5]]).item()
        5
        """
        if self.size != 1:
            raise ValueError(
                f"can only convert an array of size 1 to a Python scalar, but size is {self.size}"
            )
        if self._split is None or self._comm.size == 1:
            return self._array.item()
        counts, _ = self.counts_displs()
        owner = next(r for r, c in enumerate(counts) if c > 0)
        value = self._array.item() if self._comm.rank == owner else None
        return self._comm.bcast(value, root=owner)

    def _scalar_conversion(self, kind: str):
        if self.size != 1:
            raise TypeError(f"only arrays of size 1 can be converted to Python {kind}")
        return self.item()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
                if self.size > 1
                else "The truth value of an empty array is ambiguous"
            )
        return bool(self.item())

    def __int__(self) -> int:
        return int(self._scalar_conversion("int").real if self._dtype in _COMPLEX else self.item())

    def __float__(self) -> float:
        value = self._scalar_conversion("float")
        return float(value.real if isinstance(value, complex) else value)

    def __complex__(self) -> complex:
        return complex(self._scalar_conversion("complex"))

    def __index__(self) -> int:
        if not types.issubdtype(self._dtype, types.integer) or self.ndim != 0:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._gshape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._gshape[0]):
            yield self[i]

    # ------------------------------------------------------------------ devices
    def to_device(self, device) -> "DNDarray":
        """
        A copy of the array on ``device`` (``self`` if it already lives there).

        Examples
        --------
        >>> ht.zeros(3).to_device("cpu").device
        device(cpu:0)
        """
        from .devices import sanitize_device

        device = sanitize_device(device)
        if device == self._device:
            return self
        moved = self._array.to(device.torch_device)
        return DNDarray(
            moved, self._gshape, self._dtype, self._split, device, self._comm, self._balanced
        )

    def cpu(self) -> "DNDarray":
        """A copy on the CPU (``self`` if already there)."""
        return self.to_device("cpu")

    def gpu(self) -> "DNDarray":
        """A copy on this process's GPU (``self`` if already there)."""
        return self.to_device("gpu")

    # ------------------------------------------------------------------ views
    @property
    def T(self) -> "DNDarray":
        """The transposed array (axes reversed)."""
        return manipulations.transpose(self)

    def transpose(self, axes=None) -> "DNDarray":
        """See :func:`heat.transpose`."""
        return manipulations.transpose(self, axes)

    @property
    def real(self) -> "DNDarray":
        """The real part."""
        return complex_math.real(self)

    @property
    def imag(self) -> "DNDarray":
        """The imaginary part."""
        return complex_math.imag(self)

    def fill(self, value) -> None:
        """
        Fill the array in place with the scalar ``value`` (no communication).

        Examples
        --------
        >>> x = ht.zeros(3, split=0)
        >>> x.fill(2)
        >>> x
        DNDarray([2., 2., 2.], dtype=ht.float32, device=cpu:0, split=0)
        """
        self._array.fill_(value)

    def copy(self) -> "DNDarray":
        """
        A copy of the array with the same layout (no communication).

        Examples
        --------
        >>> ht.arange(3, split=0).copy()
        DNDarray([0, 1, 2], dtype=ht.int64, device=cpu:0, split=0)
        """
        return DNDarray(
            self._array.clone(), self._gshape, self._dtype, self._split, self._device,
            self._comm, self._balanced,
        )

    # ------------------------------------------------------------------ printing & indexing
    def __repr__(self) -> str:
        return printing.array_repr(self)

    def __str__(self) -> str:
        return printing.array_str(self)

    def __getitem__(self, key) -> "DNDarray":
        return indexing.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        indexing.setitem(self, key, value)

    @property
    def lloc(self):
        """Process-local indexing: ``x.lloc[key]`` reads and writes ``x.larray[key]``."""
        return _LocalIndexer(self)

    # ------------------------------------------------------------------ operators
    def __iadd__(self, other):
        return arithmetics.add(self, other, out=self)

    def __rsub__(self, other):
        return arithmetics.subtract(other, self)

    def __isub__(self, other):
        return arithmetics.subtract(self, other, out=self)

    def __imul__(self, other):
        return arithmetics.multiply(self, other, out=self)

    def __rtruediv__(self, other):
        return arithmetics.divide(other, self)

    def __itruediv__(self, other):
        return arithmetics.divide(self, other, out=self)

    def __floordiv__(self, other):
        return arithmetics.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return arithmetics.floor_divide(other, self)

    def __ifloordiv__(self, other):
        return arithmetics.floor_divide(self, other, out=self)

    def __mod__(self, other):
        return arithmetics.mod(self, other)

    def __rmod__(self, other):
        return arithmetics.mod(other, self)

    def __imod__(self, other):
        return arithmetics.mod(self, other, out=self)

    def __pow__(self, other):
        return arithmetics.pow(self, other)

    def __rpow__(self, other):
        return arithmetics.pow(other, self)

    def __ipow__(self, other):
        return arithmetics.pow(self, other, out=self)

    def __divmod__(self, other):
        return arithmetics.floor_divide(self, other), arithmetics.mod(self, other)

    def __rdivmod__(self, other):
        return arithmetics.floor_divide(other, self), arithmetics.mod(other, self)

    def __and__(self, other):
        return arithmetics.bitwise_and(self, other)

    def __rand__(self, other):
        return arithmetics.bitwise_and(other, self)

    def __iand__(self, other):
        return arithmetics.bitwise_and(self, other, out=self)

    def __or__(self, other):
        return arithmetics.bitwise_or(self, other)

    def __ror__(self, other):
        return arithmetics.bitwise_or(other, self)

    def __ior__(self, other):
        return arithmetics.bitwise_or(self, other, out=self)

    def __xor__(self, other):
        return arithmetics.bitwise_xor(self, other)

    def __rxor__(self, other):
        return arithmetics.bitwise_xor(other, self)

    def __ixor__(self, other):
        return arithmetics.bitwise_xor(self, other, out=self)

    def __lshift__(self, other):
        return arithmetics.left_shift(self, other)

    def __rlshift__(self, other):
        return arithmetics.left_shift(other, self)

    def __ilshift__(self, other):
        return arithmetics.left_shift(self, other, out=self)

    def __rshift__(self, other):
        return arithmetics.right_shift(self, other)

    def __rrshift__(self, other):
        return arithmetics.right_shift(other, self)

    def __irshift__(self, other):
        return arithmetics.right_shift(self, other, out=self)

    def __invert__(self):
        return arithmetics.bitwise_not(self)

    def __neg__(self):
        return arithmetics.neg(self)

    def __pos__(self):
        return arithmetics.pos(self)

    def __abs__(self):
        return rounding.abs(self)

    __hash__ = None


_COMPLEX = (types.complex64, types.complex128)


# names of heat functions that are also DNDarray methods (as on numpy.ndarray)
_METHOD_NAMES = (
    "all any allclose isclose argmax argmin clip conj cumprod cumsum diagonal expand_dims "
    "flatten flip max mean median min nonzero prod ptp ravel repeat reshape round sort argsort "
    "squeeze std sum swapaxes tril triu unique var average abs absolute exp log sqrt ceil floor "
    "trunc square sin cos tan tanh nan_to_num fill_diagonal moveaxis roll rot90 tile pad "
    "percentile quantile isnan isinf isfinite angle trace"
).split()


def install_methods(namespace: dict) -> None:
    """
    Make the heat functions named in ``_METHOD_NAMES`` methods of DNDarray (``x.sum()`` is
    ``ht.sum(x)``), as plain class attributes so that a call costs no more than a function call.

    Called once by ``heat.core`` after every family is imported; ``namespace`` maps names to the
    functions. Attributes the class defines itself are left alone.
    """
    for name in _METHOD_NAMES:
        function = namespace.get(name)
        if callable(function) and name not in DNDarray.__dict__:
            setattr(DNDarray, name, function)


class _LocalIndexer:
    """Indexing into the process-local block (``x.lloc``)."""

    __slots__ = ("array",)

    def __init__(self, array: DNDarray):
        self.array = array

    def __getitem__(self, key):
        return self.array.larray[key]

    def __setitem__(self, key, value):
        self.array.larray[key] = value


# families are imported at the end: they import DNDarray from this module
from . import arithmetics  # noqa: E402
from . import complex_math  # noqa: E402
from . import indexing  # noqa: E402
from . import manipulations  # noqa: E402
from . import printing  # noqa: E402
from . import relational  # noqa: E402
from . import rounding  # noqa: E402


# ------------------------------------------------------------------ fast operators
_new_dndarray = object.__new__
_REAL_NUMERIC = frozenset(
    (types.uint8, types.int8, types.int16, types.int32, types.int64, types.float16,
     types.bfloat16, types.float32, types.float64)
)
_NUMERIC = _REAL_NUMERIC | frozenset(_COMPLEX)
_FLOATING = frozenset((types.float16, types.bfloat16, types.float32, types.float64))
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _operator(
    dunder: str,
    function,
    torch_operation,
    fast_types: frozenset,
    result_type=None,
    reflected: bool = False,
):
    """
    The method ``x <op> y`` (or ``y <op> x`` when ``reflected``): ``function(x, y)``, with a
    shortcut for the most common calls, where the result is ``torch_operation`` of the local
    blocks (no alignment, no promotion, no communication) and has type ``result_type`` (None: the
    operands' type):

    * two arrays of one type in ``fast_types`` with the same shape and layout;
    * an array of a floating type in ``fast_types`` and a Python float or int, which NumPy (NEP 50)
      and torch both compute in the array's type (reflected operations only for commutative
      ``torch_operation``).

    Everything else goes through ``function``, which checks, promotes and aligns its operands.
    """
    scalar_types = fast_types & _FLOATING

    def method(self, other):
        kind = type(other)
        if kind is DNDarray:
            if not (
                self._dtype is other._dtype
                and self._dtype in fast_types
                and self._gshape == other._gshape
                and self._split == other._split
                and self._comm is other._comm
                and (self._split is None or (self._balanced and other._balanced))
            ):
                return function(other, self) if reflected else function(self, other)
            array = torch_operation(self._array, other._array)
        elif (
            (kind is float or (kind is int and _INT64_MIN <= other <= _INT64_MAX))
            and self._dtype in scalar_types
        ):
            array = torch_operation(self._array, other)
        else:
            return function(other, self) if reflected else function(self, other)
        result = _new_dndarray(DNDarray)
        result._array = array
        result._gshape = self._gshape
        result._dtype = self._dtype if result_type is None else result_type
        result._split = self._split
        result._device = self._device
        result._comm = self._comm
        result._balanced = self._balanced
        result._lshape_map = None
        return result

    method.__name__ = dunder
    method.__qualname__ = f"DNDarray.{dunder}"
    operands = "other, self" if reflected else "self, other"
    method.__doc__ = f"``heat.{function.__name__}({operands})``, with a shortcut for common calls."
    return method


# bool + bool is logical or in NumPy and torch alike; bool - bool is an error (left to subtract);
# complex values are ordered lexicographically by relational, not by torch
_BOOL = frozenset((types.bool,))
for _dunder, _function, _torch_operation, _fast_types, _result_type, _reflected in (
    ("__add__", arithmetics.add, torch.add, _NUMERIC | _BOOL, None, False),
    ("__radd__", arithmetics.add, torch.add, _NUMERIC | _BOOL, None, True),
    ("__sub__", arithmetics.subtract, torch.sub, _NUMERIC, None, False),
    ("__mul__", arithmetics.multiply, torch.mul, _NUMERIC | _BOOL, None, False),
    ("__rmul__", arithmetics.multiply, torch.mul, _NUMERIC | _BOOL, None, True),
    ("__truediv__", arithmetics.divide, torch.div, _FLOATING, None, False),
    ("__eq__", relational.eq, relational._equal, _NUMERIC | _BOOL, types.bool, False),
    ("__ne__", relational.ne, relational._not_equal, _NUMERIC | _BOOL, types.bool, False),
    ("__lt__", relational.lt, relational._less, _REAL_NUMERIC | _BOOL, types.bool, False),
    ("__le__", relational.le, relational._less_equal, _REAL_NUMERIC | _BOOL, types.bool, False),
    ("__gt__", relational.gt, relational._greater, _REAL_NUMERIC | _BOOL, types.bool, False),
    ("__ge__", relational.ge, relational._greater_equal, _REAL_NUMERIC | _BOOL, types.bool, False),
):
    setattr(
        DNDarray,
        _dunder,
        _operator(_dunder, _function, _torch_operation, _fast_types, _result_type, _reflected),
    )
