"""The graphs behind ``directgnn train`` (no --dataset), ``bench train --synthetic`` and
``generate rmat``, made in memory: Python benchmarks and tests use the same graphs as the
command."""

from ._ops import ops
from .data import _from_tuple


def synthetic(nodes=10000, avg_degree=10.0, feat_dim=32, seed=0, *, num_classes=8,
              homophily=0.6, train_fraction=0.5, val_fraction=0.25):
    """A planted-partition graph: ``num_classes`` communities, a ``homophily`` fraction of
    edges inside a node's class, features drawn around class means. The defaults are the
    command's default job; ``synthetic(100000, 20, 128)`` is the 100k benchmark graph."""
    return _from_tuple(ops.synthetic_dataset(int(nodes), float(avg_degree), int(feat_dim),
                                             int(seed), int(num_classes), float(homophily),
                                             float(train_fraction), float(val_fraction)))


def rmat(nodes, edge_factor=16.0, feat_dim=128, seed=0, *, num_classes=16, dtype="float32",
         train_fraction=0.01):
    """An R-MAT power-law graph (a, b, c = 0.57, 0.19, 0.19) with learnable features and a
    papers100M-like split (1% training nodes by default). ``dtype`` is "float32" or
    "float16"."""
    return _from_tuple(ops.rmat_dataset(int(nodes), float(edge_factor), int(feat_dim), int(seed),
                                        int(num_classes), str(dtype), float(train_fraction)))
