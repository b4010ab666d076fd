"""
Tests of heat/core/io.py (ht.load / ht.save and the functions of each format): NumPy is the oracle.

Every format is saved from every split (balanced and skewed layouts) and loaded back on every
split, with shapes that divide unevenly, have fewer rows than processes or are empty. The files
live in one temporary folder shared by all ranks (created by rank 0, removed at the end). Bad
files raise the same exception with the same message on every rank, and the communicator works
afterwards; a save that fails, or is killed halfway, leaves the previous file as it was.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from typing import Optional

import numpy as np
import pytest

import heat as ht
from heat.core.io import _collective as _collective_io
from tests.helpers import (
    SHAPES,
    Checks,
    collective_assert,
    fresh_job_environment,
    inputs,
    random_array,
    splits_for,
    world_size,
)

h5py = pytest.importorskip("h5py")

netcdf_missing = pytest.mark.skipif(
    not ht.supports_netcdf(), reason="netCDF4 is not installed (pip install heat-mpi[netcdf])"
)
zarr_missing = pytest.mark.skipif(
    not ht.supports_zarr(), reason="zarr is not installed (pip install heat-mpi[zarr])"
)

COMM = ht.MPI_WORLD


@pytest.fixture(scope="module")
def folder():
    """A temporary folder shared by all ranks: created by rank 0, its path broadcast."""
    path = tempfile.mkdtemp(prefix="heat-test-io-") if COMM.rank == 0 else None
    path = COMM.bcast(path)
    yield path
    COMM.Barrier()
    if COMM.rank == 0:
        shutil.rmtree(path, ignore_errors=True)


def on_rank0(function, *args, **kwargs):
    """Run a file-preparing function on rank 0 only; the others wait until the file exists."""
    if COMM.rank == 0:
        function(*args, **kwargs)
    COMM.Barrier()


def leftovers(folder):
    """Temporary files of saves (hidden names ending in .tmp plus the extension)."""
    return sorted(name for name in os.listdir(folder) if name.startswith(".") and ".tmp" in name)


def expect_same_errors(calls):
    """
    Every ``(exception, function, args, kwargs, text)`` raises ``exception`` on every rank with
    the same message, which contains ``text``; checked collectively (the gather also shows that
    the communicator still works after the errors).
    """
    seen, right_type = [], []
    for exception, function, args, kwargs, text in calls:
        try:
            function(*args, **kwargs)
            seen.append(("no error", ""))
            right_type.append(False)
        except Exception as error:  # noqa: B902 - the type is checked below
            seen.append((type(error).__name__, str(error)))
            right_type.append(isinstance(error, exception))
    everyone = COMM.allgather(seen)
    problems = []
    for index, (exception, function, args, kwargs, text) in enumerate(calls):
        outcomes = {tuple(rank_seen[index]) for rank_seen in everyone}
        name, message = seen[index]
        call = f"{function.__name__}{args} {kwargs}"
        if len(outcomes) > 1:
            problems.append(f"{call}: ranks disagree: {sorted(outcomes)}")
        elif not right_type[index]:
            problems.append(f"{call}: raised {name} ({message}), expected {exception.__name__}")
        elif text not in message:
            problems.append(f"{call}: message {message!r} does not contain {text!r}")
    collective_assert(not problems, "\n".join(problems))


# ---------------------------------------------------------------------------------------------
# HDF5
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64]
)
def test_hdf5_round_trip(folder, dtype):
    check = Checks()
    path = os.path.join(folder, f"round-trip-{np.dtype(dtype).name}.h5")
    for shape in SHAPES:
        for data, x, label in inputs(shape, dtype):
            ht.save_hdf5(x, path, "data")
            for split in splits_for(len(shape)):
                check(ht.load_hdf5(path, "data", split=split), data, f"{shape} {label} -> {split}")
    check.verify()
    COMM.Barrier()
    collective_assert(not leftovers(folder), f"temporary files left: {leftovers(folder)}")


def test_hdf5_file_matches_numpy(folder):
    """What save_hdf5 writes is what h5py reads (not only what heat reads back)."""
    data = random_array((9, 4), np.float64)
    path = os.path.join(folder, "plain.h5")
    problems = []
    for _, x, label in inputs((9, 4), np.float64):
        ht.save_hdf5(x, path, "x")
        with h5py.File(path, "r") as handle:
            if not np.array_equal(handle["x"][...], data):
                problems.append(label)
        COMM.Barrier()  # nobody saves again while another rank still reads
    collective_assert(not problems, f"file content differs for {problems}")


def test_hdf5_chunked_gzip(folder):
    check = Checks()
    data = random_array((10, 7), np.float32)
    path = os.path.join(folder, "gzip.h5")
    problems = []
    for _, x, label in inputs((10, 7), np.float32):
        # chunks that do not line up with any process boundary
        ht.save_hdf5(x, path, "x", chunks=(3, 4), compression="gzip", compression_opts=4)
        with h5py.File(path, "r") as handle:
            if handle["x"].compression != "gzip" or handle["x"].chunks != (3, 4):
                problems.append(f"{label}: {handle['x'].compression} {handle['x'].chunks}")
        COMM.Barrier()
        for split in (None, 0, 1, -1):
            check(ht.load_hdf5(path, "x", split=split), data, f"{label} -> {split}")
    check.verify()
    collective_assert(not problems, "\n".join(problems))


def test_hdf5_slices_and_load_fraction(folder):
    check = Checks()
    data = random_array((9, 7), np.float64)
    path = os.path.join(folder, "slices.h5")
    on_rank0(
        lambda: h5py.File(path, "w").create_dataset("x", data=data, chunks=(2, 3)).file.close()
    )
    cases = [
        ((slice(1, 8, 2),), 1.0),
        ((slice(None), slice(2, 6)), 1.0),
        ((slice(-5, None), slice(0, 7, 3)), 1.0),
        (slice(3, 3), 1.0),
        ((None, slice(6, None)), 1.0),
        (None, 0.5),
        ((slice(2, None), slice(1, 5)), 0.34),
    ]
    for slices, fraction in cases:
        key = slices if isinstance(slices, tuple) else (slices,) if slices is not None else ()
        expected = data[tuple(slice(None) if s is None else s for s in key)]
        expected = expected[: int(expected.shape[0] * fraction)]
        for split in (None, 0, 1):
            result = ht.load_hdf5(path, "x", slices=slices, split=split, load_fraction=fraction)
            check(result, expected, f"{slices} {fraction} split={split}")
    check.verify()


def test_hdf5_dtypes(folder):
    check = Checks()
    path = os.path.join(folder, "dtypes.h5")
    values = np.arange(-3, 9).reshape(4, 3)

    def write():
        with h5py.File(path, "w") as handle:
            handle["f8"] = values * 0.5
            handle["i2"] = values.astype(np.int16)
            handle["u2"] = (values + 3).astype(np.uint16)
            handle["u4"] = (values + 3).astype(np.uint32)
            handle["b"] = values > 2
            handle["scalar"] = 2.5

    on_rank0(write)
    for split in (None, 0, 1):
        check(ht.load_hdf5(path, "f8", split=split), values * 0.5, "float64")
        check(
            ht.load_hdf5(path, "f8", dtype=ht.float32, split=split),
            (values * 0.5).astype(np.float32),
            "f8->f4",
        )
        check(
            ht.load_hdf5(path, "f8", dtype=ht.int64, split=split),
            (values * 0.5).astype(np.int64),
            "f8->i8",
        )
        check(ht.load_hdf5(path, "i2", split=split), values.astype(np.int16), "int16")
        check(ht.load_hdf5(path, "u2", split=split), (values + 3).astype(np.uint16), "uint16")
        check(ht.load_hdf5(path, "u4", split=split), (values + 3).astype(np.uint32), "uint32")
        check(ht.load_hdf5(path, "b", split=split), values > 2, "bool")
        check(
            ht.load_hdf5(path, "b", dtype=ht.float32, split=split),
            (values > 2).astype(np.float32),
            "b->f4",
        )
        check(
            ht.load_hdf5(path, "i2", dtype="complex64", split=split),
            values.astype(np.complex64),
            "i2->c8",
        )
    check(ht.load_hdf5(path, "scalar"), np.array(2.5), "0-d")
    x = ht.array(values.astype(np.float32), split=0)
    ht.save_hdf5(x, path, "as_f8", mode="a", dtype=ht.float64)
    check(ht.load_hdf5(path, "as_f8", split=0), values.astype(np.float64), "saved as float64")
    check.verify()


def test_hdf5_modes(folder):
    check = Checks()
    path = os.path.join(folder, "modes.h5")
    a = random_array((6, 3), np.float32)
    b = random_array((5,), np.int64, seed=1)
    c = random_array((2, 2, 2), np.float64, seed=2)
    ht.save_hdf5(ht.array(a, split=0), path, "a")
    ht.save_hdf5(ht.array(b, split=0), path, "b", mode="a")
    ht.save_hdf5(ht.array(c, split=2), path, "group/c", mode="r+")
    check(ht.load_hdf5(path, "a", split=0), a, "a kept")
    check(ht.load_hdf5(path, "b", split=0), b, "b added")
    check(ht.load_hdf5(path, "group/c", split=1), c, "c added")
    # "a" replaces a dataset of the same name, also with another shape and type
    ht.save_hdf5(ht.array(c, split=0), path, "a", mode="a", chunks=(1, 2, 2), compression="gzip")
    check(ht.load_hdf5(path, "a", split=0), c, "a replaced")
    check(ht.load_hdf5(path, "b"), b, "b still there")
    # "a" on a missing file creates it
    fresh = os.path.join(folder, "modes-fresh.h5")
    ht.save_hdf5(ht.array(b, split=0), fresh, "b", mode="a")
    check(ht.load_hdf5(fresh, "b", split=0), b, "created by mode a")
    # "w" replaces the whole file
    ht.save_hdf5(ht.array(a, split=1), path, "only")
    check.verify()
    expect_same_errors(
        [
            (KeyError, ht.load_hdf5, (path, "b"), {}, "no dataset 'b'"),
            (FileExistsError, ht.save_hdf5, (ht.array(a), path, "x"), {"mode": "w-"}, "modes.h5"),
            (FileExistsError, ht.save_hdf5, (ht.array(a), path, "x"), {"mode": "x"}, "modes.h5"),
            (
                FileNotFoundError,
                ht.save_hdf5,
                (ht.array(a), os.path.join(folder, "absent.h5"), "x"),
                {"mode": "r+"},
                "absent.h5",
            ),
            (ValueError, ht.save_hdf5, (ht.array(a), path, "x"), {"mode": "q"}, "mode"),
        ]
    )


def test_load_multiple_hdf5(folder):
    check = Checks()
    parts = os.path.join(folder, "h5-parts")
    pieces = [random_array((n, 3), np.float32, seed=n) for n in (4, 0, 1, 3)]
    names = ["p2.h5", "p0.hdf5", "p3.h5", "p1.h5"]

    def write():
        os.makedirs(parts)
        for name, piece in zip(names, pieces):
            with h5py.File(os.path.join(parts, name), "w") as handle:
                handle["x"] = piece
        open(os.path.join(parts, "notes.txt"), "w").close()  # not an HDF5 file: ignored

    on_rank0(write)
    ordered = [pieces[names.index(n)] for n in sorted(names)]
    for split in (0, 1, None):
        check(
            ht.load_multiple_hdf5(parts, "x", split=split),
            np.concatenate(ordered),
            f"split={split}",
        )
    reverse = ht.load_multiple_hdf5(
        parts, "x", sorting_func=lambda files: sorted(files, reverse=True)
    )
    check(reverse, np.concatenate(ordered[::-1]), "reversed")
    check(
        ht.load_multiple_hdf5(parts, "x", dtype=ht.float64),
        np.concatenate(ordered).astype(np.float64),
        "f8",
    )
    check.verify()


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_csv_round_trip(folder, dtype):
    check = Checks()
    path = os.path.join(folder, f"round-trip-{np.dtype(dtype).name}.csv")
    for shape in ((7, 3), (5, 6), (1, 5), (2, 1), (9,)):
        for data, x, label in inputs(shape, dtype, skew=True):
            ht.save_csv(x, path)
            expected = data.reshape(shape[0], -1)
            for split in (None, 0, 1):
                result = ht.load_csv(path, dtype=ht.types.canonical_heat_type(dtype), split=split)
                check(result, expected, f"{shape} {label} -> {split}")
    check.verify()


def test_csv_matches_numpy_loadtxt(folder):
    """Lines of very different lengths, so that byte ranges cut lines at every process count."""
    check = Checks()
    rng = np.random.default_rng(7)
    data = rng.uniform(-1, 1, size=(37, 4)) * 10.0 ** rng.integers(-3, 8, size=(37, 4))
    path = os.path.join(folder, "ragged.csv")
    header = ["# a comment line", "a;b;c;d"]

    def write():
        with open(path, "w") as handle:
            handle.write("\n".join(header) + "\n")
            for i, row in enumerate(data):
                handle.write(";".join(repr(float(v)) for v in row) + ("\n" if i % 5 else "\n\n"))

    on_rank0(write)
    expected = np.loadtxt(path, delimiter=";", skiprows=2)
    for split in (None, 0, 1, -1):
        result = ht.load_csv(path, header_lines=2, sep=";", dtype=ht.float64, split=split)
        check(result, expected, f"split={split}")
    check.verify()


def test_csv_line_endings_and_encodings(folder):
    check = Checks()
    values = np.arange(24, dtype=np.float32).reshape(8, 3) / 4
    text = "".join(",".join(f"{v:g}" for v in row) + "\r\n" for row in values)
    crlf = os.path.join(folder, "crlf.csv")
    no_final_newline = os.path.join(folder, "no-final-newline.csv")
    utf16 = os.path.join(folder, "utf16.csv")

    def write():
        with open(crlf, "wb") as handle:
            handle.write(("x,y,z\r\n" + text).encode())
        with open(no_final_newline, "wb") as handle:
            handle.write(text.replace("\r\n", "\n").rstrip("\n").encode())
        with open(utf16, "wb") as handle:
            handle.write(("ä,ö,ü\n" + text.replace("\r\n", "\n")).encode("utf-16"))

    on_rank0(write)
    for split in (None, 0, 1):
        check(ht.load_csv(crlf, header_lines=1, split=split), values, f"crlf {split}")
        check(ht.load_csv(no_final_newline, split=split), values, f"no final newline {split}")
        check(
            ht.load_csv(utf16, header_lines=1, encoding="utf-16", split=split),
            values,
            f"utf-16 {split}",
        )
    check.verify()


def test_csv_with_a_header_suggests_header_lines(folder):
    # issue 18, item 26: a header line that is not skipped gets a hint, on every process
    values = np.arange(12, dtype=np.float32).reshape(6, 2)
    header = os.path.join(folder, "with-header.csv")
    two_headers = os.path.join(folder, "with-two-headers.csv")
    only_header = os.path.join(folder, "only-header.csv")
    bad_row = os.path.join(folder, "bad-row.csv")
    rows = "".join(f"{a:g},{b:g}\n" for a, b in values)

    def write():
        for path, text in (
            (header, "width,height\n" + rows),
            (two_headers, "# measured 2026\nwidth,height\n" + rows),
            (only_header, "width,height\n"),
            (bad_row, rows + "7,seven\n"),
        ):
            with open(path, "w") as handle:
                handle.write(text)

    on_rank0(write)
    expect_same_errors(
        [
            (ValueError, ht.load, (header,), {}, "if it is a header, skip it with header_lines=1"),
            (ValueError, ht.load_csv, (header,), {"split": 1}, "'width,height' is not a row"),
            (ValueError, ht.load_csv, (two_headers,), {"header_lines": 1}, "header_lines=2"),
            (ValueError, ht.load_csv, (only_header,), {}, "header_lines=1"),
        ]
    )
    # a bad value further down is no header: no such hint
    try:
        ht.load_csv(bad_row, split=0)
        message = "no error"
    except ValueError as error:
        message = str(error)
    collective_assert("could not parse" in message and "header" not in message, message)
    check = Checks()
    check(ht.load(header, header_lines=1, split=0), values, "header skipped")
    check(ht.load_csv(two_headers, header_lines=2), values, "two header lines skipped")
    check.verify()


def test_csv_format_options(folder):
    check = Checks()
    path = os.path.join(folder, "options.csv")
    values = np.array([[1.23456, -2.5], [3.0, 4.987654]], dtype=np.float64)
    ht.save_csv(
        ht.array(values, split=0), path, header_lines=["first", "second"], sep="|", decimals=2
    )
    on_rank0(lambda: None)
    with open(path) as handle:
        content = handle.read()
    expected_content = "first\nsecond\n1.23|-2.50\n3.00|4.99\n"
    collective_assert(content == expected_content, f"{content!r} != {expected_content!r}")
    check(
        ht.load_csv(path, header_lines=2, sep="|", dtype=ht.float64),
        np.round(values, 2),
        "decimals=2",
    )
    flags = np.array([True, False, True])
    ht.save_csv(ht.array(flags, split=0), path)
    check(
        ht.load_csv(path, dtype=ht.int32, split=0),
        flags.astype(np.int32).reshape(3, 1),
        "bool as 0/1",
    )
    empty = os.path.join(folder, "empty.csv")
    on_rank0(lambda: open(empty, "w").close())
    check(ht.load_csv(empty, split=0), np.empty((0, 0), np.float32), "empty file")
    check.verify()


# ---------------------------------------------------------------------------------------------
# NumPy .npy
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.complex128, np.float16])
def test_npy_round_trip(folder, dtype):
    check = Checks()
    path = os.path.join(folder, f"round-trip-{np.dtype(dtype).name}.npy")
    problems = []
    for shape in SHAPES:
        for data, x, label in inputs(shape, dtype):
            ht.save_npy(x, path)
            if not np.array_equal(np.load(path), data):
                problems.append(f"{shape} {label}: np.load differs")
            for split in splits_for(len(shape)):
                check(ht.load_npy(path, split=split), data, f"{shape} {label} -> {split}")
            COMM.Barrier()  # nobody saves again while another rank still reads
    check.verify()
    collective_assert(not problems, "\n".join(problems))


def test_npy_written_by_numpy(folder):
    check = Checks()
    data = random_array((5, 4, 3), np.float64)
    c_order = os.path.join(folder, "numpy-c.npy")
    f_order = os.path.join(folder, "numpy-f.npy")

    def write():
        np.save(c_order, data)
        np.save(f_order, np.asfortranarray(data))

    on_rank0(write)
    for split in (None, 0, 1, 2):
        check(ht.load_npy(c_order, split=split), data, f"C order {split}")
        check(ht.load_npy(f_order, split=split), data, f"Fortran order {split}")
        check(
            ht.load_npy(c_order, dtype=ht.float32, split=split),
            data.astype(np.float32),
            f"as f4 {split}",
        )
    check.verify()


def test_load_npy_from_path(folder):
    check = Checks()
    parts = os.path.join(folder, "npy-parts")
    pieces = {
        f"part{i}.npy": random_array((n, 2, 3), np.float64, seed=i)
        for i, n in enumerate((3, 0, 5, 1))
    }

    def write():
        os.makedirs(parts)
        for name, piece in pieces.items():
            np.save(os.path.join(parts, name), piece)

    on_rank0(write)
    whole = np.concatenate([pieces[name] for name in sorted(pieces)])
    for split in (0, 1, 2, None):
        result = ht.load_npy_from_path(parts, dtype=ht.float64, split=split)
        check(result, whole, f"split={split}")
    check(ht.load_npy_from_path(parts), whole.astype(np.int32), "default dtype int32 as in HeAT")
    check.verify()


# ---------------------------------------------------------------------------------------------
# netCDF and Zarr
# ---------------------------------------------------------------------------------------------
@netcdf_missing
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_netcdf_round_trip(folder, dtype):
    check = Checks()
    path = os.path.join(folder, f"round-trip-{np.dtype(dtype).name}.nc")
    heat_type = ht.types.canonical_heat_type(dtype)
    for shape in SHAPES:
        for data, x, label in inputs(shape, dtype):
            ht.save_netcdf(x, path, "v")
            for split in splits_for(len(shape)):
                check(
                    ht.load_netcdf(path, "v", dtype=heat_type, split=split),
                    data,
                    f"{shape} {label} -> {split}",
                )
    check.verify()


@netcdf_missing
def test_netcdf_modes(folder):
    check = Checks()
    path = os.path.join(folder, "modes.nc")
    a = random_array((6, 4), np.float64)
    b = random_array((3,), np.float64, seed=1)
    ht.save_netcdf(ht.array(a, split=0), path, "a", dimension_names=("rows", "cols"), zlib=True)
    ht.save_netcdf(ht.array(b, split=0), path, "b", mode="a", is_unlimited=True)
    # write a (2, 4) block into rows 3 and 4 of the existing variable a
    patch = random_array((2, 4), np.float64, seed=2)
    ht.save_netcdf(
        ht.array(patch, split=1), path, "a", mode="r+", file_slices=(slice(3, 5), slice(None))
    )
    expected = a.copy()
    expected[3:5] = patch
    for split in (None, 0, 1):
        check(ht.load_netcdf(path, "a", dtype=ht.float64, split=split), expected, f"a {split}")
    check(ht.load_netcdf(path, "b", dtype=ht.float64, split=0), b, "b")
    check.verify()
    expect_same_errors(
        [
            (TypeError, ht.save_netcdf, (ht.array([True, False]), path, "flags"), {}, "boolean"),
            (
                ValueError,
                ht.save_netcdf,
                (ht.zeros((7, 4)), path, "a"),
                {"mode": "a"},
                "does not fit",
            ),
            (
                ValueError,
                ht.save_netcdf,
                (ht.zeros((2,)), path, "q"),
                {"mode": "a", "dimension_names": "rows"},
                "length 6",
            ),
        ]
    )


@zarr_missing
@pytest.mark.parametrize("chunks", [None, (2, 4)])
def test_zarr_round_trip(folder, chunks):
    check = Checks()
    path = os.path.join(folder, f"round-trip-{chunks}.zarr")
    data = random_array((7, 10), np.float32)
    for _, x, label in inputs((7, 10), np.float32):
        options = {} if chunks is None else {"chunks": chunks}
        ht.save_zarr(x, path, overwrite=True, **options)
        for split in (None, 0, 1, -1):
            check(ht.load_zarr(path, split=split), data, f"{label} -> {split}")
    for shape in ((7,), (1, 5), (0, 3), (2, 3, 4)):
        for data, x, label in inputs(shape, np.int64, skew=False):
            ht.save_zarr(x, path, overwrite=True)
            for split in splits_for(len(shape)):
                check(ht.load_zarr(path, split=split), data, f"{shape} {label} -> {split}")
    check.verify()


@zarr_missing
def test_zarr_groups_and_slices(folder):
    import zarr

    check = Checks()
    path = os.path.join(folder, "group.zarr")
    parts = {
        f"RECEIVER_{i}/DATA": random_array((n, 3), np.float64, seed=i)
        for i, n in enumerate((2, 5, 1))
    }

    def write():
        group = zarr.open_group(path, mode="w")
        for name, piece in parts.items():
            group.create_array(name, shape=piece.shape, dtype=piece.dtype)[...] = piece

    on_rank0(write)
    whole = np.concatenate([parts[name] for name in sorted(parts)])
    for split in (0, None):
        check(ht.load_zarr(path, "RECEIVER_*/DATA", split=split), whole, f"pattern {split}")
    check(ht.load_zarr(path, "RECEIVER_1/DATA", split=1), parts["RECEIVER_1/DATA"], "one array")
    check(
        ht.load_zarr(path, "RECEIVER_1/DATA", split=0, slices=(slice(1, 5, 2), slice(0, 2))),
        parts["RECEIVER_1/DATA"][1:5:2, 0:2],
        "slices",
    )
    check.verify()
    expect_same_errors(
        [
            (KeyError, ht.load_zarr, (path, "RECEIVER_9/DATA"), {}, "RECEIVER_9"),
            (ValueError, ht.load_zarr, (path,), {}, "group"),
            (FileExistsError, ht.save_zarr, (ht.zeros(3), path), {}, "group.zarr"),
        ]
    )


@zarr_missing
def test_zarr_dtype(folder):
    """dtype= converts while reading (it was passed on to zarr.open, which rejected it)."""
    import zarr

    check = Checks()
    path = os.path.join(folder, "typed.zarr")
    parts = {
        "a/x": random_array((5, 4), np.float64, seed=1),
        "b/x": random_array((2, 4), np.int64, seed=2),
        "c": random_array((3, 4), np.complex64, seed=3),
    }

    def write():
        group = zarr.open_group(path, mode="w")
        for name, piece in parts.items():
            group.create_array(name, shape=piece.shape, dtype=piece.dtype)[...] = piece

    on_rank0(write)
    for dtype in (np.float32, np.int32, np.float64):
        heat_type = ht.types.canonical_heat_type(dtype)
        for split in splits_for(2):
            check(
                ht.load(path, variable="a/x", dtype=heat_type, split=split),
                parts["a/x"].astype(dtype),
                f"a/x {dtype.__name__} {split}",
            )
        check(
            ht.load_zarr(path, "b/x", dtype=heat_type, split=0), parts["b/x"].astype(dtype), "b/x"
        )
        check(
            ht.load_zarr(path, "*/x", dtype=heat_type),
            np.concatenate([parts["a/x"], parts["b/x"]]).astype(dtype),
            "pattern",
        )
    check(
        ht.load_zarr(path, "c", dtype=ht.complex128, split=1), parts["c"].astype(np.complex128), "c"
    )
    check(
        ht.load_zarr(path, "a/x", dtype=ht.float32, split=0, slices=(slice(1, 4),)),
        parts["a/x"][1:4].astype(np.float32),
        "slices",
    )
    check.verify()
    expect_same_errors(
        [
            (TypeError, ht.load_zarr, (path, "c"), {"dtype": ht.float32}, "complex"),
            (TypeError, ht.load, (path,), {"variable": "a/x", "dtype": "no type"}, ""),
        ]
    )


def test_supports():
    assert ht.supports_hdf5() is True
    assert isinstance(ht.supports_netcdf(), bool) and isinstance(ht.supports_zarr(), bool)
    # HeAT's pandas flag: whether the package imports
    try:
        import pandas  # noqa: F401

        installed = True
    except ImportError:
        installed = False
    assert ht.supports_pandas() is installed


def test_size_from_slice():
    # HeAT's helper: (number selected, first index) of a slice of an axis, as Python's range
    for size in (0, 1, 7, 10):
        for s in (
            slice(None),
            slice(2, None, 3),
            slice(None, None, -1),
            slice(-3, None),
            slice(5, 2),
            slice(-100, 100, 2),
            slice(8, 1, -2),
            slice(3, 3),
        ):
            selected = np.arange(size)[s]
            expected = (len(selected), int(selected[0]) if len(selected) else 0)
            assert ht.size_from_slice(size, s) == expected, (size, s)
    with pytest.raises(TypeError, match="size"):
        ht.size_from_slice(2.0, slice(None))
    with pytest.raises(TypeError, match="s must be a slice"):
        ht.size_from_slice(3, 1)
    with pytest.raises(ValueError, match="size"):
        ht.size_from_slice(-1, slice(None))
    with pytest.raises(ValueError, match="step"):
        ht.size_from_slice(3, slice(None, None, 0))


def test_save_method(folder):
    # HeAT's DNDarray.save(path, ...): ht.save with the array first
    data = random_array((7, 3), np.float32)
    check = Checks()
    for split in (None, 0, 1):
        x = ht.array(data, split=split)
        path = os.path.join(folder, f"method-{split}.h5")
        assert x.save(path, "d") is None
        check(ht.load(path, dataset="d", split=split), data, f"h5 split {split}")
        path = os.path.join(folder, f"method-{split}.npy")
        x.save(path)
        check(ht.load(path), data, f"npy split {split}")
    check.verify()


# ---------------------------------------------------------------------------------------------
# ht.load / ht.save
# ---------------------------------------------------------------------------------------------
def test_load_save_by_extension(folder):
    check = Checks()
    data = random_array((5, 3), np.float32)
    x = ht.array(data, split=0)
    cases = [
        ("x.h5", ("d",), {"dataset": "d"}),
        ("x.HDF5", ("d",), {"dataset": "d"}),
        ("x.csv", (), {}),
        ("x.npy", (), {}),
    ]
    if ht.supports_netcdf():
        cases += [(name, ("v",), {"variable": "v"}) for name in ("x.nc", "x.nc4", "x.netcdf")]
    if ht.supports_zarr():
        cases += [("x.zarr", (), {})]
    for name, save_args, load_kwargs in cases:
        path = os.path.join(folder, name)
        ht.save(x, path, *save_args)
        check(ht.load(path, split=1, **load_kwargs), data, name)
    check.verify()
    expect_same_errors(
        [
            (ValueError, ht.load, (os.path.join(folder, "x.txt"),), {}, "x.txt"),
            (ValueError, ht.save, (x, os.path.join(folder, "x")), {}, "extension"),
            (TypeError, ht.load, (5,), {}, "path"),
            (TypeError, ht.save, (data, os.path.join(folder, "x.h5"), "d"), {}, "DNDarray"),
        ]
    )


def test_load_save_without_the_name_inside_the_file(folder):
    # issue 18, item 26: the error names ht.save / ht.load and the argument, not save_hdf5()
    x = ht.arange(4, split=0)
    h5 = os.path.join(folder, "unnamed.h5")
    calls = [
        (TypeError, ht.save, (x, h5), {}, "ht.save of"),
        (TypeError, ht.save, (x, h5), {"mode": "a"}, "needs the argument 'dataset'"),
        (TypeError, ht.load, (h5,), {}, "ht.load of"),
        (TypeError, ht.load, (h5,), {"split": 0}, "needs the argument 'dataset'"),
    ]
    if ht.supports_netcdf():
        nc = os.path.join(folder, "unnamed.nc")
        calls += [
            (TypeError, ht.save, (x, nc), {}, "needs the argument 'variable'"),
            (TypeError, ht.load, (nc,), {}, "needs the argument 'variable'"),
        ]
    expect_same_errors(calls)
    collective_assert(not os.path.exists(h5), "a failed ht.save wrote the file")
    # given positionally or by keyword, they work as before
    ht.save(x, h5, "data")
    ht.save(x, h5, dataset="more", mode="a")
    check = Checks()
    check(ht.load(h5, "data", split=0), np.arange(4), "positional")
    check(ht.load(h5, dataset="more"), np.arange(4), "keyword")
    check.verify()


# ---------------------------------------------------------------------------------------------
# atomic saves
# ---------------------------------------------------------------------------------------------
def failing_hook(format_name, rank):
    # fails on the last process only: the others must raise too
    if rank == COMM.size - 1:
        raise OSError(f"disk full while writing {format_name}")


SAVES = [
    ("h5", lambda x, p: ht.save_hdf5(x, p, "x"), lambda p: ht.load_hdf5(p, "x", split=0)),
    (
        "h5-append",
        lambda x, p: ht.save_hdf5(x, p, "y", mode="a"),
        lambda p: ht.load_hdf5(p, "y", split=0),
    ),
    ("csv", lambda x, p: ht.save_csv(x, p), lambda p: ht.load_csv(p, dtype=ht.float64, split=0)),
    ("npy", lambda x, p: ht.save_npy(x, p), lambda p: ht.load_npy(p, split=0)),
]
if ht.supports_netcdf():
    SAVES.append(
        (
            "nc",
            lambda x, p: ht.save_netcdf(x, p, "x"),
            lambda p: ht.load_netcdf(p, "x", ht.float64, 0),
        )
    )
if ht.supports_zarr():
    SAVES.append(
        (
            "zarr",
            lambda x, p: ht.save_zarr(x, p, overwrite=True, chunks=(2, 2)),
            lambda p: ht.load_zarr(p),
        )
    )


@pytest.mark.parametrize("name,save,load", SAVES, ids=[s[0] for s in SAVES])
def test_failed_save_leaves_old_file(folder, name, save, load, monkeypatch):
    check = Checks()
    subfolder = os.path.join(folder, f"failing-{name}")
    on_rank0(os.makedirs, subfolder)
    path = os.path.join(subfolder, "data." + name.split("-")[0])
    old = random_array((7, 3), np.float64)
    save(ht.array(old, split=0), path)
    monkeypatch.setattr(_collective_io, "_during_write", failing_hook)
    new = ht.array(old + 1, split=0)
    expect_same_errors([(OSError, save, (new, path), {}, "disk full")])
    monkeypatch.setattr(_collective_io, "_during_write", None)
    check(load(path), old, "old file")
    check.verify()
    collective_assert(
        os.listdir(subfolder) == [os.path.basename(path)], f"left: {os.listdir(subfolder)}"
    )


def test_failed_hdf5_save_bad_arguments(folder):
    path = os.path.join(folder, "bad-arguments.h5")
    old = random_array((5, 6), np.float32)
    ht.save_hdf5(ht.array(old, split=0), path, "x")
    # chunks larger than the data: h5py refuses when process 0 creates the dataset
    expect_same_errors(
        [
            (
                ValueError,
                ht.save_hdf5,
                (ht.zeros((5, 6), split=0), path, "x"),
                {"chunks": (9, 9)},
                "hunk",
            )
        ]
    )
    check = Checks()
    check(ht.load_hdf5(path, "x", split=1), old, "old file")
    check.verify()
    collective_assert(not leftovers(folder), f"temporary files left: {leftovers(folder)}")


KILLED_SAVE = """
import os, signal, sys
import heat as ht
import heat.core.io._collective as machinery

def die(format_name, rank):
    if rank == 1:  # the second process dies while it has the temporary file open
        os.kill(os.getpid(), signal.SIGKILL)

machinery._during_write = die
x = ht.zeros((8, 5), split=0) + 7.0
kind, path = sys.argv[1], sys.argv[2]
if kind == "h5":
    ht.save_hdf5(x, path, "x")
elif kind == "h5-append":
    ht.save_hdf5(x, path, "other", mode="a")
elif kind == "npy":
    ht.save_npy(x, path)
else:
    ht.save_zarr(x, path, overwrite=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(
    world_size() > 1, reason="starts its own 2-process job with mpiexec; runs at 1 process"
)
@pytest.mark.parametrize("kind", ["h5", "h5-append"])
def test_killed_save_leaves_old_file(folder, kind):
    if kind == "zarr" and not ht.supports_zarr():
        pytest.skip("zarr is not installed")
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which(
        "mpiexec"
    )
    if mpiexec is None:
        pytest.skip("no mpiexec found")
    subfolder = os.path.join(folder, f"killed-{kind}")
    os.makedirs(subfolder)
    path = os.path.join(subfolder, "data." + {"h5-append": "h5"}.get(kind, kind))
    old = random_array((6, 5), np.float64)
    if kind.startswith("h5"):
        ht.save_hdf5(ht.array(old), path, "x")
    elif kind == "npy":
        ht.save_npy(ht.array(old), path)
    else:
        ht.save_zarr(ht.array(old), path)
    script = os.path.join(subfolder, "save.py")
    with open(script, "w") as handle:
        handle.write(textwrap.dedent(KILLED_SAVE))
    # a fresh MPI job: without the process-manager variables of the job this test runs in
    completed = subprocess.run(
        [mpiexec, "-n", "2", sys.executable, script, kind, path],
        env=fresh_job_environment(),
        capture_output=True,
        timeout=240,
    )
    assert completed.returncode != 0, completed.stdout.decode() + completed.stderr.decode()
    temporary = [n for n in os.listdir(subfolder) if n.startswith(".data.")]
    assert temporary, f"the save was not interrupted while writing: {os.listdir(subfolder)}"
    if kind.startswith("h5"):
        with h5py.File(path, "r") as handle:
            assert list(handle.keys()) == ["x"]
            np.testing.assert_array_equal(handle["x"][...], old)
        loaded = ht.load_hdf5(path, "x", split=0)
    elif kind == "npy":
        np.testing.assert_array_equal(np.load(path), old)
        loaded = ht.load_npy(path, split=0)
    else:
        loaded = ht.load_zarr(path, split=0)
    np.testing.assert_array_equal(loaded.numpy(), old)
    # the killed writer's temporary file is no data, and the next save to the target removes it
    if kind.startswith("h5"):
        np.testing.assert_array_equal(ht.load_multiple_hdf5(subfolder, "x").numpy(), old)
        ht.save_hdf5(ht.array(old), path, "x")
    elif kind == "npy":
        ht.save_npy(ht.array(old), path)
    else:
        ht.save_zarr(ht.array(old), path, overwrite=True)
    left = [n for n in os.listdir(subfolder) if n.startswith(".data.")]
    assert not left, f"temporary files of the killed save left: {left}"


def dead_pid() -> int:
    """The process id of a process that has ended (on this host)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def temporary_of(path: str, pid: int, host_tag: Optional[str] = None) -> str:
    """The name that a save to ``path`` by process ``pid`` on the host with ``host_tag`` (default
    this one) gives its temporary file, ``.NAME.<pid>-<host tag><random>.tmp.EXT``."""
    host_tag = _collective_io._HOST_TAG if host_tag is None else host_tag
    folder, name = os.path.split(path)
    stem, extension = os.path.splitext(name)
    return os.path.join(folder, f".{stem}.{pid}-{host_tag}{uuid.uuid4().hex[:12]}.tmp{extension}")


def test_temporary_names():
    path = os.path.join("some", "folder", "data.v2.npy")
    name = os.path.basename(_collective_io._temporary_name(path))
    tag = _collective_io._HOST_TAG
    assert re.fullmatch(rf"\.data\.v2\.{os.getpid()}-{tag}[0-9a-f]{{12}}\.tmp\.npy", name), name
    assert _collective_io._is_temporary_name(name)
    assert _collective_io._is_temporary_name(name + ".old")  # a Zarr store moved aside
    assert _collective_io._is_temporary_name(".x.17-0123456789ab.tmp.h5")  # older names
    assert _collective_io._is_temporary_name(os.path.basename(temporary_of("store", 5)))
    for other in (
        "data.npy",
        ".data.npy",
        ".data.17.tmp.npy",
        ".data.x-0123456789ab.tmp.npy",
        ".data.17-0123456789abc.tmp.npy",
        "data.17-0123456789ab.tmp.npy",
        ".data.17-0123456789ab.tmp.npy.bak",
    ):
        assert not _collective_io._is_temporary_name(other), other


def test_folder_loaders_skip_temporary_files(folder):
    """A killed save's temporary file (complete or cut short) is not read as data."""
    check = Checks()
    parts = os.path.join(folder, "parts-with-temporaries")
    npy_piece, h5_piece = random_array((5, 3), np.float64, seed=1), random_array((4, 2), np.float32)

    def write():
        os.makedirs(parts)
        np.save(os.path.join(parts, "a.npy"), npy_piece)
        np.save(
            os.path.join(parts, ".a.1234-0123456789ab.tmp.npy"), np.zeros((2000, 3))
        )  # complete
        np.save(temporary_of(os.path.join(parts, "a.npy"), 1234), np.zeros((2000, 3)))
        with open(temporary_of(os.path.join(parts, "b.npy"), 99), "wb") as handle:
            handle.write(b"\x93NUMPY")  # cut short
        with h5py.File(os.path.join(parts, "a.h5"), "w") as handle:
            handle["x"] = h5_piece
        for name in (".a.1234-0123456789ab.tmp.h5", os.path.basename(temporary_of("a.h5", 1234))):
            with h5py.File(os.path.join(parts, name), "w") as handle:
                handle["x"] = np.zeros((700, 2), np.float32)
        with open(temporary_of(os.path.join(parts, "b.hdf5"), 1234), "wb") as handle:
            handle.write(b"\x89HDF")  # cut short
        with open(temporary_of(os.path.join(parts, "c.h5"), 7) + ".old", "wb") as handle:
            handle.write(b"\x89HDF")

    on_rank0(write)
    for split in (0, 1, None):
        check(
            ht.load_npy_from_path(parts, dtype=ht.float64, split=split), npy_piece, f"npy {split}"
        )
        check(ht.load_multiple_hdf5(parts, "x", split=split), h5_piece, f"h5 {split}")
    check.verify()


@pytest.mark.slow
def test_save_removes_stale_temporaries_of_dead_writers(folder):
    """
    A save removes the temporary files that earlier saves to the same target left when their
    writer was killed (its process is gone from this host), and nothing else.
    """
    parts = os.path.join(folder, "stale-temporaries")
    target = os.path.join(parts, "a.npy")
    names = None
    if COMM.rank == 0:
        os.makedirs(parts)
        dead, alive = dead_pid(), os.getpid()
        other_host = "00000000" if _collective_io._HOST_TAG != "00000000" else "11111111"
        stale = [temporary_of(target, dead), temporary_of(target, dead)]
        kept = [
            temporary_of(target, alive),  # a save to the same target that still runs
            temporary_of(os.path.join(parts, "b.npy"), dead),  # another target
            temporary_of(os.path.join(parts, "a.h5"), dead),  # another target (extension)
            temporary_of(os.path.join(parts, "xa.npy"), dead),
            temporary_of(target, dead, host_tag=other_host),  # a process id of another host
            os.path.join(parts, f".a.{dead}-0123456789ab.tmp.npy"),  # no host tag: unknown host
            os.path.join(parts, f".a.{dead}.tmp.npy"),  # not heat's pattern
            os.path.join(parts, "a.npy.bak"),
        ]
        for name in stale + kept:
            np.save(name, np.zeros(3)) if name.endswith(".npy") else open(name, "w").close()
        names = ([os.path.basename(n) for n in stale], [os.path.basename(n) for n in kept])
    stale, kept = COMM.bcast(names)
    ht.save_npy(ht.arange(7, split=0), target)
    present = set(os.listdir(parts))
    problems = [f"stale {n} still there" for n in stale if n in present]
    problems += [f"{n} removed" for n in kept if n not in present]
    collective_assert(not problems, "; ".join(problems))
    np.testing.assert_array_equal(np.load(target), np.arange(7))


@pytest.mark.slow
@zarr_missing
def test_zarr_save_removes_stale_stores_but_not_an_only_copy(folder):
    """
    A Zarr save removes the stale temporary stores of its target, and the old stores moved
    aside when the target exists; a store moved aside while the target is missing (the writer
    died between its two renames) is the only copy of the old data and stays.
    """
    parts = os.path.join(folder, "stale-zarr")
    target, other = os.path.join(parts, "a.zarr"), os.path.join(parts, "b.zarr")
    on_rank0(os.makedirs, parts)
    ht.save_zarr(ht.zeros(3, split=0), target)
    names = None
    if COMM.rank == 0:
        dead = dead_pid()
        temporary, aside = temporary_of(target, dead), temporary_of(target, dead) + ".old"
        only_copy = temporary_of(other, dead) + ".old"
        for name in (temporary, aside, only_copy):
            os.makedirs(name)
        names = [os.path.basename(n) for n in (temporary, aside, only_copy)]
    temporary, aside, only_copy = COMM.bcast(names)
    ht.save_zarr(ht.arange(5, split=0), target, overwrite=True)
    ht.save_zarr(ht.arange(5, split=0), other)
    present = set(os.listdir(parts))
    problems = [f"{n} still there" for n in (temporary, aside) if n in present]
    problems += [] if only_copy in present else ["the only copy of b.zarr was removed"]
    collective_assert(not problems, "; ".join(problems))


# ---------------------------------------------------------------------------------------------
# bad files and bad arguments
# ---------------------------------------------------------------------------------------------
def test_bad_files(folder):
    bad = os.path.join(folder, "bad")
    good_h5 = os.path.join(bad, "good.h5")
    data = np.arange(20.0).reshape(5, 4)

    def write():
        os.makedirs(os.path.join(bad, "npy-shapes"))
        os.makedirs(os.path.join(bad, "empty-folder"))
        os.makedirs(os.path.join(bad, "h5-shapes"))
        with h5py.File(good_h5, "w") as handle:
            handle["x"] = data
            handle["text"] = np.array([b"ab", b"cd"])
            handle["complex"] = data.astype(np.complex64)
            handle.create_group("group")
            handle.create_dataset(
                "chunked", data=np.arange(5000.0), chunks=(100,), compression="gzip"
            )
        content = open(good_h5, "rb").read()
        with open(os.path.join(bad, "truncated.h5"), "wb") as handle:
            handle.write(content[: len(content) // 2])
        with open(os.path.join(bad, "junk.h5"), "wb") as handle:
            handle.write(os.urandom(2048))
        np.save(os.path.join(bad, "good.npy"), data)
        content = open(os.path.join(bad, "good.npy"), "rb").read()
        with open(os.path.join(bad, "truncated.npy"), "wb") as handle:
            handle.write(content[:-17])
        with open(os.path.join(bad, "junk.npy"), "wb") as handle:
            handle.write(b"this is not a numpy file" * 10)
        np.save(os.path.join(bad, "objects.npy"), np.array([{"a": 1}, None], dtype=object))
        np.save(os.path.join(bad, "npy-shapes", "a.npy"), np.zeros((3, 4)))
        np.save(os.path.join(bad, "npy-shapes", "b.npy"), np.zeros((2, 5)))
        for name, shape in (("a.h5", (3, 4)), ("b.h5", (3, 2))):
            with h5py.File(os.path.join(bad, "h5-shapes", name), "w") as handle:
                handle["x"] = np.zeros(shape)
        with open(os.path.join(bad, "columns.csv"), "w") as handle:
            handle.write("1,2,3\n4,5,6\n" * 5 + "7,8\n" + "1,2,3\n" * 5)
        with open(os.path.join(bad, "words.csv"), "w") as handle:
            handle.write("1,2\n3,four\n")
        with open(os.path.join(bad, "junk.nc"), "wb") as handle:
            handle.write(b"garbage" * 100)

    on_rank0(write)
    missing = os.path.join(bad, "missing")
    calls = [
        (FileNotFoundError, ht.load_hdf5, (missing + ".h5", "x"), {}, "missing.h5"),
        (FileNotFoundError, ht.load, (missing + ".h5", "x"), {}, "missing.h5"),
        (FileNotFoundError, ht.load_csv, (missing + ".csv",), {}, "missing.csv"),
        (FileNotFoundError, ht.load_npy, (missing + ".npy",), {}, "missing.npy"),
        (FileNotFoundError, ht.load_npy_from_path, (missing,), {}, "missing"),
        (FileNotFoundError, ht.load_multiple_hdf5, (missing, "x"), {}, "missing"),
        (
            FileNotFoundError,
            ht.save_hdf5,
            (ht.zeros(3), os.path.join(missing, "a.h5"), "x"),
            {},
            "missing",
        ),
        (KeyError, ht.load_hdf5, (good_h5, "y"), {}, "'y'"),
        (KeyError, ht.load_hdf5, (good_h5, "group"), {}, "group"),
        (ValueError, ht.load_hdf5, (os.path.join(bad, "junk.h5"), "x"), {}, "junk.h5"),
        (ValueError, ht.load_hdf5, (os.path.join(bad, "truncated.h5"), "x"), {}, "truncated.h5"),
        (ValueError, ht.load_hdf5, (bad, "x"), {}, "folder"),
        (ValueError, ht.load_hdf5, (good_h5, "x"), {"slices": (slice(0, 9),)}, "out of range"),
        (ValueError, ht.load_hdf5, (good_h5, "x"), {"slices": (slice(6, None),)}, "out of range"),
        (
            ValueError,
            ht.load_hdf5,
            (good_h5, "x"),
            {"slices": (slice(None), slice(None), slice(None))},
            "dimensions",
        ),
        (ValueError, ht.load_hdf5, (good_h5, "x"), {"slices": (slice(None, None, -1),)}, "step"),
        (ValueError, ht.load_hdf5, (good_h5, "x"), {"load_fraction": 0.0}, "load_fraction"),
        (ValueError, ht.load_hdf5, (good_h5, "x"), {"split": 2}, "split"),
        (TypeError, ht.load_hdf5, (good_h5, "text"), {}, "text"),
        (TypeError, ht.load_hdf5, (good_h5, "complex"), {"dtype": ht.float32}, "imaginary"),
        (TypeError, ht.load_hdf5, (good_h5, 3), {}, "dataset"),
        (TypeError, ht.load_hdf5, (good_h5, "x"), {"slices": "0:3"}, "slices"),
        (TypeError, ht.load_hdf5, (good_h5, "x"), {"split": "0"}, "split"),
        (TypeError, ht.load_hdf5, (good_h5, "x"), {"dtype": "no-such-type"}, "not understood"),
        (ValueError, ht.load_multiple_hdf5, (os.path.join(bad, "h5-shapes"), "x"), {}, "b.h5"),
        (ValueError, ht.load_multiple_hdf5, (os.path.join(bad, "empty-folder"), "x"), {}, "no .h5"),
        (ValueError, ht.load_npy, (os.path.join(bad, "junk.npy"),), {}, "junk.npy"),
        (ValueError, ht.load_npy, (os.path.join(bad, "truncated.npy"),), {}, "truncated"),
        (TypeError, ht.load_npy, (os.path.join(bad, "objects.npy"),), {}, "objects.npy"),
        (ValueError, ht.load_npy_from_path, (os.path.join(bad, "npy-shapes"),), {}, "b.npy"),
        (ValueError, ht.load_npy_from_path, (os.path.join(bad, "empty-folder"),), {}, "no .npy"),
        (ValueError, ht.load_npy_from_path, (good_h5,), {}, "not a folder"),
        (ValueError, ht.load_csv, (os.path.join(bad, "columns.csv"),), {"split": 0}, "columns.csv"),
        (ValueError, ht.load_csv, (os.path.join(bad, "words.csv"),), {"split": 0}, "words.csv"),
        (
            ValueError,
            ht.load_csv,
            (os.path.join(bad, "words.csv"),),
            {"header_lines": -1},
            "header_lines",
        ),
        (
            ValueError,
            ht.load_csv,
            (os.path.join(bad, "words.csv"),),
            {"encoding": "no-such"},
            "encoding",
        ),
        (ValueError, ht.load_csv, (os.path.join(bad, "words.csv"),), {"split": 2}, "split"),
        (TypeError, ht.load_csv, (os.path.join(bad, "words.csv"),), {"sep": 1}, "sep"),
        (
            ValueError,
            ht.save_csv,
            (ht.zeros((2, 2, 2)), os.path.join(bad, "a.csv")),
            {},
            "3 dimensions",
        ),
        (
            TypeError,
            ht.save_csv,
            (ht.zeros(2, dtype=ht.complex64), os.path.join(bad, "a.csv")),
            {},
            "complex",
        ),
    ]
    if ht.supports_netcdf():
        calls += [
            (FileNotFoundError, ht.load_netcdf, (missing + ".nc", "x"), {}, "missing.nc"),
            (ValueError, ht.load_netcdf, (os.path.join(bad, "junk.nc"), "x"), {}, "junk.nc"),
        ]
    if ht.supports_zarr():
        calls += [(FileNotFoundError, ht.load_zarr, (missing + ".zarr",), {}, "missing.zarr")]
    expect_same_errors(calls)
    check = Checks()
    check(ht.load_hdf5(good_h5, "x", split=0), data, "the good file still loads")
    check.verify()


def test_read_failure_on_one_process(folder, monkeypatch):
    """A read that fails on one process only (e.g. a node that cannot see the file)."""
    path = os.path.join(folder, "one-fails.h5")
    ht.save_hdf5(ht.arange(30, split=0), path, "x")
    original = h5py.Dataset.read_direct

    def read_direct(self, *args, **kwargs):
        if COMM.rank == COMM.size - 1:
            raise OSError("Can't read data (inflate() failed)")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(h5py.Dataset, "read_direct", read_direct)
    expected_text = "(inflate() failed)" + (
        f" [on process {COMM.size - 1}]" if COMM.size > 1 else ""
    )
    expect_same_errors([(ValueError, ht.load_hdf5, (path, "x"), {"split": 0}, expected_text)])
    monkeypatch.undo()
    check = Checks()
    check(ht.load_hdf5(path, "x", split=0), np.arange(30), "afterwards")
    check.verify()


@pytest.mark.skipif(world_size() == 1, reason="needs processes that can see different files")
def test_processes_seeing_different_files(folder):
    """As on a node-local folder: the processes find files of different shapes at their path."""
    paths = [os.path.join(folder, name) for name in ("view-a.npy", "view-b.npy")]

    def write():
        np.save(paths[0], np.zeros((4, 3)))
        np.save(paths[1], np.zeros((5, 3)))

    on_rank0(write)
    mine = paths[0] if COMM.rank == 0 else paths[1]
    expect_same_errors([(ValueError, ht.load_npy, (mine,), {"split": 0}, "do not see the same")])
