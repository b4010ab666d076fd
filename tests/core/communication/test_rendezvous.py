"""
The torch.distributed rendezvous (heat/core/communication/rendezvous.py): which addresses of rank 0
are tried in which order, how the processes agree on one, and the error every process raises when
none works. The cross-node case itself runs on an emulated cluster in test_emulated_cluster.py.
"""

import datetime
import socket
import sys
import time

import pytest
from mpi4py import MPI

from heat.core.communication import rendezvous
from heat.core.communication.rendezvous import InterfaceAddress

WORLD = MPI.COMM_WORLD
RANK, SIZE = WORLD.Get_rank(), WORLD.Get_size()
V4, V6 = socket.AF_INET, socket.AF_INET6

# a node with a container bridge listed before its cluster network, IPv6 and a loopback
INTERFACES = [
    InterfaceAddress("lo", "127.0.0.1", V4, True),
    InterfaceAddress("docker0", "172.17.0.1", V4, False),
    InterfaceAddress("eth0", "10.1.0.5", V4, False),
    InterfaceAddress("ib0", "10.2.0.5", V4, False),
    InterfaceAddress("eth0", "fe80::1", V6, False),  # link-local: needs a scope, never offered
    InterfaceAddress("eth0", "2001:db8::5", V6, False),
    InterfaceAddress("lo", "::1", V6, True),
]


def candidates(**options):
    options.setdefault("environ", {})
    options.setdefault("interfaces", INTERFACES)
    return rendezvous.candidate_addresses(False, **options)


def test_candidates_user_override_and_single_node():
    assert rendezvous.candidate_addresses(False, environ={"MASTER_ADDR": " node17 "}) == (
        ["node17"],
        True,
    )
    # MASTER_ADDR wins on one node too; an empty value counts as unset
    assert rendezvous.candidate_addresses(True, environ={"MASTER_ADDR": "10.0.0.1"}) == (
        ["10.0.0.1"],
        True,
    )
    assert rendezvous.candidate_addresses(True, environ={"MASTER_ADDR": ""}) == (
        ["127.0.0.1"],
        False,
    )


def test_candidates_order_across_nodes():
    # no resolvable hostname, no outward route: interfaces only, IPv4 first, bridges last
    assert candidates() == (["10.1.0.5", "10.2.0.5", "2001:db8::5", "172.17.0.1"], False)
    # the hostname's address first, then the outward route's, when they are rank 0's own
    assert candidates(hostname_address="10.2.0.5", outward_address="172.17.0.1")[0] == [
        "10.2.0.5",
        "172.17.0.1",
        "10.1.0.5",
        "2001:db8::5",
    ]
    # a hostname mapped to 127.0.1.1 (common) or to an address of another host is ignored
    assert candidates(hostname_address="127.0.1.1", outward_address="10.9.9.9")[0][0] == "10.1.0.5"
    # nothing but loopback: nothing to offer (the caller reports it)
    assert candidates(interfaces=INTERFACES[:1] + INTERFACES[-1:]) == ([], False)


def test_interface_of():
    assert rendezvous.interface_of("10.2.0.5", INTERFACES) == "ib0"
    assert rendezvous.interface_of("10.3.0.1", INTERFACES) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="loopback is named 'lo' on Linux")
def test_interface_addresses_of_this_host():
    entries = rendezvous.interface_addresses()
    assert InterfaceAddress("lo", "127.0.0.1", V4, True) in entries
    assert rendezvous.interface_of("127.0.0.1") == "lo"
    assert all(entry.family in (V4, V6) for entry in entries)


class FakeClock:
    """A clock that advances only when something waits or tries to connect."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def fake_connect(reachable, clock, cost=1.0):
    def connect(address, port, timeout):
        clock.now += min(cost, timeout)
        if address not in reachable:
            raise ConnectionRefusedError(f"nobody at {address}:{port}")
        return "local-" + address

    return connect


def test_first_reachable_falls_back_in_order():
    clock = FakeClock()
    options = dict(connect=fake_connect({"b", "c"}, clock), clock=clock, sleep=clock.sleep)
    assert rendezvous.first_reachable(["a", "b", "c"], 1, 0, 10.0, **options) == (1, "local-b", "")
    assert rendezvous.first_reachable(["a", "b", "c"], 1, 2, 10.0, **options) == (2, "local-c", "")


def test_first_reachable_gives_up_at_the_deadline():
    clock = FakeClock()
    options = dict(connect=fake_connect(set(), clock), clock=clock, sleep=clock.sleep)
    index, local, error = rendezvous.first_reachable(["a", "b"], 4711, 0, 30.0, **options)
    assert (index, local) == (None, None)
    assert "b: ConnectionRefusedError: nobody at b:4711" == error
    assert 30.0 <= clock.now < 31.0  # kept trying, in passes, until the deadline and no longer
    assert rendezvous.first_reachable([], 1, 0, 30.0, **options) == (
        None,
        None,
        "no address to try",
    )


def test_first_reachable_with_sockets():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        deadline = time.monotonic() + 10
        assert rendezvous.first_reachable(["127.0.0.1"], port, 0, deadline) == (0, "127.0.0.1", "")
    # the port is closed now: refused until the deadline
    start = time.monotonic()
    index, _, error = rendezvous.first_reachable(["127.0.0.1"], port, 0, start + 0.3)
    assert index is None and "ConnectionRefusedError" in error
    assert time.monotonic() - start < 5


def test_agree_on_candidate_is_the_first_everybody_reaches():
    # rank 0 reaches every candidate (its own addresses, e.g. a bridge only it can use); the others
    # only from "b" on: all must settle on "b" (alone, rank 0 takes "a")
    clock = FakeClock()
    reachable = {"a", "b", "c"} if RANK == 0 else {"b", "c"}
    index, local, results = rendezvous.agree_on_candidate(
        WORLD,
        ["a", "b", "c"],
        1,
        30.0,
        connect=fake_connect(reachable, clock),
        clock=clock,
        sleep=clock.sleep,
    )
    expected = 0 if SIZE == 1 else 1
    assert index == expected and local == "local-" + "abc"[expected]
    assert [found for found, _ in results] == [expected] * SIZE


def test_agree_on_candidate_fails_on_every_process():
    clock = FakeClock()
    reachable = set() if RANK == SIZE - 1 else {"a"}
    index, local, results = rendezvous.agree_on_candidate(
        WORLD, ["a"], 1, 5.0, connect=fake_connect(reachable, clock), clock=clock, sleep=clock.sleep
    )
    assert (index, local) == (None, None)
    assert [found for found, _ in results] == [0] * (SIZE - 1) + [None]
    assert "ConnectionRefusedError" in results[-1][1]


def test_failure_message_names_master_addr():
    results = [(0, "")] * 2 + [(None, "10.0.0.9: TimeoutError: timed out")] * 2
    message = rendezvous.rendezvous_failure_message(["10.0.0.9"], True, 4711, "n0", 30, results)
    assert "processes 2, 3 could not connect" in message
    assert "at MASTER_ADDR=10.0.0.9 within 30 s" in message
    assert "(process 2: 10.0.0.9: TimeoutError: timed out)" in message
    assert "Set MASTER_ADDR to an address of rank 0" in message
    automatic = rendezvous.rendezvous_failure_message(
        ["10.1.0.5", "10.2.0.5"], False, 4711, "n0", 30, results
    )
    assert "at any of its addresses 10.1.0.5, 10.2.0.5" in automatic and "MASTER_ADDR" in automatic
    nothing = rendezvous.rendezvous_failure_message([], False, 4711, "n0", 30, results)
    assert "no network address other than loopback" in nothing


def test_open_rendezvous_on_one_node():
    start = time.monotonic()
    met = rendezvous.open_rendezvous(WORLD, True, datetime.timedelta(seconds=60), environ={})
    seconds = time.monotonic() - start
    assert (met.address, met.local_address, met.interface) == ("127.0.0.1", "127.0.0.1", None)
    assert met.port == WORLD.bcast(met.port)
    # one store: what one process writes, every process reads
    if RANK == 0:
        met.store.set("test/written-by-rank-0", "yes")
    WORLD.Barrier()
    assert met.store.get("test/written-by-rank-0") == b"yes"
    WORLD.Barrier()  # rank 0's store (the server) lives until everybody has read
    print(f"open_rendezvous on one node, {SIZE} processes: {seconds * 1e3:.1f} ms")


@pytest.mark.parametrize(
    "environ, named",
    [
        # connects fail at once ("network unreachable"); retried until the 1 s timeout
        ({"MASTER_ADDR": "255.255.255.255", "HEAT_RENDEZVOUS_TIMEOUT": "1"}, "MASTER_ADDR"),
        ({"MASTER_PORT": "http"}, "MASTER_PORT"),
        ({"HEAT_RENDEZVOUS_TIMEOUT": "0"}, "HEAT_RENDEZVOUS_TIMEOUT"),
    ],
)
def test_open_rendezvous_fails_on_every_process(environ, named):
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=named):
        rendezvous.open_rendezvous(WORLD, True, datetime.timedelta(seconds=60), environ=environ)
    assert time.monotonic() - start < 20
