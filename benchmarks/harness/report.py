"""The Markdown report and the PNG scaling plots of a harness run (see :mod:`harness.runner`)."""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple

from harness import stats

#: column order and titles of the libraries
LIBRARIES = OrderedDict(heat="heat", anchor="HeAT 1.8", numpy="NumPy", torch="torch", dask="Dask")
#: baselines measured at one process only: heat at every P is compared with their 1-process time
SERIAL = ("numpy", "torch")


def index_results(
    records: List[dict],
) -> "OrderedDict[Tuple[str, str], Dict[Tuple[str, int], dict]]":
    """(suite, case) -> {(library, processes): record}, cases in the order they ran."""
    table: "OrderedDict[Tuple[str, str], Dict[Tuple[str, int], dict]]" = OrderedDict()
    for record in records:
        if record.get("event") != "result":
            continue
        key = (record["suite"], record["case"])
        table.setdefault(key, {})[(record["library"], record["processes"])] = record
    return table


def _ok(record: Optional[dict]) -> bool:
    return record is not None and record.get("status") == "ok"


def _valid(*records: Optional[dict]) -> bool:
    """False if any of the records' results differed from NumPy's: it sets no time target."""
    return all(r is None or r.get("check", "ok") == "ok" for r in records)


def time_cell(record: Optional[dict]) -> str:
    if record is None:
        return "-"
    status = record.get("status")
    if status == "n/a":
        return "n/a"
    if status != "ok":
        return "error"
    text = stats.format_seconds(record.get("median"))
    return text if record.get("check", "ok") == "ok" else text + " (differs)"


def rate_cell(record: Optional[dict], limits: dict, cores: int) -> str:
    """GB/s or GFLOP/s of a record and its share of the machine's measured limit."""
    if not _ok(record) or not record.get("median"):
        return "-"
    processes = record.get("processes", 1)
    if record.get("flops"):
        rate = record["flops"] / record["median"] / 1e9
        share = stats.rate_fraction(rate, limits.get("matmul_gflops"), processes, cores)
        unit = "GFLOP/s"
    elif record.get("bytes"):
        rate = record["bytes"] / record["median"] / 1e9
        share = stats.rate_fraction(rate, limits.get("copy_gbs"), processes, cores)
        unit = "GB/s"
    else:
        return "-"
    return f"{rate:.3g} {unit}" + (f" ({100 * share:.0f}%)" if share is not None else "")


def case_rows(
    key,
    results: Dict[Tuple[str, int], dict],
    procs: List[int],
    limits: dict,
    cores: int,
    present: List[str],
) -> List[List[str]]:
    heat_times = {p: r["median"] for (lib, p), r in results.items() if lib == "heat" and _ok(r)}
    efficiency = stats.parallel_efficiency(heat_times)
    rows = []
    for p in procs:
        heat = results.get(("heat", p))
        row = [key[1], str(p)]
        others = {}
        for lib in present:
            record = results.get((lib, 1 if lib in SERIAL else p))
            others[lib] = record
            row.append(time_cell(record))
        for lib in present:
            if lib == "heat":
                continue
            other = others[lib]
            value = stats.ratio(
                heat.get("median") if _ok(heat) else None,
                other.get("median") if _ok(other) else None,
            )
            row.append(stats.format_ratio(value, _valid(heat, other)))
        row.append(f"{efficiency[p]:.2f}" if p in efficiency and len(efficiency) > 1 else "-")
        row.append(rate_cell(heat, limits, cores))
        row.append(f"{heat['peak_rss_mb']:.0f}" if _ok(heat) and heat.get("peak_rss_mb") else "-")
        checks = [
            f"{LIBRARIES[lib]}: {r.get('check')}"
            for lib, r in others.items()
            if _ok(r) and r.get("check", "ok") != "ok"
        ]
        errors = [
            f"{LIBRARIES[lib]}: {r.get('error')}"
            for lib, r in others.items()
            if r is not None and r.get("status") == "error"
        ]
        row.append("; ".join(checks + errors).replace("|", "/") or "ok")
        rows.append(row)
    return rows


def markdown_table(header: List[str], rows: List[List[str]]) -> List[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def external_lines(record: dict) -> List[str]:
    """A short table of what an external script wrote (its scalar fields), or its error."""
    title = f"### {record['case']}" + (
        f", {record['processes']} process(es)" if record.get("processes") else ""
    )
    lines = [title, "", f"`{record.get('command', '')}`" if record.get("command") else "", ""]
    if record.get("status") != "ok":
        lines.append(f"{record.get('status')}: {record.get('error')}")
        return lines + [""]
    output = record.get("output")
    rows = output if isinstance(output, list) else (output or {}).get("results")
    if isinstance(output, dict) and "histories" in output:
        rows = [
            dict(
                method=name,
                final_accuracy=round(h["accuracy"][-1], 4),
                train_s=round(h["epoch_time"][-1], 2),
                epochs=len(h["accuracy"]),
            )
            for name, h in output["histories"].items()
        ]
    if not rows:
        lines.append(f"ok ({record.get('wall_s')} s); no table")
        return lines + [""]
    header = [k for k, v in rows[0].items() if not isinstance(v, (list, dict))]
    body = [[_short(row.get(k)) for k in header] for row in rows]
    return lines + markdown_table(header, body) + [""]


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def plot_scaling(suite: str, table, procs: List[int], path: str) -> Optional[str]:
    """Speed-up over the smallest process count, per case, heat solid, HeAT 1.8 and Dask dashed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axis = plt.subplots(figsize=(8, 5))
    styles = dict(heat="-", anchor="--", dask=":")
    drawn = 0
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for number, ((case_suite, case), results) in enumerate(table.items()):
        if case_suite != suite:
            continue
        colour = colours[number % len(colours)]
        for lib, style in styles.items():
            times = {p: results[(lib, p)]["median"] for p in procs if _ok(results.get((lib, p)))}
            if len(times) < 2:
                continue
            base = min(times)
            xs = sorted(times)
            axis.plot(
                xs,
                [times[base] / times[p] for p in xs],
                style,
                color=colour,
                marker="o",
                label=f"{case} ({LIBRARIES[lib]})" if lib != "heat" else case,
            )
            drawn += 1
    if not drawn:
        plt.close(figure)
        return None
    axis.plot(
        sorted(procs), [p / min(procs) for p in sorted(procs)], "k-", linewidth=0.8, label="ideal"
    )
    axis.set_xlabel("processes")
    axis.set_ylabel(f"speed-up over {min(procs)} process(es)")
    axis.set_xticks(sorted(procs))
    axis.set_title(
        f"{suite}: strong scaling (solid heat, dashed HeAT 1.8, dotted Dask)", fontsize=10
    )
    axis.legend(fontsize=6, ncol=2, loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def write(result: dict, base: str) -> Tuple[str, List[str]]:
    """Writes ``base.md`` (and ``base-<suite>.png`` plots); returns their paths."""
    info, limits, procs = result["machine"], result.get("limits") or {}, result["procs"]
    cores = info.get("cores") or 1
    table = index_results(result["records"])
    present = [
        lib
        for lib in LIBRARIES
        if any(lib == key[0] for results in table.values() for key in results)
    ]
    if "heat" not in present:
        present.insert(0, "heat")
    lines = [
        f"# heat benchmarks: suite {result['suite']}, size {result['size']}",
        "",
        f"- date: {info['date']}; machine: {info['cpu_model']}, {cores} cores ({info['hostname']}); "
        f"load average {info['load_average'][0]:.1f} at start, {info.get('load_average_end', [math.nan])[0]:.1f} at end",
        f"- command: `{info['command']}`",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()),
    ]
    metas = [r for r in result["records"] if r.get("event") == "meta"]
    for meta in metas:
        for lib, v in meta.get("libraries", {}).items():
            lines.append(
                f"- {LIBRARIES.get(lib, lib)} at {meta['processes']} process(es): {v['version']} "
                f"({v['location']}), {meta.get('threads')} thread(s) per process"
            )
    if limits:
        lines.append(
            f"- machine limits, one process, one thread: copy {limits['copy_gbs']:.1f} GB/s "
            f"(read + write, {limits['copy_mb']:.0f} MB), torch matmul {limits['matmul_gflops']:.1f} GFLOP/s "
            f"(n = {limits['matmul_n']}); P processes: min(P, {cores}) times these"
        )
    lines += [
        f"- method: one warm-up call, median of {result['repeats']} repetitions of >= {result['min_time']} s, "
        "a barrier around each, the slowest process's time; libraries alternated repetition by repetition "
        "in a process and case by case between processes; every result checked against NumPy",
        "",
        "Columns: median time per call; `heat/X` is heat's time over X's (below 1: heat is faster). NumPy "
        "(scikit-learn for the estimators) and torch run in one process: heat at P processes is compared "
        "with their one-process time. HeAT 1.8 and Dask run at the same P as heat. `eff.`: heat's "
        "parallel efficiency relative to the smallest process count. `rate`: heat's GB/s (memory-bound "
        "cases) or GFLOP/s, in brackets the share of the machine's limit for P processes. `RSS`: heat's "
        "peak resident memory, MB, largest process. A result that differs from NumPy is marked "
        "`(differs)` and sets no time target.",
    ]
    if result["size"] == "small":
        lines.append(
            "With `--size small` the data of most cases fits in the caches: a share above 100% of the "
            "copy limit (measured on a copy larger than the caches) is cache bandwidth, not a mistake."
        )
    lines.append("")
    for failure in (r for r in result["records"] if r.get("event") == "failure"):
        lines.append(
            f"- {LIBRARIES.get(failure['label'], failure['label'])} at {failure['processes']} "
            f"process(es): {failure['error']}"
        )
    header = (
        ["case", "P"]
        + [LIBRARIES[lib] for lib in present]
        + [f"heat/{LIBRARIES[lib]}" for lib in present if lib != "heat"]
    )
    header += ["eff.", "rate", "RSS (MB)", "check"]
    plots = []
    suites = []
    for suite, _ in table:
        if suite not in suites:
            suites.append(suite)
    for suite in suites:
        lines += ["", f"## {suite}", ""]
        rows = []
        for key, results in table.items():
            if key[0] == suite:
                rows += case_rows(key, results, procs, limits, cores, present)
        lines += markdown_table(header, rows)
        if len(procs) >= 2:
            path = plot_scaling(suite, table, procs, f"{base}-{suite}.png")
            if path:
                plots.append(path)
                lines += ["", f"![{suite} scaling]({os.path.basename(path)})"]
    externals = [r for r in result["records"] if r.get("event") == "external"]
    if externals:
        lines += ["", "## external scripts (their own method; see each script's docstring)", ""]
        for record in externals:
            lines += external_lines(record)
    path = base + ".md"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, plots
