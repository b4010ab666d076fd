"""Fixtures of the data-parallel training tests (tests/optim and tests/nn)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def single_compute_thread():
    """
    One intra-op thread while a test trains its tiny models. With several processes sharing 2
    cores, torch's second thread mostly waits for a time slice: measured on this machine under
    load, a forward/backward of a 6-8-3 MLP took 34 ms with 2 threads and 2 ms with 1.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
