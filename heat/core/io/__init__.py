"""
Parallel file IO: HDF5, CSV, NumPy ``.npy``, netCDF and Zarr, and :func:`load` / :func:`save`,
which pick the format from the file's extension.

One module per format (``hdf5``, ``csv``, ``npy``, ``netcdf``, ``zarr``), the optional packages
and extensions in ``_common``, the collective machinery every format shares (block selection,
agreement on outcomes, atomic saves) in ``_collective``; this module dispatches by extension.

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

import inspect
import os
from typing import Any, Callable, Dict, Tuple

from ..dndarray import DNDarray
from ._collective import _check_dndarray, _check_path
from ._common import (
    CSV_EXTENSIONS,
    HDF5_EXTENSIONS,
    NETCDF_EXTENSIONS,
    NPY_EXTENSIONS,
    ZARR_EXTENSIONS,
    PathLike,
    size_from_slice,
    supports_hdf5,
    supports_netcdf,
    supports_pandas,
    supports_zarr,
)
from .csv import load_csv, save_csv
from .hdf5 import load_hdf5, load_multiple_hdf5, save_hdf5
from .netcdf import load_netcdf, save_netcdf
from .npy import load_npy, load_npy_from_path, save_npy
from .zarr import load_zarr, save_zarr

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
