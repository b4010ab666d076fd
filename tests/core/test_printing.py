"""Tests of heat/core/printing.py: the text of the global array equals NumPy's for the same data."""

import io
import math
import subprocess
import sys
import time
from contextlib import redirect_stdout

import numpy as np
import pytest
import torch

import heat as ht
from heat.core import printing
from tests.helpers import (
    SHAPES,
    assert_raises_then_collective_works,
    collective_assert,
    combinations,
    fresh_job_environment,
    random_array,
    splits_for,
)

PREFIX = "DNDarray("


@pytest.fixture(autouse=True)
def restore_printoptions():
    saved = ht.get_printoptions()
    yield
    ht.set_printoptions(**saved)
    ht.global_printing()


def numpy_text(
    a: np.ndarray, precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False
):
    """What ``repr`` must show of the array ``a`` (before the metadata)."""
    return np.array2string(
        a,
        max_line_width=linewidth,
        precision=precision,
        suppress_small=suppress,
        separator=", ",
        prefix=PREFIX,
        suffix=",",
        threshold=threshold,
        edgeitems=edgeitems,
        floatmode="maxprec",
        sign="-",
        legacy=False,
    )


def expected_repr(a: np.ndarray, x: "ht.DNDarray", dtype_name: str = None, **options) -> str:
    shape_note = f"shape={a.shape}, " if a.size == 0 and a.shape != (0,) else ""
    dtype_name = dtype_name or x.dtype.__name__
    return (
        f"{PREFIX}{numpy_text(a, **options)}, {shape_note}"
        f"dtype=ht.{dtype_name}, device={ht.get_device()}, split={x.split})"
    )


def assert_text(actual: str, expected: str) -> None:
    collective_assert(actual == expected, f"\n{actual}\n!=\n{expected}")


SMALL_DTYPES = (np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64)


@pytest.mark.parametrize("shape, split", list(combinations(SHAPES)) + [((), None)])
def test_small_arrays_match_numpy(shape, split):
    mismatches = []
    for seed, dtype in enumerate(SMALL_DTYPES):
        a = random_array(shape, dtype, seed=seed)
        x = ht.array(a, split=split)
        text, expected = repr(x), expected_repr(a, x)
        if text != expected:
            mismatches.append(f"{text}\n!=\n{expected}")
    if mismatches == []:
        text = str(x)
        if text != expected:
            mismatches.append(f"str(x) {text} differs from repr(x)")
    collective_assert(not mismatches, "\n".join(mismatches))


def test_special_values_and_magnitudes():
    values = [
        np.array([1e-10, 1.0, 1e10], dtype=np.float64),
        np.array([np.nan, -np.inf, np.inf, 0.5, -2.0], dtype=np.float32),
        np.array([1.5 - 2j, np.nan + 1j, -3e-7 + 0j], dtype=np.complex128),
        np.array([0.1, 0.25, 100.0], dtype=np.float16),
        np.array([-(2**62), 7, 2**40], dtype=np.int64),
        np.array([0, 255, 7], dtype=np.uint8),
        np.array([-128, 0, 127], dtype=np.int8),
    ]
    mismatches = []
    for a in values:
        for split in (None, 0):
            x = ht.array(a, split=split)
            text, expected = repr(x), expected_repr(a, x)
            if text != expected:
                mismatches.append(f"{text}\n!=\n{expected}")
    collective_assert(not mismatches, "\n".join(mismatches))


@pytest.mark.parametrize("split", [None, 0, 1])
def test_bfloat16_shown_as_float32(split):
    a = random_array((4, 5), np.float32, seed=3)
    x = ht.array(a, split=split).astype(ht.bfloat16)
    shown = torch.from_numpy(a).to(torch.bfloat16).float().numpy()
    assert_text(repr(x), expected_repr(shown, x, dtype_name="bfloat16"))


LARGE = [((2000,), s) for s in (None, 0)]
LARGE += [((50, 40, 3), s) for s in splits_for(3)]
LARGE += [((2, 600), s) for s in (0, 1)] + [((600, 2, 1), 0)]


@pytest.mark.parametrize("shape, split", LARGE)
def test_large_arrays_summarized_like_numpy(shape, split):
    mismatches = []
    for dtype in (np.float32, np.int64, np.complex128):
        a = random_array(shape, dtype, seed=7)
        x = ht.array(a, split=split)
        text, expected = repr(x), expected_repr(a, x)
        if text != expected:
            mismatches.append(f"{text}\n!=\n{expected}")
    collective_assert(not mismatches, "\n".join(mismatches))


OPTIONS = [
    dict(precision=3, threshold=20, edgeitems=2, linewidth=40),
    dict(precision=2, threshold=5, edgeitems=1, linewidth=75),
    dict(precision=8, threshold=1000, edgeitems=3, linewidth=120),
    dict(precision=4, threshold=0, edgeitems=4, linewidth=30),
]


@pytest.mark.parametrize("options", OPTIONS)
def test_print_options_match_numpy(options):
    a = random_array((9, 7), np.float64, seed=11) * np.logspace(-3, 2, 7)
    b = random_array((9, 7), np.int32, seed=12, low=-1000, high=1000)
    ht.set_printoptions(**options)
    mismatches = []
    for split in (None, 0, 1):
        # integers: only the layout options matter
        for data in (a, b):
            x = ht.array(data, split=split)
            text, expected = repr(x), expected_repr(data, x, **options)
            if text != expected:
                mismatches.append(f"{text}\n!=\n{expected}")
    collective_assert(not mismatches, "\n".join(mismatches))


@pytest.mark.parametrize("split", [None, 0, 1])
def test_sci_mode(split):
    a = np.array([[1e-6, 0.5, 3.0], [2.0, -1e-7, 40.0]], dtype=np.float64)
    x = ht.array(a, split=split)
    ht.set_printoptions(sci_mode=False)  # NumPy's suppress=True
    assert_text(repr(x), expected_repr(a, x, suppress=True))
    collective_assert("e-" not in repr(x), "sci_mode=False printed scientific notation")
    ht.set_printoptions(sci_mode=None)
    assert_text(repr(x), expected_repr(a, x))
    ht.set_printoptions(sci_mode=True, precision=3)
    text = repr(x)
    body = text[len(PREFIX) : text.index(", dtype=")]
    numbers = body.replace("[", " ").replace("]", " ").replace(",", " ").split()
    ok = len(numbers) == a.size and all("e" in n for n in numbers)
    ok = ok and np.allclose([float(n) for n in numbers], a.ravel(), rtol=1e-3)
    reference = repr(ht.array(a)).replace("split=None", f"split={x.split}")
    collective_assert(ok and text == reference, text)
    c = ht.array(a + 1j * a[::-1], split=split)
    ctext = repr(c)
    cbody = ctext[: ctext.index(", dtype=")]
    collective_assert(cbody.count("e") == 2 * a.size and cbody.count("j") == a.size, ctext)


def test_unbalanced_layout():
    comm = ht.MPI_WORLD
    p, rank = comm.size, comm.rank
    for n in (8, 1500):
        a = random_array((n, 2), np.float32, seed=n)
        # rank 0 holds most rows, rank 1 none, the others one each
        counts = [n - max(p - 2, 0)] + [0] * min(p - 1, 1) + [1] * max(p - 2, 0)
        start = sum(counts[:rank])
        x = ht.array(a[start : start + counts[rank]], is_split=0)
        assert_text(repr(x), expected_repr(a, x))


def test_only_shown_elements_are_communicated(monkeypatch):
    comm_class = type(ht.MPI_WORLD)
    sent = []
    original = comm_class.Iallgatherv

    def recording(self, tensor, *args, **kwargs):
        sent.append(tensor.numel())
        return original(self, tensor, *args, **kwargs)

    monkeypatch.setattr(comm_class, "Iallgatherv", recording)
    x = ht.arange(10**5, split=0, dtype=ht.float64)
    text = repr(x)
    y = ht.zeros((300, 400), split=1)
    repr(y)
    monkeypatch.undo()
    assert_text(text, expected_repr(np.arange(10**5, dtype=np.float64), x))
    # at most head and tail of each axis per call (nothing at all with one process)
    collective_assert(all(n <= 6 * 6 for n in sent), f"communicated {sent} elements")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shape, split", [((10**6,), 0), ((1000, 1000), 1)])
def test_million_elements_print_quickly(shape, split):
    # the per-test timeout is the bound: printing must not gather the array
    x = ht.zeros(shape, split=split)
    text = str(x)
    assert_text(text, expected_repr(np.zeros(shape, dtype=np.float32), x))


def test_print0_prints_on_rank0_only():
    x = ht.arange(5, split=0)
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        ht.print0("x:", x, 3, sep="|")
    text = repr(x)  # collective: on every rank
    expected = f"x:|{text}|3\n" if ht.MPI_WORLD.rank == 0 else ""
    collective_assert(buffer.getvalue() == expected, repr(buffer.getvalue()))


@pytest.mark.parametrize("split", [None, 0])
def test_local_printing(split):
    a = random_array((7, 3), np.int64, seed=5)
    x = ht.array(a, split=split)
    ht.local_printing()
    comm = ht.MPI_WORLD
    prefix = f"[{comm.rank}/{comm.size}] {PREFIX}"
    local = x.larray.cpu().numpy()
    text = np.array2string(local, separator=", ", prefix=prefix, suffix=",")
    shape_note = f"shape={local.shape}, " if local.size == 0 else ""
    expected = (
        f"{prefix}{text}, {shape_note}dtype=ht.int64, device={ht.get_device()}, split={split})"
    )
    # local printing communicates nothing: only rank 0 printing must not hang
    ok = repr(x) == expected and type(repr(x)) is str  # every process prints its own block
    if comm.rank == 0:
        str(ht.arange(10, split=0))
    ht.global_printing()
    collective_assert(ok, f"{repr(x)} != {expected}")
    assert_text(repr(x), expected_repr(a, x))


def test_printoptions_get_set_and_profiles():
    default = dict(precision=8, threshold=1000, edgeitems=3, linewidth=75, sci_mode=None)
    ht.set_printoptions(profile="default")
    assert ht.get_printoptions() == default
    ht.set_printoptions(profile="short", linewidth=50)
    assert ht.get_printoptions() == dict(default, precision=2, edgeitems=2, linewidth=50)
    ht.set_printoptions(profile="full")
    assert ht.get_printoptions()["threshold"] == math.inf
    a = np.arange(1200, dtype=np.int32)
    x = ht.array(a, split=0)
    assert_text(repr(x), expected_repr(a, x, threshold=sys.maxsize))
    ht.set_printoptions(threshold=10, sci_mode=True)
    ht.set_printoptions(precision=4)  # sci_mode is always set (None: automatic), as in torch
    assert ht.get_printoptions() == dict(default, precision=4, threshold=10)
    options = ht.get_printoptions()
    options["precision"] = 0  # a copy
    assert ht.get_printoptions()["precision"] == 4


BAD_OPTIONS = {
    TypeError: [
        ("precision", 2.5),
        ("precision", True),
        ("threshold", "10"),
        ("linewidth", 80.0),
        ("profile", 1),
        ("sci_mode", "yes"),
    ],
    ValueError: [
        ("precision", -1),
        ("threshold", -5),
        ("threshold", float("nan")),
        ("edgeitems", 0),
        ("linewidth", 0),
        ("profile", "long"),
    ],
}


@pytest.mark.parametrize("exception", [TypeError, ValueError])
def test_set_printoptions_bad_values(exception):
    before = ht.get_printoptions()
    for name, value in BAD_OPTIONS[exception]:
        valid = {"edgeitems": 2} if name == "precision" else {"precision": 3}
        with pytest.raises(exception, match=name):
            ht.set_printoptions(**valid, **{name: value})
        assert ht.get_printoptions() == before  # a bad call changes nothing
    name, value = BAD_OPTIONS[exception][0]
    assert_raises_then_collective_works(exception, ht.set_printoptions, **{name: value})


def test_array_repr_arguments():
    a = np.array([[1.123456789, 2e-9], [3.0, 4.5]])
    x = ht.array(a, split=0)
    assert_text(
        ht.array_repr(x, max_line_width=20, precision=3, suppress_small=True),
        expected_repr(a, x, precision=3, linewidth=20, suppress=True),
    )
    assert_text(ht.array_str(x), repr(x))
    assert_raises_then_collective_works(TypeError, ht.array_repr, a)
    assert_raises_then_collective_works(ValueError, ht.array_repr, x, max_line_width=0)
    assert_raises_then_collective_works(TypeError, ht.array_str, x, suppress_small=1)


# ---------------------------------------------------------------------------------------------
# print(x) shows x once, from rank 0 (issue 18, item 23)
# ---------------------------------------------------------------------------------------------
def stdout_as_at_import(monkeypatch):
    """A fresh stdout of this process as heat's import leaves it: filtered but on world rank 0."""
    stream = io.StringIO()
    shown = stream if ht.MPI_WORLD.rank == 0 else printing._PrintOnceStdout(stream)
    monkeypatch.setattr(sys, "stdout", shown)
    return stream


@pytest.mark.parametrize("split", [None, 0, 1])
def test_print_shows_an_array_once(monkeypatch, split):
    rank = ht.MPI_WORLD.rank
    a = random_array((7, 3), np.float32, seed=2)
    x = ht.array(a, split=split)
    text = expected_repr(a, x)
    stream = stdout_as_at_import(monkeypatch)
    print(x)
    print("x =", x, end="!\n")
    print("rank", rank)
    sys.displayhook(x)  # the interactive interpreter's echo
    print(f"{x.shape} is plain text")
    print("no newline yet", end="")
    sys.stdout.flush()
    monkeypatch.undo()
    shown = stream.getvalue()
    if rank == 0:
        expected = f"{text}\nx = {text}!\nrank 0\n{text}\n(7, 3) is plain text\nno newline yet"
    else:
        expected = f"rank {rank}\n(7, 3) is plain text\nno newline yet"
    collective_assert(shown == expected, f"\n{shown!r}\n!=\n{expected!r}")
    # the text itself is the same on every process
    texts = ht.MPI_WORLD.allgather(str.__str__(repr(x)))
    collective_assert(all(t == text for t in texts), texts)


def test_filtered_stdout_passes_other_output():
    stream = io.StringIO()
    out = printing._PrintOnceStdout(stream)
    assert out.write("a") == 1 and stream.getvalue() == ""  # a line goes on when complete
    out.write("b\nc")
    assert stream.getvalue() == "ab\n"
    out.flush()  # or at flush
    assert stream.getvalue() == "ab\nc"
    out.writelines(["d\n", "e", printing._ShownElsewhere("DNDarray(...)"), "f\n", "g\n"])
    assert stream.getvalue() == "ab\ncd\ng\n"  # the line with the array is dropped entirely
    assert out.encoding == stream.encoding and out.getvalue() == stream.getvalue()  # delegated
    marked = printing._ShownElsewhere("text")
    assert str(marked) is marked and marked == "text" and f"{marked}" == "text"
    assert type(f"<{marked}>") is str  # built text is plain: printed wherever it is printed


@pytest.mark.slow
@pytest.mark.skipif(ht.MPI_WORLD.size > 1, reason="starts its own 3-process job; runs at size 1")
def test_print_once_in_a_job(tmp_path):
    script = tmp_path / "show.py"
    script.write_text(
        "import heat as ht\n"
        "x = ht.arange(12, split=0)\n"
        "print(x)\n"
        "print('rank', ht.MPI_WORLD.rank, 'says hello')\n"
        "print('sum:', x.sum())\n"
    )
    env = fresh_job_environment()
    # unbuffered, print() writes its text and its newline separately, and the launcher may put
    # another process's line between the two (seen in CI): buffered, each process's output
    # reaches the launcher in one piece at exit
    env.pop("PYTHONUNBUFFERED", None)
    done = subprocess.run(
        ["mpiexec", "-n", "3", sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    metadata = "dtype=ht.int64, device=cpu:0"
    shown = f"DNDarray([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11], {metadata}, split=0)"
    assert lines.count(shown) == 1, done.stdout
    assert lines.count(f"sum: DNDarray(66, {metadata}, split=None)") == 1, done.stdout
    assert sorted(line for line in lines if line.endswith("says hello")) == [
        f"rank {r} says hello" for r in range(3)
    ], done.stdout
    assert len(lines) == 5, done.stdout  # nothing else, no empty lines


@pytest.mark.skipif(ht.MPI_WORLD.size == 1, reason="needs other processes to wait for")
@pytest.mark.parametrize("layout", ["balanced", "unbalanced"])
def test_printing_alone_says_what_it_waits_for(monkeypatch, capsys, layout):
    # `if rank == 0: print(x)` waits forever: after REPORT_WAIT_SECONDS the waiting process says
    # so on stderr; here the others come late instead of never
    comm = ht.MPI_WORLD
    monkeypatch.setattr(printing, "REPORT_WAIT_SECONDS", 0.3)
    if layout == "balanced":
        x = ht.arange(20, split=0)
    else:  # the local lengths are unknown: the first wait is for them
        x = ht.array(np.arange(comm.rank + 1), is_split=0)
    capsys.readouterr()
    if comm.rank == 0:
        text = repr(x)
    else:
        time.sleep(1.5)
        text = repr(x)
    err = capsys.readouterr().err
    if comm.rank == 0:
        ok = "heat has waited" in err and "`if rank == 0: print(x)` waits here forever" in err
        ok = ok and "split=0" in err and "ht.local_printing()" in err
    else:
        ok = err == ""
    collective_assert(ok, err)
    expected = (
        np.arange(20)
        if layout == "balanced"
        else np.concatenate([np.arange(r + 1) for r in range(comm.size)])
    )
    assert_text(text, expected_repr(expected, x))
