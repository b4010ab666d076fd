"""
Data loading for training: datasets and loaders over heat arrays and HDF5 files.

``StreamingDataLoader`` streams HDF5 datasets larger than memory, globally shuffled, exactly once
per epoch and resumable on any number of processes; its parts are the modules ``plan`` (which
rows each process yields, pure), ``reader`` (windows from HDF5 on a background thread),
``exchange`` (one all-to-all per round), ``rounds`` (a round's rows in yield order, assembled on
a background thread while the consumer works) and ``buffers`` (one pool of row buffers with
explicit leases and counted views).
"""

from . import buffers, exchange, plan, reader, rounds  # noqa: F401
from .streaming import StreamingDataLoader  # noqa: F401

# in-memory datasets with the global shuffle, HeAT's PartialH5Dataset, and test-data generators
from . import matrixgallery, spherical  # noqa: F401
from .datatools import (  # noqa: F401
    DataLoader,
    Dataset,
    DistributedDataset,
    DistributedSampler,
    create_train_val_split,
    dataset_irecv,
    dataset_ishuffle,
    dataset_shuffle,
)
from .partial_dataset import PartialH5DataLoaderIter, PartialH5Dataset  # noqa: F401
