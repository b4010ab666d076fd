"""
The communicator: :class:`MPICommunication`, composed of the parts in :mod:`.reductions`,
:mod:`.collectives`, :mod:`.vector_collectives`, :mod:`.tensors` and :mod:`.topology`, plus what
belongs to the communicator itself (layout of arrays, argument checks, small Python objects,
sub-communicators); the communicators ``MPI_WORLD`` and ``MPI_SELF`` and the default communicator.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from mpi4py import MPI

from .buffers import (
    _check_tensor,
    _displacements,
    _int_list,
    _is_sequence,
    _local_block,
    _normalize_axis,
)
from .collectives import _Collectives
from .reductions import _Reductions
from .tensors import _TensorConveniences
from .topology import NodeTopology, _NodeTopology
from .vector_collectives import _VectorCollectives


class Communication:
    """Base class of heat communicators: the distribution layout of arrays."""

    rank: int
    size: int

    def is_distributed(self) -> bool:
        """Whether more than one process takes part."""
        raise NotImplementedError

    def chunk(self, shape, split, rank=None, w_size=None):
        """The part of an array of ``shape`` that a process holds."""
        raise NotImplementedError


def _check_shape(shape: Any) -> Tuple[int, ...]:
    if isinstance(shape, torch.Size):
        return tuple(shape)
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(
            f"shape must be a sequence of integers, got {type(shape).__name__}"
        ) from None
    result = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            try:
                d = int(d.__index__())
            except Exception:
                raise TypeError(f"shape must contain integers, got {d!r}") from None
        if d < 0:
            raise ValueError(f"shape must not contain negative dimensions, got {dims}")
        result.append(d)
    return tuple(result)


class MPICommunication(
    _Reductions, _Collectives, _VectorCollectives, _TensorConveniences, _NodeTopology, Communication
):
    """
    A communicator over an mpi4py intracommunicator, speaking torch tensors.

    Parameters
    ----------
    handle : MPI.Intracomm, optional
        The mpi4py communicator (default ``MPI.COMM_WORLD``).

    Attributes
    ----------
    handle : MPI.Intracomm
        The wrapped communicator; attributes not defined here are looked up on it.
    rank, size : int
        This process's rank and the number of processes.

    Notes
    -----
    Buffer collectives (capitalised: ``Allreduce``, ``Bcast``, ...) follow MPI: every process of the
    communicator calls them with matching sizes. Counts and displacements of the vector variants
    count elements of the flattened tensors. Tensors may be non-contiguous and of any heat dtype
    (``bool``, integers, ``float16``, ``bfloat16``, ``float32``, ``float64``, ``complex64``,
    ``complex128``); results are written into the given receive tensors. A DNDarray passed as a
    buffer stands for its local block ``x.larray`` (also in what is returned).

    Every collective has a non-blocking form (``Iallreduce``, ``Iallgatherv``, ``Ialltoallw``,
    ...) with the same arguments, returning a :class:`Request` whose ``Wait()`` gives what the
    blocking form returns; the request keeps the buffers alive until it completes.

    The methods live in parts, one module each: reductions (:mod:`.reductions`), broadcast,
    point-to-point and equal-block collectives (:mod:`.collectives`), vector collectives and
    ``Alltoallw`` (:mod:`.vector_collectives`), tensor-level conveniences (:mod:`.tensors`) and
    the node topology (:mod:`.topology`); this module adds the layout of arrays, argument checks,
    object collectives and sub-communicators.

    Examples
    --------
    >>> comm = MPICommunication()
    >>> comm.rank, comm.size  # on rank 1 of 2
    (1, 2)
    """

    def __init__(self, handle: MPI.Intracomm = MPI.COMM_WORLD):
        if not isinstance(handle, MPI.Intracomm):
            raise TypeError(f"handle must be an mpi4py MPI.Intracomm, got {type(handle).__name__}")
        if handle == MPI.COMM_NULL:
            raise ValueError("handle must not be MPI.COMM_NULL")
        self.handle = handle
        self.rank: int = handle.Get_rank()
        self.size: int = handle.Get_size()
        self._hash = hash(handle.py2f())
        self._topologies: Dict[Optional[int], NodeTopology] = {}

    # -- basics ----------------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # only reached for names not defined here: delegate to the mpi4py communicator
        if name.startswith("__") or name in ("handle", "_topologies", "_hash"):
            raise AttributeError(name)
        handle = self.__dict__.get("handle")
        if handle is None:
            raise AttributeError(name)
        return getattr(handle, name)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, MPICommunication) and (
            other is self or self.handle == other.handle
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"MPICommunication(rank={self.rank}, size={self.size})"

    def is_distributed(self) -> bool:
        """
        Whether the communicator has more than one process.

        Examples
        --------
        >>> MPI_SELF.is_distributed()
        False
        """
        return self.size > 1

    def world_ranks(self) -> List[int]:
        """
        The ``MPI.COMM_WORLD`` rank of every process of this communicator, in rank order.

        Examples
        --------
        >>> MPI_WORLD.world_ranks()  # with 3 processes
        [0, 1, 2]
        """
        group, world_group = self.handle.Get_group(), MPI.COMM_WORLD.Get_group()
        try:
            return [int(r) for r in group.Translate_ranks(list(range(self.size)), world_group)]
        finally:
            group.Free()
            world_group.Free()

    # -- layout ----------------------------------------------------------------------------------

    def chunk(
        self,
        shape: Sequence[int],
        split: Optional[int],
        rank: Optional[int] = None,
        w_size: Optional[int] = None,
    ) -> Tuple[int, Tuple[int, ...], Tuple[slice, ...]]:
        """
        The balanced share of an array of global ``shape`` split along ``split`` held by ``rank``.

        Rank r holds ``n // p`` rows, plus one for ``r < n % p``.

        Parameters
        ----------
        shape : sequence of int
            Global shape.
        split : int or None
            The split axis (negative counts from the end); None: every process holds everything.
        rank : int, optional
            The process asked about (default: this one).
        w_size : int, optional
            The number of processes (default: ``self.size``).

        Returns
        -------
        offset : int
            Global index of the first local row along ``split`` (0 for ``split=None``).
        local_shape : tuple of int
        slices : tuple of slice
            Global index of the local block, one slice per dimension.

        Raises
        ------
        TypeError
            If ``shape``, ``split``, ``rank`` or ``w_size`` has a wrong type.
        ValueError
            If ``split`` is out of bounds, ``w_size < 1`` or ``rank`` not in ``[0, w_size)``.

        Examples
        --------
        >>> MPI_WORLD.chunk((5, 4), 0, rank=2, w_size=3)
        (4, (1, 4), (slice(4, 5, None), slice(0, 4, None)))
        """
        dims = _check_shape(shape)
        if split is None:
            return 0, dims, tuple(slice(0, d) for d in dims)
        if len(dims) == 0:
            raise ValueError("split must be None for a 0-dimensional shape")
        split = _normalize_axis(split, len(dims), "split")
        w_size = self.size if w_size is None else w_size
        if isinstance(w_size, bool) or not isinstance(w_size, int):
            raise TypeError(f"w_size must be an int, got {type(w_size).__name__}")
        if w_size < 1:
            raise ValueError(f"w_size must be >= 1, got {w_size}")
        rank = self.rank if rank is None else rank
        if isinstance(rank, bool) or not isinstance(rank, int):
            raise TypeError(f"rank must be an int, got {type(rank).__name__}")
        if not 0 <= rank < w_size:
            raise ValueError(f"rank must be in [0, {w_size}), got {rank}")
        n = dims[split]
        base, remainder = divmod(n, w_size)
        local = base + (1 if rank < remainder else 0)
        offset = rank * base + min(rank, remainder)
        local_shape = dims[:split] + (local,) + dims[split + 1 :]
        slices = tuple(
            slice(offset, offset + local) if i == split else slice(0, d) for i, d in enumerate(dims)
        )
        return offset, local_shape, slices

    def counts_displs_shape(
        self, shape: Sequence[int], split: int
    ) -> Tuple[Tuple[int, ...], Tuple[int, ...], Tuple[int, ...]]:
        """
        Rows per process along ``split`` of the balanced layout, their offsets, and the local shape.

        Parameters
        ----------
        shape : sequence of int
            Global shape.
        split : int
            The split axis.

        Returns
        -------
        counts : tuple of int
            Rows held by each process.
        displs : tuple of int
            Global index of each process's first row.
        chunk_shape : tuple of int
            The shape of this process's block.

        Examples
        --------
        >>> MPI_WORLD.counts_displs_shape((5, 2), 0)  # on rank 0 of 3
        ((2, 2, 1), (0, 2, 4), (2, 2))
        """
        if split is None:
            raise ValueError("split must be an axis, not None")
        dims = _check_shape(shape)
        if len(dims) == 0:
            raise ValueError("split must be None for a 0-dimensional shape")
        split = _normalize_axis(split, len(dims), "split")
        base, remainder = divmod(dims[split], self.size)
        counts = tuple(base + (1 if r < remainder else 0) for r in range(self.size))
        displs = tuple(_displacements(counts))
        chunk_shape = dims[:split] + (counts[self.rank],) + dims[split + 1 :]
        return counts, displs, chunk_shape

    # -- argument checks -------------------------------------------------------------------------

    def _check_root(self, root: Any) -> int:
        if isinstance(root, bool) or not isinstance(root, int):
            raise TypeError(f"root must be an int, got {type(root).__name__}")
        if not 0 <= root < self.size:
            raise ValueError(f"root must be in [0, {self.size}), got {root}")
        return root

    def _vbuf(self, buf: Any, name: str) -> Tuple[torch.Tensor, List[int], List[int]]:
        """
        Parse ``(t, counts, displs)``, ``(t, (counts, displs))`` or ``(t, counts)``; ``t`` is a
        tensor or a DNDarray, which stands for its local block.
        """
        if not isinstance(buf, (tuple, list)) or not 2 <= len(buf) <= 3:
            raise TypeError(
                f"{name} must be a tuple (tensor, counts, displs), got {type(buf).__name__}"
            )
        tensor = _check_tensor(_local_block(buf[0]), f"{name}[0]")
        pair = buf[1] if len(buf) == 2 else None
        if (
            isinstance(pair, tuple)
            and len(pair) == 2
            and all(_is_sequence(p) or p is None for p in pair)
        ):
            counts, displs = pair
        else:
            counts, displs = buf[1], (buf[2] if len(buf) == 3 else None)
        counts = _int_list(counts, f"{name} counts", self.size)
        displs = (
            _displacements(counts)
            if displs is None
            else _int_list(displs, f"{name} displs", self.size)
        )
        numel = tensor.numel()
        for c, d in zip(counts, displs):
            if c and d + c > numel:
                raise ValueError(
                    f"{name}: counts/displs reach element {d + c}, but the tensor has {numel}"
                )
        return tensor, counts, displs

    def _any_rank(self, flag: bool) -> bool:
        """Whether ``flag`` holds on any rank (one tiny collective)."""
        return bool(self.handle.allreduce(bool(flag), op=MPI.LOR))

    # -- small Python objects ----------------------------------------------------------------------

    def allreduce(self, obj: Any, op: MPI.Op = MPI.SUM) -> Any:
        """
        Reduce picklable objects with ``op`` (for small metadata).

        Examples
        --------
        >>> MPI_WORLD.allreduce(1)  # with 3 processes
        3
        """
        return self.handle.allreduce(obj, op=op)

    def bcast(self, obj: Any = None, root: int = 0) -> Any:
        """
        Broadcast a picklable object from ``root``.

        Examples
        --------
        >>> MPI_WORLD.bcast({"n": 5} if MPI_WORLD.rank == 0 else None)
        {'n': 5}
        """
        return self.handle.bcast(obj, root=root)

    def allgather(self, obj: Any) -> List[Any]:
        """
        The picklable objects of all processes, in rank order.

        Examples
        --------
        >>> MPI_WORLD.allgather(MPI_WORLD.rank)  # with 3 processes
        [0, 1, 2]
        """
        return self.handle.allgather(obj)

    def gather(self, obj: Any, root: int = 0) -> Optional[List[Any]]:
        """
        The picklable objects of all processes on ``root`` (None elsewhere).

        Examples
        --------
        >>> MPI_WORLD.gather(MPI_WORLD.rank)  # rank 0 of 2
        [0, 1]
        """
        return self.handle.gather(obj, root=root)

    def alltoall(self, objs: Sequence[Any]) -> List[Any]:
        """
        ``objs[r]`` goes to rank r; result[r] came from rank r.

        Examples
        --------
        >>> MPI_WORLD.alltoall([(MPI_WORLD.rank, q) for q in range(MPI_WORLD.size)])  # rank 1 of 2
        [(0, 1), (1, 1)]
        """
        return self.handle.alltoall(objs)

    # -- sub-communicators -------------------------------------------------------------------------

    def Split(self, color: int = 0, key: int = 0) -> Optional["MPICommunication"]:
        """
        Partition the processes by ``color``, ordered by ``key`` (ties: by rank).

        Returns
        -------
        MPICommunication or None
            None for ``color=MPI.UNDEFINED``.

        Examples
        --------
        >>> halves = MPI_WORLD.Split(MPI_WORLD.rank % 2, MPI_WORLD.rank)
        """
        handle = self.handle.Split(color, key)
        if handle == MPI.COMM_NULL:
            return None
        return MPICommunication(handle)

    def Dup(self) -> "MPICommunication":
        """A duplicate communicator (same processes, separate message space)."""
        return MPICommunication(self.handle.Dup())

    def Free(self) -> None:
        """
        Free the communicator (and its cached node topology); no-op for COMM_WORLD and COMM_SELF.
        """
        if self.handle in (MPI.COMM_WORLD, MPI.COMM_SELF, MPI.COMM_NULL):
            return
        for topology in self._topologies.values():
            topology.free()
        self._topologies.clear()
        self.handle.Free()


# ------------------------------------------------------------------------------------------------
# default communicator
# ------------------------------------------------------------------------------------------------

MPI_WORLD = MPICommunication(MPI.COMM_WORLD)
#: This process alone.
MPI_SELF = MPICommunication(MPI.COMM_SELF)

__default_comm = MPI_WORLD


def get_comm() -> MPICommunication:
    """
    The default communicator of new arrays.

    Examples
    --------
    >>> get_comm() is MPI_WORLD
    True
    """
    return __default_comm


def sanitize_comm(comm: Any) -> MPICommunication:
    """
    Turn ``comm`` into an :class:`MPICommunication`.

    Parameters
    ----------
    comm : MPICommunication, MPI.Intracomm or None
        None gives the default communicator; an mpi4py communicator is wrapped.

    Raises
    ------
    TypeError
        If ``comm`` is anything else.
    ValueError
        If ``comm`` is ``MPI.COMM_NULL``.

    Examples
    --------
    >>> sanitize_comm(MPI.COMM_WORLD) is MPI_WORLD
    True
    """
    if comm is None:
        return get_comm()
    if isinstance(comm, MPICommunication):
        return comm
    if isinstance(comm, MPI.Comm):
        if comm == MPI.COMM_NULL:
            raise ValueError("comm must not be MPI.COMM_NULL")
        if comm == MPI.COMM_WORLD:
            return MPI_WORLD
        if comm == MPI.COMM_SELF:
            return MPI_SELF
        if isinstance(comm, MPI.Intracomm):
            return MPICommunication(comm)
    raise TypeError(
        "comm must be an MPICommunication, an mpi4py intracommunicator or None, "
        f"got {type(comm).__name__}"
    )


def use_comm(comm: Any = None) -> None:
    """
    Set the default communicator (None: ``MPI_WORLD``).

    Raises
    ------
    TypeError
        If ``comm`` is not a communicator.

    Examples
    --------
    >>> use_comm(MPI_SELF)
    >>> get_comm() is MPI_SELF
    True
    >>> use_comm()
    """
    global __default_comm
    __default_comm = MPI_WORLD if comm is None else sanitize_comm(comm)
