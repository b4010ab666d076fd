"""NumPy ``.npy`` files: load_npy, save_npy, load_npy_from_path."""

from __future__ import annotations

import math
import os
from typing import Any, List, Optional, Tuple, Union

import numpy as np

from .. import types
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
    _check_split_type,
    _file_dtype,
    _full_selection,
    _heat_type_of_file,
    _is_temporary_name,
    _load_file,
    _local_block,
    _own_slices,
    _pwrite_all,
    _reached_middle_of_write,
    _read_sources,
    _require_file,
    _require_folder,
    _root_decides,
    _Source,
)
from ._common import PathLike


class _NpySource(_Source):
    def __init__(self, path: str, header: Tuple[Tuple[int, ...], bool, np.dtype, int], selection):
        shape, fortran_order, dtype, offset = header
        super().__init__(f"'{path}'", dtype, selection)
        self.path, self.file_shape, self.fortran_order, self.offset = (
            path,
            shape,
            fortran_order,
            offset,
        )

    def read(self, dest, dest_sel, ranges) -> None:
        try:
            # a memory map: only the pages of this process's rows are ever read
            mapped = np.memmap(
                self.path,
                dtype=self.dtype,
                mode="r",
                offset=self.offset,
                shape=self.file_shape,
                order="F" if self.fortran_order else "C",
            )
            dest[dest_sel] = mapped[self.file_slices(ranges)] if dest.ndim else mapped
            del mapped
        except (OSError, ValueError) as error:
            raise self._failed(error) from error


def _npy_header(path: str) -> Tuple[Tuple[int, ...], bool, np.dtype, int]:
    """(shape, fortran_order, dtype, data offset) of a .npy file; checks that it is complete."""
    _require_file(path)
    with open(path, "rb") as handle:
        try:
            version = np.lib.format.read_magic(handle)
            if version == (1, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(handle)
            elif version == (2, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(handle)
            else:
                shape, fortran_order, dtype = np.lib.format._read_array_header(handle, version)
        except (ValueError, OSError, SyntaxError) as error:
            raise ValueError(f"'{path}' is not a readable .npy file: {error}") from error
        offset = handle.tell()
        available = os.fstat(handle.fileno()).st_size - offset
    if dtype.hasobject:
        raise TypeError(f"'{path}' holds Python objects; heat loads numbers only")
    needed = math.prod(shape) * dtype.itemsize
    if available < needed:
        raise ValueError(
            f"'{path}' is truncated: its header promises {needed} bytes of data, it holds {available}"
        )
    return tuple(int(n) for n in shape), bool(fortran_order), dtype, offset


def load_npy(
    path: PathLike,
    dtype: Optional[Any] = None,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Load a NumPy ``.npy`` file. The file is memory-mapped, so every process reads only the
    pages of its own block.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npy`` file.
    dtype : heat type, optional
        Type of the result (default: the file's).
    split : int or None, optional
    device : str or Device, optional
    comm : MPICommunication, optional

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is not a .npy file or is truncated.
    TypeError
        If it holds no numbers, or an argument has a wrong type.

    Examples
    --------
    >>> ht.save_npy(ht.arange(6, split=0), "data.npy")
    >>> ht.load_npy("data.npy", split=0)
    DNDarray([0, 1, 2, 3, 4, 5], dtype=ht.int64, device=cpu:0, split=0)
    """
    path = _check_path(path)
    heat_type = _check_dtype(dtype)
    _check_split_type(split)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)

    def describe() -> Tuple[_Source, type, Optional[int]]:
        header = _npy_header(path)
        source = _NpySource(path, header, _full_selection(header[0]))
        result_type = (
            _heat_type_of_file(source.dtype, source.where) if heat_type is None else heat_type
        )
        _check_convertible(source.dtype, result_type, source.where)
        return source, result_type, sanitize_split(source.shape, split)

    return _load_file(describe, device, comm)


def _write_npy_header(path: str, shape: Tuple[int, ...], dtype: np.dtype) -> int:
    """Create ``path`` with a .npy header and room for the data; returns the data offset."""
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    with open(path, "wb") as handle:
        try:
            np.lib.format.write_array_header_1_0(handle, header)
        except ValueError:  # a header too long for format 1.0
            handle.seek(0)
            handle.truncate()
            np.lib.format.write_array_header_2_0(handle, header)
        offset = handle.tell()
        handle.truncate(offset + math.prod(shape) * dtype.itemsize)
    return offset


def save_npy(data: DNDarray, path: PathLike) -> None:
    """
    Save an array as a NumPy ``.npy`` file (C order), atomically. Every process writes its own
    block into the one file: a byte range for ``split=0``, through a memory map for another
    split axis (blocks interleaved in the file; the file system must keep concurrent writes to
    disjoint bytes of one file, as local and parallel file systems do).

    Parameters
    ----------
    data : DNDarray
        The array (bfloat16 is stored as float32).
    path : str or os.PathLike
        The file; no extension is added.

    Raises
    ------
    TypeError
        If ``data`` is not a DNDarray or ``path`` not a path.
    FileNotFoundError
        If the folder of ``path`` does not exist.

    Examples
    --------
    >>> ht.save_npy(ht.arange(6, split=0), "data.npy")
    >>> np.load("data.npy")
    array([0, 1, 2, 3, 4, 5])
    """
    _check_dndarray(data)
    path = _check_path(path)
    comm = data.comm
    file_dtype = _file_dtype(data, None)
    writers, own = _own_slices(data)
    local = _local_block(data.larray, file_dtype) if comm.rank in writers else None

    def write(temporary: str, existed: bool) -> None:
        offset = _root_decides(comm, _write_npy_header, temporary, data.gshape, file_dtype)

        def write_block() -> None:
            if local is None or local.size == 0:
                return
            if data.split in (None, 0):
                # the block is one contiguous byte range of the file
                row_bytes = file_dtype.itemsize * math.prod(data.gshape[1:])
                start = offset + (own[0].start if local.ndim else 0) * row_bytes
                descriptor = os.open(temporary, os.O_WRONLY)
                try:
                    _pwrite_all(descriptor, local, start)
                finally:
                    os.close(descriptor)
            else:
                mapped = np.memmap(temporary, file_dtype, "r+", offset, data.gshape)
                mapped[own] = local
                mapped.flush()
                del mapped
            _reached_middle_of_write("npy", comm)

        _agree(comm, write_block)

    _atomic_save(path, comm, write)


def _npy_folder_info(folder: str) -> List[Tuple[str, Tuple[Tuple[int, ...], bool, np.dtype, int]]]:
    _require_folder(folder)
    files = sorted(
        os.path.join(folder, name)
        for name in os.listdir(folder)
        if name.lower().endswith(".npy")
        and not _is_temporary_name(name)  # an unfinished save's, not data
        and os.path.isfile(os.path.join(folder, name))
    )
    if not files:
        raise ValueError(f"the folder '{folder}' holds no .npy files")
    headers = [(file, _npy_header(file)) for file in files]
    _check_same_trailing_shape([(f, h[0]) for f, h in headers], "the array in", 0)
    return headers


def load_npy_from_path(
    path: PathLike,
    dtype: Any = types.int32,
    split: Optional[int] = 0,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Load every ``.npy`` file of a folder as one array, concatenated along axis 0 in the order of
    the file names. Every process reads (memory-mapped) only the rows of its block.

    Parameters
    ----------
    path : str or os.PathLike
        The folder.
    dtype : heat type, optional
        Type of the result (default int32, as in HeAT).
    split : int or None, optional
        The axis the result is distributed along (default 0).
    device : str or Device, optional
    comm : MPICommunication, optional

    Raises
    ------
    FileNotFoundError
        If the folder does not exist.
    ValueError
        If ``path`` is not a folder, holds no .npy files, a file is not a complete .npy file, or
        the arrays' shapes differ other than along axis 0.

    Examples
    --------
    >>> ht.save_npy(ht.zeros((2, 3)), "parts/a.npy")
    >>> ht.save_npy(ht.ones((5, 3)), "parts/b.npy")
    >>> ht.load_npy_from_path("parts", dtype=ht.float32).shape
    (7, 3)
    """
    path = _check_path(path)
    heat_type = types.canonical_heat_type(dtype)
    _check_split_type(split)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    headers = _root_decides(comm, _npy_folder_info, path)
    sources = [_NpySource(file, header, _full_selection(header[0])) for file, header in headers]
    for source in sources:
        _check_convertible(source.dtype, heat_type, source.where)
    shape = (sum(s.shape[0] for s in sources),) + sources[0].shape[1:]
    split = sanitize_split(shape, split)
    return _read_sources(sources, 0, heat_type, split, device, comm)
