"""
Unit tests of the alpha-beta model in benchmarks/scaling_model.py: hand-computed small cases,
the one-process limit (no communication), latency- and bandwidth-dominated limits, and DASO's
epoch schedule. Pure Python: no emulated cluster, no collectives (every rank computes the same).
"""

import itertools
import math
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import scaling_model as sm

LINK = sm.Link(alpha=1.0, beta=0.5)


def machine(nodes=2, per_node=2, shared_memory=False, **gammas):
    """Node phases through the local link unless ``shared_memory`` (then barriers of 0.1 s,
    ``local.alpha``, unless given)."""
    return sm.Machine(
        nodes=nodes,
        per_node=per_node,
        cross=sm.Link(alpha=1.0, beta=0.5),
        local=sm.Link(alpha=0.1, beta=0.01),
        shared_memory=shared_memory,
        **gammas,
    )


# -- links and machines ------------------------------------------------------------------------


def test_link_and_machine_validation():
    assert LINK.time(10, messages=2) == 2 * 1.0 + 10 * 0.5
    with pytest.raises(ValueError, match="alpha and beta"):
        sm.Link(alpha=-1.0, beta=0.0)
    with pytest.raises(ValueError, match="nodes"):
        machine(nodes=0)
    with pytest.raises(ValueError, match="per_node"):
        machine(per_node=True)
    assert machine(3, 4).processes == 12


# -- ring algorithms ---------------------------------------------------------------------------


def test_ring_allreduce_hand_computed():
    # 2 (p-1) alpha + 2 (p-1)/p n beta = 6 + 1.5 * 100 * 0.5
    assert sm.ring_allreduce(100.0, 4, LINK) == pytest.approx(81.0)
    # + (p-1)/p n gamma_add = 0.75 * 100 * 0.1
    assert sm.ring_allreduce(100.0, 4, LINK, gamma_add=0.1) == pytest.approx(88.5)
    assert sm.ring_allreduce(100.0, 2, LINK) == pytest.approx(2.0 + 50.0)


def test_ring_allgather_hand_computed():
    # (p-1) alpha + (p-1)/p n beta
    assert sm.ring_allgather(100.0, 4, LINK) == pytest.approx(3.0 + 37.5)
    assert sm.ring_allgather(100.0, 1, LINK) == 0.0


def test_one_process_has_no_communication():
    single = machine(1, 1, gamma_copy=1.0, gamma_add=1.0, gamma_cast=1.0, gamma_alloc=1.0)
    assert sm.ring_allreduce(1e9, 1, LINK) == 0.0
    assert sm.flat_allreduce(1e9, single) == 0.0
    assert sm.hierarchical_allreduce(1e9, single) == 0.0
    assert sm.daso_exchange(1e9, single) == sm.DasoCosts(0.0, 0.0, 0.0)
    compute = 0.25
    assert sm.flat_blocking_batch(1e9, single, compute) == compute
    assert sm.ddp_batch(1e9, single, compute) == compute
    assert sm.hierarchical_blocking_batch(1e9, single, compute) == compute
    assert sm.daso_batch(1e9, single, compute) == compute
    assert sm.daso_batch(1e9, single, compute, batches_per_epoch=10) == pytest.approx(compute)


def test_one_node_never_uses_the_cross_link():
    slow_cross = replace(machine(1, 4), cross=sm.Link(alpha=1e6, beta=1e6))
    fast = machine(1, 4)
    assert sm.flat_allreduce(1000.0, slow_cross) == sm.flat_allreduce(1000.0, fast)
    assert sm.cross_node_slices(1000.0, slow_cross) == 0.0
    assert sm.daso_exchange(1000.0, slow_cross).wire == 0.0


def test_flat_allreduce_waits_for_the_cross_link():
    m = machine(2, 2)
    assert sm.flat_allreduce(100.0, m) == pytest.approx(sm.ring_allreduce(100.0, 4, m.cross))
    assert sm.flat_allreduce(100.0, machine(1, 2)) == pytest.approx(
        sm.ring_allreduce(100.0, 2, m.local)
    )


def test_latency_dominated_limit():
    m = machine(8, 4)
    # n = 0: only the messages count
    assert sm.flat_allreduce(0.0, m) == pytest.approx(2 * 31 * 1.0)
    # local all-reduce 2 (G-1) alpha_l, cross 2 (P-1) alpha_c, local all-gather (G-1) alpha_l
    assert sm.hierarchical_allreduce(0.0, m) == pytest.approx(2 * 3 * 0.1 + 2 * 7 * 1.0 + 3 * 0.1)
    # K buckets pay the latency K times
    nbytes = 4 * sm.BUCKET_BYTES
    zero_beta = replace(m, cross=sm.Link(1.0, 0.0), local=sm.Link(0.1, 0.0))
    assert sm.flat_blocking_batch(nbytes, zero_beta, 0.0) == pytest.approx(4 * 62.0)


def test_bandwidth_dominated_limit():
    m = replace(machine(16, 4), cross=sm.Link(1e-6, 1e-9), local=sm.Link(1e-6, 0.0))
    n = 1e13
    p = m.processes
    assert sm.flat_allreduce(n, m) / (2 * (p - 1) / p * n * 1e-9) == pytest.approx(1.0, rel=1e-6)
    # the hierarchical all-reduce crosses each node's link with 2 (P-1)/P n, the ring with
    # 2 (PG-1)/(PG) n: slightly less
    ratio = sm.hierarchical_allreduce(n, m) / sm.flat_allreduce(n, m)
    assert ratio == pytest.approx((15 / 16) / (63 / 64), rel=1e-6)
    # DASO's bfloat16 exchange moves half of a float32 all-reduce's bytes
    daso = sm.daso_exchange(n, m, wire_bytes=2)
    assert daso.wire / sm.cross_node_slices(n, m, "allreduce") == pytest.approx(0.5, rel=1e-6)


def test_cross_node_slices_hand_computed():
    m = machine(2, 2)  # slice s = 50 of n = 100
    # all-reduce: 2 (P-1) alpha + G * 2 (P-1)/P * s * beta = 2 + 2 * 50 * 0.5
    assert sm.cross_node_slices(100.0, m, "allreduce") == pytest.approx(52.0)
    # all-gather: (P-1) alpha + G * (P-1) * s * beta = 1 + 2 * 50 * 0.5
    assert sm.cross_node_slices(100.0, m, "allgather") == pytest.approx(51.0)
    assert sm.cross_node_slices(100.0, m, "allgather", wire_fraction=0.5) == pytest.approx(26.0)
    # three nodes, reduce-scatter + all-gather: 2 * 2 * 1 + 2 * (4/3) * 50 * 0.5
    assert sm.cross_node_slices(100.0, machine(3, 2), "reduce_scatter") == pytest.approx(
        4.0 + 200.0 / 3
    )
    with pytest.raises(ValueError, match="algorithm"):
        sm.cross_node_slices(100.0, m, "tree")
    with pytest.raises(ValueError, match="local"):
        sm.hierarchical_allreduce(100.0, m, local="tree")


def test_hierarchical_hand_computed():
    m = machine(2, 2)
    # local all-reduce 2 * 0.1 + 100 * 0.01, cross 52, all-gather 0.1 + 50 * 0.01
    assert sm.hierarchical_allreduce(100.0, m) == pytest.approx(1.2 + 52.0 + 0.6)
    # NCCL-style local reduce-scatter: (G-1) alpha + (G-1)/G n beta
    assert sm.hierarchical_allreduce(100.0, m, local="reduce_scatter") == pytest.approx(
        0.6 + 52.0 + 0.6
    )
    # copies: the slice's clone and result (2 s), the padded copy (s), the vector copied out (n)
    copies = sm.hierarchical_allreduce(100.0, machine(2, 2, gamma_copy=1.0)) - 53.8
    assert copies == pytest.approx(2 * 50 + 50 + 100)


def test_pipelined_hand_computed():
    assert sm.pipelined(4, before=1.0, wire=10.0, after=2.0) == pytest.approx(1 + 40 + 2)
    assert sm.pipelined(1, before=1.0, wire=10.0, after=2.0) == pytest.approx(13.0)
    # nothing on the wire: the CPU does all the work, one collective after the other
    assert sm.pipelined(4, before=1.0, wire=0.0, after=2.0) == pytest.approx(12.0)
    # CPU-bound finishing: 3 starts (1 each, until t = 3; arrivals at 2, 3, 4), then 3 finishes
    # of 5 one after the other
    assert sm.pipelined(3, before=1.0, wire=1.0, after=5.0) == pytest.approx(3 + 15)


def test_hierarchical_buckets_pipeline_the_cross_node_part():
    m = machine(2, 2)
    b = 100.0
    local = sm.ring_allreduce(b, 2, m.local)
    cross = sm.cross_node_slices(b, m, "allreduce")
    gather = sm.ring_allgather(b, 2, m.local)
    assert sm.hierarchical_allreduce(4 * b, m, count=4) == pytest.approx(
        4 * local + sm.pipelined(4, 0.0, cross, gather)
    )
    assert sm.hierarchical_allreduce(4 * b, m, count=4) < 4 * sm.hierarchical_allreduce(b, m)
    with pytest.raises(ValueError, match="count"):
        sm.hierarchical_allreduce(b, m, count=0)


# -- node phases through shared memory ---------------------------------------------------------


def test_shared_memory_machine_fields():
    m = sm.Machine(2, 4, sm.Link(1.0, 0.5), sm.Link(0.1, 0.01), gamma_add=0.3)
    assert m.shared_memory and m.node_shares_memory  # heat's path on CPU is the default
    assert m.node_barrier == 0.1  # no barrier measured: the local link's latency
    assert m.gamma_slice_sum == 0.3  # no slice sum measured: an addition
    tuned = replace(m, barrier=0.25, gamma_sum=0.7)
    assert (tuned.node_barrier, tuned.gamma_slice_sum) == (0.25, 0.7)
    assert not replace(m, per_node=1).node_shares_memory
    assert not sm.PROJECTION_MACHINE.shared_memory  # GPU nodes: NCCL over NVLink
    with pytest.raises(TypeError, match="shared_memory"):
        replace(m, shared_memory=1)
    with pytest.raises(ValueError, match="barrier"):
        replace(m, barrier=-1.0)
    with pytest.raises(ValueError, match="gamma_sum"):
        replace(m, gamma_sum=float("nan"))


def test_shared_node_sum_hand_computed():
    m = machine(1, 4, shared_memory=True, barrier=0.2, gamma_sum=0.5)
    # two barriers, then each process adds its quarter of the 4 slots: 3 additions of n/4
    assert sm.shared_node_sum(100.0, m) == pytest.approx(2 * 0.2 + 3 * 25 * 0.5)
    # defaults: barrier = alpha_l, slice sum = gamma_add
    assert sm.shared_node_sum(100.0, machine(1, 2, True, gamma_add=1.0)) == pytest.approx(
        0.2 + 50.0
    )
    assert sm.shared_node_sum(0.0, m) == pytest.approx(0.4)  # latency only
    assert sm.shared_node_sum(100.0, machine(1, 1, True, gamma_add=1.0)) == 0.0


def test_shared_node_gather_hand_computed():
    m = machine(2, 2, shared_memory=True, barrier=0.2, gamma_copy=1.0)
    # barrier, own slice written (n/G), barrier, the whole vector copied out (n)
    assert sm.shared_node_gather(100.0, m) == pytest.approx(0.4 + 50 + 100)
    assert sm.shared_node_gather(100.0, replace(m, per_node=1)) == 0.0


def test_node_average_batch_hand_computed():
    n = 4 * sm.BUCKET_BYTES
    shared = machine(1, 2, True, barrier=0.5, gamma_sum=1e-9, gamma_copy=2e-9, gamma_add=7.0)
    sum_all = 2 * 0.5 + 0.5 * n * 1e-9
    # after the backward pass: one node sum of all buckets; copy in and out (no division)
    assert sm.node_average_batch(n, shared, 3.0, overlap=False) == pytest.approx(
        3.0 + sum_all + 2 * n * 2e-9
    )
    # overlapped, a long backward pass: only the last bucket (its sum, its average written
    # back into the bucket by the thread) sticks out
    last = 2 * 0.5 + 0.5 * sm.BUCKET_BYTES * 1e-9 + sm.BUCKET_BYTES * 2e-9
    assert sm.node_average_batch(n, shared, 1e9) == pytest.approx(1e9 + last + 2 * n * 2e-9)
    # through the local link: an all-reduce per bucket, bookkeeping with the division
    gloo = replace(shared, shared_memory=False)
    ring = sm.ring_allreduce(sm.BUCKET_BYTES, 2, gloo.local, 7.0)
    assert sm.node_average_batch(n, gloo, 3.0, overlap=False) == pytest.approx(
        3.0 + 4 * ring + n * (2 * 2e-9 + 7.0)
    )
    assert sm.node_average_batch(n, replace(shared, per_node=1), 3.0) == 3.0
    # DASO on one node is its node average
    assert sm.daso_batch(n, shared, 3.0, overlap_local=False) == pytest.approx(
        sm.node_average_batch(n, shared, 3.0, overlap=False)
    )


def test_hierarchical_through_shared_memory_hand_computed():
    m = machine(2, 2, shared_memory=True)  # barriers of 0.1
    # node sum (2 barriers), cross-node slice all-reduce 52, one barrier after the last slice
    assert sm.hierarchical_allreduce(100.0, m) == pytest.approx(0.2 + 52.0 + 0.1)
    assert sm.hierarchical_allreduce(100.0, m, local="reduce_scatter") == pytest.approx(52.3)
    # copies: the slice cloned, its sum copied out and written into the result area (3 s)
    copying = sm.hierarchical_allreduce(100.0, machine(2, 2, True, gamma_copy=1.0))
    assert copying - 52.3 == pytest.approx(3 * 50)
    # K buckets: one node sum and one closing barrier for all of them
    b = 100.0
    cross = sm.cross_node_slices(b, m, "allreduce")
    assert sm.hierarchical_allreduce(4 * b, m, count=4) == pytest.approx(0.2 + 4 * cross + 0.1)
    # latency only: 3 barriers and the cross-node ring's 2 (P-1) steps
    assert sm.hierarchical_allreduce(0.0, machine(8, 4, True)) == pytest.approx(0.3 + 14.0)
    # the batch's bookkeeping: gradients copied in and out, the division is in the slice
    nbytes = 4 * sm.BUCKET_BYTES
    copies = machine(2, 2, True, gamma_copy=1e-9, gamma_add=1e-9)
    assert sm.hierarchical_blocking_batch(nbytes, copies, 1.0) == pytest.approx(
        1.0 + sm.hierarchical_allreduce(nbytes, copies, count=4) + 2 * nbytes * 1e-9
    )


def test_daso_reassembles_through_shared_memory():
    gloo = machine(2, 2, gamma_copy=1.0)
    shared = machine(2, 2, True, barrier=0.2, gamma_copy=1.0)
    # only the reassembly differs: all-gather + write (n) against barriers, share (s), take (n)
    all_gather = sm.ring_allgather(100.0, 2, gloo.local) + 100.0
    difference = sm.daso_exchange(100.0, shared).receive - sm.daso_exchange(100.0, gloo).receive
    assert difference == pytest.approx(sm.shared_node_gather(100.0, shared) - all_gather)
    assert sm.shared_node_gather(100.0, shared) == pytest.approx(0.4 + 150.0)
    assert sm.daso_exchange(100.0, shared).send == sm.daso_exchange(100.0, gloo).send
    assert sm.daso_exchange(100.0, shared).wire == sm.daso_exchange(100.0, gloo).wire


def test_calibrated_machine_reproduces_the_measured_node_sum():
    G, n = 2, 4.0e8
    job = {
        "nodes": 2, "per_node": G, "buckets": 4, "bucket_bytes": n / 4,
        "pingpong_cross": [[4, 1e-4], [8e6, 0.07], [3.2e7, 0.27]],
        "pingpong_local": [[4, 2e-5], [8e6, 0.01], [3.2e7, 0.04]],
        "node_allreduce": 0.4,
        "gamma_concurrent": {"copy": 1e-10, "add": 2e-10, "cast": 3e-10, "add_bf16": 4e-10},
    }  # fmt: skip
    older = sm.calibrated_machine([job])  # a calibration from before shared memory
    assert not older.shared_memory
    shared = {"shared_memory": True, "node_shared_sum": 0.05, "node_barrier": 1e-3,
              "node_shared_gather": 0.06, "shared_sum_bytes": n}  # fmt: skip
    m = sm.calibrated_machine([{**job, **shared}])
    assert m.shared_memory and m.node_barrier == 1e-3
    # gamma_sum solved from the measured sum less its two barriers
    assert m.gamma_slice_sum == pytest.approx((0.05 - 2e-3) / (n / 2))
    assert sm.shared_node_sum(n, m) == pytest.approx(0.05)
    names = [row[0] for row in sm.collective_checks(m, {**job, **shared, "param_bytes": n,
             "flat_allreduce": 1.0, "cross_slices_fp32": 1.0, "daso_exchange_bf16": 1.0,
             "node_allgather": 1.0})]  # fmt: skip
    assert "node sum, shared memory, 4 buckets" in names


def test_check_prints_the_shared_memory_transport(tmp_path, capsys):
    n = 4.0e8
    job = {
        "nodes": 2, "per_node": 2, "buckets": 4, "bucket_bytes": n / 4, "param_bytes": n,
        "load_start": 1.0, "load_end": 1.0,
        "pingpong_cross": [[4, 1e-4], [8e6, 0.07], [3.2e7, 0.27]],
        "pingpong_local": [[4, 2e-5], [8e6, 0.01], [3.2e7, 0.04]],
        "gamma_concurrent": {"copy": 1e-10, "add": 2e-10, "cast": 3e-10, "add_bf16": 4e-10},
        "flat_allreduce": 5.0, "node_allreduce": 0.4, "cross_slices_fp32": 3.0,
        "daso_exchange_bf16": 1.0, "node_allgather": 0.3,
        "shared_memory": True, "node_shared_sum": 0.05, "node_barrier": 1e-3,
        "node_shared_gather": 0.06, "shared_sum_bytes": n,
    }  # fmt: skip
    runs = [{"variant": v, "batch_s": s, "params": int(n / 4), "batches": 24}
            for v, s in (("compute only", 0.4), ("heat DASO", 0.6))]  # fmt: skip
    path = tmp_path / "calibration.json"
    path.write_text(sm.json.dumps({"before": job, "after": job, "daso": {"results": runs}}))
    assert sm.check(str(path)) == 0
    printed = capsys.readouterr().out
    assert "barrier 1000 us" in printed
    assert "| node sum, shared memory, 4 buckets | 50 | 50 | 1.00 | yes |" in printed
    assert "| heat DASO | 600 |" in printed


# -- overlap and buckets -----------------------------------------------------------------------


def test_buckets():
    assert sm.buckets(4 * sm.BUCKET_BYTES) == [sm.BUCKET_BYTES] * 4
    assert len(sm.buckets(4 * sm.BUCKET_BYTES + 1)) == 5
    assert sm.buckets(0) == []


def test_overlap_exposed_hand_computed():
    assert sm.overlap_exposed([3.0, 3.0], window=4.0) == pytest.approx(4.0)  # ends at 5 and 8
    assert sm.overlap_exposed([1.0, 1.0], window=4.0) == pytest.approx(1.0)  # ends at 3 and 5
    assert sm.overlap_exposed([], window=4.0) == 0.0
    # no backward pass to hide behind: everything is exposed
    assert sm.overlap_exposed([1.0, 2.0], window=0.0) == pytest.approx(3.0)


def test_ddp_hides_communication_behind_backward():
    m = machine(2, 2)
    nbytes = 4 * sm.BUCKET_BYTES
    compute = 1e12  # far longer than any bucket's all-reduce
    per_bucket = sm.flat_allreduce(sm.BUCKET_BYTES, m)
    # only the last bucket's all-reduce sticks out of the backward pass
    assert sm.ddp_batch(nbytes, m, compute) - compute == pytest.approx(per_bucket, rel=1e-9)
    assert sm.ddp_batch(nbytes, m, 0.0) == pytest.approx(sm.flat_blocking_batch(nbytes, m, 0.0))


# -- DASO --------------------------------------------------------------------------------------


def test_daso_epoch_hand_computed():
    costs = sm.DasoCosts(send=1.0, wire=10.0, receive=2.0)
    # 24 batches of 5 s; syncs start after batches 0, 8, 16 and are received 2 batches later,
    # when their 10 s on the wire are over; the last batch synchronizes blocking
    assert sm.daso_epoch(costs, 5.0, 8, 2, 24) == pytest.approx(120 + 3 * (1 + 2) + (1 + 10 + 2))
    # 20 s on the wire: 10 s of each is exposed
    slow = sm.DasoCosts(send=1.0, wire=20.0, receive=2.0)
    assert sm.daso_epoch(slow, 5.0, 8, 2, 24) == pytest.approx(120 + 3 * 13 + 23)
    # blocking every batch (cool-down): an epoch of one batch
    assert sm.daso_epoch(costs, 5.0, 1, 0, 1) == pytest.approx(5 + 13)
    # a sync started before the last batch is received there, before the blocking one
    assert sm.daso_epoch(costs, 5.0, 8, 4, 3) == pytest.approx(15 + 1 + 2 + 13)
    with pytest.raises(ValueError):
        sm.daso_epoch(costs, 5.0, 0, 2, 24)


def test_daso_exchange_hand_computed():
    m = machine(2, 2)  # n = 100 bytes of float32, slice s = 50, bfloat16 on the wire
    costs = sm.daso_exchange(100.0, m)
    assert costs.send == 0.0
    assert costs.wire == pytest.approx(1.0 + 2 * 25 * 0.5)  # all-gather of 2 x 25 bytes
    assert costs.receive == pytest.approx(0.1 + 50 * 0.01)  # node all-gather of 100 bytes
    # copies into kept buffers: gather the slice (s) / again the slice (s), the write of the
    # all-gathered vector into the parameters (n)
    copying = sm.daso_exchange(100.0, machine(2, 2, gamma_copy=1.0))
    assert copying.send == pytest.approx(50.0)
    assert copying.receive - costs.receive == pytest.approx(50 + 100)
    # a slice of 25 float32 values in chunks of 10 elements: 3 all-gathers, 3 latencies
    chunked = sm.daso_exchange(100.0 * 4 / 4 * 2, m, chunk_elements=10)
    assert chunked.wire == pytest.approx(3 * 1.0 + 2 * 50 * 0.5)


def test_daso_steady_state_matches_a_long_epoch():
    m = machine(4, 2, gamma_copy=1e-3)
    nbytes, compute = 1000.0, 50.0
    steady = sm.daso_batch(nbytes, m, compute, 8, 2)
    local = sm.daso_batch(nbytes, replace(m, nodes=1), compute)
    costs = sm.daso_exchange(nbytes, m, 2, 10_000_000)
    assert steady == pytest.approx(
        local + (costs.send + costs.receive + max(0.0, costs.wire - 2 * local)) / 8
    )
    long_epoch = sm.daso_batch(nbytes, m, compute, 8, 2, batches_per_epoch=8 * 2000 + 1)
    assert long_epoch == pytest.approx(steady, rel=1e-3)
    # the blocking last batch costs more in short epochs
    assert sm.daso_batch(nbytes, m, compute, 8, 2, batches_per_epoch=4) > steady


def test_daso_crosses_fewer_bytes_than_flat():
    m = replace(machine(64, 4), cross=sm.Link(0.0, 1e-9), local=sm.Link(0.0, 0.0))
    nbytes, compute = 1e9, 0.0  # no compute to hide behind
    flat = sm.flat_blocking_batch(nbytes, m, compute) - compute
    daso = sm.daso_batch(nbytes, m, compute, 8, 2) - compute
    # bfloat16 (1/2) every 8 batches (1/8), slightly fewer ring steps
    assert daso / flat == pytest.approx((1 / 16) * (63 / 64) / (255 / 256), rel=1e-6)


# -- projection --------------------------------------------------------------------------------


def test_projection_is_sane():
    rows = sm.projection()
    assert len(rows) == len(sm.WORKLOADS) * len(sm.NODE_COUNTS)
    for row in rows:
        for name in sm.VARIANTS:
            assert row[name] >= row["compute"]
            assert 0 < row[name + " efficiency"] <= 1
    for workload in sm.WORKLOADS:
        mine = [r for r in rows if r["workload"] == workload.name]
        flat = [r["flat blocking"] for r in mine]
        assert all(a <= b for a, b in itertools.pairwise(flat))  # more nodes, more ring steps
        assert mine[-1]["hierarchical blocking"] < mine[-1]["flat blocking"]
    table = sm.projection_table(rows)
    assert table.count("\n| 1024 | 4096 |") == len(sm.WORKLOADS)
    assert math.isclose(sm.WORKLOADS[0].compute, 64 / 2470)
