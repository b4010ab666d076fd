"""Fixtures of the example tests: the same as tests/optim's (tiny models, shared cores)."""

from tests.optim.conftest import single_compute_thread  # noqa: F401
