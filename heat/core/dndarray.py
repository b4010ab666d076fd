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

    Notes
    -----
    NumPy and PyTorch functions applied to a DNDarray call heat's function of the same name and
    return a distributed DNDarray without gathering (``__array_ufunc__``, ``__array_function__``
    and ``__torch_function__``, installed by :mod:`heat.core._methods`; see
    :mod:`heat.core._interop`): ``np.multiply(x, 3)``, ``np.mean(x)``,
    ``np.concatenate([x, y])``, ``torch.add(x, y)``. A NumPy function heat lacks raises
    TypeError instead of gathering silently. ``np.asarray(x)`` and ``np.array(x)`` (and whatever
    converts through them, e.g. ``np.testing.assert_allclose``) still return the whole global
    array as a NumPy array on every process (``x.numpy()``, collective).

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
        if tuple(array.shape) != self._gshape:
            self._check_block_shape(tuple(array.shape))
        self._array = array
        self._lshape_map = None
        if self._split is not None:
            self._balanced = None

    def _check_block_shape(self, shape: Tuple[int, ...]) -> None:
        """
        A local block must have the global shape, except along ``split``, where it may hold any
        part of it (only the sum over all processes, which would take a collective, is left
        unchecked).
        """
        split, gshape = self._split, self._gshape
        if (
            split is None
            or len(shape) != len(gshape)
            or shape[split] > gshape[split]
            or any(s != g for i, (s, g) in enumerate(zip(shape, gshape)) if i != split)
        ):
            raise ValueError(
                f"larray of shape {shape} does not fit an array of global shape {gshape} split "
                f"along {split}"
            )

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

    # balance_(), redistribute_() and resplit_() are installed by heat.core._methods

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
        if self._dtype in _COMPLEX:
            # as NumPy 2 and Python's int() of a complex: no silent loss of the imaginary part
            raise TypeError(f"int() argument must be a real number, not {self._dtype.__name__}")
        return int(self._scalar_conversion("int"))

    def __float__(self) -> float:
        if self._dtype in _COMPLEX:
            raise TypeError(f"float() argument must be a real number, not {self._dtype.__name__}")
        return float(self._scalar_conversion("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar_conversion("complex"))

    def __format__(self, format_spec: str) -> str:
        # as NumPy: a 0-d array formats as its element (f"{ht.mean(x):.2f}"); other arrays
        # accept only the empty spec, which gives str()
        if self.ndim == 0 and format_spec:
            return format(self.item(), format_spec)
        return object.__format__(self, format_spec)

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
    def to_device(self, device, /, stream=None) -> "DNDarray":
        """
        A copy of the array on ``device`` (``self`` if it already lives there).

        ``stream`` (the array API standard's) must be None: the copy is made on torch's
        current stream.

        Examples
        --------
        >>> ht.zeros(3).to_device("cpu").device
        device(cpu:0)
        """
        from .devices import sanitize_device

        if stream is not None:
            raise ValueError(f"stream must be None, but was {stream!r}")
        device = sanitize_device(device)
        if device == self._device:
            return self
        moved = self._array.to(device.torch_device)
        return DNDarray(
            moved, self._gshape, self._dtype, self._split, device, self._comm, self._balanced
        )

    # ------------------------------------------------------------------ DLPack
    def _dlpack_block(self) -> torch.Tensor:
        """The local block, which DLPack exchanges: the whole array unless it is distributed."""
        if self._split is not None and self._comm.size > 1:
            raise BufferError(
                f"a DNDarray split along axis {self._split} over {self._comm.size} processes "
                "cannot be exported through DLPack as one array: use x.larray for this "
                "process's block, or heat.resplit(x, None) for a copy of the whole array on "
                "every process"
            )
        return self._array

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """
        The DLPack capsule of the array's data, for ``from_dlpack`` of any library (the array
        API standard's protocol). Only a non-distributed array (split None, or one process)
        can be exported; no data is copied unless ``copy`` is True.

        Raises
        ------
        BufferError
            If the array is distributed over several processes.

        Examples
        --------
        >>> torch.from_dlpack(ht.arange(3))
        tensor([0, 1, 2])
        """
        block = self._dlpack_block()
        kwargs = {"stream": stream}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return block.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        """
        ``(device type, device index)`` of the data, as DLPack enumerates devices (the array
        API standard's protocol).

        Raises
        ------
        BufferError
            If the array is distributed over several processes.

        Examples
        --------
        >>> ht.zeros(2).__dlpack_device__()
        (<DLDeviceType.kDLCPU: 1>, 0)
        """
        return self._dlpack_block().__dlpack_device__()

    def cpu(self) -> "DNDarray":
        """A copy on the CPU (``self`` if already there)."""
        return self.to_device("cpu")

    def gpu(self) -> "DNDarray":
        """A copy on this process's GPU (``self`` if already there)."""
        return self.to_device("gpu")

    # ------------------------------------------------------------------ views
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
            self._array.clone(),
            self._gshape,
            self._dtype,
            self._split,
            self._device,
            self._comm,
            self._balanced,
        )

    # ------------------------------------------------------------------ indexing
    @property
    def lloc(self):
        """Process-local indexing: ``x.lloc[key]`` reads and writes ``x.larray[key]``."""
        return _LocalIndexer(self)

    # operators, transpose/T, real/imag, repr/str, indexing and the methods named after heat
    # functions (x.sum(), ...) are installed by heat.core._methods after the families are imported
    __hash__ = None


_COMPLEX = (types.complex64, types.complex128)


class _LocalIndexer:
    """Indexing into the process-local block (``x.lloc``)."""

    __slots__ = ("array",)

    def __init__(self, array: DNDarray):
        self.array = array

    def __getitem__(self, key):
        return self.array.larray[key]

    def __setitem__(self, key, value):
        self.array.larray[key] = value
