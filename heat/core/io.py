"""
Parallel file IO: HDF5, CSV, NumPy ``.npy``, netCDF and Zarr, and :func:`load` / :func:`save`,
which pick the format from the file's extension.

Reading. Every process reads only its own block of the array (a hyperslab of an HDF5 dataset,
a byte range of a CSV file, rows of a memory-mapped ``.npy`` file, ...) straight into the memory
of the result, with the format's ordinary serial library: no parallel build of HDF5 or netCDF
is needed. Every process opens the file, checks its metadata and reads its block; then one
all-gather combines the outcomes and checks that all processes saw the same shape and type
(for a folder of files, process 0 lists and checks them and broadcasts the verdict first). So a
bad file raises the same exception on every process, and the communicator stays usable.

Writing. Every save is atomic: the data goes to a temporary file next to the target (a hidden
name with the process id and a random token), which process 0 renames over the target
(``os.replace``) only after every process has written and closed it. An interrupted or failed
save leaves the previous file intact; on an error the temporary file is removed. A killed save
leaves its temporary file behind: :func:`load_npy_from_path` and :func:`load_multiple_hdf5` skip
such names, and the next save to the same target removes those whose writer ran on this host
and is gone. Saves that add to an existing file (HDF5 and netCDF ``mode="a"``/``"r+"``) copy the
old file to the temporary one first. Each process writes its own block into the one file: HDF5 collectively where h5py is
built with MPI (uncompressed datasets), otherwise, like netCDF, one process after the other in
rank order with the file closed in between; CSV and ``.npy`` blocks are written at their byte
offsets concurrently; Zarr blocks concurrently where they cover whole chunks, the chunks shared
by two processes in turn.

netCDF needs the optional package ``netCDF4`` (``pip install heat-mpi[netcdf]``), Zarr the package
``zarr`` (``pip install heat-mpi[zarr]``); :func:`supports_netcdf` and :func:`supports_zarr` tell
whether they are installed.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib
import inspect
import io as _stdio
import math
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from . import types
from ._collective_io import (
    Selection,
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
    _full_selection,
    _heat_type_of_file,
    _in_turn,
    _is_temporary_name,
    _load_file,
    _local_block,
    _own_slices,
    _portable,
    _pwrite_all,
    _raise_first,
    _reached_middle_of_write,
    _read_sources,
    _require_file,
    _require_folder,
    _root_decides,
    _selection,
    _Source,
)
from .communication import MPICommunication, sanitize_comm
from .devices import Device, sanitize_device
from .dndarray import DNDarray
from .layout import balance_, resplit
from .sanitation import check_int, check_type, sanitize_split

__all__ = [
    "load",
    "load_csv",
    "load_hdf5",
    "load_multiple_hdf5",
    "load_netcdf",
    "load_npy",
    "load_npy_from_path",
    "load_zarr",
    "save",
    "save_csv",
    "save_hdf5",
    "save_netcdf",
    "save_npy",
    "save_zarr",
    "size_from_slice",
    "supports_hdf5",
    "supports_netcdf",
    "supports_pandas",
    "supports_zarr",
]

PathLike = Union[str, "os.PathLike[str]"]

HDF5_EXTENSIONS = (".h5", ".hdf5")
CSV_EXTENSIONS = (".csv",)
NPY_EXTENSIONS = (".npy",)
NETCDF_EXTENSIONS = (".nc", ".nc4", ".netcdf")
ZARR_EXTENSIONS = (".zarr",)

# ---------------------------------------------------------------------------------------------
# optional packages
# ---------------------------------------------------------------------------------------------
_INSTALL = {"h5py": "pip install h5py", "netCDF4": "pip install 'heat-mpi[netcdf]'", "zarr": "pip install 'heat-mpi[zarr]'"}


def _module(name: str, function: str):
    """The optional package ``name``, or an ImportError that says how to install it.

    Imported on first use, so that ``import heat`` does not pay for packages a script never uses.
    """
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ImportError(
            f"{function} needs the package {name}: {_INSTALL[name]}"
        ) from error


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def supports_hdf5() -> bool:
    """
    Whether heat can read and write HDF5 files (the package ``h5py`` is installed).

    Examples
    --------
    >>> ht.supports_hdf5()
    True
    """
    return _importable("h5py")


def supports_netcdf() -> bool:
    """
    Whether heat can read and write netCDF4 files (the package ``netCDF4`` is installed).

    Examples
    --------
    >>> ht.supports_netcdf()
    True
    """
    return _importable("netCDF4")


def supports_pandas() -> bool:
    """
    Whether the package ``pandas`` is installed (HeAT's flag for its pandas-based readers).
    heat reads CSV files without pandas, so this only reports the package.

    Examples
    --------
    >>> ht.supports_pandas() in (True, False)
    True
    """
    return _importable("pandas")


def size_from_slice(size: int, s: slice) -> Tuple[int, int]:
    """
    The number of elements the slice ``s`` selects from an axis of length ``size``, and the
    index of the first one (0 when it selects none), as HeAT's helper.

    Parameters
    ----------
    size : int
        The length of the axis, at least 0.
    s : slice
        Any slice (negative and open bounds, any nonzero step).

    Returns
    -------
    (int, int)
        ``(length, start)``.

    Raises
    ------
    TypeError
        If ``size`` is not an int or ``s`` not a slice.
    ValueError
        If ``size`` is negative or the slice's step is 0.

    Examples
    --------
    >>> ht.size_from_slice(10, slice(2, None, 3))
    (3, 2)
    >>> ht.size_from_slice(10, slice(None, None, -1))
    (10, 9)
    """
    size = check_int(size, "size", 0)
    check_type(s, "s", slice, "a slice")
    if s.step == 0:
        raise ValueError("s must not have a step of 0")
    selected = range(size)[s]
    return len(selected), (selected[0] if len(selected) else 0)


def supports_zarr() -> bool:
    """
    Whether heat can read and write Zarr stores (the package ``zarr`` is installed).

    Examples
    --------
    >>> ht.supports_zarr()
    True
    """
    return _importable("zarr")


# ---------------------------------------------------------------------------------------------
# the arrays in files of each format, as sources of blocks (see _collective_io._Source)
# ---------------------------------------------------------------------------------------------
class _HDF5Source(_Source):
    def __init__(self, path: str, dataset: str, dtype: np.dtype, selection: Selection, opened=None):
        super().__init__(f"dataset '{dataset}' of '{path}'", dtype, selection)
        self.path, self.dataset = path, dataset
        # (file, dataset) already opened for the metadata: read from it directly
        self.opened = opened

    def read(self, dest, dest_sel, ranges) -> None:
        h5py = _module("h5py", "load_hdf5")
        try:
            with contextlib.ExitStack() as stack:
                if self.opened is None:
                    source = stack.enter_context(h5py.File(self.path, "r"))[self.dataset]
                else:
                    source = self.opened[1]
                if dest.ndim == 0:
                    source.read_direct(dest)
                else:
                    # HDF5 converts between numeric types while it copies into dest
                    source.read_direct(dest, self.file_slices(ranges), dest_sel)
        except (OSError, KeyError, RuntimeError) as error:
            raise self._failed(error) from error

    def close(self) -> None:
        if self.opened is not None:
            self.opened[0].close()
            self.opened = None


class _NpySource(_Source):
    def __init__(self, path: str, header: Tuple[Tuple[int, ...], bool, np.dtype, int], selection):
        shape, fortran_order, dtype, offset = header
        super().__init__(f"'{path}'", dtype, selection)
        self.path, self.file_shape, self.fortran_order, self.offset = path, shape, fortran_order, offset

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


class _NetCDFSource(_Source):
    def __init__(self, path: str, variable: str, dtype: np.dtype, selection: Selection):
        super().__init__(f"variable '{variable}' of '{path}'", dtype, selection)
        self.path, self.variable = path, variable

    def read(self, dest, dest_sel, ranges) -> None:
        netCDF4 = _module("netCDF4", "load_netcdf")
        try:
            with netCDF4.Dataset(self.path, "r") as handle:
                variable = handle[self.variable]
                variable.set_auto_mask(False)  # plain arrays, fill values as they are
                dest[dest_sel] = variable[self.file_slices(ranges)] if dest.ndim else variable[...]
        except (OSError, IndexError, RuntimeError) as error:
            raise self._failed(error) from error


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


# ---------------------------------------------------------------------------------------------
# HDF5
# ---------------------------------------------------------------------------------------------
def _open_file(opener: Callable, path: str, format_name: str):
    """``opener(path, "r")``; a missing file or one the library cannot read: a clear error."""
    _require_file(path)
    try:
        return opener(path, "r")
    except OSError as error:
        raise ValueError(f"'{path}' is not a readable {format_name} file: {error}") from error


def _open_hdf5_dataset(path: str, dataset: str):
    """(file, dataset): the dataset ``dataset`` of the HDF5 file ``path``, opened for reading."""
    h5py = _module("h5py", "load_hdf5")
    handle = _open_file(h5py.File, path, "HDF5")
    try:
        if dataset not in handle:
            names = sorted(handle.keys())
            listed = ", ".join(repr(n) for n in names[:10]) + (", ..." if len(names) > 10 else "")
            raise KeyError(f"'{path}' has no dataset '{dataset}' (it holds: {listed or 'nothing'})")
        node = handle[dataset]
        if not isinstance(node, h5py.Dataset):
            raise KeyError(f"'{dataset}' in '{path}' is a group, not a dataset")
        return handle, node
    except BaseException:
        handle.close()
        raise


def _hdf5_info(path: str, dataset: str) -> Tuple[Tuple[int, ...], np.dtype]:
    handle, node = _open_hdf5_dataset(path, dataset)
    with handle:
        return tuple(int(n) for n in node.shape), node.dtype


def load_hdf5(
    path: PathLike,
    dataset: str,
    dtype: Optional[Any] = None,
    slices: Optional[Union[slice, Sequence[Optional[slice]]]] = None,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
    load_fraction: float = 1.0,
) -> DNDarray:
    """
    Load a dataset of an HDF5 file; every process reads only its own block (a hyperslab).

    Parameters
    ----------
    path : str or os.PathLike
        The HDF5 file.
    dataset : str
        Name (path) of the dataset in the file.
    dtype : heat type, optional
        Type of the result; default: the dataset's type.
    slices : slice or tuple of slices (or None), optional
        Load only this part of the dataset, one slice per leading axis (positive steps); bounds
        outside the dataset are an error, not clipped.
    split : int or None, optional
        The axis the result is distributed along; None: every process holds all of it.
    device : str or Device, optional
        Where the result lives (default device if None).
    comm : MPICommunication, optional
        The processes that share the result (default communicator if None).
    load_fraction : float, optional
        Load only the first ``int(load_fraction * n)`` of the ``n`` rows (axis 0) that
        ``slices`` selects; in ``(0, 1]``.

    Returns
    -------
    DNDarray
        Balanced along ``split``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    KeyError
        If the file has no dataset ``dataset``.
    ValueError
        If the file is not a readable HDF5 file (corrupt, truncated), ``slices`` is out of range
        or ``load_fraction`` is not in ``(0, 1]``.
    TypeError
        If an argument has a wrong type, or the dataset holds no numbers (or complex numbers
        and ``dtype`` is real).

    Every process raises the same error.

    Examples
    --------
    >>> ht.save_hdf5(ht.arange(10, split=0), "data.h5", "x")
    >>> ht.load_hdf5("data.h5", "x", split=0, slices=(slice(2, 8),))
    DNDarray([2, 3, 4, 5, 6, 7], dtype=ht.int64, device=cpu:0, split=0)
    """
    path = _check_path(path)
    _check_str(dataset, "dataset")
    heat_type = _check_dtype(dtype)
    slices = _check_slices_types(slices)
    _check_split_type(split)
    if isinstance(load_fraction, bool) or not isinstance(load_fraction, (int, float)):
        raise TypeError(f"load_fraction must be a float, got {type(load_fraction).__name__}")
    if not 0.0 < load_fraction <= 1.0:
        raise ValueError(f"load_fraction must be in (0, 1], got {load_fraction}")
    device = sanitize_device(device)
    comm = sanitize_comm(comm)

    def describe() -> Tuple[_Source, type, Optional[int]]:
        handle, node = _open_hdf5_dataset(path, dataset)  # open once: metadata and read
        try:
            where = f"dataset '{dataset}' of '{path}'"
            selection = _selection(slices, tuple(int(n) for n in node.shape), where)
            if selection and load_fraction < 1.0:
                start, step, length = selection[0]
                selection = ((start, step, int(length * load_fraction)),) + selection[1:]
            result_type = _heat_type_of_file(node.dtype, where) if heat_type is None else heat_type
            _check_convertible(node.dtype, result_type, where)
            source = _HDF5Source(path, dataset, node.dtype, selection, (handle, node))
            return source, result_type, sanitize_split(source.shape, split)
        except BaseException:
            handle.close()
            raise

    return _load_file(describe, device, comm)


def _hdf5_parallel(h5py) -> bool:
    return bool(h5py.get_config().mpi)


_HDF5_FILTERS = ("compression", "compression_opts", "shuffle", "fletcher32", "scaleoffset")


def save_hdf5(
    data: DNDarray,
    path: PathLike,
    dataset: str,
    mode: str = "w",
    dtype: Optional[Any] = None,
    **kwargs: Any,
) -> None:
    """
    Save ``data`` as a dataset of an HDF5 file, atomically: a temporary file in the same folder
    is renamed over ``path`` once every process has written its block.

    Each process writes its own block into the one file: collectively where h5py is built with
    MPI (``h5py.get_config().mpi``; datasets without compression filters), otherwise one process
    after the other in rank order, with the file closed in between.

    Parameters
    ----------
    data : DNDarray
        The array to save (bfloat16 is stored as float32).
    path : str or os.PathLike
        The HDF5 file.
    dataset : str
        Name (path) of the dataset.
    mode : str, optional
        ``"w"``: a new file replaces ``path``; ``"w-"`` or ``"x"``: like ``"w"``, but an existing
        ``path`` is an error; ``"a"``: add the dataset to ``path`` (created if missing); ``"r+"``:
        add it to the existing ``path``. With ``"a"``/``"r+"`` a dataset of the same name is
        replaced and the other contents are kept (the old file is copied first).
    dtype : heat type, optional
        Type stored in the file (default: the array's).
    **kwargs
        Passed to ``h5py.Group.create_dataset``, e.g. ``chunks=(1024, 64)``,
        ``compression="gzip"``, ``compression_opts=4``.

    Raises
    ------
    TypeError
        If ``data`` is not a DNDarray or another argument has a wrong type.
    ValueError
        If ``mode`` is not one of the above.
    FileNotFoundError
        If the folder does not exist, or ``mode="r+"`` and ``path`` does not.
    FileExistsError
        If ``mode`` is ``"w-"``/``"x"`` and ``path`` exists.

    Every process raises the same error; ``path`` is then unchanged.

    Examples
    --------
    >>> x = ht.arange(100, split=0)
    >>> ht.save_hdf5(x, "data.h5", "x", chunks=(10,), compression="gzip")
    >>> ht.load_hdf5("data.h5", "x", split=0).shape
    (100,)
    """
    _check_dndarray(data)
    path = _check_path(path)
    _check_str(dataset, "dataset")
    _check_str(mode, "mode")
    if mode not in ("w", "w-", "x", "a", "r+"):
        raise ValueError(f"mode must be 'w', 'w-', 'x', 'a' or 'r+', got {mode!r}")
    file_dtype = _file_dtype(data, dtype)
    h5py = _module("h5py", "save_hdf5")
    comm = data.comm
    writers, own = _own_slices(data)
    local = _local_block(data.larray, file_dtype) if comm.rank in writers else None
    keep_old = mode in ("a", "r+")

    def open_mode(first: bool, existed: bool) -> str:
        return "r+" if (not first or (keep_old and existed)) else "w"

    def fill(handle, first: bool) -> None:
        if first:
            if dataset in handle:
                del handle[dataset]
            handle.create_dataset(dataset, shape=data.gshape, dtype=file_dtype, **kwargs)
        target = handle[dataset]
        if local is not None and local.size:
            if local.ndim == 0:
                target[()] = local
            else:
                target.write_direct(local, None, own)
        _reached_middle_of_write("hdf5", comm)

    parallel = _hdf5_parallel(h5py) and comm.size > 1
    parallel = parallel and not any(kwargs.get(name) for name in _HDF5_FILTERS)

    def write(temporary: str, existed: bool) -> None:
        if parallel:
            # one file opened by all processes (creating the dataset is collective); independent
            # transfers, so that processes without rows need not take part in the writes
            def collectively() -> None:
                mode_here = open_mode(True, existed)
                with h5py.File(temporary, mode_here, driver="mpio", comm=comm.handle) as handle:
                    fill(handle, True)

            _agree(comm, collectively)
            return

        def step(first: bool) -> None:
            with h5py.File(temporary, open_mode(first, existed)) as handle:
                fill(handle, first)

        _in_turn(comm, writers, step)

    _atomic_save(
        path,
        comm,
        write,
        copy_existing=keep_old,
        must_exist=mode == "r+",
        exclusive=mode in ("w-", "x"),
    )


def _hdf5_folder_info(
    folder: str, dataset: str, sorting_func: Optional[Callable]
) -> List[Tuple[str, Tuple[int, ...], np.dtype]]:
    _require_folder(folder)
    files = [
        os.path.join(folder, name)
        for name in os.listdir(folder)
        if os.path.splitext(name)[1].lower() in HDF5_EXTENSIONS
        and not _is_temporary_name(name)  # an unfinished save's, not data
        and os.path.isfile(os.path.join(folder, name))
    ]
    if not files:
        raise ValueError(f"the folder '{folder}' holds no .h5 or .hdf5 files")
    if sorting_func is None:
        files = sorted(files)
    else:
        from pathlib import Path

        files = [os.fspath(f) for f in sorting_func([Path(f) for f in files])]
    infos = []
    for file in files:
        shape, dtype = _hdf5_info(file, dataset)
        infos.append((file, shape, dtype))
    _check_same_trailing_shape([(f, s) for f, s, _ in infos], f"dataset '{dataset}' of", 0)
    return infos


def load_multiple_hdf5(
    folder: PathLike,
    dataset: str,
    dtype: Optional[Any] = None,
    sorting_func: Optional[Callable[[list], list]] = None,
    split: int = 0,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Load the dataset ``dataset`` of every ``.h5``/``.hdf5`` file in ``folder`` as one array,
    concatenated along axis 0 in the order of the files (sorted by name, or by
    ``sorting_func``). Every process reads only the rows of its block.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder holding the files.
    dataset : str
        The dataset read from each file; all must agree in shape except along axis 0.
    dtype : heat type, optional
        Type of the result (default: the promoted type of the datasets).
    sorting_func : callable, optional
        Called with the list of the files (``pathlib.Path``) on process 0; returns them in the
        order of concatenation (default: sorted by name).
    split : int or None, optional
        The axis the result is distributed along (default 0).
    device : str or Device, optional
    comm : MPICommunication, optional

    Raises
    ------
    FileNotFoundError
        If ``folder`` does not exist.
    ValueError
        If ``folder`` is not a folder, holds no HDF5 files, or the datasets' shapes do not fit.
    KeyError
        If a file lacks ``dataset``.

    Examples
    --------
    >>> ht.save_hdf5(ht.zeros((3, 2)), "parts/a.h5", "x")
    >>> ht.save_hdf5(ht.ones((4, 2)), "parts/b.h5", "x")
    >>> ht.load_multiple_hdf5("parts", "x").shape
    (7, 2)
    """
    folder = _check_path(folder, "folder")
    _check_str(dataset, "dataset")
    if sorting_func is not None and not callable(sorting_func):
        raise TypeError(f"sorting_func must be callable or None, got {type(sorting_func).__name__}")
    heat_type = _check_dtype(dtype)
    _check_split_type(split)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    infos = _root_decides(comm, _hdf5_folder_info, folder, dataset, sorting_func)
    sources = [
        _HDF5Source(file, dataset, file_dtype, _full_selection(shape))
        for file, shape, file_dtype in infos
    ]
    promoted = np.result_type(*[s.dtype for s in sources])
    where = f"dataset '{dataset}' of the files in '{folder}'"
    if heat_type is None:
        heat_type = _heat_type_of_file(promoted, where)
    for source in sources:
        _check_convertible(source.dtype, heat_type, source.where)
    shape = (sum(s.shape[0] for s in sources),) + sources[0].shape[1:]
    split = sanitize_split(shape, split)
    return _read_sources(sources, 0, heat_type, split, device, comm)


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------
def _check_encoding(encoding: Any) -> None:
    _check_str(encoding, "encoding")
    try:
        "".encode(encoding)
    except LookupError as error:
        raise ValueError(f"encoding {encoding!r} is unknown") from error


def _csv_info(path: str, header_lines: int, by_bytes: bool) -> Tuple[int, int]:
    """(byte offset of the first data line, file size); offset 0 where lines are not bytes."""
    _require_file(path)
    with open(path, "rb") as handle:
        for _ in range(header_lines if by_bytes else 0):
            if not handle.readline():
                break
        return handle.tell(), os.fstat(handle.fileno()).st_size


def _splits_at_newline_bytes(encoding: str) -> bool:
    """Whether byte 0x0A is a newline wherever it occurs (ASCII-compatible encodings, UTF-8)."""
    try:
        return "\n".encode(encoding) == b"\n" and "a\n".encode(encoding) == b"a\n"
    except LookupError:
        return False


def _read_line_range(path: str, start: int, stop: int, first: int, size: int) -> bytes:
    """
    The lines whose first byte lies in ``[start, stop)``: the line straddling ``start`` belongs
    to the previous range, the line straddling ``stop`` to this one (read to its end).
    """
    if start >= stop:
        return b""
    with open(path, "rb") as handle:
        at_line_start = start == first
        if not at_line_start:
            handle.seek(start - 1)
            at_line_start = handle.read(1) == b"\n"
        handle.seek(start)
        chunk = handle.read(stop - start)
        if stop < size and not chunk.endswith(b"\n"):
            tail = []
            while True:
                block = handle.read(1 << 16)
                if not block:
                    break
                newline = block.find(b"\n")
                if newline >= 0:
                    tail.append(block[: newline + 1])
                    break
                tail.append(block)
            chunk += b"".join(tail)
    if not at_line_start:
        newline = chunk.find(b"\n")
        chunk = chunk[newline + 1 :] if newline >= 0 else b""
    return chunk


def _parse_csv_lines(lines: List[str], sep: str, numpy_type: np.dtype, where: str) -> np.ndarray:
    if not lines:
        return np.empty((0, 0), dtype=numpy_type)
    try:
        return np.loadtxt(lines, delimiter=sep, dtype=numpy_type, ndmin=2, comments=None, encoding=None)
    except ValueError as error:
        if np.dtype(numpy_type).kind in "biu":
            # integers written as "3.0": parse as floats, then convert
            try:
                values = np.loadtxt(lines, delimiter=sep, dtype=np.float64, ndmin=2, comments=None)
                return values.astype(numpy_type)
            except ValueError:
                pass
        raise ValueError(f"could not parse {where}: {error}") from error


def _header_hint(lines: List[str], sep: str, numpy_type: np.dtype, header_lines: int) -> str:
    """
    A hint to skip a header when the first of ``lines`` (the file's first line after the
    skipped ones) is no row of numbers but the next lines are (or there are none); else "".
    """
    def parses(some: List[str]) -> bool:
        try:
            _parse_csv_lines(some, sep, numpy_type, "")
        except ValueError:
            return False
        return True

    if not lines or parses(lines[:1]) or not parses(lines[1:3]):
        return ""
    shown = lines[0] if len(lines[0]) <= 60 else lines[0][:57] + "..."
    return (
        f". Its first line {shown!r} is not a row of numbers: if it is a header, skip it with "
        f"header_lines={header_lines + 1}"
    )


def load_csv(
    path: PathLike,
    header_lines: int = 0,
    sep: str = ",",
    dtype: Any = types.float32,
    encoding: str = "utf-8",
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Load a CSV file of numbers as a 2-D array (rows, columns).

    Every process parses only its share of the file's bytes, cut at line boundaries (each line
    belongs to the process whose byte range holds its first byte); the rows are then balanced
    over the processes, and for ``split=1`` or ``None`` redistributed in one collective.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.
    header_lines : int, optional
        Lines at the top of the file to skip.
    sep : str, optional
        The separator between values.
    dtype : heat type, optional
        Type of the result (default float32).
    encoding : str, optional
        The file's text encoding. For encodings in which the byte of a newline can be part of
        another character (UTF-16, UTF-32) every process decodes the whole file.
    split : int or None, optional
        0 (rows), 1 or -1 (columns) or None.
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray
        Always 2-D; blank lines are skipped.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If a value is not a number, rows have different numbers of values, ``header_lines`` is
        negative, ``split`` is not an axis of a 2-D array or ``encoding`` is unknown.
    TypeError
        If an argument has a wrong type.

    Examples
    --------
    >>> ht.save_csv(ht.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), "data.csv")
    >>> ht.load_csv("data.csv", split=0)
    DNDarray([[1., 2.],
              [3., 4.],
              [5., 6.]], dtype=ht.float32, device=cpu:0, split=0)
    """
    path = _check_path(path)
    if isinstance(header_lines, bool) or not isinstance(header_lines, int):
        raise TypeError(f"header_lines must be an int, got {type(header_lines).__name__}")
    if header_lines < 0:
        raise ValueError(f"header_lines must be >= 0, got {header_lines}")
    _check_str(sep, "sep")
    if not sep:
        raise ValueError("sep must not be empty")
    _check_encoding(encoding)
    heat_type = types.canonical_heat_type(dtype)
    if types.heat_type_is_complexfloating(heat_type):
        raise TypeError("load_csv reads real numbers; complex dtype is not supported")
    _check_split_type(split)
    split = sanitize_split((0, 0), split)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    numpy_type = np.dtype(heat_type.numpy_type() or np.float32)

    by_bytes = _splits_at_newline_bytes(encoding)

    def decode(raw: bytes) -> str:
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError as error:
            raise ValueError(f"'{path}' is not valid {encoding} text: {error}") from error

    def parse() -> np.ndarray:
        first, size = _csv_info(path, header_lines, by_bytes)
        if by_bytes:
            length = size - first
            start = first + length * comm.rank // comm.size
            stop = first + length * (comm.rank + 1) // comm.size
            text = decode(_read_line_range(path, start, stop, first, size))
            lines = [line for line in text.splitlines() if line.strip()]
            holds_first_line = start == first
        else:
            # a newline byte may be part of another character: every process decodes it all
            with open(path, "rb") as handle:
                everything = decode(handle.read())
            lines = everything.splitlines()[header_lines:]
            lines = [line for line in lines if line.strip()]
            begin = len(lines) * comm.rank // comm.size
            lines = lines[begin : len(lines) * (comm.rank + 1) // comm.size]
            holds_first_line = begin == 0
        try:
            return _parse_csv_lines(lines, sep, numpy_type, f"'{path}'")
        except ValueError as error:
            hint = _header_hint(lines, sep, numpy_type, header_lines) if holds_first_line else ""
            if not hint:
                raise
            raise ValueError(f"{str(error).rstrip('.')}{hint}") from error

    def read_and_check() -> Tuple[np.ndarray, Optional[Tuple[type, str]]]:
        try:
            return parse(), None
        except Exception as error:  # noqa: B902 - every failure must become collective
            return None, _portable(error)

    block, problem = read_and_check()
    # one all-gather: the outcome and the shape of every process's rows
    report = (problem, None if block is None else block.shape)
    reports = comm.allgather(report) if comm.size > 1 else [report]
    _raise_first([r[0] for r in reports], None)
    columns = {shape[1] for _, shape in reports if shape[0] > 0}
    if len(columns) > 1:
        raise ValueError(
            f"the rows of '{path}' have different numbers of values ({sorted(columns)})"
        )
    n_columns = columns.pop() if columns else 0
    n_rows = sum(shape[0] for _, shape in reports)
    if block.shape[0] == 0:
        block = np.empty((0, n_columns), dtype=numpy_type)
    local = torch.from_numpy(np.ascontiguousarray(block))
    if local.dtype != heat_type.torch_type():
        local = local.to(heat_type.torch_type())
    result = DNDarray(local, (n_rows, n_columns), heat_type, 0, sanitize_device("cpu"), comm, None)
    balance_(result)
    if split != 0:
        result = resplit(result, split)
    if device.torch_device != "cpu":
        result = DNDarray(
            result.larray.to(device.torch_device), result.gshape, heat_type, result.split, device, comm, True
        )
    return result


def _csv_format(file_dtype: np.dtype, decimals: int) -> str:
    if file_dtype.kind in "biu":
        return "%d"
    if decimals >= 0:
        return f"%.{decimals}f"
    # enough significant digits to read back the same value
    return {2: "%.5g", 4: "%.9g"}.get(file_dtype.itemsize, "%.17g")


def save_csv(
    data: DNDarray,
    path: PathLike,
    header_lines: Optional[Iterable[str]] = None,
    sep: str = ",",
    decimals: int = -1,
    encoding: str = "utf-8",
    comm: Optional[MPICommunication] = None,
    truncate: bool = True,
) -> None:
    """
    Save a 1-D or 2-D array as a CSV file (a 1-D array as one column), atomically.

    Every process formats its own rows and writes them at their byte offset in the file.

    Parameters
    ----------
    data : DNDarray
        Real numbers, integers or booleans (written as 0/1).
    path : str or os.PathLike
        The CSV file.
    header_lines : iterable of str, optional
        Lines written first, as they are (no comment marker is added).
    sep : str, optional
        The separator between values.
    decimals : int, optional
        Digits after the decimal point of floats; -1 (default): as many significant digits as
        reading back the same value needs.
    encoding : str, optional
        The text encoding.
    comm : MPICommunication, optional
        Kept for compatibility with HeAT; the array's communicator is used.
    truncate : bool, optional
        Kept for compatibility with HeAT; a save always writes a new file.

    Raises
    ------
    TypeError
        If ``data`` is not a DNDarray, is complex, or another argument has a wrong type.
    ValueError
        If ``data`` has more than 2 dimensions or ``decimals < -1``.
    FileNotFoundError
        If the folder of ``path`` does not exist.

    Examples
    --------
    >>> ht.save_csv(ht.arange(6, split=0).reshape((3, 2)), "data.csv", header_lines=["a,b"])
    """
    _check_dndarray(data)
    path = _check_path(path)
    if header_lines is not None and (
        isinstance(header_lines, str) or not isinstance(header_lines, Iterable)
    ):
        raise TypeError(
            f"header_lines must be an iterable of str or None, got {type(header_lines).__name__}"
        )
    header_lines = None if header_lines is None else list(header_lines)
    if header_lines is not None and not all(isinstance(line, str) for line in header_lines):
        raise TypeError("header_lines must hold str only")
    _check_str(sep, "sep")
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(f"decimals must be an int, got {type(decimals).__name__}")
    if decimals < -1:
        raise ValueError(f"decimals must be >= -1, got {decimals}")
    _check_encoding(encoding)
    if data.ndim not in (1, 2):
        raise ValueError(f"save_csv writes 1-D or 2-D arrays, got {data.ndim} dimensions")
    if types.heat_type_is_complexfloating(data.dtype):
        raise TypeError("save_csv writes real numbers; the array is complex")
    if comm is not None:
        sanitize_comm(comm)

    table = data if data.ndim == 2 else _as_column(data)
    if table.split == 1:
        table = resplit(table, 0)  # whole rows on every process
    file_dtype = _file_dtype(table, None)
    if file_dtype.kind == "b":
        file_dtype = np.dtype(np.uint8)
    rank, size = table.comm.rank, table.comm.size
    if table.split is None:
        # every process holds every row: each formats and writes its balanced share
        _, _, own = table.comm.chunk(table.gshape, 0)
        rows = table.larray[own[0]]
    else:
        rows = table.larray
    local = _local_block(rows, file_dtype)
    buffer = _stdio.BytesIO()
    if local.shape[0] > 0:
        np.savetxt(buffer, local, fmt=_csv_format(file_dtype, decimals), delimiter=sep, encoding=encoding)
    text = buffer.getvalue()
    header = "".join(line + "\n" for line in header_lines or []).encode(encoding)
    lengths = table.comm.allgather(len(text)) if size > 1 else [len(text)]
    offset = len(header) + sum(lengths[:rank])

    def write(temporary: str, existed: bool) -> None:
        def write_bytes() -> None:
            # every process writes its own byte range of the one file (created by process 0)
            flags = os.O_WRONLY | os.O_CREAT
            descriptor = os.open(temporary, flags, 0o644)
            try:
                if rank == 0:
                    _pwrite_all(descriptor, header, 0)
                _pwrite_all(descriptor, text, offset)
                _reached_middle_of_write("csv", table.comm)
            finally:
                os.close(descriptor)

        _agree(table.comm, write_bytes)

    _atomic_save(path, table.comm, write)


def _as_column(data: DNDarray) -> DNDarray:
    """A 1-D array as an (n, 1) array, same distribution (no communication)."""
    return DNDarray(
        data.larray.reshape(-1, 1),
        (data.gshape[0], 1),
        data.dtype,
        data.split,
        data.device,
        data.comm,
        data._balanced,
    )


# ---------------------------------------------------------------------------------------------
# NumPy .npy
# ---------------------------------------------------------------------------------------------
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
        result_type = _heat_type_of_file(source.dtype, source.where) if heat_type is None else heat_type
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


# ---------------------------------------------------------------------------------------------
# netCDF
# ---------------------------------------------------------------------------------------------
def _netcdf_info(path: str, variable: str) -> Tuple[Tuple[int, ...], np.dtype]:
    netCDF4 = _module("netCDF4", "load_netcdf")
    handle = _open_file(netCDF4.Dataset, path, "netCDF")
    with handle:
        if variable not in handle.variables:
            names = ", ".join(repr(n) for n in list(handle.variables)[:10])
            raise KeyError(f"'{path}' has no variable '{variable}' (it holds: {names or 'nothing'})")
        node = handle.variables[variable]
        return tuple(int(n) for n in node.shape), np.dtype(node.dtype)


def load_netcdf(
    path: PathLike,
    variable: str,
    dtype: Any = types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Load a variable of a netCDF4 file; every process reads only its own block.

    Needs the optional package ``netCDF4`` (``pip install heat-mpi[netcdf]``).

    Parameters
    ----------
    path : str or os.PathLike
        The netCDF file.
    variable : str
        Name of the variable.
    dtype : heat type, optional
        Type of the result (default float32, as in HeAT).
    split : int or None, optional
    device : str or Device, optional
    comm : MPICommunication, optional

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    KeyError
        If the file has no such variable.
    ValueError
        If the file is not a readable netCDF file.
    ImportError
        If netCDF4 is not installed.

    Examples
    --------
    >>> ht.save_netcdf(ht.arange(5.0, split=0), "data.nc", "x")
    >>> ht.load_netcdf("data.nc", "x", split=0)
    DNDarray([0., 1., 2., 3., 4.], dtype=ht.float32, device=cpu:0, split=0)
    """
    _module("netCDF4", "load_netcdf")
    path = _check_path(path)
    _check_str(variable, "variable")
    heat_type = types.canonical_heat_type(dtype)
    _check_split_type(split)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    def describe() -> Tuple[_Source, type, Optional[int]]:
        shape, file_dtype = _netcdf_info(path, variable)
        source = _NetCDFSource(path, variable, file_dtype, _full_selection(shape))
        _check_convertible(file_dtype, heat_type, source.where)
        return source, heat_type, sanitize_split(shape, split)

    return _load_file(describe, device, comm)


def _netcdf_region(file_slices: Any, shape: Tuple[int, ...]) -> Optional[Tuple[int, ...]]:
    """The first index of the region ``file_slices`` names (None: the whole variable)."""
    if isinstance(file_slices, slice):
        file_slices = (file_slices,)
    if not isinstance(file_slices, (tuple, list)):
        raise TypeError(
            f"file_slices must be a slice or a tuple of slices, got {type(file_slices).__name__}"
        )
    if len(file_slices) > len(shape):
        raise ValueError(f"file_slices has {len(file_slices)} entries for {len(shape)} dimensions")
    starts = []
    for axis, entry in enumerate(file_slices):
        if isinstance(entry, bool) or not isinstance(entry, slice):
            raise TypeError(f"file_slices[{axis}] must be a slice, got {type(entry).__name__}")
        if entry.step not in (None, 1):
            raise ValueError(f"file_slices[{axis}] must have step 1, got {entry.step}")
        start = 0 if entry.start is None else entry.start.__index__()
        if start < 0:
            raise ValueError(f"file_slices[{axis}] must start at an index >= 0, got {start}")
        if entry.stop is not None and entry.stop.__index__() - start != shape[axis]:
            raise ValueError(
                f"file_slices[{axis}] = {entry} covers {entry.stop - start} entries, "
                f"the array has {shape[axis]} along axis {axis}"
            )
        starts.append(start)
    starts += [0] * (len(shape) - len(starts))
    return None if not any(starts) else tuple(starts)


_NETCDF_TYPES = set("i1 u1 i2 u2 i4 u4 i8 u8 f4 f8".split())


def save_netcdf(
    data: DNDarray,
    path: PathLike,
    variable: str,
    mode: str = "w",
    dimension_names: Optional[Union[Sequence[str], str]] = None,
    is_unlimited: bool = False,
    file_slices: Union[slice, Sequence[slice]] = slice(None),
    **kwargs: Any,
) -> None:
    """
    Save ``data`` as a variable of a netCDF4 file, atomically. The processes write their blocks
    one after the other in rank order (file closed in between); no parallel netCDF build is
    needed.

    Needs the optional package ``netCDF4`` (``pip install heat-mpi[netcdf]``).

    Parameters
    ----------
    data : DNDarray
        Integers or real numbers (float16/bfloat16 are stored as float32; netCDF has no
        boolean or complex type).
    path : str or os.PathLike
        The netCDF file.
    variable : str
        Name of the variable.
    mode : str, optional
        ``"w"``: a new file replaces ``path``; ``"a"``: add to ``path`` (created if missing);
        ``"r+"``: add to the existing ``path``. With ``"a"``/``"r+"`` an existing variable of
        that name is written into (at ``file_slices``), the rest of the file is kept.
    dimension_names : sequence of str or str, optional
        Names of the variable's dimensions (default ``"<variable>_dim_<i>"``); existing
        dimensions are reused if their length fits.
    is_unlimited : bool, optional
        Create the new dimensions unlimited.
    file_slices : slice or tuple of slices, optional
        Where in the variable the array goes: slices of step 1 whose starts give the first
        index (default: the whole variable).
    **kwargs
        Passed to ``netCDF4.Dataset.createVariable`` (e.g. ``zlib=True``, ``complevel=4``).

    Raises
    ------
    TypeError
        If ``data`` is boolean or complex, or an argument has a wrong type.
    ValueError
        If ``mode`` is unknown, the variable or a dimension exists with a shape that does not
        fit, or ``file_slices`` is invalid.
    FileNotFoundError
        If the folder does not exist, or ``mode="r+"`` and ``path`` does not.
    ImportError
        If netCDF4 is not installed.

    Examples
    --------
    >>> ht.save_netcdf(ht.zeros((4, 3), split=0), "data.nc", "x", dimension_names=("t", "c"))
    """
    netCDF4 = _module("netCDF4", "save_netcdf")
    _check_dndarray(data)
    path = _check_path(path)
    _check_str(variable, "variable")
    _check_str(mode, "mode")
    if mode not in ("w", "a", "r+"):
        raise ValueError(f"mode must be 'w', 'a' or 'r+', got {mode!r}")
    if isinstance(dimension_names, str):
        dimension_names = (dimension_names,)
    if dimension_names is None:
        dimension_names = tuple(f"{variable}_dim_{i}" for i in range(data.ndim))
    dimension_names = tuple(dimension_names)
    if len(dimension_names) != data.ndim or not all(isinstance(n, str) for n in dimension_names):
        raise ValueError(
            f"dimension_names must be {data.ndim} str (one per dimension), got {dimension_names}"
        )
    starts = _netcdf_region(file_slices, data.gshape)
    file_dtype = _file_dtype(data, None)
    if file_dtype.kind in "bc":
        raise TypeError(
            f"netCDF has no {'boolean' if file_dtype.kind == 'b' else 'complex'} type; convert "
            "the array first (e.g. x.astype(ht.uint8))"
        )
    if file_dtype == np.float16:
        file_dtype = np.dtype(np.float32)
    comm = data.comm
    writers, own = _own_slices(data)
    local = _local_block(data.larray, file_dtype) if comm.rank in writers else None
    keep_old = mode in ("a", "r+")

    def prepare_variable(handle) -> Any:
        if variable in handle.variables:
            target = handle.variables[variable]
            needed = tuple((starts or (0,) * data.ndim)[i] + n for i, n in enumerate(data.gshape))
            fits = len(target.shape) == data.ndim and all(
                need <= have or handle.dimensions[name].isunlimited()
                for need, have, name in zip(needed, target.shape, target.dimensions)
            )
            if not fits:
                raise ValueError(
                    f"variable '{variable}' of '{path}' has shape {target.shape}; an array of "
                    f"shape {data.gshape} does not fit there"
                )
            return target
        if starts is not None:
            raise ValueError("file_slices can only place data into an existing variable")
        for name, length in zip(dimension_names, data.gshape):
            if name in handle.dimensions:
                existing = handle.dimensions[name]
                if not existing.isunlimited() and len(existing) != length:
                    raise ValueError(
                        f"dimension '{name}' of '{path}' has length {len(existing)}, the array "
                        f"needs {length}"
                    )
            else:
                handle.createDimension(name, None if is_unlimited else length)
        return handle.createVariable(variable, file_dtype, dimension_names, **kwargs)

    offsets = starts or (0,) * data.ndim
    region = tuple(slice(s.start + o, s.stop + o) for s, o in zip(own, offsets))

    def write(temporary: str, existed: bool) -> None:
        def step(first: bool) -> None:
            open_mode = "a" if (not first or (keep_old and existed)) else "w"
            with netCDF4.Dataset(temporary, open_mode) as handle:
                target = prepare_variable(handle) if first else handle.variables[variable]
                if local is not None and local.size:
                    if local.ndim == 0:
                        target.assignValue(local)
                    else:
                        target[region] = local
                _reached_middle_of_write("netcdf", comm)

        _in_turn(comm, writers, step)

    _atomic_save(path, comm, write, copy_existing=keep_old, must_exist=mode == "r+")


# ---------------------------------------------------------------------------------------------
# Zarr
# ---------------------------------------------------------------------------------------------
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
    arrays = sorted(name for name, node in opened.members(max_depth=None) if isinstance(node, zarr.Array))
    if variable is None:
        raise ValueError(
            f"'{path}' is a Zarr group; name one of its arrays as variable: {arrays[:10]}"
        )
    names = sorted(fnmatch.filter(arrays, variable)) if any(c in variable for c in "*?[") else (
        [variable] if variable in arrays else []
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
        sources.append(_ZarrSource(path, name, file_dtype, _selection(slices, shape, where), kwargs))
    if heat_type is None:
        heat_type = _heat_type_of_file(np.result_type(*[s.dtype for s in sources]), sources[0].where)
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


# ---------------------------------------------------------------------------------------------
# load / save by extension
# ---------------------------------------------------------------------------------------------
def _format_of(path: str, verb: str) -> Tuple[Callable, Callable]:
    """(load function, save function) of the format that the extension of ``path`` names."""
    extension = os.path.splitext(path.rstrip("/" + os.sep))[1].strip().lower()
    for extensions, functions in _FORMATS:
        if extension in extensions:
            return functions
    known = ", ".join(repr(e) for extensions, _ in _FORMATS for e in extensions)
    raise ValueError(
        f"cannot {verb} '{path}': its extension {extension or '(none)'} names no known format "
        f"({known})"
    )


#: what the arguments that name a part of a file are, for the errors of ht.load / ht.save
_NAME_ARGUMENTS = {
    "dataset": "the name of the dataset in the HDF5 file",
    "variable": "the name of the variable in the netCDF file",
}


def _check_required(function: Callable, verb: str, path: str, given: int, kwargs: Dict) -> None:
    """
    Raise a TypeError naming ``ht.load``/``ht.save`` and the argument when a required argument
    of the format's ``function`` is missing (``given`` positional arguments, ``kwargs``), as
    Python's own error would name only ``function``.
    """
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = list(inspect.signature(function).parameters.values())
    for index, parameter in enumerate(parameters):
        required = parameter.default is inspect.Parameter.empty and parameter.kind in (
            positional + (inspect.Parameter.KEYWORD_ONLY,)
        )
        supplied = (parameter.kind in positional and index < given) or parameter.name in kwargs
        if required and not supplied:
            what = _NAME_ARGUMENTS.get(parameter.name, "required")
            if verb == "save":
                example = f"ht.save(x, {path!r}, {parameter.name}='data')"
            else:
                example = f"ht.load({path!r}, {parameter.name}='data')"
            raise TypeError(
                f"ht.{verb} of {path!r} needs the argument '{parameter.name}' ({what}), "
                f"e.g. {example}"
            )


_FORMATS = (
    (HDF5_EXTENSIONS, (load_hdf5, save_hdf5)),
    (CSV_EXTENSIONS, (load_csv, save_csv)),
    (NPY_EXTENSIONS, (load_npy, save_npy)),
    (NETCDF_EXTENSIONS, (load_netcdf, save_netcdf)),
    (ZARR_EXTENSIONS, (load_zarr, save_zarr)),
)


def load(path: PathLike, *args: Any, **kwargs: Any) -> DNDarray:
    """
    Load an array from a file, in the format its extension names: ``.h5``/``.hdf5``
    (:func:`load_hdf5`), ``.csv`` (:func:`load_csv`), ``.npy`` (:func:`load_npy`),
    ``.nc``/``.nc4``/``.netcdf`` (:func:`load_netcdf`), ``.zarr`` (:func:`load_zarr`).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    *args, **kwargs
        Passed to the format's function (e.g. ``dataset`` for HDF5, ``variable`` for netCDF).

    Raises
    ------
    ValueError
        If the extension is none of the above.
    TypeError
        If an argument the format needs is missing (e.g. ``dataset`` for HDF5), naming
        ``ht.load`` and the argument.

    Examples
    --------
    >>> ht.save(ht.arange(5, split=0), "data.h5", "x")
    >>> ht.load("data.h5", dataset="x", split=0)
    DNDarray([0, 1, 2, 3, 4], dtype=ht.int64, device=cpu:0, split=0)
    """
    path = _check_path(path)
    function = _format_of(path, "load")[0]
    _check_required(function, "load", path, 1 + len(args), kwargs)
    return function(path, *args, **kwargs)


def save(data: DNDarray, path: PathLike, *args: Any, **kwargs: Any) -> None:
    """
    Save an array to a file, in the format its extension names: ``.h5``/``.hdf5``
    (:func:`save_hdf5`), ``.csv`` (:func:`save_csv`), ``.npy`` (:func:`save_npy`),
    ``.nc``/``.nc4``/``.netcdf`` (:func:`save_netcdf`), ``.zarr`` (:func:`save_zarr`).
    Every save is atomic: an interrupted save leaves the previous file intact.

    Parameters
    ----------
    data : DNDarray
    path : str or os.PathLike
    *args, **kwargs
        Passed to the format's function (e.g. ``dataset`` for HDF5).

    Raises
    ------
    ValueError
        If the extension is none of the above.
    TypeError
        If an argument the format needs is missing (e.g. ``dataset`` for HDF5), naming
        ``ht.save`` and the argument.

    Examples
    --------
    >>> ht.save(ht.arange(100, split=0), "data.h5", "x", mode="a")
    """
    _check_dndarray(data)
    path = _check_path(path)
    function = _format_of(path, "save")[1]
    _check_required(function, "save", path, 2 + len(args), kwargs)
    return function(data, path, *args, **kwargs)
