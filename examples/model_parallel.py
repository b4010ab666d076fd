"""
A model larger than one process's share of memory, trained with a pipeline (or ZeRO-3).

    mpiexec -n 4 python examples/model_parallel.py                 # 4 stages
    mpiexec -n 4 python examples/model_parallel.py --replicas 2    # 2 stages x 2 replicas
    mpiexec -n 4 python examples/model_parallel.py --mode zero3    # ht.optim.ZeroRedundancyOptimizer
    mpiexec -n 2 python examples/model_parallel.py --small         # CI size (or HEAT_EXAMPLES_SMALL=1)

Training a float32 model with Adam keeps 16 bytes per parameter: the parameter, its gradient and
Adam's two moments. Give each process a memory budget (``--budget-mb``, as if the machine gave
each process that much) smaller than what the whole model needs: one process cannot train it,
but ``ht.nn.Pipeline`` can, each process holding only its stage's layers, their gradients and
their Adam state. The layers are created on the ``meta`` device (shapes without memory), so no
process ever holds the whole model; each stage then materializes its own layers, initialised
from a seed per layer, so that the values do not depend on the number of processes.

The script prints the bytes each process holds (parameters, gradients, Adam state and the peak of
saved activations, counted) and its peak resident memory (Linux' VmHWM, reset per phase), next to
the same figures of one process training the whole model on the whole batch, and checks that the
pipeline made the same updates as that one process.
"""

import argparse
import ctypes
import gc
import os
import time

import torch

import heat as ht

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--small", action="store_true", help="CI sizes (also HEAT_EXAMPLES_SMALL=1)")
parser.add_argument("--mode", choices=("pipeline", "zero3"), default="pipeline")
parser.add_argument("--replicas", type=int, default=1, help="pipeline mode: stages x replicas")
parser.add_argument("--budget-mb", type=float, default=None, help="memory budget per process")
parser.add_argument("--steps", type=int, default=None)
args = parser.parse_args()
small = args.small or os.environ.get("HEAT_EXAMPLES_SMALL") == "1"
width, depth, batch, micro_batches = (256, 8, 32, 4) if small else (2048, 8, 64, 8)
steps = args.steps if args.steps is not None else (4 if small else 10)
budget = args.budget_mb if args.budget_mb is not None else (5.0 if small else 320.0)
comm = ht.MPI_WORLD
say = print if comm.rank == 0 else (lambda *a, **k: None)
MB = 2**20


# -- memory ------------------------------------------------------------------------------------


def _status(field):
    """A value of /proc/self/status in bytes (Linux), None elsewhere."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def start_phase():
    """Reset the peak resident memory (Linux: 5 > clear_refs); the resident memory now."""
    gc.collect()
    try:  # freed memory back to the system, so that this phase's pages are counted anew
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        pass  # then VmHWM is the peak since the start
    return _status("VmRSS") or 0


def peak_above(start):
    """The peak resident memory of this phase above its start."""
    peak = _status("VmHWM")
    return None if peak is None else max(peak - start, 0)


def nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def optimizer_state_bytes(optimizer):
    if optimizer is None:
        return 0
    return nbytes(
        v for state in optimizer.state.values() for v in state.values() if torch.is_tensor(v)
    )


# -- the model: layers made on the meta device, materialized where they live --------------------


def layers():
    """The whole model's shapes, without memory."""
    with torch.device("meta"):
        blocks = []
        for k in range(depth):
            blocks.append(torch.nn.Linear(width, width))
            if k < depth - 1:
                blocks.append(torch.nn.Tanh())
        return torch.nn.Sequential(*blocks)


def materialize(module):
    """Real tensors for the layers of ``module``, each layer from its own seed (named by index)."""
    module.to_empty(device="cpu")
    for name, layer in module.named_children():
        if isinstance(layer, torch.nn.Linear):
            with torch.random.fork_rng():
                torch.manual_seed(1000 + int(name))
                layer.reset_parameters()
    return module


def data(step):
    """The global batch of ``step``: a teacher's noisy outputs (the same on every process)."""
    generator = torch.Generator().manual_seed(step)
    x = torch.randn(batch, width, generator=generator)
    return x, torch.tanh(x.roll(1, dims=1)) + 0.1 * torch.randn(batch, width, generator=generator)


def whole_model_bytes():
    parameters = sum(p.numel() * 4 for p in layers().parameters())
    return 4 * parameters  # parameters, gradients, Adam's two moments


# -- training ---------------------------------------------------------------------------------


def warm_up(group, replicas=1):
    """One step of a tiny pipeline: torch's and MPI's first-use allocations out of the figures."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        tiny = [torch.nn.Linear(4, 4) for _ in range(group.size)]
    pipe = ht.nn.Pipeline(tiny, torch.nn.functional.mse_loss, torch.optim.Adam, comm=group,
                          replicas=replicas, micro_batches=2)  # fmt: skip
    pipe.train_step(torch.zeros(4, 4), torch.zeros(4, 4))
    pipe.step()


def train_pipeline(group, replicas=1, measure_rss=True):
    """Train on ``group`` (stages x replicas); this process's figures and its stage's state."""
    start = start_phase()
    pipe = ht.nn.Pipeline(
        layers(), torch.nn.functional.mse_loss, comm=group, replicas=replicas,
        micro_batches=micro_batches, schedule="1f1b", measure_activations=True,
    )  # fmt: skip
    materialize(pipe.stage_module)
    parameters = list(pipe.stage_module.parameters())
    adam = torch.optim.Adam(parameters, lr=1e-3) if parameters else None
    losses = []
    for step in range(steps):
        x, y = data(step)
        rows = slice(pipe.replica * batch // replicas, (pipe.replica + 1) * batch // replicas)
        pipe.zero_grad()
        losses.append(pipe.train_step(x[rows], y[rows]))
        if adam is not None:
            adam.step()
    figures = {
        "where": f"stage {pipe.stage}" + (f", replica {pipe.replica}" if replicas > 1 else ""),
        "parameters": nbytes(parameters),
        "gradients": nbytes(p.grad for p in parameters),
        "Adam state": optimizer_state_bytes(adam),
        "activations": pipe.peak_activation_bytes,
        "peak RSS": peak_above(start) if measure_rss else None,
    }
    state = {k: v.clone() for k, v in pipe.stage_module.state_dict().items()}
    return figures, losses, state


def train_zero3():
    """Every process its part of the batch, the parameters and Adam state sharded (ZeRO-3)."""
    start = start_phase()
    net = materialize(layers())
    zero = ht.optim.ZeroRedundancyOptimizer(net, torch.optim.Adam, stage=3, lr=1e-3)
    losses = []
    for step in range(steps):
        x, y = data(step)
        rows = slice(comm.rank * batch // comm.size, (comm.rank + 1) * batch // comm.size)
        zero.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x[rows]), y[rows])
        loss.backward()
        zero.step()
        losses.append(comm.allreduce(loss.item()) / comm.size)
    state_bytes = getattr(zero, "optimizer_state_bytes", None)
    figures = {
        "where": f"shard {comm.rank}",
        "parameters": getattr(zero, "peak_materialized_bytes", None),
        "gradients": None,
        "Adam state": state_bytes() if callable(state_bytes) else None,
        "activations": None,
        "peak RSS": peak_above(start),
    }
    with zero.gathered_parameters():
        state = {k: v.clone() for k, v in net.state_dict().items()}
    return figures, losses, state


def row(label, figures):
    def mb(value):
        return "      n/a" if value is None else f"{value / MB:9.2f}"

    counted = [figures[k] for k in ("parameters", "gradients", "Adam state", "activations")]
    total = sum(v for v in counted if v is not None)
    fits = "fits" if total <= budget * MB else "EXCEEDS"
    return (
        f"{label:<32}"
        + "".join(mb(v) for v in counted)
        + mb(total)
        + mb(figures["peak RSS"])
        + (f"  {fits}")
    )


# -- the distributed run, then one process on the whole model and batch ------------------------

if args.mode == "zero3" and not hasattr(ht.optim, "ZeroRedundancyOptimizer"):
    raise SystemExit("--mode zero3 needs ht.optim.ZeroRedundancyOptimizer, not in this heat")
if args.mode == "pipeline" and comm.size % args.replicas:
    raise SystemExit(f"--replicas {args.replicas} must divide the {comm.size} processes")
say(
    f"model: {depth} Linear({width}, {width}) layers; parameters + gradients + Adam state "
    f"{whole_model_bytes() / MB:.2f} MB; budget per process {budget:.2f} MB"
)
if args.mode == "pipeline":
    stages = comm.size // args.replicas
    say(f"{comm.size} process(es): a pipeline of {stages} stage(s) x {args.replicas} replica(s)")
    warm_up(comm, args.replicas)
    figures, losses, state = train_pipeline(comm, args.replicas)
else:
    say(f"{comm.size} process(es): ZeRO stage 3")
    warm_up(comm, comm.size)
    figures, losses, state = train_zero3()
everyone = comm.gather(figures)
states = comm.gather(state)
del state
gc.collect()

header = f"{'':<32}" + "".join(
    f"{h:>9}" for h in ("params", "grads", "Adam", "activ.", "counted", "peak RSS")
)
say(f"bytes per process (MB):\n{header}")
for rank, process_figures in enumerate(everyone or []):
    say(row(f"process {rank} ({process_figures['where']})", process_figures))

verdict = torch.zeros(1)
if comm.rank == 0:  # the one-process run, for comparison
    single_figures, single_losses, single_state = train_pipeline(ht.MPI_SELF)
    print(row("one process", single_figures))
    merged = {}
    for part in states:
        merged.update(part)
    difference = max((merged[k] - single_state[k]).abs().max().item() for k in single_state)
    counted = ("parameters", "gradients", "Adam state", "activations")
    largest = max(sum(f[k] or 0 for k in counted) for f in everyone)
    single = sum(single_figures[k] for k in counted)
    print(f"largest process holds {largest / single:.2f} of the one-process run's bytes")
    print(f"losses: first {losses[0]:.5f}, last {losses[-1]:.5f} (one process: "
          f"{single_losses[0]:.5f}, {single_losses[-1]:.5f})")  # fmt: skip
    same = difference < 1e-4
    print(
        f"parameters after {steps} steps {'match' if same else 'DIFFER FROM'} the one-process "
        f"run's (max difference {difference:.1e})"
    )
    verdict[0] = float(same)
# the others wait for process 0's verdict without spinning on the cores it computes on
request = comm.Ibcast(verdict, root=0)
while not request.Test():
    time.sleep(0.01)
if verdict[0] != 1:
    raise SystemExit(1)
