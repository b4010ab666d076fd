"""
Train on an HDF5 file larger than the loader's memory, and resume in the middle of an epoch.

    mpiexec -n 2 python examples/hdf5_streaming.py          # or: python examples/hdf5_streaming.py
    mpiexec -n 2 python examples/hdf5_streaming.py --small  # CI size (or HEAT_EXAMPLES_SMALL=1)

1. Every process writes its rows of a synthetic classification dataset into one HDF5 file
   (``ht.save``), in a temporary folder.
2. ``heat.utils.data.StreamingDataLoader`` streams it: each process reads contiguous windows of
   rows on a background thread, within a memory budget (``window_bytes``) several times smaller
   than the file, and the rows are shuffled across all processes every epoch.
3. A tiny torch model trains on it for two epochs with ``ht.nn.DataParallel`` (gradients
   averaged over the processes every batch).
4. The loader's position is saved halfway through a third epoch (``state_dict``), a new loader
   continues from it (``load_state_dict``) -- as after a crash or on another number of
   processes -- and the script checks that the epoch still saw every row exactly once.
"""

import argparse
import os
import shutil
import tempfile

import numpy as np
import torch

import heat as ht
from heat.utils.data import StreamingDataLoader

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--small", action="store_true", help="CI sizes (also HEAT_EXAMPLES_SMALL=1)")
args = parser.parse_args()
small = args.small or os.environ.get("HEAT_EXAMPLES_SMALL") == "1"
rows, features, classes, batch_size = (2_000, 8, 3, 50) if small else (200_000, 32, 4, 256)

comm = ht.MPI_WORLD
say = print if comm.rank == 0 else (lambda *a, **k: None)
torch.manual_seed(0)

# -- 1. a synthetic dataset, written by all processes together -------------------------------
# rank 0 makes the folder; every process needs its name (bcast sends a Python object)
workdir = comm.bcast(tempfile.mkdtemp(prefix="heat-streaming-") if comm.rank == 0 else None)
path = os.path.join(workdir, "train.h5")
ht.random.seed(1)
x = ht.random.randn(rows, features, dtype=ht.float32, split=0)  # rows spread over processes
teacher = ht.random.randn(features, classes, dtype=ht.float32)  # the same on every process
y = ht.argmax(x @ teacher, axis=1).astype(ht.int64)  # labels of a linear teacher, split like x
ht.save(x, path, "x")  # each process writes its own rows into the one file
ht.save(y, path, "y", mode="a")  # a second dataset in the same file
file_bytes = rows * (features * 4 + 8)
window_bytes = file_bytes // 4  # the loader may hold a quarter of the file per process
say(f"wrote {rows:,} rows ({file_bytes / 2**20:.2f} MiB) to {path}")

# -- 2. the loader ---------------------------------------------------------------------------
loader = StreamingDataLoader(path, ["x", "y"], batch_size=batch_size, window_bytes=window_bytes)
say(
    f"loader memory budget {window_bytes / 2**20:.2f} MiB per process, windows of "
    f"{loader.window_rows} rows; {len(loader)} batches of {batch_size} rows per process and epoch"
)

# -- 3. data-parallel training ---------------------------------------------------------------
net = torch.nn.Sequential(
    torch.nn.Linear(features, 32), torch.nn.ReLU(), torch.nn.Linear(32, classes)
)
optimizer = ht.optim.DataParallelOptimizer(torch.optim.SGD(net.parameters(), lr=0.1))
model = ht.nn.DataParallel(net, optimizer=optimizer)  # every process starts from rank 0's weights
for epoch in range(2):
    loader.set_epoch(epoch)  # a new shuffle every epoch
    total_loss, correct, seen = 0.0, 0, 0
    for xb, yb in loader:  # torch tensors: this process's share of the global batch
        optimizer.zero_grad()
        logits = model(xb)
        loss = torch.nn.functional.cross_entropy(logits, yb)
        loss.backward()  # gradients are averaged over all processes here
        optimizer.step()
        total_loss += float(loss.detach()) * len(yb)
        correct += int((logits.argmax(1) == yb).sum())
        seen += len(yb)
    # sum the counters of all processes (allreduce of a NumPy array adds elementwise)
    total_loss, correct, seen = comm.allreduce(np.array([total_loss, correct, seen]))
    say(f"epoch {epoch}: loss {total_loss / seen:.4f}, training accuracy {correct / seen:.3f}")

# -- 4. stop halfway through an epoch and resume -----------------------------------------------
# return_indices=True appends each batch's global row numbers, so coverage can be checked
first = StreamingDataLoader(
    path, ["x", "y"], batch_size=batch_size, window_bytes=window_bytes, return_indices=True
)
first.set_epoch(2)
steps, stop_after = len(first), len(first) // 2
seen_rows = []
for step, (xb, yb, indices) in enumerate(first):
    seen_rows.append(indices.numpy())
    if step + 1 == stop_after:
        break  # "the job is interrupted"
state = first.state_dict()  # the same on every process: a few integers and a data fingerprint
if comm.rank == 0:
    torch.save(state, os.path.join(workdir, "loader.pt"))  # what a checkpoint would hold
comm.Barrier()

resumed = StreamingDataLoader(
    path, ["x", "y"], batch_size=batch_size, window_bytes=window_bytes, return_indices=True
)
resumed.load_state_dict(torch.load(os.path.join(workdir, "loader.pt")))
rest = 0
for xb, yb, indices in resumed:  # continues epoch 2 where the first loader stopped
    seen_rows.append(indices.numpy())
    rest += 1
all_rows = comm.gather(np.concatenate(seen_rows))  # rank 0 receives every process's rows
if comm.rank == 0:
    counts = np.bincount(np.concatenate(all_rows), minlength=rows)
    print(f"resumed after batch {stop_after} of {steps}; the new loader yielded the other {rest}")
    if not (counts == 1).all():
        raise SystemExit(f"rows seen other than once: {np.flatnonzero(counts != 1)[:10]}")
    print(f"epoch 2 saw every one of the {rows:,} rows exactly once across the resume")
    shutil.rmtree(workdir)
