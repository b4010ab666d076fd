"""
Unit tests of heat/optim/timeline.py: records, totals over everything recorded (also beyond the
kept window), phases, the dictionaries of a report. Pure Python; the same under any process count.
"""

from heat.optim.timeline import BatchRecord, Timeline


def record(batch, action="local", exposed=0.01, phases=None, cross=0):
    return BatchRecord(0, batch, action, 0.1, exposed, 0.02, 100, cross, dict(phases or {}))


def test_totals_count_every_record_while_the_window_keeps_the_latest():
    timeline = Timeline(capacity=3)
    for batch in range(5):
        timeline.append(record(batch, cross=10 * batch))
    assert len(timeline) == 3 and [r.batch for r in timeline] == [2, 3, 4]
    summary = timeline.summary()
    assert summary["batches"] == 5
    assert summary["bytes_cross_node"] == 10 * (0 + 1 + 2 + 3 + 4)
    assert abs(summary["compute_seconds"] - 0.5) < 1e-12
    assert summary["bytes_local"] == 500


def test_phases_add_up_by_name():
    timeline = Timeline()
    timeline.append(record(0, "send", 0.03, {"node average": 0.01, "send": 0.02}))
    timeline.append(record(1, "receive", 0.05, {"node average": 0.02, "receive": 0.03}))
    timeline.append(record(2, "local", 0.02, {"node average": 0.02}))
    phases = timeline.summary()["phases"]
    assert set(phases) == {"node average", "send", "receive"}
    assert abs(phases["node average"] - 0.05) < 1e-12 and abs(phases["receive"] - 0.03) < 1e-12
    # phases never claim more than the exposed time of their batch
    assert all(sum(r.phases.values()) <= r.exposed_seconds + 1e-12 for r in timeline)


def test_records_as_dictionaries_and_defaults():
    plain = BatchRecord(1, 2, "blocking", 0.1, 0.2, 0.3, 4, 5)
    assert plain.phases == {}  # phases are optional
    timeline = Timeline()
    timeline.append(plain)
    (row,) = timeline.as_dicts()
    assert row == {
        "epoch": 1, "batch": 2, "action": "blocking", "compute_seconds": 0.1,
        "exposed_seconds": 0.2, "step_seconds": 0.3, "bytes_local": 4, "bytes_cross_node": 5,
        "phases": {},
    }  # fmt: skip
    assert Timeline().summary() == {"batches": 0, "phases": {}}
