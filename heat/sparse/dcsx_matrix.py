"""
Distributed compressed sparse matrices: :class:`DCSR_matrix` (rows distributed, ``split=0``)
and :class:`DCSC_matrix` (columns distributed, ``split=1``).

Each process holds one ``torch`` sparse CSR (CSC) tensor: the rows (columns) it owns, with the
*global* column (row) indices and a local ``indptr`` that starts at 0. The global ``indptr`` of
HeAT's ``gindptr`` is the concatenation of the local ones, each shifted by the number of stored
entries of the processes before it.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from ..core import types
from ..core.communication import MPICommunication
from ..core.devices import Device
from . import _operations

__all__ = ["DCSR_matrix", "DCSC_matrix"]


class _DCSXMatrix:
    """
    Common part of :class:`DCSR_matrix` and :class:`DCSC_matrix` (``_axis``: the compressed and
    distributed axis, 0 for CSR, 1 for CSC).
    """

    _axis = 0
    _format = ""

    def __init__(
        self,
        array: torch.Tensor,
        gnnz: int,
        gshape: Tuple[int, ...],
        dtype,
        split: Optional[int],
        device: Device,
        comm: MPICommunication,
        balanced: Optional[bool] = None,
    ):
        self._array = array
        self._gnnz = int(gnnz)
        self._gshape = tuple(int(s) for s in gshape)
        self._dtype = dtype
        self._split = split
        self._device = device
        self._comm = comm
        self._balanced = True if split is None else balanced
        # per-process lengths along split and stored entries; filled lazily (collectively)
        # unless the creator knew them
        self._counts: Optional[Tuple[int, ...]] = None
        self._nnz_counts: Optional[Tuple[int, ...]] = None

    @classmethod
    def _from_local(
        cls,
        local: torch.Tensor,
        gshape: Sequence[int],
        dtype,
        split: Optional[int],
        device: Device,
        comm: MPICommunication,
        counts: Optional[Sequence[int]] = None,
        nnz_counts: Optional[Sequence[int]] = None,
    ):
        """
        A matrix from this process's block. Collective (one small allgather) when ``split`` is
        set and the stored-entry counts of the processes are not given.
        """
        gshape = tuple(int(s) for s in gshape)
        if split is None or comm.size == 1:
            matrix = cls(local, local._nnz(), gshape, dtype, split, device, comm, True)
            matrix._counts = (gshape[cls._axis],) * comm.size if split is None else (gshape[split],)
            matrix._nnz_counts = (local._nnz(),) * comm.size if split is None else (local._nnz(),)
            return matrix
        if counts is None or nnz_counts is None:
            gathered = comm.allgather((int(local.shape[split]), int(local._nnz())))
            counts = tuple(g[0] for g in gathered)
            nnz_counts = tuple(g[1] for g in gathered)
        counts, nnz_counts = tuple(counts), tuple(nnz_counts)
        balanced = counts == comm.counts_displs_shape(gshape, split)[0]
        matrix = cls(local, sum(nnz_counts), gshape, dtype, split, device, comm, balanced)
        matrix._counts, matrix._nnz_counts = counts, nnz_counts
        return matrix

    def _gather_counts(self) -> None:
        if self._counts is None or self._nnz_counts is None:
            if self._split is None or self._comm.size == 1:
                self._counts = (self._gshape[self._axis],) * self._comm.size
                self._nnz_counts = (self.lnnz,) * self._comm.size
            else:
                gathered = self._comm.allgather((self.lshape[self._split], self.lnnz))
                self._counts = tuple(g[0] for g in gathered)
                self._nnz_counts = tuple(g[1] for g in gathered)

    # ------------------------------------------------------------------ metadata
    @property
    def larray(self) -> torch.Tensor:
        """This process's block: a ``torch`` sparse CSR (``DCSR_matrix``) or CSC tensor."""
        return self._array

    @property
    def gnnz(self) -> int:
        """Number of stored entries of the global matrix."""
        return self._gnnz

    @property
    def nnz(self) -> int:
        """Number of stored entries of the global matrix (same as :attr:`gnnz`)."""
        return self._gnnz

    @property
    def lnnz(self) -> int:
        """Number of stored entries of this process's block."""
        return int(self._array._nnz())

    @property
    def gshape(self) -> Tuple[int, int]:
        """The global shape."""
        return self._gshape

    @property
    def shape(self) -> Tuple[int, int]:
        """The global shape (same as :attr:`gshape`)."""
        return self._gshape

    @property
    def lshape(self) -> Tuple[int, int]:
        """The shape of this process's block."""
        return tuple(int(s) for s in self._array.shape)

    @property
    def ndim(self) -> int:
        """Number of dimensions (always 2)."""
        return len(self._gshape)

    @property
    def dtype(self):
        """The heat data type of the stored values."""
        return self._dtype

    @property
    def split(self) -> Optional[int]:
        """The distributed axis (0 for ``DCSR_matrix``, 1 for ``DCSC_matrix``) or None."""
        return self._split

    @property
    def device(self) -> Device:
        """The device of the local block."""
        return self._device

    @property
    def comm(self) -> MPICommunication:
        """The communicator the matrix is distributed over."""
        return self._comm

    @property
    def balanced(self) -> bool:
        """Whether each process holds the rows (columns) the default balanced layout gives it."""
        if self._balanced is None:
            self._gather_counts()
            self._balanced = (
                self._counts == self._comm.counts_displs_shape(self._gshape, self._split)[0]
            )
        return self._balanced

    def is_distributed(self) -> bool:
        """
        Whether the matrix is split over more than one process.

        Examples
        --------
        >>> ht.sparse.sparse_csr_matrix([[1, 0], [0, 2]]).is_distributed()
        False
        """
        return self._split is not None and self._comm.size > 1

    def counts_displs_nnz(self) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        """
        Stored entries of each process and their offsets in the global ``data``/``indices``.

        Collective (one small allgather) unless known from the matrix's creation.

        Raises
        ------
        ValueError
            If the matrix is not split.

        Examples
        --------
        >>> a = ht.sparse.sparse_csr_matrix([[1, 0], [0, 2], [3, 4]], split=0)
        >>> a.counts_displs_nnz()  # at 2 processes
        ((2, 2), (0, 2))
        """
        if self._split is None:
            raise ValueError(
                f"counts_displs_nnz() needs a distributed {type(self).__name__}, but split is None"
            )
        self._gather_counts()
        displs = [0]
        for count in self._nnz_counts[:-1]:
            displs.append(displs[-1] + count)
        return tuple(self._nnz_counts), tuple(displs)

    # ------------------------------------------------------------------ the compressed parts
    @property
    def ldata(self) -> torch.Tensor:
        """The stored values of this process's block."""
        return self._array.values()

    @property
    def lindptr(self) -> torch.Tensor:
        """The local ``indptr`` (starts at 0; one entry per local row/column plus one)."""
        return _operations.compressed_parts(self._array, self._axis)[0]

    @property
    def lindices(self) -> torch.Tensor:
        """The global column (CSR) / row (CSC) indices of this process's stored values."""
        return _operations.compressed_parts(self._array, self._axis)[1]

    def _allgather_entries(self, local: torch.Tensor) -> torch.Tensor:
        if not self.is_distributed():
            return local
        return self._comm.allgather_tensors(local.contiguous(), axis=0)

    @property
    def gdata(self) -> torch.Tensor:
        """
        The stored values of the global matrix, on every process (collective: gathers them).
        """
        return self._allgather_entries(self.ldata)

    @property
    def data(self) -> torch.Tensor:
        """The stored values of the global matrix (same as :attr:`gdata`; collective)."""
        return self.gdata

    @property
    def gindices(self) -> torch.Tensor:
        """
        The column (CSR) / row (CSC) indices of the global matrix, on every process
        (collective).
        """
        return self._allgather_entries(self.lindices)

    @property
    def indices(self) -> torch.Tensor:
        """Same as :attr:`gindices` (collective)."""
        return self.gindices

    @property
    def gindptr(self) -> torch.Tensor:
        """
        The ``indptr`` of the global matrix, on every process (collective).

        Examples
        --------
        >>> a = ht.sparse.sparse_csr_matrix([[1, 0], [0, 0], [3, 4]], split=0)
        >>> a.gindptr
        tensor([0, 1, 1, 3])
        """
        indptr = self.lindptr
        if not self.is_distributed():
            return indptr
        _, displs = self.counts_displs_nnz()
        shifted = indptr[1:] + displs[self._comm.rank]
        return torch.cat([indptr[:1] * 0, self._comm.allgather_tensors(shifted, axis=0)])

    @property
    def indptr(self) -> torch.Tensor:
        """Same as :attr:`gindptr` (collective)."""
        return self.gindptr

    # ------------------------------------------------------------------ conversion
    def astype(self, dtype, copy: bool = True):
        """
        The matrix with its values cast to ``dtype``.

        Parameters
        ----------
        dtype : heat type or anything :func:`heat.core.types.canonical_heat_type` accepts
        copy : bool
            True (default): a new matrix. False: cast this matrix in place and return it.

        Examples
        --------
        >>> a = ht.sparse.sparse_csr_matrix([[1, 0], [0, 2]])
        >>> a.astype(ht.float32).dtype
        <class 'heat.core.types.float32'>
        """
        dtype = types.canonical_heat_type(dtype)
        indptr, indices, values = _operations.compressed_parts(self._array, self._axis)
        values = values.to(dtype.torch_type(), copy=copy)
        if copy:
            indptr, indices = indptr.clone(), indices.clone()
        local = _operations.build(indptr, indices, values, self.lshape, self._axis)
        if not copy:
            self._array, self._dtype = local, dtype
            return self
        result = type(self)(
            local,
            self._gnnz,
            self._gshape,
            dtype,
            self._split,
            self._device,
            self._comm,
            self._balanced,
        )
        result._counts, result._nnz_counts = self._counts, self._nnz_counts
        return result

    def __repr__(self) -> str:
        # no communication: printing on one rank only must not hang the others
        return (
            f"{type(self).__name__}(shape={self._gshape}, nnz={self._gnnz}, "
            f"dtype=ht.{self._dtype.__name__}, device={self._device}, split={self._split})"
        )

    __str__ = __repr__

    # todense/to_dense, +, *, @ are installed by heat.sparse


class DCSR_matrix(_DCSXMatrix):
    """
    Distributed compressed sparse row matrix.

    Each process holds a ``torch`` sparse CSR tensor with the rows it owns (``split=0``) or the
    whole matrix (``split=None``). Create one with :func:`heat.sparse.sparse_csr_matrix` or
    :func:`heat.sparse.to_sparse_csr`.

    Parameters
    ----------
    array : torch.Tensor
        The local block, layout ``torch.sparse_csr``, with global column indices.
    gnnz : int
        Stored entries of the global matrix.
    gshape : tuple of int
        The global shape.
    dtype : heat type
    split : 0 or None
    device : Device
    comm : MPICommunication
    balanced : bool or None
        Whether the rows follow the default balanced layout (None: find out when asked).

    Examples
    --------
    >>> a = ht.sparse.sparse_csr_matrix([[1, 0, 2], [0, 0, 3], [4, 5, 6]], split=0)
    >>> a.gnnz, a.shape, a.split
    (6, (3, 3), 0)
    >>> a.lshape  # on rank 0 of 2
    (2, 3)
    """

    _axis = 0
    _format = "csr"


class DCSC_matrix(_DCSXMatrix):
    """
    Distributed compressed sparse column matrix.

    Each process holds a ``torch`` sparse CSC tensor with the columns it owns (``split=1``) or
    the whole matrix (``split=None``). Create one with :func:`heat.sparse.sparse_csc_matrix` or
    :func:`heat.sparse.to_sparse_csc`.

    Parameters
    ----------
    array : torch.Tensor
        The local block, layout ``torch.sparse_csc``, with global row indices.
    gnnz : int
        Stored entries of the global matrix.
    gshape : tuple of int
        The global shape.
    dtype : heat type
    split : 1 or None
    device : Device
    comm : MPICommunication
    balanced : bool or None
        Whether the columns follow the default balanced layout (None: find out when asked).

    Examples
    --------
    >>> a = ht.sparse.sparse_csc_matrix([[1, 0, 2], [0, 0, 3], [4, 5, 6]], split=1)
    >>> a.gnnz, a.shape, a.split
    (6, (3, 3), 1)
    >>> a.lshape  # on rank 0 of 2
    (3, 2)
    """

    _axis = 1
    _format = "csc"
