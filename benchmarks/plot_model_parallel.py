#!/usr/bin/env python3
"""
The README's plot of the model-parallel benchmarks (issue 19), drawn from the JSON files that
``pipeline.py --json`` and ``zero.py --json`` wrote:

* left: every pipeline variant's time per batch against its ideal (``(m + p - 1) / m x T`` for
  GPipe and 1F1B, ``T`` for PipeDream's steady state, ``T`` the stage time measured right before
  the variant), median over the runs, with the issue's 10% line;
* middle: micro-batches of activations alive on each stage (peak), per schedule: GPipe keeps all
  of them, 1F1B at most ``p``;
* right: ZeRO stages against DDP, torch's ZeroRedundancyOptimizer and FSDP2: peak memory per
  process (bars) and time per step (written on the bars), medians over the runs.

Usage::

    python benchmarks/pipeline.py --runs 3 --json pipeline.json
    python benchmarks/zero.py --runs 2 --json zero.json
    python benchmarks/plot_model_parallel.py --pipeline pipeline.json --zero zero.json \\
        --out benchmarks/results/model_parallel.png

Needs matplotlib (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import pipeline  # noqa: E402  (its ideal and variant names)
import zero  # noqa: E402  (its variant names)


def pipeline_ratios(document: dict) -> Dict[str, float]:
    """Median over the runs of each variant's time per batch over its ideal (variants that
    failed are left out), in pipeline.py's variant order."""
    m, p = document["args"]["micro_batches"], document["args"]["procs"]
    ratios: Dict[str, float] = {}
    for variant in pipeline.VARIANTS:
        rows = [r for r in document["results"] if r["variant"] == variant and "error" not in r]
        if rows:
            ratios[variant] = statistics.median(
                r["batch_s"] / pipeline._ideal(variant, r["stage_s"], m, p) for r in rows
            )
    return ratios


def live_micro_batches(document: dict) -> Dict[str, List[int]]:
    """The peak number of micro-batches of activations alive per stage, per variant."""
    live: Dict[str, List[int]] = {}
    for variant in pipeline.VARIANTS:
        rows = [
            r for r in document["results"] if r["variant"] == variant and "live_micro_batches" in r
        ]
        if rows:
            live[variant] = rows[-1]["live_micro_batches"]
    return live


def zero_summary(document: Dict[str, List[dict]]) -> Dict[str, Tuple[float, float]]:
    """Per variant that ran: (median ms per step, median peak MiB per process)."""
    summary: Dict[str, Tuple[float, float]] = {}
    for variant in zero.VARIANTS:
        good = [r for r in document.get(variant, []) if "error" not in r]
        if good:
            summary[variant] = (
                statistics.median(r["step_s"] for r in good) * 1e3,
                statistics.median(r["peak_mb"] for r in good),
            )
    return summary


def plot(pipeline_document: dict, zero_document: Optional[dict], out: Path) -> Path:
    """Draw the figure into ``out`` (PNG); returns ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 3 if zero_document else 2
    figure, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.6))
    ratios = pipeline_ratios(pipeline_document)
    names = list(ratios)
    colours = ["tab:blue" if name.startswith("heat") else "tab:gray" for name in names]
    axis = axes[0]
    axis.barh(range(len(names)), [ratios[n] for n in names], color=colours)
    axis.set_yticks(range(len(names)), [n.replace(" (loss kept", "\n(loss kept") for n in names])
    axis.invert_yaxis()
    axis.axvline(1.0, color="black", linewidth=0.8)
    axis.axvline(1.1, color="tab:red", linestyle="--", linewidth=0.8, label="target: within 10%")
    axis.set_xlim(0.9, max(1.2, max(ratios.values()) + 0.03))
    for k, name in enumerate(names):
        axis.text(ratios[name] + 0.003, k, f"{ratios[name]:.3f}", va="center", fontsize=8)
    axis.set_xlabel("time per batch / ideal (median of runs)")
    arguments = pipeline_document["args"]
    axis.set_title(
        f"pipeline, {arguments['procs']} stages, {arguments['micro_batches']} micro-batches",
        fontsize=10,
    )
    axis.legend(fontsize=8, loc="upper right")

    live = live_micro_batches(pipeline_document)
    axis = axes[1]
    shown = [n for n in ("heat gpipe", "heat 1f1b", "torch GPipe", "torch 1F1B") if n in live]
    stages = max(len(v) for v in live.values()) if live else 0
    width = 0.8 / max(len(shown), 1)
    for k, name in enumerate(shown):
        axis.bar(
            [s + (k - (len(shown) - 1) / 2) * width for s in range(stages)],
            live[name],
            width,
            label=name,
            color=plt.cm.tab10(k),
        )
    axis.set_xticks(range(stages), [f"stage {s}" for s in range(stages)])
    axis.set_ylabel("micro-batches of activations alive (peak)")
    axis.set_title("activation memory per schedule", fontsize=10)
    axis.legend(fontsize=8)

    if zero_document:
        summary = zero_summary(zero_document)
        axis = axes[2]
        variants = list(summary)
        labels = [
            zero.DESCRIPTIONS[v].replace(" ZeroRedundancyOptimizer", " ZeRO") for v in variants
        ]
        colours = ["tab:blue" if v.startswith("heat") else "tab:gray" for v in variants]
        axis.barh(range(len(variants)), [summary[v][1] for v in variants], color=colours)
        axis.set_yticks(range(len(variants)), labels, fontsize=8)
        axis.invert_yaxis()
        for k, variant in enumerate(variants):
            step, peak = summary[variant]
            axis.text(peak + 1, k, f"{peak:.0f} MiB, {step:.0f} ms/step", va="center", fontsize=8)
        axis.set_xlim(0, max(peak for _, peak in summary.values()) * 1.6)
        axis.set_xlabel("peak memory per process (MiB)")
        axis.set_title("sharded data parallel, 2 processes", fontsize=10)
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipeline", required=True, help="the JSON of pipeline.py --json")
    parser.add_argument("--zero", default="", help="the JSON of zero.py --json (optional)")
    parser.add_argument("--out", default=str(HERE / "results" / "model_parallel.png"))
    args = parser.parse_args(argv)
    pipeline_document = json.loads(Path(args.pipeline).read_text())
    zero_document = json.loads(Path(args.zero).read_text()) if args.zero else None
    print(plot(pipeline_document, zero_document, Path(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
