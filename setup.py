"""Packaging for heat.

Install for development with ``pip install torch==2.13.0 && pip install -e ".[dev]"``: torch first,
so that pip takes the CPU build instead of resolving the torch requirement to a CUDA build.
"""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent

version_namespace: dict = {}
exec((HERE / "heat" / "_version.py").read_text(), version_namespace)

setup(
    # the distribution's own name: "heat" on PyPI is HeAT, so `pip install -U heat` would replace
    # this install with HeAT 1.8 and a CUDA torch; the import name stays `heat`
    name="heat-mpi",
    version=version_namespace["__version__"],
    description="Distributed tensor computing on MPI and PyTorch: a NumPy-like distributed array",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    author="heat developers",
    license="MIT",
    packages=find_packages(include=["heat", "heat.*"]),
    # the sample data of heat.datasets (iris, diabetes), loaded by path in tutorials
    package_data={"heat.datasets": ["*.csv", "*.h5", "*.nc"]},
    python_requires=">=3.10",
    install_requires=[
        # torch is pinned below the next minor release: with torch absent, a range admitting a
        # newer release makes pip fetch a CUDA build (several GB). Install torch==2.13.0 first.
        "torch>=2.1,<2.14",
        "numpy>=1.24",
        "mpi4py>=3.1",
        "h5py>=3.8",
    ],
    entry_points={"console_scripts": ["heat = heat.cli:main"]},
    extras_require={
        # An MPI library from PyPI, for machines without a system MPI.
        "mpich": ["mpich"],
        # Optional file formats of ht.load / ht.save (heat/core/io.py).
        "netcdf": ["netCDF4"],
        "zarr": ["zarr"],
        # The progress bar of heat.utils.data.StreamingDataLoader(progress=True).
        "progress": ["tqdm"],
        # The plots of benchmarks/ (daso_accuracy.py's loss-vs-time PNG).
        "bench": ["matplotlib"],
        # benchmarks/run.py --dask: Dask arrays on a LocalCluster of single-threaded workers.
        "dask": ["dask[array]", "distributed"],
        # heat.nn.lightning: PyTorch Lightning strategies (DASO, DataParallel) and DataModule.
        "lightning": ["lightning>=2.1"],
        # The API reference (docs/api, built with Sphinx from the NumPy-style docstrings).
        "docs": ["sphinx", "numpydoc"],
        # examples/notebooks: an ipyparallel cluster of MPI engines, run by nbclient in the tests.
        "notebooks": ["ipyparallel", "nbclient", "ipykernel", "matplotlib"],
        # What scripts/run_tests.py needs (pytest>=8 for new-style hook wrappers in conftest).
        # scipy (skew, kurtosis, cdist) and scikit-learn (scalers, k-means) are test oracles only;
        # netCDF4 and zarr so that the tests of those formats run instead of being skipped.
        "dev": [
            "pytest>=8",
            "pytest-timeout>=2.1",
            "mpich",
            "scipy",
            "scikit-learn",
            "netCDF4",
            "zarr",
            "array-api-strict",
            "sphinx",
            "numpydoc",
            "ipyparallel",
            "nbclient",
            "ipykernel",
            "matplotlib",
            "lightning>=2.1",
            # the formatter and linter that .ci/run checks the tree with (settings in pyproject.toml)
            "ruff",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: MIT License",
        "Operating System :: POSIX :: Linux",
        "Topic :: Scientific/Engineering",
    ],
)
