"""
heat as a namespace of the Python array API standard (``x.__array_namespace__()`` is ``heat``).

The reference for the standard's names and signatures is ``array-api-strict``; the values of the
functions heat adds for the standard are compared with NumPy on every split.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import Checks, expect_errors, inputs, random_array

xp = pytest.importorskip("array_api_strict")

# ---------------------------------------------------------------------------------------------
# the standard's names and signatures
# ---------------------------------------------------------------------------------------------
# names array-api-strict exports that are not part of the standard (its own configuration)
NOT_STANDARD = {
    "ArrayAPIStrictFlags",
    "get_array_api_strict_flags",
    "reset_array_api_strict_flags",
    "set_array_api_strict_flags",
}

# names of the standard heat lacks, each with the reason
MISSING = {}
LINALG_MISSING = {}

# functions whose signature differs from the standard's, each with the reason
SIGNATURE_EXCEPTIONS = {}

# defaults of None that mean the standard's default (NumPy's signatures): (function, parameter)
NONE_MEANS_STANDARD_DEFAULT = {
    ("linalg.cross", "axis"): "None: axisa/axisb/axisc, which default to -1",
    ("linalg.matrix_norm", "ord"): "None is the Frobenius norm",
    ("linalg.vector_norm", "ord"): "None is the 2-norm",
    ("fft.*", "norm"): "None is 'backward'",
}


def _is_sentinel(default) -> bool:
    """array-api-strict's markers of 'not given' (its own Undef enum)."""
    return type(default).__name__ == "Undef"


def _none_means_default(qualified_name: str, parameter: str) -> bool:
    prefix = qualified_name.split(".")[0] + ".*" if "." in qualified_name else None
    return (qualified_name, parameter) in NONE_MEANS_STANDARD_DEFAULT or (
        prefix,
        parameter,
    ) in NONE_MEANS_STANDARD_DEFAULT


def signature_problems(standard, candidate, qualified_name: str = "") -> list:
    """
    Why ``candidate`` does not accept every call that the standard's signature ``standard``
    allows, with the same meaning (empty list: compatible).

    * a positional-only parameter: ``candidate`` takes a positional argument at that place, not
      named like another parameter of the standard (``eye(n, k)`` for ``eye(n_rows, n_cols)``);
    * a positional-or-keyword parameter: same place, same name, same kind;
    * a keyword-only parameter: a parameter of that name that takes keywords;
    * ``*args``: ``candidate`` has ``*args`` too;
    * a default: ``candidate`` has the same default (a standard default of 'not given' matches any);
    * parameters ``candidate`` has beyond the standard's: they have defaults.
    """
    problems = []
    sp = list(standard.parameters.values())
    cp = list(candidate.parameters.values())
    cmap = {p.name: p for p in cp}
    standard_names = {p.name for p in sp}
    positional = [p for p in cp if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    used = set()
    for i, s in enumerate(sp):
        if s.kind is s.VAR_POSITIONAL:
            var = [p for p in cp if p.kind is p.VAR_POSITIONAL]
            if not var:
                problems.append(f"*{s.name}: no *args")
            else:
                used.add(var[0].name)
            continue
        if s.kind is s.VAR_KEYWORD:
            continue
        if s.kind in (s.POSITIONAL_ONLY, s.POSITIONAL_OR_KEYWORD):
            if i >= len(positional):
                var = [p for p in cp if p.kind is p.VAR_POSITIONAL]
                if var and s.kind is s.POSITIONAL_ONLY:
                    used.add(var[0].name)
                    continue
                problems.append(f"{s.name}: no positional parameter at place {i}")
                continue
            c = positional[i]
            if s.kind is s.POSITIONAL_OR_KEYWORD and (
                c.name != s.name or c.kind is c.POSITIONAL_ONLY
            ):
                problems.append(f"{s.name}: place {i} is {c.name} ({c.kind.description})")
                continue
            if s.kind is s.POSITIONAL_ONLY and c.name != s.name and c.name in standard_names:
                problems.append(f"{s.name}: place {i} is the standard's {c.name}")
                continue
        else:  # keyword-only
            c = cmap.get(s.name)
            if c is None or c.kind not in (c.KEYWORD_ONLY, c.POSITIONAL_OR_KEYWORD):
                problems.append(f"{s.name}: no keyword parameter {s.name}")
                continue
        used.add(c.name)
        if s.default is not s.empty and not _is_sentinel(s.default):
            if c.default is c.empty:
                problems.append(f"{s.name}: no default (standard: {s.default!r})")
            elif c.default is None and _none_means_default(qualified_name, s.name):
                pass
            elif not (
                c.default is s.default
                or (type(c.default) is type(s.default) and c.default == s.default)
            ):
                problems.append(f"{s.name}: default {c.default!r} (standard: {s.default!r})")
    for c in cp:
        if c.name not in used and c.kind in (
            c.POSITIONAL_ONLY,
            c.POSITIONAL_OR_KEYWORD,
            c.KEYWORD_ONLY,
        ):
            if c.default is c.empty:
                problems.append(f"{c.name}: extra parameter without a default")
    return problems


def _check_namespace(standard_module, heat_module, names, missing, prefix=""):
    errors = []
    for name in names:
        reference = getattr(standard_module, name)
        if name in missing:
            if hasattr(heat_module, name):
                errors.append(f"{prefix}{name} is listed as missing but exists: update the list")
            continue
        if not hasattr(heat_module, name):
            errors.append(f"{prefix}{name} is missing")
            continue
        ours = getattr(heat_module, name)
        if not callable(reference) or isinstance(reference, type) or isinstance(ours, type):
            continue
        try:
            problems = signature_problems(
                inspect.signature(reference), inspect.signature(ours), prefix + name
            )
        except (TypeError, ValueError) as error:
            problems = [f"no signature ({error})"]
        if problems and prefix + name not in SIGNATURE_EXCEPTIONS:
            errors.append(f"{prefix}{name}: " + "; ".join(problems))
        if not problems and prefix + name in SIGNATURE_EXCEPTIONS:
            errors.append(f"{prefix}{name} is a listed exception but compatible: update the list")
    return errors


def test_main_namespace_names_and_signatures():
    names = [n for n in xp.__all__ if n not in NOT_STANDARD]
    errors = _check_namespace(xp, ht, names, MISSING)
    assert not errors, "\n".join(errors)


def test_linalg_names_and_signatures():
    errors = _check_namespace(xp.linalg, ht.linalg, xp.linalg.__all__, LINALG_MISSING, "linalg.")
    assert not errors, "\n".join(errors)


def test_fft_names_and_signatures():
    fft = getattr(ht, "fft", None)
    if fft is None or not [n for n in dir(fft) if not n.startswith("_")]:
        pytest.skip("heat.fft is not there yet")
    errors = _check_namespace(xp.fft, fft, xp.fft.__all__, {}, "fft.")
    assert not errors, "\n".join(errors)


def test_array_attributes_and_methods():
    array_type = type(xp.asarray([1]))
    errors = []
    for name in dir(array_type):
        if (
            name.startswith("_")
            and not name.startswith("__")
            or name
            in (
                "__annotations__",
                "__buffer__",
                "__dict__",
                "__module__",
                "__weakref__",
                "__slots__",
                "__firstlineno__",
                "__static_attributes__",
                "__orig_bases__",
                "__parameters__",
                "__class_getitem__",
                "__hash__",
            )
        ):
            continue
        if not hasattr(ht.DNDarray, name):
            errors.append(f"DNDarray.{name} is missing")
            continue
        reference = getattr(array_type, name)
        ours = getattr(ht.DNDarray, name)
        if name.startswith("__") or not callable(reference) or isinstance(reference, property):
            continue
        problems = signature_problems(inspect.signature(reference), inspect.signature(ours))
        if problems:
            errors.append(f"DNDarray.{name}: " + "; ".join(problems))
    assert not errors, "\n".join(errors)


def test_signature_checker_can_fail():
    def standard(x, /, shape, *, copy=None):
        pass

    def star(a, *shape, copy=None):
        pass

    def renamed(x, /, new_shape, *, copy=None):
        pass

    def wrong_default(x, shape, copy=False):
        pass

    def extra(x, shape, order, *, copy=None):
        pass

    def ok(a, /, shape, *, copy=None, split=None):
        pass

    assert signature_problems(inspect.signature(standard), inspect.signature(star))
    assert signature_problems(inspect.signature(standard), inspect.signature(renamed))
    assert signature_problems(inspect.signature(standard), inspect.signature(wrong_default))
    assert signature_problems(inspect.signature(standard), inspect.signature(extra))
    assert not signature_problems(inspect.signature(standard), inspect.signature(ok))

    def eye_standard(n_rows, n_cols=None, /, *, k=0):
        pass

    def eye_k_second(n, k=0, n_cols=None):
        pass

    assert signature_problems(inspect.signature(eye_standard), inspect.signature(eye_k_second))


# ---------------------------------------------------------------------------------------------
# the namespace, its inspection and the array protocol
# ---------------------------------------------------------------------------------------------
def test_array_namespace():
    from heat.core import _methods

    x = ht.arange(5, split=0)
    assert x.__array_namespace__() is ht
    for version in _methods.API_VERSIONS:
        assert x.__array_namespace__(api_version=version) is ht
    assert ht.__array_api_version__ == _methods.API_VERSIONS[-1]
    assert xp.__array_api_version__ in _methods.API_VERSIONS
    expect_errors(
        [
            (ValueError, x.__array_namespace__, (), {"api_version": "2019.12"}),
            (TypeError, x.__array_namespace__, ("2023.12",), {}),
        ]
    )


def test_namespace_info():
    info = ht.__array_namespace_info__()
    reference = xp.__array_namespace_info__()
    assert set(info.capabilities()) == set(reference.capabilities())
    assert info.capabilities()["boolean indexing"] and info.capabilities()["data-dependent shapes"]
    assert info.default_device() == ht.get_device()
    assert info.default_device() in info.devices()
    assert isinstance(info.devices(), tuple)  # a tuple since the standard's 2025.12
    assert all(isinstance(d, ht.Device) for d in info.devices())
    defaults = info.default_dtypes()
    assert set(defaults) == set(reference.default_dtypes())
    assert defaults == info.default_dtypes(device=info.default_device())
    assert defaults["real floating"] is ht.zeros(1).dtype
    assert defaults["integral"] is ht.arange(1).dtype
    assert defaults["complex floating"] is ht.complex64
    names = set(reference.dtypes())
    assert set(info.dtypes()) == names
    kinds = (
        "bool",
        "signed integer",
        "unsigned integer",
        "integral",
        "real floating",
        "complex floating",
        "numeric",
        ("bool", "complex floating"),
    )
    for kind in kinds:
        expected = set(reference.dtypes(kind=kind))
        assert set(info.dtypes(kind=kind)) == expected, kind
        assert all(info.dtypes()[name] is t for name, t in info.dtypes(kind=kind).items())
    for name in ("capabilities", "default_device", "default_dtypes", "devices", "dtypes"):
        problems = signature_problems(
            inspect.signature(getattr(type(reference), name)),
            inspect.signature(getattr(type(info), name)),
        )
        assert not problems, (name, problems)
    expect_errors([(ValueError, info.dtypes, (), {"kind": "float"})])


def test_isdtype():
    kinds = (
        "bool",
        "signed integer",
        "unsigned integer",
        "integral",
        "real floating",
        "complex floating",
        "numeric",
    )
    names = (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
    for name in names:
        ours, theirs = getattr(ht, name), getattr(xp, name)
        for kind in kinds + (("integral", "complex floating"),):
            assert ht.isdtype(ours, kind) == xp.isdtype(theirs, kind), (name, kind)
        for other in names:
            assert ht.isdtype(ours, getattr(ht, other)) == (name == other)
    assert ht.isdtype(ht.float16, "real floating") and ht.isdtype(ht.bfloat16, "numeric")
    assert not ht.isdtype(ht.bfloat16, "integral")
    expect_errors(
        [
            (ValueError, ht.isdtype, (ht.float32, "floating"), {}),
            (TypeError, ht.isdtype, (ht.float32, 3.5), {}),
            (TypeError, ht.isdtype, ("no type", "numeric"), {}),
        ]
    )


def test_dlpack():
    data = random_array((5, 3), np.float32)
    replicated = ht.array(data)
    t = torch.from_dlpack(replicated)
    assert t.data_ptr() == replicated.larray.data_ptr()
    np.testing.assert_array_equal(np.from_dlpack(replicated), data)
    assert replicated.__dlpack_device__()[0] == 1  # kDLCPU
    checks = Checks()
    back = ht.from_dlpack(replicated)
    checks(back, data)
    checks.expect(back.larray.data_ptr() == replicated.larray.data_ptr(), "from_dlpack copied")
    copied = ht.from_dlpack(torch.from_numpy(data), copy=True)
    checks(copied, data)
    checks.expect(copied.larray.data_ptr() != replicated.larray.data_ptr(), "copy=True shared")
    for split in (0, 1):
        checks(ht.from_dlpack(data, split=split), data)
        # every process passes its block: from_dlpack(..., is_split=) joins them
        block = ht.array(data, split=split).larray
        checks(ht.from_dlpack(block.clone(), is_split=split), data)
    checks.verify()
    split_array = ht.array(data, split=0)
    if split_array.comm.size > 1:
        expect_errors(
            [
                (BufferError, split_array.__dlpack__, (), {}),
                (BufferError, split_array.__dlpack_device__, (), {}),
                (BufferError, ht.from_dlpack, (split_array,), {}),
            ]
        )
    else:
        np.testing.assert_array_equal(torch.from_dlpack(split_array).numpy(), data)
    expect_errors([(TypeError, ht.from_dlpack, ([1, 2],), {})])


def test_mT_and_to_device():
    checks = Checks()
    for shape in ((5, 6), (2, 3, 4)):
        for data, x, label in inputs(shape, np.float64, skew=False):
            checks(x.mT, np.swapaxes(data, -1, -2), label)
    checks.verify()
    x = ht.zeros((3, 2), split=0)
    assert x.to_device(ht.cpu, stream=None) is x
    expect_errors(
        [
            (ValueError, getattr, (ht.zeros(3), "mT"), {}),
            (ValueError, x.to_device, ("cpu",), {"stream": 1}),
        ]
    )


# ---------------------------------------------------------------------------------------------
# creation with the standard's signatures
# ---------------------------------------------------------------------------------------------
def test_creation_signatures():
    checks = Checks()
    for split in (None, 0):
        checks(ht.arange(7, split=split), np.arange(7))
        checks(ht.arange(2, 11, 3, split=split), np.arange(2, 11, 3))
        checks(ht.arange(1, stop=6, step=2, split=split), np.arange(1, 6, 2))
        checks(ht.arange(7, step=3, split=split), np.arange(7, step=3))
        checks(ht.arange(np.int32(4), split=split), np.arange(4))
        checks(ht.arange(0, 2, 0.25, split=split), np.arange(0, 2, 0.25, dtype=np.float32))
        checks(
            ht.arange(5, 0, -2, split=split, dtype=ht.int32), np.arange(5, 0, -2, dtype=np.int32)
        )
        for n_rows, n_cols, k in ((5, None, 0), (3, 6, 2), (7, 2, -1), (2, 4, 0)):
            expected = np.eye(n_rows, n_cols, k=k, dtype=np.float32)
            checks(ht.eye(n_rows, n_cols, k=k, split=split), expected)
        checks(ht.eye((3, 5), dtype=ht.int64, split=split), np.eye(3, 5, dtype=np.int64))
        for function in (ht.zeros, ht.ones):
            checks(
                function((4, 3), split=split), getattr(np, function.__name__)((4, 3), np.float32)
            )
            checks(
                function(5, dtype=None, split=split), getattr(np, function.__name__)(5, np.float32)
            )
        checks.expect(ht.empty((2, 3), split=split).dtype is ht.float32, "empty dtype")
    checks.verify()
    expect_errors(
        [
            (ValueError, ht.eye, ((3, 4), 2), {}),
            (ValueError, ht.eye, (3, (2, 2)), {}),
            (TypeError, ht.arange, (1,), {"stop": "a"}),
            (ValueError, ht.arange, (1, 5, 0), {}),
        ]
    )


# ---------------------------------------------------------------------------------------------
# data types and manipulations
# ---------------------------------------------------------------------------------------------
def test_astype():
    checks = Checks()
    for source, target in (
        (np.float64, np.int32),
        (np.int64, np.float32),
        (np.float32, np.complex64),
        (np.int32, np.bool_),
    ):
        for data, x, label in inputs((5, 6), source, seed=3):
            y = ht.astype(x, ht.types.canonical_heat_type(target))
            checks(y, data.astype(target), f"{label} {source.__name__}->{target.__name__}")
            checks.expect(y.split == x.split, f"{label}: split changed")
        x = ht.array(random_array((7,), source), split=0)
        same = ht.types.canonical_heat_type(source)
        checks.expect(ht.astype(x, same, copy=False) is x, "copy=False copied")
        checks.expect(ht.astype(x, same) is not x, "copy=True did not copy")
        checks.expect(ht.astype(x, same, device="cpu", copy=False) is x, "device= copied")
    checks.verify()
    expect_errors(
        [
            (TypeError, ht.astype, (np.zeros(3), ht.float32), {}),
            (TypeError, ht.astype, (ht.zeros(3), "no type"), {}),
            (TypeError, ht.astype, (ht.zeros(3), ht.int32), {"copy": None}),
        ]
    )


def test_permute_dims_concat_unstack():
    checks = Checks()
    for shape in ((2, 3, 4), (5, 6), (7,)):
        for dtype in (np.float32, np.int64):
            for data, x, label in inputs(shape, dtype):
                axes = tuple(reversed(range(len(shape))))
                checks(ht.permute_dims(x, axes), np.transpose(data, axes), label)
                if len(shape) == 3:
                    checks(ht.permute_dims(x, (1, -1, 0)), np.transpose(data, (1, 2, 0)), label)
                for axis in range(-len(shape), len(shape)):
                    pieces = ht.unstack(x, axis=axis)
                    expected = np.unstack(data, axis=axis)
                    checks.expect(len(pieces) == len(expected), f"{label} axis {axis}: count")
                    for piece, e in zip(pieces, expected):
                        checks(piece, e, f"{label} unstack axis {axis}")
                    other = ht.array(random_array(shape, np.float64, seed=1), split=None)
                    checks(
                        ht.concat([x, other], axis=axis),
                        np.concat([data, other.numpy()], axis=axis),
                        f"{label} concat {axis}",
                    )
                checks(ht.concat((x, x), axis=None), np.concat((data, data), axis=None), label)
    checks.verify()
    x = ht.zeros((2, 3), split=0)
    expect_errors(
        [
            (ValueError, ht.permute_dims, (x, (0, 0)), {}),
            (TypeError, ht.permute_dims, (x, None), {}),
            (ValueError, ht.unstack, (ht.array(1.0),), {}),
            (ValueError, ht.unstack, (x,), {"axis": 2}),
            (TypeError, ht.unstack, (x,), {"axis": 1.0}),
            (ValueError, ht.concat, ([x, ht.zeros((3, 3))],), {"axis": 1}),
        ]
    )


def test_reshape_standard_signature():
    checks = Checks()
    for data, x, label in inputs((6, 4), np.float32, skew=False):
        checks(ht.reshape(x, shape=(4, 6)), data.reshape(4, 6), label)
        checks(ht.reshape(x, (3, -1), copy=True), data.reshape(3, -1), label)
        copied = ht.reshape(x, (24,), copy=True)
        checks.expect(
            copied.lnumel == 0 or copied.larray.data_ptr() != x.larray.data_ptr(),
            "copy=True shared",
        )
        checks(x.reshape(2, 12), data.reshape(2, 12), label)
    checks.verify()
    x = ht.arange(12)
    y = ht.reshape(x, (3, 4), copy=False)
    assert y.larray.data_ptr() == x.larray.data_ptr()
    moved = ht.arange(12, split=0)
    if moved.comm.size > 1:
        expect_errors([(ValueError, ht.reshape, (moved, (3, 4)), {"copy": False, "new_split": 1})])
    expect_errors([(TypeError, ht.reshape, (x, (3, 4)), {"copy": "no"})])


# ---------------------------------------------------------------------------------------------
# elementwise functions
# ---------------------------------------------------------------------------------------------
def test_bitwise_shifts_and_invert():
    checks = Checks()
    for dtype in (np.int8, np.int32, np.int64):
        for data, x, label in inputs((5, 6), dtype, skew=False):
            shifts = random_array((5, 6), dtype, seed=2, low=0, high=5)
            s = ht.array(shifts, split=x.split)
            checks(ht.bitwise_left_shift(x, s), np.bitwise_left_shift(data, shifts), label)
            checks(ht.bitwise_right_shift(x, s), np.bitwise_right_shift(data, shifts), label)
            checks(ht.bitwise_right_shift(x, 1), np.bitwise_right_shift(data, dtype(1)), label)
            checks(ht.bitwise_invert(x), np.bitwise_invert(data), label)
    data = random_array((7,), bool)
    checks(ht.bitwise_invert(ht.array(data, split=0)), np.bitwise_invert(data))
    checks.verify()
    expect_errors([(TypeError, ht.bitwise_left_shift, (ht.zeros(3), 1), {})])


def test_nextafter_reciprocal():
    checks = Checks()
    for dtype in (np.float32, np.float64):
        for data, x, label in inputs((5, 6), dtype):
            towards = random_array((5, 6), dtype, seed=4)
            towards[0, :2] = data[0, :2]  # equal operands give the second one
            checks(
                ht.nextafter(x, ht.array(towards, split=x.split)),
                np.nextafter(data, towards),
                label,
            )
            checks(ht.nextafter(x, dtype(np.inf)), np.nextafter(data, dtype(np.inf)), label)
            checks(ht.reciprocal(x), np.reciprocal(data), label)
    for dtype in (np.int32, np.int64):
        data = random_array((7,), dtype)
        data[data == 0] = 1
        data[:2] = (-1, 1)
        for split in (None, 0):
            checks(ht.reciprocal(ht.array(data, split=split)), np.reciprocal(data))
    data = random_array((4,), np.complex128)
    checks(ht.reciprocal(ht.array(data, split=0)), np.reciprocal(data))
    checks.verify()
    expect_errors(
        [
            (TypeError, ht.reciprocal, (ht.ones(3, dtype=ht.bool),), {}),
            (TypeError, ht.nextafter, (ht.ones(3, dtype=ht.complex64), 1.0), {}),
            (ValueError, ht.nextafter, (ht.ones(3), ht.ones(4)), {}),
        ]
    )


# ---------------------------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------------------------
def test_take():
    checks = Checks()
    for shape, dtype in (((7,), np.float32), ((5, 6), np.int64), ((2, 3, 4), np.float64)):
        for data, x, label in inputs(shape, dtype):
            for axis in range(-len(shape), len(shape)):
                n = shape[axis]
                indices = np.array([n - 1, 0, n // 2, -1, 0], dtype=np.int64)
                for index_split in (None, 0):
                    idx = ht.array(indices, split=index_split)
                    checks(
                        ht.take(x, idx, axis=axis),
                        np.take(data, indices, axis=axis),
                        f"{label} axis {axis}",
                    )
            checks(ht.take(x, [0, data.size - 1, 3]), np.take(data, [0, data.size - 1, 3]), label)
    checks.verify()
    x = ht.zeros((3, 4), split=0)
    expect_errors(
        [
            (TypeError, ht.take, (x, [0.5]), {"axis": 0}),
            (ValueError, ht.take, (x, [0]), {"axis": 2}),
            (IndexError, ht.take, (x, [5]), {"axis": 0}),
            (TypeError, ht.take, (np.zeros(3), [0]), {}),
        ]
    )


def test_take_along_axis():
    checks = Checks()
    for shape, dtype in (((7,), np.int32), ((5, 6), np.float64), ((2, 3, 4), np.int32)):
        for data, x, label in inputs(shape, dtype):
            for axis in range(-len(shape), len(shape)):
                order = np.argsort(data, axis=axis, kind="stable")
                for index_split in (None, x.split):
                    idx = ht.array(order, split=index_split)
                    checks(
                        ht.take_along_axis(x, idx, axis=axis),
                        np.take_along_axis(data, order, axis=axis),
                        f"{label} axis {axis}",
                    )
                # fewer (repeated) picks along axis, broadcast in the others
                picks_shape = [1] * len(shape)
                picks_shape[axis] = 2
                picks = np.zeros(picks_shape, dtype=np.int64)
                picks.flat[-1] = shape[axis] - 1
                checks(
                    ht.take_along_axis(x, picks, axis=axis),
                    np.take_along_axis(data, picks, axis=axis),
                    f"{label} picks {axis}",
                )
            checks(
                ht.take_along_axis(x, ht.argsort(x, axis=-1)),
                np.take_along_axis(data, np.argsort(data, axis=-1, kind="stable"), -1),
                label,
            )
    checks.verify()
    x = ht.zeros((3, 4), split=0)
    expect_errors(
        [
            (ValueError, ht.take_along_axis, (x, ht.zeros(3, dtype=ht.int64)), {"axis": 0}),
            (ValueError, ht.take_along_axis, (x, ht.zeros((2, 4), dtype=ht.int64)), {"axis": 1}),
            (TypeError, ht.take_along_axis, (x, ht.zeros((3, 4))), {"axis": 1}),
            (ValueError, ht.take_along_axis, (x, ht.zeros((3, 4), dtype=ht.int64)), {"axis": 2}),
        ]
    )


# ---------------------------------------------------------------------------------------------
# reductions and scans
# ---------------------------------------------------------------------------------------------
def test_count_nonzero():
    checks = Checks()
    for shape in ((7,), (5, 6), (2, 3, 4)):
        for dtype in (np.float32, np.int64, bool):
            for data, x, label in inputs(shape, dtype, skew=False):
                data = np.where(np.abs(data) < 4, 0, data).astype(dtype)
                x = ht.array(data, split=x.split)
                axes = [None] + list(range(len(shape))) + ([(0, -1)] if len(shape) > 1 else [])
                for axis in axes:
                    for keepdims in (False, True):
                        expected = np.asarray(
                            np.count_nonzero(data, axis=axis, keepdims=keepdims), dtype=np.int64
                        )
                        checks(
                            ht.count_nonzero(x, axis=axis, keepdims=keepdims),
                            expected,
                            f"{label} axis {axis} keepdims {keepdims}",
                        )
    checks.verify()
    expect_errors(
        [
            (ValueError, ht.count_nonzero, (ht.zeros((2, 3)),), {"axis": 2}),
            (TypeError, ht.count_nonzero, (np.zeros(3),), {}),
        ]
    )


def test_cumulative_sum_prod():
    checks = Checks()
    for shape in ((7,), (5, 6), (2, 3, 4)):
        for dtype in (np.float64, np.int32, np.int64):
            for data, x, label in inputs(shape, dtype):
                data_small = np.clip(data, -2, 2).astype(dtype)
                x_small = ht.clip(x, -2, 2)
                axes = [None] if len(shape) == 1 else []
                axes += list(range(-len(shape), len(shape)))
                for axis in axes:
                    for initial in (False, True):
                        checks(
                            ht.cumulative_sum(x, axis=axis, include_initial=initial),
                            np.cumulative_sum(data, axis=axis, include_initial=initial),
                            f"{label} sum axis {axis} initial {initial}",
                        )
                        checks(
                            ht.cumulative_prod(x_small, axis=axis, include_initial=initial),
                            np.cumulative_prod(data_small, axis=axis, include_initial=initial),
                            f"{label} prod axis {axis} initial {initial}",
                        )
                checks(
                    ht.cumulative_sum(x, axis=0, dtype=ht.float64),
                    np.cumulative_sum(data, axis=0, dtype=np.float64),
                    label,
                )
    checks.verify()
    expect_errors(
        [
            (ValueError, ht.cumulative_sum, (ht.zeros((2, 3)),), {}),
            (ValueError, ht.cumulative_prod, (ht.zeros(3),), {"axis": 1}),
            (ValueError, ht.cumulative_sum, (ht.array(1.0),), {}),
            (TypeError, ht.cumulative_sum, (ht.zeros(3),), {"include_initial": 1}),
        ]
    )


def test_var_std_correction():
    checks = Checks()
    for shape in ((7,), (5, 6), (2, 3, 4)):
        for dtype in (np.float32, np.float64, np.int64):
            for data, x, label in inputs(shape, dtype, skew=False):
                for axis in (None, 0, -1):
                    for correction in (0, 1, 1.5):
                        for name in ("var", "std"):
                            checks(
                                getattr(ht, name)(x, axis=axis, correction=correction),
                                getattr(np, name)(data, axis=axis, correction=correction),
                                f"{label} {name} axis {axis} correction {correction}",
                            )
    checks.verify()
    expect_errors(
        [
            (ValueError, ht.var, (ht.zeros(3),), {"ddof": 1, "correction": 1}),
            (TypeError, ht.std, (ht.zeros(3),), {"correction": "1"}),
        ]
    )


def test_clip_min_max():
    checks = Checks()
    for dtype in (np.float32, np.int64):
        for data, x, label in inputs((5, 6), dtype):
            checks(ht.clip(x, min=-2, max=3), np.clip(data, min=-2, max=3), label)
            checks(ht.clip(x, -2), np.clip(data, -2, None), label)
            checks(ht.clip(x, max=1), np.clip(data, max=1), label)
            checks(ht.clip(x, a_min=-1, a_max=2), np.clip(data, -1, 2), label)
            bounds = random_array((6,), dtype, seed=5)
            checks(ht.clip(x, min=ht.array(bounds)), np.clip(data, bounds, None), label)
    checks.verify()
    expect_errors(
        [
            (TypeError, ht.clip, (ht.zeros(3),), {"min": 1, "a_min": 1}),
            (TypeError, ht.clip, (ht.zeros(3),), {"max": 1, "a_max": 1}),
        ]
    )


def test_sort_stable_default():
    data = np.array([3, 1, 3, 1, 2, 3, 1], dtype=np.int64)
    for split in (None, 0):
        x = ht.array(data, split=split)
        np.testing.assert_array_equal(ht.argsort(x).numpy(), np.argsort(data, stable=True))
        np.testing.assert_array_equal(
            ht.argsort(x, kind="stable").numpy(), np.argsort(data, stable=True)
        )
        np.testing.assert_array_equal(ht.sort(x, descending=True).numpy(), np.sort(data)[::-1])


def _generic_pipeline(x):
    """Array-API-generic code, as SciPy or scikit-learn write it: only ``x.__array_namespace__()``."""
    xp = x.__array_namespace__()
    centered = x - xp.mean(x, axis=0, keepdims=True)
    z = centered / xp.std(x, axis=0, correction=1, keepdims=True)
    e = xp.exp(z - xp.max(z, axis=1, keepdims=True))
    p = e / xp.sum(e, axis=1, keepdims=True)
    labels = xp.argmax(p, axis=1)
    norms = xp.linalg.vector_norm(z, axis=1)
    joined = xp.concat([z, xp.reshape(norms, (-1, 1))], axis=1)
    positive = xp.where(joined > 0, joined, xp.zeros_like(joined))
    order = xp.argsort(norms, descending=True)
    picked = xp.take(z, order, axis=0)
    along = xp.take_along_axis(z, xp.argsort(z, axis=1), axis=1)
    running = xp.cumulative_sum(xp.astype(labels, xp.float64), include_initial=True)
    finite = xp.all(xp.isfinite(p)) and xp.isdtype(p.dtype, "real floating")
    return [
        p,
        labels,
        joined,
        positive,
        picked,
        along,
        running,
        xp.count_nonzero(positive, axis=0),
        xp.matrix_transpose(z) @ z,
        xp.asarray(bool(finite)),
    ]


def test_array_api_generic_code_matches_array_api_strict():
    data = random_array((11, 4), np.float64, seed=7)
    reference = [np.asarray(r) for r in _generic_pipeline(xp.asarray(data))]
    checks = Checks()
    for split in (None, 0, 1):
        for result, expected in zip(_generic_pipeline(ht.array(data, split=split)), reference):
            checks(result, expected, f"split={split}")
    checks.verify()


# ---------------------------------------------------------------------------------------------
# the standard's special cases of the elementwise functions
# ---------------------------------------------------------------------------------------------
_SPECIAL = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 1e-300, 2.0, 3.0], dtype=np.float64
)
_COMPLEX_SPECIAL = np.array(
    [
        complex(a, b)
        for a in (0.0, -0.0, 1.0, -np.inf, np.inf, np.nan)
        for b in (0.0, -0.0, 2.0, np.inf, -np.inf, np.nan)
    ],
    dtype=np.complex128,
)


def _elementwise_names(arity: int):
    names = []
    for name in xp.__all__:
        function = getattr(xp, name)
        if not callable(function) or isinstance(function, type) or name in NOT_STANDARD:
            continue
        parameters = list(inspect.signature(function).parameters.values())
        if [p.name for p in parameters] == (["x"] if arity == 1 else ["x1", "x2"]):
            names.append(name)
    return names


def _reference(function, *operands):
    """array-api-strict's result as NumPy, None where it rejects the operands' dtype."""
    try:
        result = function(*(xp.asarray(o) for o in operands))
    except (TypeError, ValueError):
        return None
    if getattr(result, "shape", None) != operands[0].shape:
        return None  # not elementwise (unique_counts, ...)
    return np.asarray(result)


# complex results whose zero components may have the other sign than NumPy's: torch's kernels
# (the standard lists few signs of zero components of complex results)
COMPLEX_ZERO_SIGNS = {
    "acos": "torch gives acos(+-0+0j) = pi/2+0j (NumPy and the standard: pi/2-0j)",
    "log1p": "torch gives log1p(-0+-0j) a real part -0",
}
# complex special values not checked: the standard leaves them to the implementation
COMPLEX_UNSPECIFIED = {
    "reciprocal": "1 / 0j (torch: inf + nan j, NumPy: nan + nan j) and signs of zero components",
    "sign": "x / |x| of infinite components (torch: 0 + nan j, NumPy: nan + nan j)",
}


def _same_values(actual: np.ndarray, expected: np.ndarray, zero_signs: bool = True) -> bool:
    """Equal values (to 1e-12), NaN where NaN, the sign of every infinity and, with
    ``zero_signs``, of every zero; complex values component by component."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False
    if expected.dtype.kind not in "fc":
        return np.array_equal(actual, expected)
    parts = [(actual.real, expected.real)]
    if expected.dtype.kind == "c":
        parts.append((actual.imag, expected.imag))
    for a, e in parts:
        if not np.allclose(a, e, rtol=1e-12, atol=0, equal_nan=True):
            return False
        signed = np.isinf(e) | ((e == 0) & zero_signs)
        if not np.array_equal(np.signbit(a[signed]), np.signbit(e[signed])):
            return False
    return True


def test_elementwise_special_cases():
    """Every unary and binary elementwise function on zeros of both signs, infinities, NaN,...:
    the values and signs the standard lists (array-api-strict's are NumPy's, which follow it)."""
    x1, x2 = (v.ravel() for v in np.meshgrid(_SPECIAL, _SPECIAL))
    errors = []
    with np.errstate(all="ignore"):
        cases = [(name, (_SPECIAL,)) for name in _elementwise_names(1)]
        cases += [(name, (_COMPLEX_SPECIAL,)) for name in _elementwise_names(1)]
        cases += [(name, (x1, x2)) for name in _elementwise_names(2)]
        for name, operands in cases:
            expected = _reference(getattr(xp, name), *operands)
            if expected is None or (expected.dtype.kind == "c" and name in COMPLEX_UNSPECIFIED):
                continue
            for split in (None, 0):
                result = getattr(ht, name)(*(ht.array(o, split=split) for o in operands))
                actual = result.numpy()
                zero_signs = not (expected.dtype.kind == "c" and name in COMPLEX_ZERO_SIGNS)
                if not _same_values(actual, expected, zero_signs):
                    wrong = [
                        (operand, a, e)
                        for operand, a, e in zip(zip(*operands), actual.ravel(), expected.ravel())
                        if not _same_values(np.array([a]), np.array([e]), zero_signs)
                    ]
                    errors.append(
                        f"{name}{tuple(o.dtype.name for o in operands)} split={split}: "
                        f"(operands, heat, standard) {wrong[:3]}"
                    )
    assert not errors, "\n".join(errors)


# ---------------------------------------------------------------------------------------------
# NumPy's one-bool comparisons (heat.equal is elementwise, as the standard's)
# ---------------------------------------------------------------------------------------------
def test_array_equal_array_equiv():
    results = []
    for shape in ((7,), (5, 6), (2, 3, 4)):
        for dtype in (np.float32, np.int64, np.complex64, bool):
            for data, x, label in inputs(shape, dtype, skew=False):
                changed = data.copy()
                changed.flat[-1] = (
                    changed.flat[0] if changed.flat[-1] != changed.flat[0] else not changed.flat[0]
                )
                other = ht.array(changed, split=None if x.split is None else 0)
                results.append((ht.array_equal(x, data), np.array_equal(data, data), label))
                results.append((ht.array_equal(x, other), np.array_equal(data, changed), label))
                results.append((ht.array_equal(x, data[:1]), False, label))
                results.append((ht.array_equiv(x, data[:1]), np.array_equiv(data, data[:1]), label))
                results.append(
                    (ht.array_equiv(x, data[-1:]), np.array_equiv(data, data[-1:]), label)
                )
                results.append((ht.array_equiv(x, np.zeros((3, 1, 1, 2))), False, label))
                assert ht.equal(x, data).shape == data.shape  # elementwise, as the standard's
    nan = np.array([np.nan, 1.0, np.inf])
    for split in (None, 0):
        x = ht.array(nan, split=split)
        results.append((ht.array_equal(x, nan), False, "nan"))
        results.append((ht.array_equal(x, nan, equal_nan=True), True, "nan"))
    wrong = [(label, ours, theirs) for ours, theirs, label in results if ours is not theirs]
    assert not wrong, wrong[:5]
    expect_errors([(TypeError, ht.array_equal, (ht.zeros(2), ht.zeros(2)), {"equal_nan": 1})])


def _generic_routines(x):
    """More of the standard as generic code calls it (keywords, tuples of axes, scalars)."""
    xp = x.__array_namespace__()
    out = {}
    out["sum_dtype"] = xp.sum(xp.astype(x > 0, xp.int32), axis=0, dtype=xp.int64)
    out["linspace"] = xp.linspace(0.0, 1.0, 5, endpoint=False, dtype=xp.float64)
    out["full_like"] = xp.full_like(x, 2.5)
    out["tril"] = xp.tril(x, k=1)
    out["triu"] = xp.triu(x, k=-1)
    g1, g2 = xp.meshgrid(xp.arange(3), xp.arange(4), indexing="ij")
    out["mesh"] = g1 * 10 + g2
    out["repeat"] = xp.repeat(x, 2, axis=0)
    s = xp.sort(x[:, 0])
    out["search"] = xp.searchsorted(s, x[:, 1], side="right")
    out["diff"] = xp.diff(x, n=2, axis=0)
    out["roll"] = xp.roll(x, shift=(1, -1), axis=(0, 1))
    out["tile"] = xp.tile(x, (2, 1))
    out["bcast"] = xp.broadcast_arrays(x[:1, :], x)[0]
    out["nonzero"] = xp.nonzero(x > 0)[1]
    out["argmax"] = xp.argmax(x, axis=1, keepdims=True)
    out["max"] = xp.max(x, axis=(0, 1))
    out["min_keep"] = xp.min(x, axis=0, keepdims=True)
    out["prod"] = xp.prod(x[:3, ...], axis=0)
    out["flip"] = xp.flip(x, axis=(0, 1))
    out["expand"] = xp.expand_dims(x, axis=1)
    out["squeeze"] = xp.squeeze(xp.expand_dims(x, axis=0), axis=0)
    out["stack"] = xp.stack([x, x], axis=-1)
    out["newaxis"] = x[:, xp.newaxis, 0]
    out["where_scalar"] = xp.where(x > 0, x, 0.0)
    out["clip"] = xp.clip(x, min=-0.5, max=0.5)
    out["round"] = xp.round(x * 10)
    out["vecdot"] = xp.vecdot(x, x, axis=-2)
    out["matmul"] = xp.matmul(x.T, x)
    out["ones"] = xp.ones((2, 3), dtype=xp.float64) + xp.eye(2, 3, k=1, dtype=xp.float64)
    out["empty_shape"] = xp.asarray(xp.empty((0, 3), dtype=xp.float64).shape[0])
    out["zeros_like"] = xp.zeros_like(x, dtype=xp.int32)
    out["asarray"] = xp.asarray([[1, 2], [3, 4]], dtype=xp.float64)
    out["mean"] = xp.mean(x, axis=1)
    out["var"] = xp.var(x, axis=0, correction=1, keepdims=True)
    out["cumsum"] = xp.cumulative_sum(x, axis=0)
    out["logaddexp"] = xp.logaddexp(x, 1.0)
    out["floordiv"] = xp.floor_divide(x, 0.3)
    out["pow"] = xp.pow(x, 2)
    out["any"] = xp.any(x > 1.5, axis=0)
    out["eq"] = xp.equal(x, x)
    out["isin"] = xp.isin(xp.astype(x * 3, xp.int64), xp.asarray([0, 1, 2]))
    out["rt"] = xp.asarray(xp.result_type(x.dtype, xp.float32) == xp.float64)
    out["trunc"] = xp.trunc(x * 3)
    return out


def test_array_api_routines_match_array_api_strict():
    data = random_array((7, 4), np.float64, seed=8, low=-2, high=2)
    reference = {k: np.asarray(v) for k, v in _generic_routines(xp.asarray(data)).items()}
    checks = Checks()
    for split in (None, 0, 1):
        for name, result in _generic_routines(ht.array(data, split=split)).items():
            checks(result, reference[name], f"{name} split={split}")
    checks.verify()
