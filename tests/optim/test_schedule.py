"""
Tests of heat/optim/schedule.py: DASO's synchronization schedule, pure Python (no communication;
every rank computes the same and asserts the same).
"""

import math

import pytest

from heat.optim.schedule import DASOSchedule, PlateauDetector


def test_plateau_detector_counts_epochs_without_relative_improvement():
    detector = PlateauDetector(threshold=0.1, patience=2)
    # 10 -> 8.5 improves by 15 %; 8.0 and 7.9 by < 10 % of 8.5: plateau on the second
    assert [detector.update(v) for v in (10.0, 8.5, 8.0, 7.9)] == [False, False, False, True]
    assert detector.best == 8.5 and detector.bad_epochs == 0  # counting starts anew
    assert [detector.update(v) for v in (8.4, 8.3)] == [False, True]
    assert detector.update(1.0) is False and detector.best == 1.0


def test_plateau_detector_negative_and_nan_losses():
    detector = PlateauDetector(threshold=0.5, patience=1)
    assert detector.update(-1.0) is False
    assert detector.update(-1.6) is False  # improvement of 0.6 > 0.5 * |-1|
    assert detector.update(-1.7) is True
    assert detector.update(math.nan) is True  # NaN never improves
    detector.reset()
    assert detector.best is None and detector.bad_epochs == 0


def test_phases_and_initial_skips():
    schedule = DASOSchedule(total_epochs=10, warmup_epochs=2, cooldown_epochs=3)
    phases = [schedule.phase_of(e) for e in range(12)]
    assert phases == ["warmup"] * 2 + ["cycling"] * 5 + ["cooldown"] * 5
    assert (schedule.global_skip, schedule.local_skip, schedule.batches_to_wait) == (0, 0, 0)
    assert schedule.blocking
    assert schedule.end_epoch(5.0) == "blocking"  # still warm-up
    assert schedule.end_epoch(4.0) == "start"
    # defaults: B = max_global_skips = 8, local skip and S = 8 // local_skip_factor 4 = 2
    assert (schedule.global_skip, schedule.local_skip, schedule.batches_to_wait) == (8, 2, 2)
    assert schedule.detector.best == 4.0  # the last warm-up loss is the baseline


def test_no_warmup_starts_cycling():
    schedule = DASOSchedule(
        total_epochs=3, warmup_epochs=0, cooldown_epochs=0, max_global_skips=16, local_skip_factor=2
    )
    assert schedule.phase == "cycling"
    assert (schedule.global_skip, schedule.local_skip, schedule.batches_to_wait) == (16, 8, 8)


def test_plateaus_halve_skips_then_reset():
    schedule = DASOSchedule(
        total_epochs=40, warmup_epochs=0, cooldown_epochs=1, stability_level=0.05
    )
    seen = [(schedule.global_skip, schedule.local_skip, schedule.batches_to_wait)]
    events = []
    for _ in range(10):  # a flat loss: a plateau every 2 epochs
        events.append(schedule.end_epoch(1.0))
        seen.append((schedule.global_skip, schedule.local_skip, schedule.batches_to_wait))
    # first epoch sets the best loss; then plateau after every 2 epochs without improvement
    assert events == [
        "keep",
        "keep",
        "reduce",
        "keep",
        "reduce",
        "keep",
        "reduce",
        "keep",
        "reset",
        "keep",
    ]
    assert seen[3] == (4, 1, 1)
    assert seen[5] == (2, 1, 1)
    assert seen[7] == (1, 1, 1)
    assert seen[9] == (8, 2, 2)  # B = 1 and another plateau: back to the maxima


def test_improving_loss_keeps_skips():
    schedule = DASOSchedule(total_epochs=10, warmup_epochs=0, cooldown_epochs=0)
    for loss in (1.0, 0.8, 0.6, 0.4, 0.2):
        assert schedule.end_epoch(loss) == "keep"
    assert schedule.global_skip == 8


def test_skip_reduction_factor_and_batches_to_wait_never_exceed_global_skip():
    schedule = DASOSchedule(
        total_epochs=20,
        warmup_epochs=0,
        cooldown_epochs=0,
        max_global_skips=9,
        skip_reduction_factor=3,
        local_skip_factor=1,
        stability_level=0.0,
    )
    assert (schedule.global_skip, schedule.local_skip, schedule.batches_to_wait) == (9, 9, 9)
    for _ in range(3):
        schedule.end_epoch(1.0)
    assert (schedule.global_skip, schedule.local_skip, schedule.batches_to_wait) == (3, 3, 3)
    schedule.end_epoch(1.0)
    schedule.end_epoch(1.0)
    assert (schedule.global_skip, schedule.local_skip, schedule.batches_to_wait) == (1, 1, 1)


def test_cooldown_blocks_and_cycle_restarts_only_from_blocking():
    schedule = DASOSchedule(total_epochs=4, warmup_epochs=1, cooldown_epochs=2)
    assert [schedule.end_epoch(1.0) for _ in range(4)] == [
        "start",
        "blocking",
        "blocking",
        "blocking",
    ]
    assert schedule.phase == "cooldown" and schedule.blocking  # past total_epochs: stays blocking


def test_batch_decisions():
    schedule = DASOSchedule(total_epochs=3, warmup_epochs=0, cooldown_epochs=0, max_global_skips=4)
    assert (schedule.global_skip, schedule.batches_to_wait) == (4, 1)
    per_epoch = 10
    sends = [b for b in range(per_epoch) if schedule.sends_at(b, per_epoch)]
    assert sends == [0, 4, 8]
    assert [b for b in range(per_epoch) if schedule.blocking_at(b, per_epoch)] == [9]
    assert schedule.receive_batch(4, per_epoch) == 5
    schedule.batches_to_wait = 3
    assert schedule.receive_batch(8, per_epoch) == 9  # never beyond the epoch's last batch
    assert schedule.receive_batch(8, None) == 11  # epoch length unknown
    assert not any(schedule.blocking_at(b, None) for b in range(20))
    blocking = DASOSchedule(total_epochs=1, warmup_epochs=1, cooldown_epochs=0)
    assert all(blocking.blocking_at(b, 5) and not blocking.sends_at(b, 5) for b in range(5))


def test_state_dict_round_trip():
    schedule = DASOSchedule(total_epochs=30, warmup_epochs=1, cooldown_epochs=1)
    for loss in (3.0, 2.0, 2.0, 2.0, 1.99):
        schedule.end_epoch(loss)
    state = schedule.state_dict()
    other = DASOSchedule(total_epochs=30, warmup_epochs=1, cooldown_epochs=1)
    other.load_state_dict(state)
    assert other.state_dict() == state
    for loss in (1.98, 1.97, 1.0):
        assert other.end_epoch(loss) == schedule.end_epoch(loss)
    assert other.state_dict() == schedule.state_dict()


@pytest.mark.parametrize(
    "kwargs, exception, word",
    [
        (dict(total_epochs=5, warmup_epochs=3, cooldown_epochs=3), ValueError, "total_epochs"),
        (dict(total_epochs=0), ValueError, "total_epochs"),
        (dict(total_epochs=5.0), TypeError, "total_epochs"),
        (dict(total_epochs=5, warmup_epochs=-1, cooldown_epochs=0), ValueError, "warmup_epochs"),
        (dict(total_epochs=5, cooldown_epochs=True), TypeError, "cooldown_epochs"),
        (dict(total_epochs=9, max_global_skips=0), ValueError, "max_global_skips"),
        (dict(total_epochs=9, stability_level="0.1"), TypeError, "stability_level"),
        (dict(total_epochs=9, stability_level=1.5), ValueError, "stability_level"),
        (dict(total_epochs=9, skip_reduction_factor=1), ValueError, "skip_reduction_factor"),
        (dict(total_epochs=9, local_skip_factor=0), ValueError, "local_skip_factor"),
    ],
)
def test_bad_configurations(kwargs, exception, word):
    with pytest.raises(exception, match=word):
        DASOSchedule(**kwargs)
