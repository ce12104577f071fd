"""directgnn for PyTorch: feature rows read by GPU threads straight from pinned host memory,
neighbour samplers and a prefetching minibatch loader, from your own training loop::

    import torch
    import directgnn
    data = directgnn.datasets.synthetic(1000)       # or directgnn.load("cora.npz")
    x = directgnn.UnifiedTensor(data.x)             # pinned in place where a GPU is visible
    rows = x[torch.tensor([0, 5, 9])]               # rows on the ids' device
    loader = directgnn.Loader(data, data.train_idx, fanouts=[10, 10], batch_size=64)
    for batch in loader:                            # batch.x, batch.y, batch.blocks, batch.n_id
        assert batch.x.shape[0] == batch.n_id.numel()

Everything also works on a machine without a GPU (CPU tensors, the CPU sampler and gather).
See docs/python.md.
"""

from . import datasets
from . import hetero
from .checkpoint import Checkpoint, load_checkpoint
from .data import Dataset, load
from .hetero import HeteroBatch, HeteroBlock, HeteroDataset, HeteroLoader, HeteroSampler
from .link import LinkBatch, LinkLoader
from .loader import Batch, Loader
from .sampler import Block, NeighborSampler, Sample
from .tensor import GATHER_METHODS, UnifiedTensor, gather, unified

__all__ = [
    "Batch",
    "Block",
    "Checkpoint",
    "Dataset",
    "GATHER_METHODS",
    "HeteroBatch",
    "HeteroBlock",
    "HeteroDataset",
    "HeteroLoader",
    "HeteroSampler",
    "LinkBatch",
    "LinkLoader",
    "Loader",
    "NeighborSampler",
    "Sample",
    "UnifiedTensor",
    "datasets",
    "gather",
    "hetero",
    "load",
    "load_checkpoint",
    "unified",
]
