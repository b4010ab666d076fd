"""
The benchmark harness (benchmarks/run.py, benchmarks/harness/): the arithmetic of its method and
report, checked by hand, and one tiny run end to end.

The end-to-end run starts its own ``mpiexec`` jobs, so it runs only in the 1-process run of the
suite (as tests/examples does); the unit tests run at every process count and need no MPI.
"""

import json
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
sys.path.insert(0, BENCHMARKS)

from harness import report, stats  # noqa: E402
from harness.runner import make_plan  # noqa: E402

from tests.helpers import fresh_job_environment  # noqa: E402

RUN_SECONDS = 110  # inside pytest-timeout's 120 s: a hang fails with the run's output


# ---------------------------------------------------------------------------------------------
# statistics


def test_median():
    assert stats.median([5.0, 1.0, 3.0]) == 3.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert stats.median([7.0]) == 7.0
    assert math.isnan(stats.median([]))
    # not the mean, not the minimum
    assert stats.median([1.0, 1.0, 100.0]) == 1.0


def test_slowest():
    assert stats.slowest([0.1, 0.3, 0.2]) == 0.3
    with pytest.raises(ValueError, match="per_process"):
        stats.slowest([])


def test_parallel_efficiency():
    assert stats.parallel_efficiency({1: 2.0, 2: 1.0, 4: 1.0}) == {1: 1.0, 2: 1.0, 4: 0.5}
    # relative to the smallest process count measured, not to 1
    assert stats.parallel_efficiency({2: 3.0, 4: 2.0}) == {2: 1.0, 4: 0.75}
    # missing or failed measurements are left out
    assert stats.parallel_efficiency({1: None, 2: 1.0, 3: float("nan")}) == {2: 1.0}
    assert stats.parallel_efficiency({}) == {}


def test_ratio_and_formatting():
    assert stats.ratio(1.0, 4.0) == 0.25
    assert stats.ratio(None, 1.0) is None
    assert stats.ratio(1.0, 0.0) is None
    assert stats.ratio(1.0, float("inf")) is None
    assert stats.format_ratio(0.4567) == "0.46"
    assert stats.format_ratio(12.345) == "12.3"
    assert stats.format_ratio(0.0012345) == "0.0012"
    assert stats.format_ratio(None) == "-"
    assert stats.format_ratio(float("nan")) == "-"
    assert stats.format_ratio(2.0, valid=False) == "2.00 (differs)"
    assert stats.format_seconds(2.5) == "2.5 s"
    assert stats.format_seconds(0.0123) == "12.3 ms"
    assert stats.format_seconds(12e-6) == "12 us"
    assert stats.format_seconds(None) == "-"


def test_rate_fraction():
    assert stats.rate_fraction(5.0, 10.0, 1, 2) == 0.5
    # more processes than cores: the limit is the cores'
    assert stats.rate_fraction(10.0, 10.0, 4, 2) == 0.5
    assert stats.rate_fraction(10.0, 10.0, 2, 8) == 0.5
    assert stats.rate_fraction(None, 10.0, 1, 1) is None
    assert stats.rate_fraction(1.0, 0.0, 1, 1) is None


def test_parse_procs_and_rotation():
    assert stats.parse_procs("1,2") == [1, 2]
    assert stats.parse_procs(" 4, 1,4 ") == [4, 1]
    for bad in ("", "0", "1,x", "-2"):
        with pytest.raises(ValueError, match="--procs"):
            stats.parse_procs(bad)
    assert stats.rotated(["a", "b", "c"], 1) == ["b", "c", "a"]
    assert stats.rotated(["a", "b", "c"], 4) == ["b", "c", "a"]
    assert stats.rotated([], 3) == []


def test_plan_alternates_case_by_case():
    plan = make_plan(["heat", "anchor", "dask"], 4, 0)
    assert len(plan) == 12
    assert sorted(map(tuple, plan)) == sorted(
        (w, c) for w in ("heat", "anchor", "dask") for c in range(4)
    )
    firsts = [plan[3 * c][0] for c in range(4)]
    assert firsts == ["heat", "anchor", "dask", "heat"]
    # cases in order: a worker's turns come case after case
    assert [c for _, c in plan] == sorted(c for _, c in plan)


# ---------------------------------------------------------------------------------------------
# report


def _record(case, library, processes, median, check="ok", status="ok", **extra):
    return dict(
        event="result",
        case=case,
        suite="core",
        library=library,
        processes=processes,
        status=status,
        check=check,
        median=median,
        times=[median],
        peak_rss_mb=100.0,
        **extra,
    )


def _result(records, procs):
    machine = dict(
        date="2026-01-01 00:00:00 UTC",
        cpu_model="test cpu",
        cores=2,
        hostname="h",
        command="python benchmarks/run.py",
        versions=dict(python="3"),
        load_average=[0.0, 0, 0],
        load_average_end=[0.0, 0, 0],
    )
    return dict(
        machine=machine,
        limits=dict(copy_gbs=10.0, matmul_gflops=20.0, copy_mb=64, matmul_n=512),
        procs=procs,
        suite="core",
        size="small",
        repeats=5,
        min_time=0.01,
        records=records,
    )


def test_case_rows_ratios_efficiency_and_differs():
    records = [
        _record("sum", "heat", 1, 2.0, bytes=4e9),
        _record("sum", "heat", 2, 1.25, bytes=4e9),
        _record("sum", "numpy", 1, 1.0),
        _record("sum", "anchor", 1, 4.0),
        _record("sum", "anchor", 2, 2.0, check="values differ (max abs diff 1)"),
    ]
    table = report.index_results(records)
    rows = report.case_rows(
        ("core", "sum"),
        table[("core", "sum")],
        [1, 2],
        dict(copy_gbs=10.0),
        2,
        ["heat", "anchor", "numpy"],
    )
    header = [
        "case",
        "P",
        "heat",
        "anchor",
        "numpy",
        "heat/anchor",
        "heat/numpy",
        "eff",
        "rate",
        "rss",
        "check",
    ]
    one, two = (dict(zip(header, row)) for row in rows)
    assert one["heat/anchor"] == "0.50" and one["heat/numpy"] == "2.00"
    # NumPy runs at one process: heat at 2 processes is compared with it
    assert two["heat/numpy"] == "1.25"
    # HeAT 1.8's result differed at 2 processes: the ratio is marked, the check names it
    assert two["heat/anchor"] == "0.62 (differs)"
    assert "(differs)" in two["anchor"] and "values differ" in two["check"]
    assert one["check"] == "ok"
    assert one["eff"] == "1.00" and two["eff"] == "0.80"
    # 4e9 bytes in 2 s: 2 GB/s of the 10 GB/s of one process; at 2 processes 3.2 of 20
    assert one["rate"] == "2 GB/s (20%)" and two["rate"] == "3.2 GB/s (16%)"


def test_write_report(tmp_path):
    records = [
        _record(case, "heat", p, t / p) for case, t in (("sum", 1.0), ("exp", 2.0)) for p in (1, 2)
    ]
    records += [
        _record("sum", "dask", 2, 0.1, status="n/a"),
        dict(event="failure", label="anchor", processes=2, error="job ended (exit 1)"),
    ]
    markdown, plots = report.write(_result(records, [1, 2]), str(tmp_path / "run"))
    text = open(markdown).read()
    assert "| sum | 1 |" in text and "| exp | 2 |" in text
    assert "HeAT 1.8 at 2 process(es): job ended (exit 1)" in text
    assert "n/a" in text
    assert plots == [str(tmp_path / "run-core.png")] and os.path.getsize(plots[0]) > 1000
    # one process count: no scaling plot
    _, plots = report.write(
        _result([_record("sum", "heat", 1, 1.0)], [1]), str(tmp_path / "single")
    )
    assert plots == []


# ---------------------------------------------------------------------------------------------
# end to end


@pytest.mark.slow
def test_run_core_small(tmp_path):
    from mpi4py import MPI

    if MPI.COMM_WORLD.Get_size() != 1:
        pytest.skip("starts its own mpiexec jobs: runs only at MPI size 1")
    if not os.path.exists(os.path.join(os.path.dirname(sys.executable), "mpiexec")):
        pytest.skip("no mpiexec beside the Python interpreter")
    cases = ["overhead a + b", "elementwise exp"]
    command = [
        sys.executable,
        os.path.join(BENCHMARKS, "run.py"),
        "--suite",
        "core",
        "--size",
        "small",
        "--procs",
        "1,2",
        "--repeats",
        "2",
        "--min-time",
        "0.002",
        "--cases",
        ",".join(cases),
        "--out",
        str(tmp_path),
    ]
    done = subprocess.run(
        command,
        cwd=ROOT,
        env=fresh_job_environment(),
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (json_path,) = tmp_path.glob("*-core-small.json")
    (md_path,) = tmp_path.glob("*-core-small.md")
    result = json.loads(json_path.read_text())
    assert result["procs"] == [1, 2] and result["machine"]["cores"] == os.cpu_count()
    assert result["limits"]["copy_gbs"] > 0 and result["limits"]["matmul_gflops"] > 0
    measured = {
        (r["case"], r["library"], r["processes"]): r
        for r in result["records"]
        if r["event"] == "result"
    }
    names = sorted({case for case, _, _ in measured})
    assert names == ["elementwise exp(x)", "overhead a + b (10 values)"], names
    for name in names:
        for key in ((name, "heat", 1), (name, "heat", 2), (name, "numpy", 1), (name, "torch", 1)):
            record = measured[key]
            assert record["status"] == "ok", record
            assert record["check"] == "ok", record
            assert len(record["times"]) == 2 and record["median"] > 0
            assert record["peak_rss_mb"] > 10
        assert len(measured[(name, "heat", 2)]["peak_rss_mb_per_process"]) == 2
    text = md_path.read_text()
    for name in names:
        assert f"| {name} | 1 |" in text and f"| {name} | 2 |" in text
    assert "heat/NumPy" in text and "heat/torch" in text
    assert list(tmp_path.glob("*-core-small-core.png"))


# ---------------------------------------------------------------------------------------------
# the method, in one process without MPI: checks, errors, libraries without the call, turns


def test_measure_case_checks_results_and_reports_failures():
    import numpy as np
    from algorithms import Op
    from harness import libs
    from harness.cases import Case
    from harness.worker import World, measure_case

    def build(L, D):
        if L.label == "torch":
            raise NotImplementedError("torch has no such call")
        x = L.distribute(np.arange(6, dtype=np.float32), 0)
        wrong = 1.0 if L.label == "numpy" else 0.0  # a library whose result differs
        return [x], lambda: x * 2.0 + wrong

    case = Case(
        "double",
        "core",
        Op("double", "time", build, lambda D: np.arange(6) * 2.0, rtol=1e-6),
        traffic=lambda D: 48.0,
    )
    adapters = [libs.make("torch"), libs.make("numpy")]
    records = {
        r["library"]: r
        for r in measure_case(case, adapters, None, 3, 0.0, World(False), 0, number=2)
    }
    assert records["torch"]["status"] == "n/a" and "no such call" in records["torch"]["error"]
    numpy = records["numpy"]
    assert numpy["status"] == "ok" and numpy["check"].startswith("values differ")
    assert numpy["number"] == 2 and len(numpy["times"]) == 3
    assert numpy["median"] == stats.median(numpy["times"]) and numpy["best"] == min(numpy["times"])
    assert numpy["bytes"] == 48.0 and numpy["peak_rss_mb"] > 10

    def failing(L, D):
        x = L.distribute(np.arange(3, dtype=np.float32), 0)
        return [x], lambda: x[10]  # IndexError in the warm-up call

    case = Case("fails", "core", Op("fails", "time", failing, lambda D: np.zeros(1)))
    (record,) = measure_case(case, [libs.make("numpy")], None, 2, 0.0, World(False), 0)
    assert record["status"] == "error" and record["error"].startswith("IndexError")
    assert "median" not in record


def test_turns_follow_the_plan(tmp_path):
    from harness.worker import Turns

    plan, token = tmp_path / "plan.json", tmp_path / "token"
    plan.write_text(json.dumps([["a", 0], ["b", 0], ["b", 1], ["a", 1]]))
    token.write_text("1")
    a, b = Turns("a", str(plan), str(token)), Turns("b", str(plan), str(token))
    b.wait(0)  # position 1: its turn, returns at once
    a.done(1, rank=0)  # not a's turn: the token stays
    assert token.read_text() == "1"
    b.done(0, rank=1)  # only rank 0 passes the turn on
    assert token.read_text() == "1"
    b.done(0, rank=0)
    b.wait(1)
    b.done(1, rank=0)
    assert a.token() == 3
    a.wait(1)
    a.done(1, rank=0)
    assert a.token() == 4
