"""The graphs behind ``directgnn train`` (no --dataset), ``bench train --synthetic`` and
``generate rmat``, made in memory: Python benchmarks and tests use the same graphs as the
command; and :func:`import_ogbl`, OGB's link-property datasets as dataset directories."""

from ._ogbl import import_ogbl
from ._ops import ops
from .data import Dataset, _from_tuple

__all__ = ["import_ogbl", "rmat", "synthetic"]


def synthetic(nodes: int = 10000, avg_degree: float = 10.0, feat_dim: int = 32, seed: int = 0, *,
              num_classes: int = 8, homophily: float = 0.6, train_fraction: float = 0.5,
              val_fraction: float = 0.25) -> Dataset:
    """A planted-partition graph: ``num_classes`` communities, a ``homophily`` fraction of
    edges inside a node's class, features drawn around class means. The defaults are the
    command's default job; ``synthetic(100000, 20, 128)`` is the 100k benchmark graph."""
    return _from_tuple(ops.synthetic_dataset(int(nodes), float(avg_degree), int(feat_dim),
                                             int(seed), int(num_classes), float(homophily),
                                             float(train_fraction), float(val_fraction)))


def rmat(nodes: int, edge_factor: float = 16.0, feat_dim: int = 128, seed: int = 0, *,
         num_classes: int = 16, dtype: str = "float32", train_fraction: float = 0.01) -> Dataset:
    """An R-MAT power-law graph (a, b, c = 0.57, 0.19, 0.19) with learnable features and a
    papers100M-like split (1% training nodes by default). ``dtype`` is "float32" or
    "float16"."""
    return _from_tuple(ops.rmat_dataset(int(nodes), float(edge_factor), int(feat_dim), int(seed),
                                        int(num_classes), str(dtype), float(train_fraction)))
