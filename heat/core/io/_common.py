"""The optional packages of heat's file formats, the extensions that name them, and the file opener the formats share."""

from __future__ import annotations

import importlib
import os
from typing import Callable, Tuple, Union

from ..sanitation import check_int, check_type
from ._collective import _require_file

PathLike = Union[str, "os.PathLike[str]"]


HDF5_EXTENSIONS = (".h5", ".hdf5")
CSV_EXTENSIONS = (".csv",)
NPY_EXTENSIONS = (".npy",)
NETCDF_EXTENSIONS = (".nc", ".nc4", ".netcdf")
ZARR_EXTENSIONS = (".zarr",)


_INSTALL = {
    "h5py": "pip install h5py",
    "netCDF4": "pip install 'heat-mpi[netcdf]'",
    "zarr": "pip install 'heat-mpi[zarr]'",
}


def _module(name: str, function: str):
    """The optional package ``name``, or an ImportError that says how to install it.

    Imported on first use, so that ``import heat`` does not pay for packages a script never uses.
    """
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ImportError(f"{function} needs the package {name}: {_INSTALL[name]}") from error


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


def _open_file(opener: Callable, path: str, format_name: str):
    """``opener(path, "r")``; a missing file or one the library cannot read: a clear error."""
    _require_file(path)
    try:
        return opener(path, "r")
    except OSError as error:
        raise ValueError(f"'{path}' is not a readable {format_name} file: {error}") from error
