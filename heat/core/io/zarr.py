"""Zarr arrays: load_zarr, save_zarr."""

from __future__ import annotations

import fnmatch
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..communication import MPICommunication, sanitize_comm
from ..devices import Device, sanitize_device
from ..dndarray import DNDarray
from ..sanitation import sanitize_split
from ._collective import (
    _agree,
    _atomic_save,
    _check_convertible,
    _check_dndarray,
    _check_dtype,
    _check_path,
    _check_same_trailing_shape,
    _check_slices_types,
    _check_split_type,
    _check_str,
    _file_dtype,
    _heat_type_of_file,
    _in_turn,
    _local_block,
    _own_slices,
    _reached_middle_of_write,
    _read_sources,
    _root_decides,
    _selection,
    _Source,
)
from ._common import PathLike, _module


class _ZarrSource(_Source):
    def __init__(self, path: str, variable: Optional[str], dtype, selection, options: Dict):
        name = f"'{path}'" if variable is None else f"array '{variable}' of '{path}'"
        super().__init__(name, dtype, selection)
        self.path, self.variable, self.options = path, variable, options

    def read(self, dest, dest_sel, ranges) -> None:
        zarr = _module("zarr", "load_zarr")
        try:
            array = _zarr_open_array(zarr, self.path, self.variable, self.options)
            dest[dest_sel] = array[self.file_slices(ranges)] if dest.ndim else array[...]
        except (OSError, KeyError, ValueError, RuntimeError) as error:
            raise self._failed(error) from error


def _zarr_open_array(zarr, path: str, variable: Optional[str], options: Dict):
    opened = zarr.open(store=path, mode="r", **options)
    if variable is not None:
        opened = opened[variable]
    return opened


def _zarr_info(
    path: str, variable: Optional[str], options: Dict
) -> List[Tuple[Optional[str], Tuple[int, ...], np.dtype]]:
    zarr = _module("zarr", "load_zarr")
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such Zarr store: '{path}'")
    try:
        opened = zarr.open(store=path, mode="r", **options)
    except (OSError, ValueError, KeyError) as error:
        raise ValueError(f"'{path}' is not a readable Zarr store: {error}") from error
    if isinstance(opened, zarr.Array):
        if variable is not None:
            raise KeyError(f"'{path}' is a single array; it has no variable '{variable}'")
        return [(None, tuple(opened.shape), np.dtype(opened.dtype))]
    arrays = sorted(
        name for name, node in opened.members(max_depth=None) if isinstance(node, zarr.Array)
    )
    if variable is None:
        raise ValueError(
            f"'{path}' is a Zarr group; name one of its arrays as variable: {arrays[:10]}"
        )
    names = (
        sorted(fnmatch.filter(arrays, variable))
        if any(c in variable for c in "*?[")
        else ([variable] if variable in arrays else [])
    )
    if not names:
        raise KeyError(f"'{path}' has no array '{variable}' (it holds: {arrays[:10]})")
    infos = []
    for name in names:
        node = opened[name]
        infos.append((name, tuple(node.shape), np.dtype(node.dtype)))
    return infos


def load_zarr(
    path: PathLike,
    variable: Optional[str] = None,
    split: Optional[int] = 0,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
    slices: Optional[Union[slice, Sequence[Optional[slice]]]] = None,
    dtype: Optional[Any] = None,
    **kwargs: Any,
) -> DNDarray:
    """
    Load an array of a Zarr store; every process reads only its own block.

    Needs the optional package ``zarr`` (``pip install heat-mpi[zarr]``).

    Parameters
    ----------
    path : str or os.PathLike
        The store (a folder): a single array or a group.
    variable : str, optional
        For a group: the array to load (e.g. ``"RECEIVER_1/DATA"``). A pattern with ``*``, ``?``
        or ``[...]`` loads every matching array (sorted by name), concatenated along ``split``
        (along axis 0 for ``split=None``).
    split : int or None, optional
        The axis the result is distributed along (default 0).
    device : str or Device, optional
    comm : MPICommunication, optional
    slices : slice or tuple of slices (or None), optional
        Load only this part of a single array; out of range is an error.
    dtype : heat type, optional
        Type of the result (the values are converted while read, as in :func:`load_hdf5`);
        default: the arrays' (promoted) type.
    **kwargs
        Passed to ``zarr.open``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    KeyError
        If no array matches ``variable``.
    ValueError
        If ``path`` is not a Zarr store, ``variable`` is missing for a group, the matching
        arrays' shapes do not fit, or ``slices`` is out of range.
    TypeError
        If an argument has a wrong type, or the arrays hold complex values and ``dtype`` is
        real.
    ImportError
        If zarr is not installed.

    Examples
    --------
    >>> ht.save_zarr(ht.arange(10, split=0), "data.zarr")
    >>> ht.load_zarr("data.zarr", split=0).shape
    (10,)
    """
    _module("zarr", "load_zarr")
    path = _check_path(path)
    if variable is not None:
        _check_str(variable, "variable")
    _check_split_type(split)
    slices = _check_slices_types(slices)
    heat_type = _check_dtype(dtype)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    infos = _root_decides(comm, _zarr_info, path, variable, kwargs)
    if len(infos) > 1 and slices:
        raise ValueError("slices can only be given for a single array, not for a pattern")
    # several arrays (a pattern) are concatenated along the split axis, as in HeAT
    axis = sanitize_split(infos[0][1], 0 if split is None else split) if infos[0][1] else 0
    if len(infos) > 1:
        _check_same_trailing_shape([(n, s) for n, s, _ in infos], "array", axis)
    sources = []
    for name, shape, file_dtype in infos:
        where = f"'{path}'" if name is None else f"array '{name}' of '{path}'"
        sources.append(
            _ZarrSource(path, name, file_dtype, _selection(slices, shape, where), kwargs)
        )
    if heat_type is None:
        heat_type = _heat_type_of_file(
            np.result_type(*[s.dtype for s in sources]), sources[0].where
        )
    for source in sources:
        _check_convertible(source.dtype, heat_type, source.where)
    shape = list(sources[0].shape)
    if shape:
        shape[axis] = sum(s.shape[axis] for s in sources)
    split = sanitize_split(tuple(shape), split)
    return _read_sources(sources, axis, heat_type, split, device, comm)


def save_zarr(data: DNDarray, path: PathLike, overwrite: bool = False, **kwargs: Any) -> None:
    """
    Save ``data`` as a Zarr array (a folder), atomically: the store is written to a temporary
    folder next to ``path`` and swapped in when complete.

    Every process writes its own block: the chunks that lie entirely in its rows concurrently,
    the chunks it shares with a neighbour one process after the other, so no chunk is written
    by two processes at once.

    Needs the optional package ``zarr`` (``pip install heat-mpi[zarr]``).

    Parameters
    ----------
    data : DNDarray
        The array (bfloat16 is stored as float32).
    path : str or os.PathLike
        The store.
    overwrite : bool, optional
        Replace an existing store at ``path`` (default: an error).
    **kwargs
        Passed to ``zarr.create_array`` (e.g. ``chunks=(1000, 64)``, ``compressors=...``).

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is False.
    FileNotFoundError
        If the folder of ``path`` does not exist.
    TypeError
        If ``data`` is not a DNDarray or another argument has a wrong type.
    ImportError
        If zarr is not installed.

    Examples
    --------
    >>> ht.save_zarr(ht.ones((100, 4), split=0), "data.zarr", chunks=(25, 4))
    """
    zarr = _module("zarr", "save_zarr")
    _check_dndarray(data)
    path = _check_path(path).rstrip(os.sep) or os.sep
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be a bool, got {type(overwrite).__name__}")
    comm = data.comm
    file_dtype = _file_dtype(data, None)
    writers, own = _own_slices(data)
    local = _local_block(data.larray, file_dtype) if comm.rank in writers else None

    def create(temporary: str) -> int:
        array = zarr.create_array(store=temporary, shape=data.gshape, dtype=file_dtype, **kwargs)
        if data.split is None:
            return 0
        granularity = array.shards if getattr(array, "shards", None) else array.chunks
        return int(granularity[data.split])

    split = data.split

    def put(array, rows: Optional[Tuple[int, int]]) -> None:
        """Write the rows ``rows`` (global, along split) of the local block; None: all of it."""
        if rows is None:
            array[...] = local
            return
        region = list(own)
        region[split] = slice(*rows)
        block = [slice(None)] * local.ndim
        block[split] = slice(rows[0] - own[split].start, rows[1] - own[split].start)
        array[tuple(region)] = local[tuple(block)]

    def write(temporary: str, existed: bool) -> None:
        chunk = _root_decides(comm, create, temporary)
        inner, edges = None, [None]  # replicated array: process 0 writes all of it in its turn
        if split is not None:
            begin, end = own[split].start, own[split].stop
            # rows [inner_begin, inner_end) fill whole chunks that no other process touches
            inner_begin = min(end, -(-begin // chunk) * chunk)
            inner_end = end if end == data.gshape[split] else max(inner_begin, end // chunk * chunk)
            if inner_begin < inner_end:
                inner = (inner_begin, inner_end)
                edges = [r for r in ((begin, inner_begin), (inner_end, end)) if r[0] < r[1]]
            else:
                edges = [(begin, end)] if begin < end else []

        def write_inner() -> None:
            if inner is not None and local is not None and local.size:
                put(zarr.open_array(store=temporary, mode="r+"), inner)

        _agree(comm, write_inner)

        def write_edges(first: bool) -> None:
            if local is not None and local.size and edges:
                array = zarr.open_array(store=temporary, mode="r+")
                for rows in edges:
                    put(array, rows)
            _reached_middle_of_write("zarr", comm)

        _in_turn(comm, writers, write_edges)

    _atomic_save(path, comm, write, directory=True, exclusive=not overwrite)
