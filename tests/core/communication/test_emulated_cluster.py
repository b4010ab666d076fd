"""
torch.distributed process groups across nodes, on a cluster of 2 nodes x 2 processes emulated with
network namespaces (benchmarks/emulated_cluster.py). Like many compute nodes, the emulated nodes
have no default route and hostnames that do not resolve; nothing here sets ``MASTER_ADDR`` or
``GLOO_SOCKET_IFNAME``.

The test starts its own 4-process MPI job, so it runs only in a 1-process test run, and only as
root where network namespaces can be created (CI runs as root); elsewhere it skips and says why.
"""

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from mpi4py import MPI

REPO_ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location(
    "emulated_cluster", REPO_ROOT / "benchmarks" / "emulated_cluster.py"
)
emulated_cluster = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = emulated_cluster  # dataclasses look their module up there
_spec.loader.exec_module(emulated_cluster)

NODES, PROCS_PER_NODE = 2, 2
JOB_TIMEOUT_S = 100  # a job that hangs is killed well before pytest-timeout's 120 s

# Each rank reports its topology, the groups' all-reduce results and how long the groups took, in
# a file of its own (lines printed by several ranks interleave); errors are reported, not raised,
# so that every rank's outcome reaches the test.
APP = r"""
import json, os, socket, sys, time

import torch
import torch.distributed as dist
from mpi4py import MPI

from heat.core import communication as hc
from heat.core.communication import torch_groups

world = MPI.COMM_WORLD
report = {"rank": world.rank, "host": socket.gethostname(), "processor": MPI.Get_processor_name()}
topology = hc.MPI_WORLD.node_topology()
report.update(
    num_nodes=topology.num_nodes,
    node_index=topology.node_index,
    local_rank=topology.local_rank,
    local_size=topology.local_size,
    cross_node_size=topology.cross_node_comm.size,
)
world.Barrier()
start = time.monotonic()
try:
    groups = hc.node_process_groups()
    report["groups_s"] = time.monotonic() - start
    value = float(world.rank + 1)
    node_sum, cross_sum, world_sum = (torch.tensor([value]) for _ in range(3))
    dist.all_reduce(node_sum, group=groups.node_group)
    dist.all_reduce(cross_sum, group=groups.cross_node_group)
    dist.all_reduce(world_sum)
    report.update(
        node_sum=node_sum.item(),
        cross_sum=cross_sum.item(),
        world_sum=world_sum.item(),
        address=torch_groups._RENDEZVOUS.address,
        gloo_interface=os.environ.get("GLOO_SOCKET_IFNAME"),
    )
except Exception as error:
    report["error"] = f"{type(error).__name__}: {error}"
report["seconds"] = time.monotonic() - start
with open(os.path.join(sys.argv[1], f"report{world.rank}.json"), "w") as output:
    json.dump(report, output)
"""


def _skip_reason():
    if MPI.COMM_WORLD.Get_size() > 1:
        return "starts its own 4-process MPI job: runs only in a 1-process test run"
    reason = emulated_cluster.unsupported_reason()
    return None if reason is None else f"cannot emulate nodes here: {reason}"


SKIP_REASON = _skip_reason()
pytestmark = pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))


@pytest.fixture(scope="module")
def cluster():
    with emulated_cluster.EmulatedCluster(nodes=NODES) as created:
        yield created


def _run_app(cluster, tmp_path, **extra_env):
    app = tmp_path / "app.py"
    app.write_text(APP)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("MASTER_ADDR", "MASTER_PORT", "GLOO_SOCKET_IFNAME", "HEAT_RANKS_PER_NODE")
        and not key.startswith("HEAT_TEST")
    }
    env.update(PYTHONPATH=str(REPO_ROOT), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", **extra_env)
    result = cluster.run(
        [sys.executable, str(app), str(tmp_path)],
        procs_per_node=PROCS_PER_NODE,
        env=env,
        timeout=JOB_TIMEOUT_S,
    )
    reports = [json.loads(path.read_text()) for path in sorted(tmp_path.glob("report*.json"))]
    details = f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    assert not result.timed_out, f"the job hung for {JOB_TIMEOUT_S} s\n{details}"
    assert len(reports) == NODES * PROCS_PER_NODE, f"not every rank reported\n{details}"
    return sorted(reports, key=lambda report: report["rank"]), result, details


def test_node_process_groups_across_nodes(cluster, tmp_path):
    reports, result, details = _run_app(cluster, tmp_path)
    assert result.returncode == 0, details
    errors = {report["rank"]: report.get("error") for report in reports if "error" in report}
    assert not errors, f"{errors}\n{details}"

    # topology: one shared-memory node per namespace, with its own hostname
    hosts = {report["host"] for report in reports}
    assert hosts == set(cluster.hostnames)
    for report in reports:
        assert report["processor"] == report["host"]
        assert report["num_nodes"] == NODES
        assert report["local_size"] == PROCS_PER_NODE
        assert report["cross_node_size"] == NODES
    assert sorted((r["node_index"], r["local_rank"]) for r in reports) == [
        (node, local) for node in range(NODES) for local in range(PROCS_PER_NODE)
    ]

    # all-reduces of (rank + 1) inside a node, across nodes and over the world
    for report in reports:
        same_node = [r["rank"] + 1 for r in reports if r["host"] == report["host"]]
        same_local_rank = [
            r["rank"] + 1 for r in reports if r["local_rank"] == report["local_rank"]
        ]
        assert report["node_sum"] == sum(same_node)
        assert report["cross_sum"] == sum(same_local_rank)
        assert report["world_sum"] == sum(r["rank"] + 1 for r in reports)

    # everybody met at rank 0's interface address; gloo was bound to the nodes' interface
    rank0_node = cluster.hostnames.index(reports[0]["host"])
    assert {report["address"] for report in reports} == {cluster.node_addresses[rank0_node]}
    assert {report["gloo_interface"] for report in reports} == {emulated_cluster.NODE_INTERFACE}
    print(
        f"2 nodes x 2 processes: job {result.wall_s:.1f} s, node_process_groups "
        f"{max(report['groups_s'] for report in reports):.2f} s"
    )


def test_unreachable_master_addr_fails_everywhere_within_a_minute(cluster, tmp_path):
    # an address in the nodes' subnet that no node holds: connects time out, nobody answers
    dead_address = emulated_cluster.SUBNET_PREFIX + "200"
    reports, result, details = _run_app(cluster, tmp_path, MASTER_ADDR=dead_address)
    for report in reports:
        error = report.get("error", "")
        assert error.startswith("RuntimeError"), f"rank {report['rank']}: {error!r}\n{details}"
        assert f"MASTER_ADDR={dead_address}" in error, error
        assert report["seconds"] < 60, f"rank {report['rank']} took {report['seconds']:.1f} s"
    assert len({report["error"] for report in reports}) == 1, "ranks disagree on the error"
    print(
        f"unreachable MASTER_ADDR: every rank failed after "
        f"{max(report['seconds'] for report in reports):.1f} s (job {result.wall_s:.1f} s)"
    )
