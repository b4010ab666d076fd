#!/usr/bin/env python3
"""
Emulate a small cluster of nodes on one Linux machine and run an MPI job across it.

Each "node" is a network namespace with its own loopback, one interface ``eth0`` (address
10.77.0.k+1/24) and its own hostname (a UTS namespace per launched process tree). The nodes'
``eth0`` are veth pairs whose other ends sit on a bridge in a separate "switch" namespace
(10.77.0.254), optionally shaped with ``tc tbf`` in both directions, so inter-node traffic has a
limited bandwidth while traffic inside a node stays fast. As on many HPC compute nodes, the nodes
have no default route and their hostnames do not resolve.

MPI ranks are started by MPICH's hydra from the switch namespace with a fake ``ssh`` that enters
the namespace of the host it is asked to reach; MPICH is forced onto TCP (``ofi``/``tcp``),
because its default UCX transport would use shared memory between namespaces and bypass the
shaper. The measured facts behind these choices are in shared/notes/multinode-emulation.md.

Requires root, ``ip`` and ``tc`` (iproute2), ``unshare`` (util-linux) and MPICH's hydra
``mpiexec``. Names carry the process id and a counter, so concurrent runs never collide, and
teardown runs on exit, on errors and on SIGINT/SIGTERM; namespaces left behind by a killed run
(whose process id is gone) are removed by the next run or by ``--cleanup``.

Usage::

    python benchmarks/emulated_cluster.py --nodes 2 --procs-per-node 2 -- python app.py
    python benchmarks/emulated_cluster.py --nodes 4 --procs-per-node 1 --rate 1gbit --counters \\
        -- python benchmarks/some_benchmark.py
    python benchmarks/emulated_cluster.py --cleanup      # remove namespaces of killed runs

From Python (e.g. a benchmark driver or a test)::

    from emulated_cluster import EmulatedCluster, unsupported_reason

    if unsupported_reason() is None:
        with EmulatedCluster(nodes=2, rate="1gbit") as cluster:
            result = cluster.run([sys.executable, "app.py"], procs_per_node=2, timeout=120)
            print(result.returncode, result.stdout, cluster.link_counters())
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

SUBNET_PREFIX = "10.77.0."  # private; lives only inside the namespaces created here
SWITCH_ADDRESS = SUBNET_PREFIX + "254"
NODE_INTERFACE = "eth0"
MAX_NODES = 253
# Environment that makes MPICH talk TCP between the namespaces (UCX would bypass the shaper).
MPI_TCP_ENVIRONMENT = {"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"}
# Variables of an enclosing MPI job (e.g. the test suite run under mpiexec -n 1); a nested
# mpiexec that inherited them would try to join that job instead of starting its own.
_ENCLOSING_JOB_PREFIXES = ("PMI_", "PMIX_", "HYDI_", "HYDRA_", "OMPI_", "MPI_LOCAL")
_NAME_PATTERN = re.compile(r"^heatemu(?P<pid>\d+)c\d+-(?:n\d+|sw)$")
_counter = itertools.count()


def _command(args: Sequence[str], check: bool = True, timeout: float = 30) -> str:
    result = subprocess.run(
        list(args), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    if check and result.returncode != 0:
        raise RuntimeError(
            f"command failed ({result.returncode}): {shlex.join(args)}\n{result.stderr.strip()}"
        )
    return result.stdout


def find_mpiexec() -> Optional[str]:
    """The mpiexec beside the running Python (the ``mpich`` wheel's), else the one on PATH."""
    beside_python = Path(sys.executable).parent / "mpiexec"
    if beside_python.exists():
        return str(beside_python)
    return shutil.which("mpiexec")


def unsupported_reason() -> Optional[str]:
    """
    Why a cluster cannot be emulated here, or None when it can.

    Checks Linux, root, the tools, and that a network namespace can really be created (a
    container may forbid it even to root).
    """
    if not sys.platform.startswith("linux"):
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "emulating nodes with network namespaces needs root"
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            return f"'{tool}' is not installed (iproute2 / util-linux)"
    mpiexec = find_mpiexec()
    if mpiexec is None:
        return "no mpiexec found"
    try:
        version = _command([mpiexec, "--version"], check=False, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        return f"'{mpiexec} --version' failed: {error}"
    if "HYDRA" not in version:
        return f"{mpiexec} is not MPICH's hydra (its fake-ssh launcher is needed)"
    probe = f"heatemu{os.getpid()}c{next(_counter)}-sw"
    try:
        _command(["ip", "netns", "add", probe])
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        return f"cannot create a network namespace: {str(error).strip().splitlines()[-1]}"
    _command(["ip", "netns", "del", probe], check=False)
    return None


def _namespaces() -> List[str]:
    try:
        output = _command(["ip", "netns", "list"], check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.split()[0] for line in output.splitlines() if line.strip()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_namespace_processes(namespace: str, grace_s: float = 2.0) -> None:
    """End every process inside ``namespace`` (all were started by this script), TERM then KILL."""

    def pids() -> List[int]:
        output = _command(["ip", "netns", "pids", namespace], check=False)
        return [int(word) for word in output.split() if word.isdigit() and int(word) != os.getpid()]

    for sig in (signal.SIGTERM, signal.SIGKILL):
        remaining = pids()
        if not remaining:
            return
        for pid in remaining:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while pids() and time.monotonic() < deadline:
            time.sleep(0.05)


def _delete_namespace(namespace: str) -> None:
    _kill_namespace_processes(namespace)
    _command(["ip", "netns", "del", namespace], check=False)


def cleanup_stale() -> List[str]:
    """Delete namespaces of this script whose creating process is gone; returns their names."""
    removed = []
    for namespace in _namespaces():
        match = _NAME_PATTERN.match(namespace)
        if match and not _pid_alive(int(match.group("pid"))):
            _delete_namespace(namespace)
            removed.append(namespace)
    return removed


@dataclass
class RunResult:
    """Outcome of :meth:`EmulatedCluster.run`."""

    command: List[str]
    returncode: Optional[int]
    stdout: str
    stderr: str
    wall_s: float
    timed_out: bool


class EmulatedCluster:
    """
    ``nodes`` network namespaces joined by a (optionally shaped) bridge; a context manager.

    Parameters
    ----------
    nodes : int
        Number of nodes (1 to 253).
    rate : str, optional
        ``tc`` rate of every node's link, in each direction (e.g. ``"1gbit"``, ``"200mbit"``);
        None leaves the links unshaped (veth: several Gbit/s).
    burst : str
        ``tc tbf`` bucket size; must hold at least rate / HZ (512kb is enough up to ~2 Gbit/s).

    Examples
    --------
    >>> with EmulatedCluster(nodes=2) as cluster:
    ...     result = cluster.run(["hostname"], procs_per_node=1, timeout=30)
    >>> sorted(result.stdout.split()) == cluster.hostnames
    True
    """

    def __init__(self, nodes: int, rate: Optional[str] = None, burst: str = "512kb") -> None:
        if isinstance(nodes, bool) or not isinstance(nodes, int):
            raise TypeError(f"nodes must be an int, got {type(nodes).__name__}")
        if not 1 <= nodes <= MAX_NODES:
            raise ValueError(f"nodes must be between 1 and {MAX_NODES}, got {nodes}")
        if rate is not None and not re.fullmatch(r"\d+(\.\d+)?[kmgt]?(bit|bps)", rate):
            raise ValueError(f"rate must be a tc rate such as '1gbit' or '200mbit', got {rate!r}")
        self.nodes = nodes
        self.rate = rate
        self.burst = burst
        self.tag = f"heatemu{os.getpid()}c{next(_counter)}"
        self.switch_namespace = f"{self.tag}-sw"
        self.node_namespaces = [f"{self.tag}-n{k}" for k in range(nodes)]
        self.node_addresses = [f"{SUBNET_PREFIX}{k + 1}" for k in range(nodes)]
        self._workdir: Optional[str] = None
        self._created: List[str] = []
        self._previous_handlers: Dict[int, object] = {}

    # -- names -------------------------------------------------------------------------------
    @property
    def hostnames(self) -> List[str]:
        """The hostname of each node (its namespace name; it resolves nowhere)."""
        return list(self.node_namespaces)

    @property
    def launcher(self) -> str:
        """Path of the fake ssh that hydra calls to start its proxy on a node."""
        if self._workdir is None:
            raise RuntimeError("the cluster is not set up")
        return os.path.join(self._workdir, "fake_ssh")

    # -- setup and teardown ------------------------------------------------------------------
    def __enter__(self) -> "EmulatedCluster":
        self.setup()
        return self

    def __exit__(self, *exc_info) -> None:
        self.teardown()

    def setup(self) -> None:
        """Create the switch, the nodes and the launcher; tears down again if any step fails."""
        if self._created:
            raise RuntimeError("the cluster is already set up")
        cleanup_stale()
        self._install_signal_handlers()
        try:
            self._build()
        except BaseException:
            self.teardown()
            raise

    def _add_namespace(self, namespace: str) -> None:
        _command(["ip", "netns", "add", namespace])
        self._created.append(namespace)
        _command(["ip", "-n", namespace, "link", "set", "lo", "up"])

    def _shape(self, namespace: str, device: str) -> None:
        _command(
            ["ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", device, "root", "tbf"]
            + ["rate", self.rate, "burst", self.burst, "latency", "100ms"]
        )

    def _build(self) -> None:
        switch = self.switch_namespace
        self._add_namespace(switch)
        _command(["ip", "-n", switch, "link", "add", "br0", "type", "bridge"])
        _command(["ip", "-n", switch, "addr", "add", f"{SWITCH_ADDRESS}/24", "dev", "br0"])
        _command(["ip", "-n", switch, "link", "set", "br0", "up"])
        for k, (namespace, address) in enumerate(zip(self.node_namespaces, self.node_addresses)):
            self._add_namespace(namespace)
            # created inside the namespaces directly: no name is ever taken in the host's namespace
            _command(
                ["ip", "-n", switch, "link", "add", f"v{k}", "type", "veth"]
                + ["peer", "name", NODE_INTERFACE, "netns", namespace]
            )
            _command(["ip", "-n", switch, "link", "set", f"v{k}", "master", "br0", "up"])
            _command(["ip", "-n", namespace, "addr", "add", f"{address}/24", "dev", NODE_INTERFACE])
            _command(["ip", "-n", namespace, "link", "set", NODE_INTERFACE, "up"])
            if self.rate is not None:
                self._shape(namespace, NODE_INTERFACE)  # node -> switch
                self._shape(switch, f"v{k}")  # switch -> node
        self._workdir = tempfile.mkdtemp(prefix=f"{self.tag}-")
        self._write_launcher()

    def _write_launcher(self) -> None:
        cases = "\n".join(
            f"    {address}|{namespace}) ns={namespace} ;;"
            for address, namespace in zip(self.node_addresses, self.node_namespaces)
        )
        script = f"""#!/bin/bash
# Fake ssh for MPICH hydra: `fake_ssh [options] HOST COMMAND...` runs COMMAND in HOST's namespace,
# with the node's own hostname (a private UTS namespace), as ssh would run it on that host.
while [ $# -gt 0 ]; do
    case "$1" in
        -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;  # options that take a value
        -*) shift ;;
        *) break ;;
    esac
done
host="$1"; shift
case "$host" in
{cases}
    *) echo "fake_ssh: unknown host '$host'" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" unshare --uts /bin/bash -c "hostname $ns && $*"
"""
        with open(self.launcher, "w") as launcher:
            launcher.write(script)
        os.chmod(self.launcher, 0o755)

    def teardown(self) -> None:
        """Stop every process in the namespaces and delete them; safe to call more than once."""
        for namespace in reversed(self._created):
            _delete_namespace(namespace)
        self._created = []
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        self._restore_signal_handlers()

    def _install_signal_handlers(self) -> None:
        """Turn SIGTERM (and SIGHUP) into SystemExit, so ``with`` blocks and finally clauses run."""

        def exit_on_signal(signum, frame):
            raise SystemExit(128 + signum)

        try:
            for signum in (signal.SIGTERM, signal.SIGHUP):
                previous = signal.getsignal(signum)
                if previous in (signal.SIG_DFL, None):
                    self._previous_handlers[signum] = previous
                    signal.signal(signum, exit_on_signal)
        except ValueError:  # not the main thread: leave the handlers alone
            self._previous_handlers = {}

    def _restore_signal_handlers(self) -> None:
        for signum, previous in self._previous_handlers.items():
            try:
                signal.signal(signum, previous)
            except ValueError:
                pass
        self._previous_handlers = {}

    # -- running ----------------------------------------------------------------------------
    def mpiexec_command(
        self, command: Sequence[str], procs_per_node: int, mpiexec: Optional[str] = None
    ) -> List[str]:
        """The full command line that starts ``command`` on every node, ``procs_per_node`` each."""
        if isinstance(procs_per_node, bool) or not isinstance(procs_per_node, int):
            raise TypeError(f"procs_per_node must be an int, got {type(procs_per_node).__name__}")
        if procs_per_node < 1:
            raise ValueError(f"procs_per_node must be positive, got {procs_per_node}")
        if not command:
            raise ValueError("command must not be empty")
        mpiexec = mpiexec or find_mpiexec()
        if mpiexec is None:
            raise RuntimeError("no mpiexec found")
        hosts = ",".join(f"{address}:{procs_per_node}" for address in self.node_addresses)
        return [
            "ip", "netns", "exec", self.switch_namespace,
            mpiexec, "-iface", "br0", "-launcher", "ssh", "-launcher-exec", self.launcher,
            "-hosts", hosts, "-n", str(procs_per_node * self.nodes),
            *command,
        ]  # fmt: skip

    def run(
        self,
        command: Sequence[str],
        procs_per_node: int = 1,
        env: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
        cwd: Optional[str] = None,
        capture: bool = True,
    ) -> RunResult:
        """
        Run ``command`` as an MPI job over all nodes and wait for it.

        Parameters
        ----------
        command : sequence of str
            The program each rank runs (e.g. ``[sys.executable, "app.py"]``).
        procs_per_node : int
        env : mapping, optional
            The ranks' environment (default: this process's), minus the variables of an
            enclosing MPI job, plus the TCP transport settings.
        timeout : float, optional
            Seconds after which the job is killed (every process in the namespaces) and the
            result says ``timed_out``.
        cwd : str, optional
        capture : bool
            Collect stdout/stderr (default) or let them pass through to this process's.
        """
        full_command = self.mpiexec_command(command, procs_per_node)
        environment = {
            key: value
            for key, value in (os.environ if env is None else env).items()
            if not key.startswith(_ENCLOSING_JOB_PREFIXES)
        }
        environment.update(MPI_TCP_ENVIRONMENT)
        output = subprocess.PIPE if capture else None
        start = time.monotonic()
        process = subprocess.Popen(
            full_command,
            cwd=cwd,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            text=True,
            start_new_session=True,
        )
        timed_out = False
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            self.kill_processes()
            stdout, stderr = process.communicate()
        except BaseException:
            self.kill_processes()
            process.kill()
            process.wait()
            raise
        return RunResult(
            command=full_command,
            returncode=process.returncode,
            stdout=stdout or "",
            stderr=stderr or "",
            wall_s=time.monotonic() - start,
            timed_out=timed_out,
        )

    def kill_processes(self) -> None:
        """End every process running in the cluster's namespaces (mpiexec, proxies, ranks)."""
        for namespace in [self.switch_namespace, *self.node_namespaces]:
            if namespace in self._created:
                _kill_namespace_processes(namespace)

    # -- measuring ----------------------------------------------------------------------------
    def link_counters(self) -> Dict[str, Dict[str, int]]:
        """
        Bytes sent and received by each node's ``eth0`` (all traffic leaving or entering the
        node), plus ``qdisc_sent_bytes`` (what the shaper passed) when the links are shaped.
        """
        counters = {}
        for namespace in self.node_namespaces:
            link = json.loads(
                _command(["ip", "-j", "-s", "-n", namespace, "link", "show", NODE_INTERFACE])
            )[0]
            entry = {
                "tx_bytes": int(link["stats64"]["tx"]["bytes"]),
                "rx_bytes": int(link["stats64"]["rx"]["bytes"]),
            }
            if self.rate is not None:
                qdiscs = json.loads(
                    _command(
                        ["ip", "netns", "exec", namespace, "tc", "-j", "-s", "qdisc", "show"]
                        + ["dev", NODE_INTERFACE]
                    )
                )
                entry["qdisc_sent_bytes"] = sum(int(q.get("bytes", 0)) for q in qdiscs)
            counters[namespace] = entry
        return counters


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command: List[str] = []
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(
        description="Run an MPI command across nodes emulated with network namespaces (root).",
        epilog="Everything after -- is the command each rank runs.",
    )
    parser.add_argument("--nodes", type=int, default=2, help="number of nodes (default 2)")
    parser.add_argument("--procs-per-node", type=int, default=1, help="ranks per node (default 1)")
    parser.add_argument("--rate", help="bandwidth of each node's link, e.g. 1gbit (default: none)")
    parser.add_argument("--burst", default="512kb", help="tc tbf burst (default 512kb)")
    parser.add_argument("--timeout", type=float, help="kill the job after this many seconds")
    parser.add_argument(
        "--counters", action="store_true", help="print each node's link byte counters afterwards"
    )
    parser.add_argument(
        "--cleanup", action="store_true", help="only remove namespaces left by killed runs"
    )
    args = parser.parse_args(argv)
    if args.cleanup:
        for namespace in cleanup_stale():
            print(f"removed {namespace}")
        return 0
    if not command:
        parser.error("give the command to run after --")
    reason = unsupported_reason()
    if reason is not None:
        print(f"emulated_cluster.py: cannot emulate nodes here: {reason}", file=sys.stderr)
        return 2
    try:
        with EmulatedCluster(args.nodes, rate=args.rate, burst=args.burst) as cluster:
            before = cluster.link_counters() if args.counters else None
            result = cluster.run(
                command, procs_per_node=args.procs_per_node, timeout=args.timeout, capture=False
            )
            if before is not None:
                after = cluster.link_counters()
                for namespace, counts in after.items():
                    delta = {key: value - before[namespace][key] for key, value in counts.items()}
                    print(f"{namespace}: " + ", ".join(f"{k}={v}" for k, v in delta.items()))
    except KeyboardInterrupt:  # the cluster is torn down by now
        print("emulated_cluster.py: interrupted", file=sys.stderr)
        return 130
    if result.timed_out:
        print(f"emulated_cluster.py: killed after {args.timeout:g} s", file=sys.stderr)
        return 124
    return result.returncode if result.returncode is not None else 1


if __name__ == "__main__":
    sys.exit(main())
