"""The shared parameter sections of the elementwise families (heat/core/_docstrings.py)."""

import inspect

import pytest

import heat as ht
from heat.core import _docstrings

FAMILIES = {
    name: value
    for name, value in vars(_docstrings).items()
    if name.isupper() and isinstance(value, str)
}


def test_every_family_fills_its_members():
    filled = 0
    for module in (
        ht.core.arithmetics,
        ht.core.exponential,
        ht.core.trigonometrics,
        ht.core.rounding,
        ht.core.logical,
        ht.core.relational,
        ht.core.complex_math,
    ):
        for name in module.__all__:
            doc = inspect.getdoc(getattr(module, name)) or ""
            assert "{parameters}" not in doc, f"{module.__name__}.{name}"
            for section in FAMILIES.values():
                if section.strip() in doc:
                    filled += 1
    assert filled >= 50  # the 57 members of the 15 families (and their aliases)
    doc = inspect.getdoc(ht.sin)
    assert doc.startswith("Elementwise sine") and "out : DNDarray, optional" in doc
    assert doc.index("Parameters") < doc.index("Examples")


def test_a_docstring_without_the_marker_is_refused():
    def f():
        """No marker."""

    with pytest.raises(ValueError, match="parameters"):
        _docstrings.sections(_docstrings.UNARY)(f)
