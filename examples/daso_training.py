"""
Data-parallel training with DASO on emulated nodes.

    mpiexec -n 2 python examples/daso_training.py          # two emulated nodes of one process
    mpiexec -n 4 python examples/daso_training.py          # four; HEAT_RANKS_PER_NODE=2: two of two
    mpiexec -n 2 python examples/daso_training.py --small  # CI size (or HEAT_EXAMPLES_SMALL=1)

DASO (``ht.optim.DASO``) is the hierarchical, asynchronous and selective optimizer: gradients are
averaged among the processes of a node every batch (fast links), while the parameters are averaged
across nodes (slow links) only every few batches, without blocking, in bfloat16, and blended into
the local parameters when they arrive. ``ht.nn.DataParallelMultiGPU`` wraps the model and sets up
the node-local and cross-node groups. The same code runs on GPUs (NCCL) and CPUs (gloo).

On one machine every process is on the same node; ``HEAT_RANKS_PER_NODE=1`` makes heat treat each
process as a node of its own, so the cross-node path is exercised. For a real run on GPUs and
HDF5 data see the main job, ``python -m heat.examples.train`` (README).
"""

import argparse
import os

# Emulate nodes of one process each unless the caller chose otherwise. Set it before heat builds
# the node topology (at the first DASO), simplest before importing heat.
os.environ.setdefault("HEAT_RANKS_PER_NODE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import heat as ht  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--small", action="store_true", help="CI sizes (also HEAT_EXAMPLES_SMALL=1)")
args = parser.parse_args()
small = args.small or os.environ.get("HEAT_EXAMPLES_SMALL") == "1"
samples, features, classes, batch_size = (1_500, 8, 3, 30) if small else (100_000, 32, 4, 128)
epochs = 5 if small else 6

comm = ht.MPI_WORLD
say = print if comm.rank == 0 else (lambda *a, **k: None)

# -- data: each process generates only its own rows ------------------------------------------
# ht.random gives the same global data on any number of processes; .larray is this process's
# block as a torch tensor, which is what a torch model consumes.
ht.random.seed(0)
x_all = ht.random.randn(samples, features, dtype=ht.float32, split=0)
teacher = ht.random.randn(features, classes, dtype=ht.float32)
y_all = ht.argmax(x_all @ teacher, axis=1)
x_local, y_local = x_all.larray, y_all.larray.long()
# 80% of every process's rows for training, the rest for testing
cut = int(0.8 * len(x_local))
x_train, y_train, x_test, y_test = x_local[:cut], y_local[:cut], x_local[cut:], y_local[cut:]
# every process must take the same number of steps per epoch: derive it from the smallest share
steps_per_epoch = comm.allreduce(len(x_train), op=ht.MPI.MIN) // batch_size

# -- model, DASO and the wrapped model --------------------------------------------------------
torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Linear(features, 32), torch.nn.ReLU(), torch.nn.Linear(32, classes)
)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
daso = ht.optim.DASO(
    local_optimizer=optimizer,
    total_epochs=epochs,
    warmup_epochs=1,  # blocking averages every batch at the start ...
    cooldown_epochs=1,  # ... and at the end
    max_global_skips=4,  # in between: a cross-node average at most every 4 batches
)
model = ht.nn.DataParallelMultiGPU(net, daso)  # every process starts from rank 0's weights
daso.last_batch = steps_per_epoch  # DASO plans its schedule per epoch
groups = daso.groups
say(f"{comm.size} process(es) on {groups.num_nodes} (emulated) node(s) of {groups.node_sizes}")

# -- training loop ----------------------------------------------------------------------------
shuffle = torch.Generator().manual_seed(comm.rank)
for epoch in range(epochs):
    order = torch.randperm(len(x_train), generator=shuffle)
    epoch_loss = 0.0
    first_record = len(daso.timeline)
    for step in range(steps_per_epoch):
        batch = order[step * batch_size : (step + 1) * batch_size]
        daso.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x_train[batch]), y_train[batch])
        loss.backward()  # gradients averaged inside the node
        daso.step()  # the local update, and a cross-node exchange when the schedule says so
        epoch_loss += float(loss.detach())
    actions = [record.action for record in list(daso.timeline)[first_record:]]
    daso.epoch_loss_logic(epoch_loss / steps_per_epoch)  # averages the loss, plans the next epoch
    say(
        f"epoch {epoch}: loss {epoch_loss / steps_per_epoch:.4f} on rank 0; "
        f"{actions.count('blocking')} blocking averages, "
        f"{sum('send' in a for a in actions)} non-blocking sends of {len(actions)} batches"
    )

# -- evaluation: every process its test rows, one reduction -----------------------------------
with torch.no_grad():
    correct = int((net(x_test).argmax(1) == y_test).sum())
correct, tested = comm.allreduce(np.array([correct, len(y_test)]))
records = list(daso.timeline)
sent = comm.allreduce(sum(r.bytes_cross_node for r in records))
blocking = [r.bytes_cross_node for r in records if r.action == "blocking"]
every_batch = comm.allreduce(max(blocking, default=0) * len(records))
say(
    f"cross-node bytes: {sent / 1e6:.3f} MB sent; a blocking average after every batch "
    f"would have sent {every_batch / 1e6:.3f} MB"
)
say(f"final test accuracy {correct / tested:.3f}")
