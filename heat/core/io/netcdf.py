"""netCDF files (netCDF4): load_netcdf, save_netcdf."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from .. import types
from ..communication import MPICommunication, sanitize_comm
from ..devices import Device, sanitize_device
from ..dndarray import DNDarray
from ..sanitation import sanitize_split
from ._collective import (
    Selection,
    _atomic_save,
    _check_convertible,
    _check_dndarray,
    _check_path,
    _check_split_type,
    _check_str,
    _file_dtype,
    _full_selection,
    _in_turn,
    _load_file,
    _local_block,
    _own_slices,
    _reached_middle_of_write,
    _Source,
)
from ._common import PathLike, _module, _open_file


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


def _netcdf_info(path: str, variable: str) -> Tuple[Tuple[int, ...], np.dtype]:
    netCDF4 = _module("netCDF4", "load_netcdf")
    handle = _open_file(netCDF4.Dataset, path, "netCDF")
    with handle:
        if variable not in handle.variables:
            names = ", ".join(repr(n) for n in list(handle.variables)[:10])
            raise KeyError(
                f"'{path}' has no variable '{variable}' (it holds: {names or 'nothing'})"
            )
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
