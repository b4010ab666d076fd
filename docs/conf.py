"""
Sphinx configuration of heat's API reference.

Build (from the repository root; ``-W`` turns every warning into an error, as CI does)::

    python -m sphinx -W --keep-going -j auto -b html docs docs/_build/html

The reference is written by hand in ``docs/api/*.rst`` (which names, grouped how); autosummary
writes one page per name into ``docs/api/generated/`` at every build (deleted first, so no page
outlives a removed name), and numpydoc renders the NumPy-style docstrings.
"""

import inspect
import os
import re
import shutil

import numpydoc.docscrape_sphinx
import sphinx.ext.autosummary
from jinja2.sandbox import SandboxedEnvironment
from sphinx.util.inspect import object_description

import heat

project = "heat"
author = "the heat developers"
copyright = "the heat developers, MIT license"
version = release = heat.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

templates_path = ["_templates"]
# Markdown files (internals.md, README.md) are not Sphinx sources: myst-parser is not a dependency
exclude_patterns = ["_build"]
root_doc = "index"

# one page per public name, regenerated from scratch (a stale page would be an orphan warning)
_GENERATED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api", "generated")
shutil.rmtree(_GENERATED, ignore_errors=True)
autosummary_generate = True
autosummary_imported_members = False

# autosummary's table entry is a docstring's first sentence, cut at the first ". ", also when that
# period lies inside an inline literal (``(a . b) / (b . b)``): the cut leaves the literal open, a
# docutils warning about valid reST. Cut only at periods outside ``literals``.
sphinx.ext.autosummary.periods_re = re.compile(
    r"\.\s+(?=(?:(?:(?!``).)*``(?:(?!``).)*``)*(?:(?!``).)*$)"
)

autodoc_member_order = "groupwise"
# the types are in the numpydoc Parameters sections; signatures stay short, as NumPy's
autodoc_typehints = "none"

# a class page (docs/_templates/autosummary/class.rst) documents the members below the class and
# lists them in the sidebar; numpydoc's member tables would list them a second time
#
# The templates name objects as "module::path" (heat::linalg.cg): heat.linalg and heat.random
# are attributes of heat, not importable modules, and autodoc imports what it documents.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# numpydoc (1.11) builds a new jinja environment for every docstring it renders -- twice per
# object, signature and body -- so its template is compiled anew each time, about a fifth of the
# whole build. One environment keeps jinja's template cache; the template is the same every time.
_numpydoc_environment = []


def _one_numpydoc_environment(*args, **kwargs):
    if not _numpydoc_environment:
        _numpydoc_environment.append(SandboxedEnvironment(*args, **kwargs))
    return _numpydoc_environment[0]


numpydoc.docscrape_sphinx.SandboxedEnvironment = _one_numpydoc_environment

html_theme = "alabaster"
html_copy_source = False  # no _sources/ copy of the 570 generated pages; the docstrings are it
html_title = f"heat {release}"
# the page's own contents (a class page lists its methods) beside the navigation of the pages
html_sidebars = {
    "**": ["about.html", "navigation.html", "localtoc.html", "relations.html", "searchfield.html"]
}
html_theme_options = {
    "description": "Distributed tensors and data-parallel learning on MPI and PyTorch",
    # the sidebar lists the pages, not the ~600 per-name pages of autosummary's hidden toctrees
    # (resolving that whole tree for every page was a tenth of the build)
    "sidebar_includehidden": False,
}


def _defined_outside_heat(obj) -> bool:
    """Whether a class member comes from torch, the standard library etc. rather than heat."""
    target = getattr(obj, "fget", None) or getattr(obj, "__func__", None) or obj
    module = getattr(target, "__module__", None)
    if not isinstance(module, str) and hasattr(target, "__objclass__"):
        module = getattr(target.__objclass__, "__module__", None)  # slot wrappers, C methods
    return isinstance(module, str) and module != "builtins" and not module.startswith("heat")


def _skip_foreign_members(app, what, name, obj, skip, options):
    # heat's classes that subclass torch.nn.Module, torch's Dataset and Sampler or Exception
    # inherit dozens of members documented by those projects (in their own docstring style);
    # the reference documents what heat defines and links the base class instead
    if _defined_outside_heat(obj):
        return True
    return None


def _public_bases(app, name, obj, options, bases):
    # "Bases:" names public classes: a private base (KMeans's _KCluster) is replaced by its own
    # bases, and a class whose only base is object shows none
    def public(cls):
        if cls.__name__.startswith("_"):
            return [base for parent in cls.__bases__ for base in public(parent)]
        return [cls]

    shown = []
    for base in bases:
        for cls in public(base):
            if cls is not object and cls not in shown:
                shown.append(cls)
    bases[:] = shown


def _readable_default(value):
    """The name a reader knows for a default value whose repr says nothing (None: keep it)."""
    from mpi4py import MPI

    if isinstance(value, MPI.Op):
        names = [name for name in dir(MPI) if getattr(MPI, name) is value]
        return f"MPI.{names[0]}" if names else None
    if value is MPI.COMM_WORLD:
        return "MPI.COMM_WORLD"
    if value is heat.MPI_WORLD:
        return "heat.MPI_WORLD"  # its repr shows the rank and size of the building process
    if isinstance(value, type) and issubclass(value, heat.core.types.datatype):
        return f"heat.{value.__name__}"
    return None


def _readable_defaults(app, what, name, obj, options, signature, return_annotation):
    # MPI.SUM shows as "<mpi4py.MPI.Op object>", ht.float32 as "<class '...types.float32'>"
    # (autodoc_preserve_defaults would show the source text, but fails on positional-only
    # parameters); name those defaults as the source does
    if not signature or not callable(obj):
        return None
    try:
        parameters = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return None
    changed = signature
    for parameter in parameters:
        if parameter.default is inspect.Parameter.empty:
            continue
        readable = _readable_default(parameter.default)
        if readable is not None:
            shown = f"{parameter.name}={object_description(parameter.default)}"
            changed = changed.replace(shown, f"{parameter.name}={readable}", 1)
    return (changed, return_annotation) if changed != signature else None


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("autodoc-process-signature", _readable_defaults)
