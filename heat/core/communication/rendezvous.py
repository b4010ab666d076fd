"""
The ``torch.distributed`` rendezvous: an address of rank 0 where every process meets its store.

torch.distributed needs one TCP address of rank 0's store that every process can reach. Rank 0
opens the store (listening on all of its interfaces) and broadcasts over MPI the addresses to try:

1. ``MASTER_ADDR`` when the user set it: only that one (``MASTER_PORT`` picks the port; default:
   a free port chosen by the store itself).
2. On one node: ``127.0.0.1``.
3. Across nodes: rank 0's own addresses, best guess first: the one its hostname resolves to (when
   that is an address of one of its interfaces), the one of the interface that routes outwards,
   then every other non-loopback interface address (IPv4 before IPv6; names of virtual bridges
   such as ``docker0`` last). Compute nodes often have neither a resolvable hostname nor a
   default route, so the interface list is what usually finds the address.

Every process then tries the candidates in order with a plain TCP connect to the store's port, and
the processes agree over MPI on the first candidate that *all* of them reach (so the processes on
rank 0's node do not settle on a local-only address such as a container bridge). Every process
knows the outcome: if some process reaches no candidate within ``HEAT_RENDEZVOUS_TIMEOUT`` seconds
(default 30), every process raises the same ``RuntimeError``, which names ``MASTER_ADDR``, instead
of waiting for the store's 30-minute timeout.

Across nodes, gloo binds each process to the interface through which it reached the store
(``GLOO_SOCKET_IFNAME`` is set to it in this process unless the user set it): gloo's own choice
comes from the hostname, which falls back to the loopback address on such nodes, and peers on
other nodes cannot connect to that.
"""

from __future__ import annotations

import ctypes
import datetime
import ipaddress
import os
import secrets
import socket
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

_DEFAULT_PROBE_SECONDS = 30.0
_ATTEMPT_SECONDS = 5.0  # one connect attempt; a passing SYN loss costs at most this
_RETRY_PAUSE_SECONDS = 0.5
_VIRTUAL_INTERFACE_PREFIXES = ("docker", "br-", "virbr", "veth", "lxc", "cni", "flannel", "cali")
_TOKEN_PREFIX = "heat/rendezvous/"
_LOOPBACK = "127.0.0.1"

# ifaddrs flags (net/if.h; same values on Linux and the BSDs)
_IFF_UP = 0x1
_IFF_LOOPBACK = 0x8


class InterfaceAddress(NamedTuple):
    """One address of a network interface of this host."""

    interface: str
    address: str
    family: int  # socket.AF_INET or socket.AF_INET6
    loopback: bool


@dataclass
class Rendezvous:
    """Where the processes met: rank 0's store, the address and port all of them used."""

    store: Any
    address: str
    port: int
    local_address: str  # this process's side of its connection to ``address``
    interface: Optional[str]  # this process's interface holding ``local_address``, if found


# ------------------------------------------------------------------------------------------------
# this host's addresses
# ------------------------------------------------------------------------------------------------


class _IfAddrs(ctypes.Structure):
    pass


_IfAddrs._fields_ = [
    ("ifa_next", ctypes.POINTER(_IfAddrs)),
    ("ifa_name", ctypes.c_char_p),
    ("ifa_flags", ctypes.c_uint),
    ("ifa_addr", ctypes.c_void_p),
    ("ifa_netmask", ctypes.c_void_p),
    ("ifa_ifu", ctypes.c_void_p),
    ("ifa_data", ctypes.c_void_p),
]


def _sockaddr_to_text(pointer: int) -> Optional[Tuple[int, str]]:
    """(family, address text) of a ``struct sockaddr*`` holding IPv4 or IPv6, else None."""
    if not pointer:
        return None
    if sys.platform.startswith("linux"):
        family = ctypes.c_ushort.from_address(pointer).value
    else:  # BSD layout: one length byte, then a one-byte family
        family = ctypes.c_ubyte.from_address(pointer + 1).value
    if family == socket.AF_INET:
        raw = ctypes.string_at(pointer + 4, 4)  # sockaddr_in: family, port, address
    elif family == socket.AF_INET6:
        raw = ctypes.string_at(pointer + 8, 16)  # sockaddr_in6: family, port, flowinfo, address
    else:
        return None
    return family, socket.inet_ntop(family, raw)


def interface_addresses() -> List[InterfaceAddress]:
    """
    The IPv4 and IPv6 addresses of this host's interfaces that are up (``getifaddrs``).

    Returns an empty list where ``getifaddrs`` is not available; callers then fall back to the
    hostname and the routing table.

    Examples
    --------
    >>> any(entry.loopback for entry in interface_addresses())  # on Linux
    True
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        getifaddrs, freeifaddrs = libc.getifaddrs, libc.freeifaddrs
    except (OSError, AttributeError):
        return []
    getifaddrs.argtypes = [ctypes.POINTER(ctypes.POINTER(_IfAddrs))]
    freeifaddrs.argtypes = [ctypes.POINTER(_IfAddrs)]
    head = ctypes.POINTER(_IfAddrs)()
    if getifaddrs(ctypes.byref(head)) != 0:
        return []
    entries = []
    try:
        node = head
        while node:
            item = node.contents
            decoded = _sockaddr_to_text(item.ifa_addr)
            if decoded is not None and item.ifa_flags & _IFF_UP:
                family, address = decoded
                name = (item.ifa_name or b"").decode(errors="replace")
                entries.append(
                    InterfaceAddress(name, address, family, bool(item.ifa_flags & _IFF_LOOPBACK))
                )
            node = item.ifa_next
    finally:
        freeifaddrs(head)
    return entries


def _usable_remotely(entry: InterfaceAddress) -> bool:
    """Whether peers could reach this address: not loopback, not IPv6 link-local (needs a scope)."""
    if entry.loopback:
        return False
    address = ipaddress.ip_address(entry.address.split("%")[0])
    return not (address.is_loopback or address.is_link_local or address.is_unspecified)


def _hostname_address() -> Optional[str]:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return None


def _outward_address() -> Optional[str]:
    """Source address of the route towards a public address; None without such a route."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:  # no packet is sent: connect() on UDP only asks the kernel for the route
        probe.connect(("10.255.255.255", 1))
        return probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()


def candidate_addresses(
    single_node: bool,
    environ: Mapping[str, str] = os.environ,
    interfaces: Optional[Sequence[InterfaceAddress]] = None,
    hostname_address: Optional[str] = None,
    outward_address: Optional[str] = None,
) -> Tuple[List[str], bool]:
    """
    The addresses of rank 0 (where this runs) to try for the rendezvous, best first.

    Parameters
    ----------
    single_node : bool
        Whether all processes share this host (then the loopback address serves everybody).
    environ : mapping
        Where ``MASTER_ADDR`` is looked up.
    interfaces, hostname_address, outward_address : optional
        This host's interface addresses, the address its hostname resolves to and the source
        address of its outward route; looked up when not given (tests pass them).

    Returns
    -------
    (list of str, bool)
        The candidates, and whether they come from ``MASTER_ADDR`` (the user's choice).

    Examples
    --------
    >>> candidate_addresses(True, environ={})
    (['127.0.0.1'], False)
    >>> candidate_addresses(False, environ={"MASTER_ADDR": "node17"})
    (['node17'], True)
    """
    user_address = environ.get("MASTER_ADDR", "").strip()
    if user_address:
        return [user_address], True
    if single_node:
        return [_LOOPBACK], False
    if interfaces is None:
        interfaces = interface_addresses()
        hostname_address = _hostname_address()
        outward_address = _outward_address()
    usable = [entry for entry in interfaces if _usable_remotely(entry)]
    own = {entry.address for entry in usable}

    def rank(entry: InterfaceAddress) -> Tuple[int, int]:
        virtual = entry.interface.startswith(_VIRTUAL_INTERFACE_PREFIXES)
        return (int(virtual), 0 if entry.family == socket.AF_INET else 1)

    ordered = []
    for preferred in (hostname_address, outward_address):
        if preferred in own and preferred not in ordered:  # only rank 0's own, non-loopback
            ordered.append(preferred)
    for entry in sorted(usable, key=rank):  # stable: getifaddrs order within a rank
        if entry.address not in ordered:
            ordered.append(entry.address)
    return ordered, False


def interface_of(
    address: str, interfaces: Optional[Sequence[InterfaceAddress]] = None
) -> Optional[str]:
    """
    The name of this host's interface holding ``address``, or None.

    Examples
    --------
    >>> interface_of("127.0.0.1")  # on Linux
    'lo'
    """
    if interfaces is None:
        interfaces = interface_addresses()
    for entry in interfaces:
        if entry.address == address:
            return entry.interface
    return None


# ------------------------------------------------------------------------------------------------
# reaching the store
# ------------------------------------------------------------------------------------------------


def _connect(address: str, port: int, timeout: float) -> str:
    """Open and close a TCP connection; return this side's address."""
    with socket.create_connection((address, port), timeout=timeout) as connection:
        return connection.getsockname()[0]


def first_reachable(
    candidates: Sequence[str],
    port: int,
    start: int,
    deadline: float,
    connect: Callable[[str, int, float], str] = _connect,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Tuple[Optional[int], Optional[str], str]:
    """
    Try ``candidates[start:]`` in order, in passes, until one accepts a connection or
    ``deadline`` (a ``clock()`` time) passes.

    Returns
    -------
    (int or None, str or None, str)
        The index of the first candidate reached and this side's address of that connection,
        or None and None; and the last error seen (empty when one was reached).

    Examples
    --------
    >>> first_reachable(["a", "b"], 1, 0, 10.0, connect=lambda a, p, t: a == "b" and "me" or 1 / 0)
    (1, 'me', '')
    """
    last_error = "no address to try" if start >= len(candidates) else ""
    while start < len(candidates):
        for index in range(start, len(candidates)):
            remaining = deadline - clock()
            if remaining <= 0:
                return None, None, last_error
            try:
                local = connect(candidates[index], port, min(_ATTEMPT_SECONDS, remaining))
                return index, local, ""
            except Exception as error:  # unreachable, refused, unresolvable: try the next one
                last_error = f"{candidates[index]}: {type(error).__name__}: {error}"
        remaining = deadline - clock()
        if remaining <= 0:
            break
        sleep(min(_RETRY_PAUSE_SECONDS, remaining))
    return None, None, last_error


def agree_on_candidate(
    comm: Any, candidates: Sequence[str], port: int, deadline: float, **probe_options
) -> Tuple[Optional[int], Optional[str], List[Tuple[Optional[int], str]]]:
    """
    The first candidate that every process of ``comm`` (an mpi4py communicator) reaches.

    In rounds: each process finds its first reachable candidate from the round's start; if all
    found the same one, that is it; otherwise the next round starts at the furthest one found
    (none before it was reached by everybody). At most ``len(candidates)`` rounds; collective.

    Returns
    -------
    (int or None, str or None, list)
        The agreed index (None if some process reached nothing before ``deadline``), this
        process's local address of its connection to it, and every process's (index, last error)
        of the last round.
    """
    start = 0
    while True:
        index, local, error = first_reachable(candidates, port, start, deadline, **probe_options)
        results = comm.allgather((index, error))
        found = [found_index for found_index, _ in results]
        if any(found_index is None for found_index in found):
            return None, None, results
        furthest = max(found)
        if all(found_index == furthest for found_index in found):
            return furthest, local, results
        start = furthest


# ------------------------------------------------------------------------------------------------
# the collective rendezvous
# ------------------------------------------------------------------------------------------------


def _probe_seconds(environ: Mapping[str, str]) -> float:
    setting = environ.get("HEAT_RENDEZVOUS_TIMEOUT", "").strip()
    if not setting:
        return _DEFAULT_PROBE_SECONDS
    try:
        seconds = float(setting)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(
            f"HEAT_RENDEZVOUS_TIMEOUT must be a positive number of seconds, got {setting!r}"
        )
    return seconds


def _master_port(environ: Mapping[str, str]) -> int:
    setting = environ.get("MASTER_PORT", "").strip()
    if not setting:
        return 0  # the store binds a free port itself: nobody can take it in between
    if not setting.isdigit() or int(setting) > 65535:
        raise ValueError(f"MASTER_PORT must be a port number (0-65535), got {setting!r}")
    return int(setting)


def rendezvous_failure_message(
    candidates: Sequence[str],
    user_given: bool,
    port: int,
    host: str,
    seconds: float,
    results: Sequence[Tuple[Optional[int], str]],
) -> str:
    """
    The error every process raises when some process reached none of ``candidates``.

    Examples
    --------
    >>> print(rendezvous_failure_message(["10.0.0.9"], True, 4711, "n0", 30, [(0, ""), (None, "x")]))
    ... # doctest: +NORMALIZE_WHITESPACE
    torch.distributed rendezvous failed: process 1 could not connect to rank 0's store (host 'n0',
    port 4711) at MASTER_ADDR=10.0.0.9 within 30 s (process 1: x). Set MASTER_ADDR to an address
    of rank 0 that every process can reach, and MASTER_PORT to a port open between the nodes.
    """
    failed = [rank for rank, (index, _) in enumerate(results) if index is None]
    who = f"process {failed[0]}" if len(failed) == 1 else "processes " + ", ".join(map(str, failed))
    if user_given:
        where = f"at MASTER_ADDR={candidates[0]}"
    elif candidates:
        where = "at any of its addresses " + ", ".join(candidates)
    else:
        where = "(rank 0 has no network address other than loopback)"
    first_error = results[failed[0]][1][:300]
    return (
        f"torch.distributed rendezvous failed: {who} could not connect to rank 0's store "
        f"(host {host!r}, port {port}) {where} within {seconds:g} s (process {failed[0]}: "
        f"{first_error}). Set MASTER_ADDR to an address of rank 0 that every process can reach, "
        "and MASTER_PORT to a port open between the nodes."
    )


def open_rendezvous(
    comm: Any,
    single_node: bool,
    store_timeout: datetime.timedelta,
    environ: Mapping[str, str] = os.environ,
) -> Rendezvous:
    """
    Open rank 0's ``TCPStore`` and connect every process of ``comm`` to it; collective.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        The processes of the future process group (``MPI.COMM_WORLD``); rank 0 holds the store.
    single_node : bool
        Whether all processes share one host.
    store_timeout : datetime.timedelta
        The store's timeout for its later operations (e.g. waiting for keys of other processes).
    environ : mapping
        Where ``MASTER_ADDR``, ``MASTER_PORT`` and ``HEAT_RENDEZVOUS_TIMEOUT`` are read (on rank 0;
        its choice is broadcast).

    Returns
    -------
    Rendezvous

    Raises
    ------
    RuntimeError
        On every process, if rank 0 cannot open the store, or if some process reaches none of
        the candidate addresses within ``HEAT_RENDEZVOUS_TIMEOUT`` seconds (the message names
        ``MASTER_ADDR``).
    """
    import torch.distributed as dist

    rank, size = comm.Get_rank(), comm.Get_size()
    store, info = None, None
    if rank == 0:
        try:
            seconds = _probe_seconds(environ)
            port = _master_port(environ)
            candidates, user_given = candidate_addresses(single_node, environ)
            # the store listens on every interface; rank 0's own client uses the loopback
            store = dist.TCPStore(
                _LOOPBACK, port, size, is_master=True, timeout=store_timeout, wait_for_workers=False
            )
            token_key = _TOKEN_PREFIX + secrets.token_hex(8)
            store.set(token_key, "1")
            info = (
                "ok",
                candidates,
                user_given,
                store.port,
                token_key,
                seconds,
                socket.gethostname(),
            )
        except Exception as error:  # report to everybody instead of leaving them waiting
            info = ("error", f"{type(error).__name__}: {error}")
    info = comm.bcast(info, root=0)
    if info[0] == "error":
        raise RuntimeError(
            f"could not start the torch.distributed rendezvous on rank 0: {info[1]} "
            "(MASTER_ADDR / MASTER_PORT choose its address and port)"
        )
    _, candidates, user_given, port, token_key, seconds, host = info
    deadline = time.monotonic() + seconds
    if single_node and not user_given:
        # everybody shares rank 0's loopback: nothing to choose (the store's own connect below
        # still reports a failure on every process)
        index, local_address, results = 0, _LOOPBACK, []
    else:
        index, local_address, results = agree_on_candidate(comm, candidates, port, deadline)
    if index is None:
        raise RuntimeError(
            rendezvous_failure_message(candidates, user_given, port, host, seconds, results)
        )
    address = candidates[index]
    error = ""
    try:
        if rank != 0:
            # reached a moment ago, so a short connect timeout is enough
            connect_timeout = datetime.timedelta(seconds=max(deadline - time.monotonic(), 5.0))
            store = dist.TCPStore(address, port, size, is_master=False, timeout=connect_timeout)
        if not store.check([token_key]):
            error = f"a different store answered at {address}:{port}"
        store.set_timeout(store_timeout)
    except Exception as failure:
        error = f"{type(failure).__name__}: {failure}"
    errors = comm.allgather(error)
    if any(errors):
        failed = [r for r, message in enumerate(errors) if message]
        raise RuntimeError(
            f"torch.distributed rendezvous failed: process(es) {failed} could not open rank 0's "
            f"store at {address}:{port} ({errors[failed[0]][:300]}). Set MASTER_ADDR to an "
            "address of rank 0 that every process can reach, and MASTER_PORT to a free port."
        )
    return Rendezvous(
        store=store,
        address=address,
        port=port,
        local_address=local_address,
        interface=None if single_node else interface_of(local_address),
    )
