"""
Tests of heat/optim/utils.py: HeAT's DetectMetricPlateau against torch's ReduceLROnPlateau (a
plateau is exactly an epoch where torch reduces the learning rate), its checkpoint state and
its argument checks. Pure Python: the same on every process.
"""

import math

import pytest
import torch

import heat as ht
from heat.optim.utils import DetectMetricPlateau

SEQUENCES = [
    [1.0, 0.9, 0.9, 0.9, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.49, 0.2],
    [-1.0, -1.0, -1.5, -1.5, -1.5, -1.5, -3.0, -3.0, -3.0, -3.0],
    [3.0, 1.0, float("nan"), 1.0, 0.99999, 1.0, 1.0, 0.1, 0.1, 0.1, 0.1],
]


def torch_plateaus(metrics, mode, patience, threshold, threshold_mode, cooldown):
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer,
        mode=mode,
        factor=0.5,
        patience=patience,
        threshold=threshold,
        threshold_mode=threshold_mode,
        cooldown=cooldown,
    )
    plateaus = []
    for value in metrics:
        before = optimizer.param_groups[0]["lr"]
        scheduler.step(value)
        plateaus.append(optimizer.param_groups[0]["lr"] < before)
    return plateaus


@pytest.mark.parametrize("mode", ["min", "max"])
@pytest.mark.parametrize("threshold_mode", ["rel", "abs"])
@pytest.mark.parametrize("patience,cooldown", [(0, 0), (1, 0), (2, 1), (1, 3)])
def test_detect_metric_plateau_matches_reduce_lr_on_plateau(
    mode, threshold_mode, patience, cooldown
):
    for sequence in SEQUENCES:
        metrics = sequence if mode == "min" else [-v for v in sequence]
        if threshold_mode == "rel" and any(v < 0 for v in metrics):
            continue  # torch's rel bar best * (1 -+ threshold) flips for negative values: below
        detector = DetectMetricPlateau(mode, patience, 0.01, threshold_mode, cooldown)
        ours = [detector.test_if_improving(torch.tensor(v)) for v in metrics]
        assert ours == torch_plateaus(metrics, mode, patience, 0.01, threshold_mode, cooldown)
        assert detector.last_epoch == len(metrics)


def test_relative_threshold_of_negative_values():
    # HeAT's rule in "min" mode (torch would count -1.5 after -1.5 as an improvement): the bar
    # is best - threshold * |best|, and in "max" mode best + threshold * |best|
    detector = DetectMetricPlateau("min", patience=0, threshold=0.01)
    assert [detector.test_if_improving(v) for v in (-1.5, -1.5, -1.52)] == [False, True, False]
    detector = DetectMetricPlateau("max", patience=0, threshold=0.01)
    assert [detector.test_if_improving(v) for v in (-1.5, -1.49, -1.48)] == [False, True, False]


def test_state_round_trip_and_reset():
    detector = DetectMetricPlateau(patience=2, cooldown=1)
    for value in (1.0, 0.9, 0.95, 0.97):
        detector.test_if_improving(value)
    state = detector.get_state()
    assert state["best"] == 0.9 and state["num_bad_epochs"] == 2 and state["mode_worse"] == math.inf
    other = DetectMetricPlateau(mode="max")
    other.set_state(state)
    assert other.get_state() == state
    assert [other.test_if_improving(v) for v in (1.0, 1.0)] == [
        detector.test_if_improving(v) for v in (1.0, 1.0)
    ]
    detector.reset()
    assert detector.best == math.inf and detector.num_bad_epochs == 0 and not detector.in_cooldown
    assert ht.optim.DetectMetricPlateau is DetectMetricPlateau


def test_bad_arguments():
    for kwargs, error, text in [
        ({"mode": "lowest"}, ValueError, "mode"),
        ({"threshold_mode": "relative"}, ValueError, "threshold_mode"),
        ({"patience": -1}, ValueError, "patience"),
        ({"patience": 1.5}, TypeError, "patience"),
        ({"cooldown": True}, TypeError, "cooldown"),
        ({"threshold": -0.1}, ValueError, "threshold"),
        ({"threshold": "small"}, TypeError, "threshold"),
    ]:
        with pytest.raises(error, match=text):
            DetectMetricPlateau(**kwargs)
    detector = DetectMetricPlateau()
    with pytest.raises(TypeError, match="state"):
        detector.set_state([1])
    with pytest.raises(KeyError, match="best"):
        detector.set_state({k: v for k, v in detector.get_state().items() if k != "best"})
