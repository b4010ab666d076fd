"""HDF5 files (h5py): load_hdf5, save_hdf5, load_multiple_hdf5."""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..communication import MPICommunication, sanitize_comm
from ..devices import Device, sanitize_device
from ..dndarray import DNDarray
from ..sanitation import sanitize_split
from ._collective import (
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
    _reached_middle_of_write,
    _read_sources,
    _require_folder,
    _root_decides,
    _selection,
    _Source,
)
from ._common import HDF5_EXTENSIONS, PathLike, _module, _open_file


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
