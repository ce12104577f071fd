"""Datasets as Python sees them, and the project's readers."""

import dataclasses
import os
from typing import Dict, List, Optional, Union

import torch

from ._ops import ops, os_errors


@dataclasses.dataclass
class Dataset:
    """A node-classification graph in CSR form.

    Attributes:
        name: the dataset's name.
        indptr, indices: the graph by destination (row v lists the nodes v receives messages
            from: an edge src -> dst puts src in dst's row, PyG's CSC; an undirected graph stores
            both directions). ``indptr`` is int64 [N + 1], ``indices`` int32 or int64.
        x: [N, F] node features (float32 or float16; memory-mapped for dataset directories).
        y: int64 [N] labels, -1 for unlabelled nodes.
        num_classes: the number of classes.
        directed: whether the graph was kept directed.
        splits: the dataset's stored splits, each a dict of int64 node ids under "train",
            "val" and "test" (empty when the dataset ships none).
        features_path: the ``features.npy`` of a dataset directory, which
            :class:`directgnn.Loader` reads rows from with ``features="disk"`` (None for
            datasets made in memory or read from other formats).
        edge_weight: float32 [E] edge weights in the order of ``indices`` (a dataset
            directory's ``edge_weights.npy``), or None; ``directgnn.Loader(weighted=True)``
            samples by them.
    """

    name: str
    indptr: torch.Tensor
    indices: torch.Tensor
    x: torch.Tensor
    y: torch.Tensor
    num_classes: int
    directed: bool = False
    splits: List[dict] = dataclasses.field(default_factory=list)
    features_path: Optional[str] = None
    edge_weight: Optional[torch.Tensor] = None

    @property
    def num_nodes(self) -> int:
        """The number of nodes."""
        return self.indptr.numel() - 1

    @property
    def num_edges(self) -> int:
        """The number of stored (directed) edges."""
        return self.indices.numel()

    def split(self, k: int = 0) -> Dict[str, torch.Tensor]:
        """Split ``k`` as a dict of "train", "val" and "test" node ids."""
        if not self.splits:
            raise ValueError(f"directgnn: dataset {self.name!r} has no stored splits")
        if not 0 <= k < len(self.splits):
            raise ValueError(f"directgnn: dataset {self.name!r} has {len(self.splits)} split(s); "
                             f"split {k} does not exist")
        return self.splits[k]

    def random_split(self, seed: int = 0) -> Dict[str, torch.Tensor]:
        """The seeded protocol of ``directgnn train`` for datasets without a split (Shchur et
        al. 2018): 20 labelled nodes per class for training, 500 for validation, 1000 for
        testing, as a dict of "train", "val" and "test" node ids."""
        train, val, test = ops.random_split(self.y, self.num_classes, int(seed))
        return {"train": train, "val": val, "test": test}

    @property
    def train_idx(self) -> torch.Tensor:
        """The training node ids of split 0."""
        return self.split(0)["train"]

    @property
    def val_idx(self) -> torch.Tensor:
        """The validation node ids of split 0."""
        return self.split(0)["val"]

    @property
    def test_idx(self) -> torch.Tensor:
        """The test node ids of split 0."""
        return self.split(0)["test"]

    def __repr__(self):
        return (f"Dataset({self.name!r}, nodes={self.num_nodes}, edges={self.num_edges}, "
                f"features={tuple(self.x.shape)} {self.x.dtype}, classes={self.num_classes}, "
                f"splits={len(self.splits)})")


def _from_tuple(t):
    (name, indptr, indices, x, y, num_classes, directed, train, val, test, features_path,
     edge_weight) = t
    splits = [{"train": a, "val": b, "test": c} for a, b, c in zip(train, val, test)]
    return Dataset(name, indptr, indices, x, y, int(num_classes), bool(directed), splits,
                   features_path or None, edge_weight)


def load(path: Union[str, os.PathLike], *, keep_self_loops: bool = False,
         add_inverse_edges: bool = False) -> Dataset:
    """Reads a dataset with the project's own readers, as ``directgnn train --dataset`` does.

    ``path`` is a dataset directory (written by ``directgnn convert``/``generate``; its
    features are memory-mapped, not read), an ``.npz`` file (gnn-benchmark or numpy savez
    layout) or an OGB raw directory. A file that cannot be read raises OSError
    (FileNotFoundError when it is missing); one whose content is wrong a RuntimeError naming
    the file, the field and the fix.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"directgnn.load: {path} does not exist")
    with os_errors():
        return _from_tuple(ops.load_dataset(path, keep_self_loops, add_inverse_edges))
