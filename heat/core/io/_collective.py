"""
The collective machinery under :mod:`heat.core.io`, the same for every file format.

- Verdicts: a check or a read that may fail on some processes ends with one collective that
  makes every process raise the same exception (:mod:`heat.core.communication.verdicts`:
  ``agree``, ``root_decides``, ``raise_if_any``; here also :func:`_in_turn`: the processes run
  a step one after the other, each passing the outcome on).
- Reading: an array in a file is a :class:`_Source` seen through a selection (start, step and
  length per axis); :func:`_read_sources` gives each process the block of the concatenation of
  sources that the balanced layout assigns to it, read straight into the result's memory.
- Atomic saves: :func:`_atomic_save` has every process write into a temporary file next to the
  target, which process 0 renames over the target once all have written; on an error the
  temporary file is removed and the target is untouched. A writer killed mid-save leaves its
  temporary file behind: folder loaders skip such names (:func:`_is_temporary_name`), and the
  next save to the same target removes those whose writer ran on this host and is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import re
import shutil
import socket
import uuid
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
import torch

from .. import types
from ..communication import MPICommunication, verdicts
from ..devices import Device
from ..dndarray import DNDarray

# Test hook: called as ``_during_write(format_name, rank)`` while a process has the temporary
# file of a save open and has written its block (tests kill a process there).
_during_write: Optional[Callable[[str, int], None]] = None


def _reached_middle_of_write(format_name: str, comm: MPICommunication) -> None:
    if _during_write is not None:
        _during_write(format_name, comm.rank)


# ---------------------------------------------------------------------------------------------
# collective verdicts (heat.core.communication.verdicts; the short names io.py uses)
# ---------------------------------------------------------------------------------------------
_portable = verdicts.portable
_raise_first = verdicts.raise_first
_wait_without_spinning = verdicts.wait_without_spinning
_agree = verdicts.agree
_root_decides = verdicts.root_decides


def _in_turn(comm: MPICommunication, writers: Sequence[int], step: Callable[[bool], None]) -> None:
    """
    ``step(first)`` on each process of ``writers``, one after the other in that order (each
    passes the outcome on with one broadcast); after a failure the others skip their step, and
    every process raises that error.
    """
    failure, local_error = None, None
    for turn in writers:
        if comm.rank == turn and failure is None:
            try:
                step(turn == writers[0])
            except Exception as caught:  # noqa: B902
                local_error = caught
                failure = _portable(caught) + (turn,)
        if comm.size > 1:
            failure = comm.bcast(failure, root=turn)
    if failure is not None:
        # only the failing process's step failed; the others did not get to try theirs
        outcomes: List[Optional[Tuple[type, str]]] = [None] * comm.size
        outcomes[failure[2]] = failure[:2]
        _raise_first(outcomes, local_error)


# ---------------------------------------------------------------------------------------------
# argument checks (on every process, before any communication)
# ---------------------------------------------------------------------------------------------
def _check_path(path: Any, name: str = "path") -> str:
    if isinstance(path, (str, os.PathLike)):
        path = os.fspath(path)
        return os.fsdecode(path) if isinstance(path, bytes) else path
    raise TypeError(f"{name} must be a str or an os.PathLike, got {type(path).__name__}")


def _check_str(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _check_dndarray(data: Any, name: str = "data") -> DNDarray:
    if not isinstance(data, DNDarray):
        raise TypeError(f"{name} must be a DNDarray, got {type(data).__name__}")
    return data


def _check_split_type(split: Any) -> None:
    if split is not None and (isinstance(split, bool) or not hasattr(split, "__index__")):
        raise TypeError(f"split must be None or an int, got {type(split).__name__}")


def _check_dtype(dtype: Any) -> Optional[type]:
    return None if dtype is None else types.canonical_heat_type(dtype)


def _check_slices_types(slices: Any) -> Tuple[Optional[slice], ...]:
    if slices is None:
        return ()
    if isinstance(slices, slice):
        return (slices,)
    if not isinstance(slices, (tuple, list)):
        raise TypeError(
            f"slices must be a slice, a tuple of slices (or None) or None, got {type(slices).__name__}"
        )
    for axis, entry in enumerate(slices):
        if entry is not None and not isinstance(entry, slice):
            raise TypeError(f"slices[{axis}] must be a slice or None, got {type(entry).__name__}")
        if isinstance(entry, slice):
            for part in (entry.start, entry.stop, entry.step):
                if part is not None and (isinstance(part, bool) or not hasattr(part, "__index__")):
                    raise TypeError(
                        f"slices[{axis}] must have integer bounds and step, got {entry}"
                    )
    return tuple(slices)


# (start, step, length) of the selection along one axis of an array in a file
Selection = Tuple[Tuple[int, int, int], ...]


def _selection(
    slices: Tuple[Optional[slice], ...], shape: Tuple[int, ...], where: str
) -> Selection:
    """Turn ``slices`` into (start, step, length) per axis of ``shape``; out of range: ValueError."""
    if len(slices) > len(shape):
        raise ValueError(
            f"slices has {len(slices)} entries, but {where} has only {len(shape)} dimensions"
        )
    result = []
    for axis, n in enumerate(shape):
        entry = slices[axis] if axis < len(slices) else None
        if entry is None:
            result.append((0, 1, n))
            continue
        step = 1 if entry.step is None else entry.step.__index__()
        if step <= 0:
            raise ValueError(f"slices[{axis}] has step {step}; only positive steps can be read")
        bounds = []
        for value, default in ((entry.start, 0), (entry.stop, n)):
            index = default if value is None else value.__index__()
            index = index + n if index < 0 else index
            if not 0 <= index <= n:
                raise ValueError(
                    f"slices[{axis}] = {entry} is out of range for axis {axis} of length {n} "
                    f"of {where}"
                )
            bounds.append(index)
        start, stop = bounds
        result.append((start, step, max(0, -(-(stop - start) // step))))
    return tuple(result)


def _full_selection(shape: Tuple[int, ...]) -> Selection:
    return tuple((0, 1, n) for n in shape)


def _check_numbers(dtype: np.dtype, where: str) -> None:
    if np.dtype(dtype).kind not in "biufc":
        raise TypeError(
            f"{where} holds values of type {dtype}, which heat cannot load (numbers only)"
        )


def _heat_type_of_file(dtype: np.dtype, where: str) -> type:
    """The heat type for values of NumPy type ``dtype`` found in a file."""
    dtype = np.dtype(dtype)
    _check_numbers(dtype, where)
    return types.canonical_heat_type(dtype)


def _check_convertible(file_dtype: np.dtype, heat_type: type, where: str) -> None:
    """Values of ``file_dtype`` can be loaded as ``heat_type`` without losing a part of them."""
    _check_numbers(file_dtype, where)
    if np.dtype(file_dtype).kind == "c" and not types.heat_type_is_complexfloating(heat_type):
        raise TypeError(
            f"{where} holds complex values; loading them as {heat_type.__name__} would drop the "
            "imaginary part (pass a complex dtype)"
        )


def _require_file(path: str) -> None:
    """FileNotFoundError for a missing path, ValueError for a folder where a file is expected."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: '{path}'")
    if os.path.isdir(path):
        raise ValueError(f"'{path}' is a folder, not a file")


def _require_folder(path: str) -> None:
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such folder: '{path}'")
    if not os.path.isdir(path):
        raise ValueError(f"'{path}' is a file, not a folder")


# ---------------------------------------------------------------------------------------------
# reading: every process reads its block of one or several arrays concatenated along an axis
# ---------------------------------------------------------------------------------------------
class _Source:
    """
    One array in a file, seen through a selection: ``shape`` (the selected shape), ``dtype``
    (NumPy type of the values in the file) and ``read(dest, dest_sel, ranges)``, which copies the
    selected elements ``ranges`` (one ``(begin, end)`` per axis, in selected coordinates) into
    ``dest[dest_sel]``.
    """

    def __init__(self, where: str, dtype: np.dtype, selection: Selection):
        self.where = where
        self.dtype = np.dtype(dtype)
        self.selection = selection
        self.shape = tuple(length for _, _, length in selection)

    def file_slices(self, ranges: Sequence[Tuple[int, int]]) -> Tuple[slice, ...]:
        return tuple(
            slice(start + begin * step, start + (end - 1) * step + 1, step)
            for (start, step, _), (begin, end) in zip(self.selection, ranges)
        )

    def read(self, dest: np.ndarray, dest_sel: Tuple[slice, ...], ranges) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the source holds open (nothing by default)."""

    def _failed(self, error: Exception) -> ValueError:
        return ValueError(f"could not read {self.where} (corrupt or truncated file?): {error}")


def _read_block(
    sources: Sequence[_Source],
    axis: int,
    heat_type: type,
    split: Optional[int],
    comm: MPICommunication,
) -> Tuple[torch.Tensor, Tuple[int, ...]]:
    """
    This process's block (host memory) of the arrays of ``sources`` concatenated along
    ``axis``, converted to ``heat_type`` and split along ``split`` in the balanced layout, and
    the global shape. Local: reads only the parts of the own block, no communication.
    """
    shape = list(sources[0].shape)
    if shape:
        shape[axis] = sum(source.shape[axis] for source in sources)
    gshape = tuple(shape)
    _, lshape, own = comm.chunk(gshape, split)

    # HDF5 converts between integer and float types as it reads; bool and complex values are
    # read as they are stored and converted by torch afterwards
    numeric = "iuf"
    target = heat_type.numpy_type()  # None for bfloat16
    if (
        target is not None
        and np.dtype(target).kind in numeric
        and all(s.dtype.kind in numeric for s in sources)
    ):
        read_type = heat_type
    else:
        read_type = _heat_type_of_file(
            np.result_type(*[s.dtype for s in sources]), sources[0].where
        )

    host = torch.empty(lshape, dtype=read_type.torch_type())
    if host.numel() > 0 and host.ndim == 0:
        sources[0].read(host.numpy(), (), ())
    elif host.numel() > 0:
        dest = host.numpy()
        position = 0
        for source in sources:
            low, high = position, position + source.shape[axis]
            position = high
            begin, end = max(low, own[axis].start), min(high, own[axis].stop)
            if begin >= end:
                continue
            ranges = [(s.start, s.stop) for s in own]
            ranges[axis] = (begin - low, end - low)
            dest_sel = [slice(0, s.stop - s.start) for s in own]
            dest_sel[axis] = slice(begin - own[axis].start, end - own[axis].start)
            source.read(dest, tuple(dest_sel), ranges)
    if host.dtype != heat_type.torch_type():
        host = host.to(heat_type.torch_type())
    return host, gshape


def _as_dndarray(
    local: torch.Tensor,
    gshape: Tuple[int, ...],
    heat_type: type,
    split: Optional[int],
    device: Device,
    comm: MPICommunication,
) -> DNDarray:
    """The balanced DNDarray of blocks read by :func:`_read_block`, moved to ``device``."""
    if device.torch_device != "cpu":
        local = local.to(device.torch_device)
    return DNDarray(local, gshape, heat_type, split, device, comm, True)


def _read_sources(
    sources: Sequence[_Source],
    axis: int,
    heat_type: type,
    split: Optional[int],
    device: Device,
    comm: MPICommunication,
) -> DNDarray:
    """
    The arrays of ``sources`` (known to every process) concatenated along ``axis``, as a
    balanced DNDarray split along ``split``: every process reads its block, then one all-gather
    agrees on the outcome.
    """
    local, gshape = _agree(comm, _read_block, sources, axis, heat_type, split, comm)
    return _as_dndarray(local, gshape, heat_type, split, device, comm)


def _load_file(
    describe: Callable[[], Tuple[_Source, type, Optional[int]]],
    device: Device,
    comm: MPICommunication,
) -> DNDarray:
    """
    Load one array from one file with one collective: every process runs ``describe()``
    (opens the file, checks its metadata, returns the source, the result's heat type and
    split) and reads its block; one all-gather then agrees on the outcome and checks that all
    processes saw the same shape and type.
    """

    def describe_and_read():
        source, heat_type, split = describe()
        try:
            local, gshape = _read_block([source], 0, heat_type, split, comm)
        finally:
            source.close()
        return local, gshape, heat_type, split, source.where

    def fingerprint(result):
        _, gshape, heat_type, split, where = result
        return where, f"shape {gshape}, {heat_type.__name__}"

    local, gshape, heat_type, split, _ = _agree(comm, describe_and_read, fingerprint=fingerprint)
    return _as_dndarray(local, gshape, heat_type, split, device, comm)


def _local_block(local: torch.Tensor, file_dtype: np.dtype) -> np.ndarray:
    """A local block as a C-contiguous NumPy array of ``file_dtype`` in host memory."""
    local = local.detach()
    if local.device.type != "cpu":
        local = local.cpu()
    if local.dtype == torch.bfloat16:
        local = local.float()
    array = local.resolve_conj().resolve_neg().numpy()
    return np.ascontiguousarray(array, dtype=file_dtype)


def _file_dtype(data: DNDarray, dtype: Any) -> np.dtype:
    """The NumPy type written to a file: ``dtype`` if given, else the array's (bfloat16: float32)."""
    heat_type = data.dtype if dtype is None else types.canonical_heat_type(dtype)
    numpy_type = heat_type.numpy_type()
    return np.dtype(np.float32 if numpy_type is None else numpy_type)


def _own_slices(data: DNDarray) -> Tuple[List[int], Tuple[slice, ...]]:
    """
    The writers (processes holding a non-empty block, process 0 always among them and first)
    and this process's block as global slices. Collective for an unbalanced split array (one
    all-gather of the layout).
    """
    comm = data.comm
    if data.split is None:
        return [0], tuple(slice(0, n) for n in data.gshape)
    counts, displs = data.counts_displs()
    own = tuple(
        slice(displs[comm.rank], displs[comm.rank] + counts[comm.rank])
        if axis == data.split
        else slice(0, n)
        for axis, n in enumerate(data.gshape)
    )
    nonempty = data.gnumel > 0
    writers = [0] + [r for r in range(1, comm.size) if counts[r] > 0 and nonempty]
    return writers, own


# ---------------------------------------------------------------------------------------------
# atomic saving: write a temporary file next to the target, rename it over the target
# ---------------------------------------------------------------------------------------------
# This host's part of a temporary name's token: a process id names a process on one host only,
# so only temporaries written here are checked for a dead writer (a shared file system may hold
# those of other hosts' live processes).
_HOST_TAG = hashlib.blake2s(socket.gethostname().encode(), digest_size=4).hexdigest()
# ".NAME.<pid>-<token>.tmp.EXT", and ".old" after it for a Zarr store moved aside; tokens of 12
# hex digits (without a host tag) come from earlier versions
_TEMPORARY_NAME = re.compile(r"\..+\.([0-9]+)-([0-9a-f]{12}|[0-9a-f]{20})\.tmp(\.[^./]*)?(\.old)?")


def _temporary_name(path: str) -> str:
    folder, name = os.path.split(os.path.abspath(path))
    stem, extension = os.path.splitext(name)
    # hidden, unique (process id and a token of this host's tag and a random part) and with the
    # target's extension, for libraries that look at it
    token = _HOST_TAG + uuid.uuid4().hex[:12]
    return os.path.join(folder, f".{stem}.{os.getpid()}-{token}.tmp{extension}")


def _is_temporary_name(name: str) -> bool:
    """Whether the file name ``name`` (no folder) is that of a save's temporary file."""
    return _TEMPORARY_NAME.fullmatch(name) is not None


def _process_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (one of another user counts as alive)."""
    if pid <= 0:
        return False  # not a process id that a writer can have; os.kill would signal a group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, but belongs to someone else
        return True
    return True


def _remove_stale_temporaries(path: str) -> None:
    """
    On process 0 before a save to ``path``: remove the temporary files (and Zarr stores moved
    aside) that earlier saves to this very target left when their writer was killed, i.e.
    those of heat's naming pattern for ``path`` whose writer ran on this host and is gone.
    Best effort: what cannot be listed or removed stays.
    """
    folder, name = os.path.split(os.path.abspath(path))
    stem, extension = os.path.splitext(name)
    pattern = re.compile(
        re.escape(f".{stem}.")
        + r"([0-9]+)-([0-9a-f]{20})"
        + re.escape(f".tmp{extension}")
        + r"(\.old)?"
    )
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for candidate in names:
        match = pattern.fullmatch(candidate)
        if match is None or match.group(2)[: len(_HOST_TAG)] != _HOST_TAG:
            continue
        if match.group(3) and not os.path.lexists(path):
            # a Zarr store moved aside by a writer killed before it moved the new one in: the
            # only copy of the old data, left for the user to restore
            continue
        if not _process_alive(int(match.group(1))):
            _remove(os.path.join(folder, candidate))


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


def _prepare_temporary(
    path: str, directory: bool, copy_existing: bool, must_exist: bool, exclusive: bool
) -> Tuple[str, bool]:
    """On process 0: check the target and create the temporary name (a copy of the old file)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot save to '{path}': the folder '{folder}' does not exist")
    exists = os.path.lexists(path)
    if exists and os.path.isdir(path) and not directory:
        raise IsADirectoryError(f"cannot save to '{path}': it is a folder")
    if exists and directory and not os.path.isdir(path):
        raise FileExistsError(f"cannot save a Zarr store to '{path}': a file of that name exists")
    if exclusive and exists:
        raise FileExistsError(f"'{path}' exists already")
    if must_exist and not exists:
        raise FileNotFoundError(f"no such file: '{path}' (mode 'r+' writes into an existing file)")
    _remove_stale_temporaries(path)
    temporary = _temporary_name(path)
    if copy_existing and exists:
        try:
            shutil.copyfile(path, temporary)
        except BaseException:
            _remove(temporary)
            raise
    return temporary, exists


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(first: str, second: str) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    result = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), second)


def _commit_temporary(temporary: str, path: str, directory: bool) -> None:
    """On process 0: rename the finished temporary file over the target."""
    try:
        if os.path.exists(path):
            with contextlib.suppress(OSError):
                shutil.copymode(path, temporary)  # keep the permissions of the file it replaces
        if not directory or not os.path.exists(path):
            os.replace(temporary, path)
            return
        # a folder (Zarr store) cannot be renamed over a non-empty folder: swap the two atomically
        # where the file system can, else move the old one aside first
        if not _exchange(temporary, path):
            aside = _temporary_name(path) + ".old"
            os.rename(path, aside)
            try:
                os.rename(temporary, path)
            except BaseException:
                os.rename(aside, path)
                raise
            temporary = aside
        _remove(temporary)  # now holds the old store
    except BaseException:
        _remove(temporary)
        raise


def _atomic_save(
    path: str,
    comm: MPICommunication,
    write: Callable[[str, bool], None],
    directory: bool = False,
    copy_existing: bool = False,
    must_exist: bool = False,
    exclusive: bool = False,
) -> None:
    """
    Save through a temporary file: ``write(temporary, existed)`` runs on every process and
    either returns on all or raises the same error on all (it agrees on its outcome itself);
    then process 0 renames the temporary file over ``path``. On an error process 0 removes it.
    """
    temporary, existed = _root_decides(
        comm, _prepare_temporary, path, directory, copy_existing, must_exist, exclusive
    )
    try:
        write(temporary, existed)
    except BaseException:
        if comm.rank == 0:
            _remove(temporary)
        raise
    # every process has closed the file: write() ended with a collective
    _root_decides(comm, _commit_temporary, temporary, path, directory)


def _check_same_trailing_shape(
    named_shapes: Sequence[Tuple[str, Tuple[int, ...]]], what: str, axis: int
) -> None:
    """Arrays concatenated along ``axis``: all shapes agree on every other axis."""
    first_name, first = named_shapes[0]
    if len(first) == 0:
        raise ValueError(f"{what} '{first_name}' is 0-dimensional; it cannot be concatenated")
    for name, shape in named_shapes[1:]:
        if len(shape) != len(first) or any(
            a != b for i, (a, b) in enumerate(zip(shape, first)) if i != axis
        ):
            raise ValueError(
                f"{what} '{name}' has shape {shape}, which does not fit shape {first} of "
                f"{what} '{first_name}' (all must agree except along axis {axis})"
            )


def _pwrite_all(descriptor: int, payload, offset: int) -> None:
    view = memoryview(payload).cast("B")
    while len(view):
        written = os.pwrite(descriptor, view, offset)
        view, offset = view[written:], offset + written
