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
from tests.helpers import Checks, expect_errors, inputs, random_array, splits_for

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
MISSING = {
    "uint16": "torch has no arithmetic for uint16/uint32/uint64 on CPU",
    "uint32": "torch has no arithmetic for uint16/uint32/uint64 on CPU",
    "uint64": "torch has no arithmetic for uint16/uint32/uint64 on CPU",
    "tensordot": "comes with the linear-algebra issue (owner of heat/core/linalg)",
}
LINALG_MISSING = {
    name: "comes with the linear-algebra issue (owner of heat/core/linalg)"
    for name in (
        "cholesky", "eigvalsh", "matrix_power", "matrix_rank", "pinv", "slogdet", "svdvals",
        "tensordot",
    )
}

# functions whose signature differs from the standard's, each with the reason
SIGNATURE_EXCEPTIONS = {}

_UNSET = object()


def _standard_names(module, exclude=()):
    return sorted(n for n in module.__all__ if n not in exclude and not n.startswith("_") or n in (
        "__array_api_version__", "__array_namespace_info__"))


def _is_sentinel(default) -> bool:
    """array-api-strict's markers of 'not given' (its own Undef enum)."""
    return type(default).__name__ == "Undef"


def signature_problems(standard, candidate) -> list:
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
            if s.kind is s.POSITIONAL_OR_KEYWORD and (c.name != s.name or c.kind is c.POSITIONAL_ONLY):
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
            elif not (c.default is s.default or (type(c.default) is type(s.default) and c.default == s.default)):
                problems.append(f"{s.name}: default {c.default!r} (standard: {s.default!r})")
    for c in cp:
        if c.name not in used and c.kind in (c.POSITIONAL_ONLY, c.POSITIONAL_OR_KEYWORD, c.KEYWORD_ONLY):
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
            problems = signature_problems(inspect.signature(reference), inspect.signature(ours))
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
        if name.startswith("_") and not name.startswith("__") or name in (
            "__annotations__", "__buffer__", "__dict__", "__module__", "__weakref__",
            "__slots__", "__firstlineno__", "__static_attributes__", "__orig_bases__",
            "__parameters__", "__class_getitem__", "__hash__",
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
