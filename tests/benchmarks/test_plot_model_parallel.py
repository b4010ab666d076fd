"""
benchmarks/plot_model_parallel.py: the ratios, live micro-batches and ZeRO medians it plots, by
hand from small made-up results, and a PNG drawn from them. No communication: any process count.
"""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import plot_model_parallel as plots  # noqa: E402

PIPELINE = {
    "args": {"procs": 2, "micro_batches": 4},
    "results": [
        {"variant": "compute only", "run": 0, "batch_s": 0.1},
        # ideal 5 / 4 x 100 ms = 125 ms in run 0, 5 / 4 x 200 ms in run 1 (a busier machine)
        {"variant": "heat gpipe", "run": 0, "batch_s": 0.130, "stage_s": 0.100,
         "live_micro_batches": [4, 4]},
        {"variant": "heat gpipe", "run": 1, "batch_s": 0.300, "stage_s": 0.200,
         "live_micro_batches": [4, 4]},
        {"variant": "heat 1f1b", "run": 0, "batch_s": 0.125, "stage_s": 0.100,
         "live_micro_batches": [2, 1]},
        {"variant": "heat pipedream", "run": 0, "batch_s": 0.110, "stage_s": 0.100},  # ideal T
        {"variant": "torch 1F1B", "run": 0, "error": "RuntimeError: no"},
    ],
}  # fmt: skip
ZERO = {
    "ddp-adam": [{"step_s": 0.1, "peak_mb": 140.0}, {"step_s": 0.3, "peak_mb": 142.0}],
    "heat-zero3": [{"step_s": 0.2, "peak_mb": 80.0}],
    "torch-fsdp2": [{"error": "timed out"}],
}


def test_the_plotted_figures_by_hand():
    ratios = plots.pipeline_ratios(PIPELINE)
    assert list(ratios) == ["heat gpipe", "heat 1f1b", "heat pipedream"]  # failed ones left out
    assert ratios["heat gpipe"] == pytest.approx((1.04 + 1.2) / 2)  # each run against its T
    assert ratios["heat 1f1b"] == pytest.approx(1.0)
    assert ratios["heat pipedream"] == pytest.approx(1.1)
    assert plots.live_micro_batches(PIPELINE) == {"heat gpipe": [4, 4], "heat 1f1b": [2, 1]}
    summary = plots.zero_summary(ZERO)
    assert list(summary) == ["ddp-adam", "heat-zero3"]
    assert summary["ddp-adam"] == pytest.approx((200.0, 141.0))
    assert summary["heat-zero3"] == pytest.approx((200.0, 80.0))


def test_draws_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    for zero_document in (ZERO, None):
        out = plots.plot(PIPELINE, zero_document, tmp_path / "sub" / "plot.png")
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
