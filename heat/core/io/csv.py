"""CSV files of numbers: load_csv, save_csv (byte ranges read and written by every process)."""

from __future__ import annotations

import io as _stdio
import os
from typing import Any, Iterable, List, Optional, Tuple, Union

import numpy as np
import torch

from .. import types
from ..communication import MPICommunication, sanitize_comm
from ..devices import Device, sanitize_device
from ..dndarray import DNDarray
from ..layout import balance_, resplit
from ..sanitation import sanitize_split
from ._collective import (
    _agree,
    _atomic_save,
    _check_dndarray,
    _check_path,
    _check_split_type,
    _check_str,
    _file_dtype,
    _local_block,
    _portable,
    _pwrite_all,
    _raise_first,
    _reached_middle_of_write,
    _require_file,
)
from ._common import PathLike


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
        return np.loadtxt(
            lines, delimiter=sep, dtype=numpy_type, ndmin=2, comments=None, encoding=None
        )
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
            result.larray.to(device.torch_device),
            result.gshape,
            heat_type,
            result.split,
            device,
            comm,
            True,
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
        np.savetxt(
            buffer, local, fmt=_csv_format(file_dtype, decimals), delimiter=sep, encoding=encoding
        )
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
