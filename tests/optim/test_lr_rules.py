"""Tests of heat/optim/lr_rules.py: the large-batch learning-rate rule (no communication)."""

import math

import pytest
import torch

import heat as ht


def test_scaled_learning_rate():
    assert ht.optim.scaled_learning_rate(0.1, processes=8) == pytest.approx(0.8)
    assert ht.optim.scaled_learning_rate(0.1, processes=9, rule="sqrt") == pytest.approx(0.3)
    assert ht.optim.scaled_learning_rate(0.5) == pytest.approx(0.5 * ht.MPI_WORLD.size)
    assert ht.optim.scaled_learning_rate(0.5, comm=ht.MPI_SELF) == 0.5


def test_large_batch_scheduler_warms_up_every_group():
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    optimizer = torch.optim.SGD(
        [{"params": net[0].parameters()}, {"params": net[1].parameters(), "lr": 0.01}], lr=0.1
    )
    scheduler = ht.optim.large_batch_scheduler(optimizer, processes=4, rule="sqrt", warmup_steps=4)
    rates = []
    for _ in range(6):
        rates.append([group["lr"] for group in optimizer.param_groups])
        optimizer.step()
        scheduler.step()
    factors = [1.0, 1.25, 1.5, 1.75, 2.0, 2.0]  # 1 -> sqrt(4) over 4 steps
    assert [r[0] for r in rates] == pytest.approx([0.1 * f for f in factors])
    assert [r[1] for r in rates] == pytest.approx([0.01 * f for f in factors])
    immediate = ht.optim.large_batch_scheduler(
        torch.optim.SGD(net.parameters(), lr=1.0), processes=3
    )
    assert immediate.optimizer.param_groups[0]["lr"] == pytest.approx(3.0)
    assert math.isclose(immediate.get_last_lr()[0], 3.0)


@pytest.mark.parametrize(
    "call, exception",
    [
        (lambda: ht.optim.scaled_learning_rate("0.1", processes=2), TypeError),
        (lambda: ht.optim.scaled_learning_rate(0.1, processes=0), ValueError),
        (lambda: ht.optim.scaled_learning_rate(0.1, processes=2.0), TypeError),
        (lambda: ht.optim.scaled_learning_rate(0.1, processes=2, rule="cubic"), ValueError),
        (lambda: ht.optim.large_batch_scheduler("sgd"), TypeError),
        (
            lambda: ht.optim.large_batch_scheduler(
                torch.optim.SGD(torch.nn.Linear(1, 1).parameters(), lr=1.0), warmup_steps=-1
            ),
            ValueError,
        ),
    ],
)
def test_errors(call, exception):
    with pytest.raises(exception):
        call()
