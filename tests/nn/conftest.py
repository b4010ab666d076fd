"""Fixtures of the data-parallel module tests: the same as tests/optim's."""

from tests.optim.conftest import single_compute_thread  # noqa: F401
