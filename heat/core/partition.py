"""
The ``__partitioned__`` protocol: exchanging distributed arrays with other libraries without a
copy to one process.

A partitioned array describes itself by a dictionary (SPMD flavour, as HeAT and the protocol's
reference implementations use it):

``"shape"``
    The global shape (tuple).
``"partition_tiling"``
    How many partitions there are along every axis (tuple of the same length as ``shape``).
``"partitions"``
    ``{tile index: partition}``: the tile index is the partition's position in the tiling grid
    (a tuple); every partition is a dict with ``"start"`` (global index of its first element,
    a tuple), ``"shape"`` (tuple), ``"data"`` (the local object for the partitions this process
    holds, None for the others) and ``"location"`` (list of the ranks that hold it).
``"locals"``
    The tile indices of the partitions this process holds.
``"get"``
    A callable that turns a partition's ``"data"`` into the data itself (the identity here).

:attr:`DNDarray.__partitioned__` produces this dictionary, :func:`from_partitioned` and
:func:`from_partition_dict` consume it. A heat array is tiled along its split axis, one tile per
process, so an array tiled along one axis and owned in rank order round-trips without a copy.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np
import torch

from . import devices, types
from .communication import sanitize_comm
from .dndarray import DNDarray

__all__ = ["from_partition_dict", "from_partitioned"]


def _identity(data: Any) -> Any:
    """The ``"get"`` of heat's partitions: the data is local, nothing to fetch."""
    return data


def partitioned(x: DNDarray) -> Dict[str, Any]:
    """
    The ``__partitioned__`` dictionary of ``x`` (installed as the property
    :attr:`DNDarray.__partitioned__`): one partition per process along the split axis (each
    process's ``"data"`` is its own local ``torch.Tensor``, shared, not copied), or one partition
    held by every process when ``x`` is not split.

    Collective (one allgather of the local shapes) when the layout of ``x`` is not known to be
    balanced.

    Examples
    --------
    >>> x = ht.zeros((5, 3), split=0)
    >>> parts = x.__partitioned__  # at 2 processes
    >>> parts["partition_tiling"], parts["locals"]
    ((2, 1), [(0, 0)])  # on rank 0; [(1, 0)] on rank 1
    >>> [(p["start"], p["shape"], p["location"]) for p in parts["partitions"].values()]
    [((0, 0), (3, 3), [0]), ((3, 0), (2, 3), [1])]
    """
    comm = x.comm
    ndim = x.ndim
    gshape = tuple(x.gshape)
    if x.split is None:
        tile = (0,) * ndim
        partitions = {
            tile: {
                "start": (0,) * ndim,
                "shape": gshape,
                "data": x.larray,
                "location": list(range(comm.size)),
            }
        }
        return {
            "shape": gshape,
            "partition_tiling": (1,) * ndim,
            "partitions": partitions,
            "locals": [tile],
            "get": _identity,
        }
    split = x.split
    counts, displs = x.counts_displs()
    partitions = {}
    for rank, (count, displ) in enumerate(zip(counts, displs)):
        tile = tuple(rank if axis == split else 0 for axis in range(ndim))
        partitions[tile] = {
            "start": tuple(displ if axis == split else 0 for axis in range(ndim)),
            "shape": tuple(count if axis == split else gshape[axis] for axis in range(ndim)),
            "data": x.larray if rank == comm.rank else None,
            "location": [rank],
        }
    return {
        "shape": gshape,
        "partition_tiling": tuple(comm.size if axis == split else 1 for axis in range(ndim)),
        "partitions": partitions,
        "locals": [tuple(comm.rank if axis == split else 0 for axis in range(ndim))],
        "get": _identity,
    }


def _as_tensor(data: Any) -> torch.Tensor:
    """A partition's data as a torch tensor, sharing memory where the data allows it."""
    if isinstance(data, torch.Tensor):
        return data
    if isinstance(data, DNDarray):
        return data.larray
    if isinstance(data, np.ndarray):
        return torch.from_numpy(data)
    if hasattr(data, "__dlpack__"):
        return torch.from_dlpack(data)
    return torch.as_tensor(np.asarray(data))


def _int_tuple(value: Any, what: str) -> Tuple[int, ...]:
    try:
        result = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(
            f"parted: {what} must be a sequence of integers, but was {value!r}"
        ) from None
    if any(v < 0 for v in result):
        raise ValueError(f"parted: {what} must not be negative, but was {value!r}")
    return result


def _layout(parted: Dict[str, Any], size: int):
    """
    Check the partition table (information every process shares, so every process raises the
    same error) and derive the heat layout: the split axis, and for every process the tile
    indices it owns in global order and the number of elements it holds along the split axis.
    """
    if not isinstance(parted, dict):
        raise TypeError(f"parted must be a dict, but was {type(parted).__name__}")
    for key in ("shape", "partitions", "locals"):
        if key not in parted:
            raise ValueError(f"parted must have a {key!r} entry (SPMD __partitioned__ protocol)")
    gshape = _int_tuple(parted["shape"], "'shape'")
    ndim = len(gshape)
    partitions = parted["partitions"]
    if not isinstance(partitions, dict) or not partitions:
        raise ValueError("parted['partitions'] must be a non-empty dict")
    entries = []
    for tile, part in partitions.items():
        if not isinstance(part, dict) or not {"start", "shape", "location"} <= set(part):
            raise ValueError(
                f"partition {tile!r} must be a dict with 'start', 'shape' and 'location'"
            )
        start = _int_tuple(part["start"], f"partition {tile!r} 'start'")
        shape = _int_tuple(part["shape"], f"partition {tile!r} 'shape'")
        location = list(part["location"])
        if len(start) != ndim or len(shape) != ndim:
            raise ValueError(
                f"partition {tile!r}: 'start' {start} and 'shape' {shape} must have "
                f"{ndim} entries like the global shape {gshape}"
            )
        if not location or any(not 0 <= int(r) < size for r in location):
            raise ValueError(
                f"partition {tile!r}: 'location' {location} must name ranks of the "
                f"communicator (0 to {size - 1})"
            )
        if any(s + n > g for s, n, g in zip(start, shape, gshape)):
            raise ValueError(f"partition {tile!r} reaches beyond the global shape {gshape}")
        entries.append((tile, start, shape, [int(r) for r in location]))
    # the axes along which the partitions do not span the whole array
    axes = [a for a in range(ndim) if any(e[1][a] != 0 or e[2][a] != gshape[a] for e in entries)]
    if not axes and len(entries) > 1:
        # identical partitions (the array is empty along the tiled axis): the tiling says which
        tiling = tuple(parted.get("partition_tiling", ()))
        axes = [a for a, t in enumerate(tiling) if int(t) > 1][:1] or ([0] if ndim else [])
    if len(axes) > 1:
        raise ValueError(
            f"parted is tiled along axes {axes}; heat arrays are split along at most one axis "
            "(redistribute the array along one axis first)"
        )
    if not axes:
        if len(entries) != 1:
            raise ValueError("parted: the partitions do not tile the global shape")
        tile, _, _, location = entries[0]
        if sorted(set(location)) == list(range(size)):
            return gshape, None, {r: [tile] for r in range(size)}, None
        axes = [0] if ndim else []
        if not axes:
            raise ValueError("parted: a 0-d array must be held by every process")
    split = axes[0]
    # the non-empty partitions, ordered by start, must tile the split axis; empty ones hold
    # nothing and may sit anywhere
    entries.sort(key=lambda e: (e[1][split], e[3][0]))
    expected = tuple(n for a, n in enumerate(gshape) if a != split)
    position = 0
    for tile, start, shape, _ in entries:
        others = tuple(n for a, n in enumerate(shape) if a != split)
        if others != expected or any(s != 0 for a, s in enumerate(start) if a != split):
            raise ValueError(
                f"parted: partition {tile!r} (start {start}, shape {shape}) does not span the "
                f"global shape {gshape} along the axes other than {split}"
            )
        if shape[split] == 0:
            continue
        if start[split] != position:
            raise ValueError(
                f"parted: the partitions do not tile the global shape {gshape} along axis "
                f"{split} without gaps or overlaps (partition {tile!r} starts at {start})"
            )
        position += shape[split]
    if position != gshape[split]:
        raise ValueError(
            f"parted: the partitions cover {position} of {gshape[split]} elements along axis {split}"
        )
    # every partition belongs to its first location; the owners must follow the global order
    owners = [e[3][0] for e in entries if e[2][split] > 0]
    if any(a > b for a, b in zip(owners, owners[1:])):
        raise ValueError(
            "parted: the partitions along the split axis are not held in rank order "
            f"(owners {owners}); heat needs process r's block before process r + 1's"
        )
    owned = {r: [] for r in range(size)}
    counts = [0] * size
    for tile, _, shape, location in entries:
        owner = location[0]
        owned[owner].append(tile)
        counts[owner] += shape[split]
    return gshape, split, owned, counts


def from_partition_dict(parted: Dict[str, Any], comm=None) -> DNDarray:
    """
    A DNDarray from a ``__partitioned__`` dictionary (see the module documentation), built from
    the partitions every process holds, without a copy to one process.

    The partitions must tile the array along at most one axis, which becomes the split axis,
    and be held in rank order along it (process r's partitions before process r + 1's); a
    partition listed at several ranks belongs to the first. A process holding one partition
    shares its memory (torch tensors, NumPy arrays and DLPack objects are not copied); one
    holding several adjacent partitions concatenates them. A partition held by every process
    (tiling of ones) gives a non-split array. The data type is that of the first partition
    along the split axis.

    Collective: one allgather of the local data types and shapes, which also makes a process
    whose data does not fit its table raise the same error as every other process.

    Parameters
    ----------
    parted : dict
        The partition dictionary, as :attr:`DNDarray.__partitioned__` returns it.
    comm : Communication, optional
        The processes that hold the partitions (default: heat's default communicator).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``parted`` is not a dict or a partition's data cannot be read as a tensor.
    ValueError
        If entries are missing, the partitions do not tile the global shape, are tiled along
        more than one axis or are not held in rank order, or a local partition's data does not
        have its shape.

    Examples
    --------
    >>> a = ht.ones((44, 55), split=0)
    >>> b = ht.from_partition_dict(a.__partitioned__)
    >>> b.split, b.shape  # at 2 processes (at 1, one partition held by all: split None)
    (0, (44, 55))
    >>> a[40] = 4711  # b shares a's memory
    >>> (a == b).all().item()
    True
    """
    comm = sanitize_comm(comm)
    gshape, split, owned, counts = _layout(parted, comm.size)
    get = parted.get("get", _identity) or _identity
    partitions = parted["partitions"]
    problem = None
    blocks: List[torch.Tensor] = []
    for tile in owned[comm.rank]:
        try:
            block = _as_tensor(get(partitions[tile]["data"]))
        except Exception as error:  # reported on every process below
            problem = f"TypeError: partition {tile!r}: cannot read its data ({error})"
            break
        if tuple(block.shape) != tuple(int(n) for n in partitions[tile]["shape"]):
            problem = (
                f"ValueError: partition {tile!r}: data of shape {tuple(block.shape)}, but the "
                f"table says {tuple(partitions[tile]['shape'])}"
            )
            break
        blocks.append(block)
    dtype = str(blocks[0].dtype) if blocks and problem is None else None
    reports = comm.allgather((problem, dtype))
    for rank, (message, _) in enumerate(reports):
        if message is not None:
            kind, text = message.split(": ", 1)
            raise (TypeError if kind == "TypeError" else ValueError)(f"rank {rank}: {text}")
    torch_type = getattr(torch, next(d for _, d in reports if d is not None).split(".")[-1])
    if len(blocks) == 1:
        local = blocks[0]
    elif blocks:
        local = torch.cat(blocks, dim=split)
    else:
        shape = list(gshape)
        shape[split] = 0
        local = torch.empty(shape, dtype=torch_type, device=devices.get_device().torch_device)
    if local.dtype != torch_type:
        local = local.to(torch_type)
    device = devices.sanitize_device(local.device)
    balanced = True
    if split is not None:
        balanced = list(counts) == list(comm.counts_displs_shape(gshape, split)[0])
    return DNDarray(
        local, gshape, types.canonical_heat_type(torch_type), split, device, comm, balanced
    )


def from_partitioned(x: Any, comm=None) -> DNDarray:
    """
    A DNDarray from any object that exposes the ``__partitioned__`` protocol (a DNDarray,
    or an array of another distributed library), without a copy to one process: the local
    partitions are shared. See :func:`from_partition_dict` for the layouts that are accepted.

    Collective.

    Parameters
    ----------
    x : object
        An object with a ``__partitioned__`` attribute (the partition dictionary).
    comm : Communication, optional
        The processes that hold the partitions (default: heat's default communicator).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` has no ``__partitioned__`` attribute; otherwise as :func:`from_partition_dict`.

    Examples
    --------
    >>> a = ht.arange(10, split=0)
    >>> b = ht.from_partitioned(a)
    >>> b.larray.data_ptr() == a.larray.data_ptr()
    True
    """
    if not hasattr(x, "__partitioned__"):
        raise TypeError(
            f"x must expose the __partitioned__ protocol, but {type(x).__name__} does not"
        )
    return from_partition_dict(x.__partitioned__, comm=comm)
