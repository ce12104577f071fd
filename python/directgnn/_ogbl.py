"""OGB's link-property datasets (ogbl-*) as dataset directories: the raw graph read by the
project's C++ readers, the split read by torch's loader (OGB stores it as torch pickles of
numpy arrays, which only Python reads)."""

import os
import warnings
from typing import Optional, Union

import numpy as np
import torch

from ._ops import ops
from .data import Dataset, load

# OGB's master table (add_inverse_edge): which ogbl graphs are undirected.
_UNDIRECTED = {"collab": True, "ppa": True, "ddi": True, "citation2": False}


def _split_dir(root: str) -> str:
    base = os.path.join(root, "split")
    found = sorted(d for d in (os.listdir(base) if os.path.isdir(base) else [])
                   if os.path.exists(os.path.join(base, d, "train.pt")))
    if len(found) != 1:
        raise ValueError(f"directgnn.datasets.import_ogbl: {base} should hold one split "
                         f"directory with train.pt, valid.pt and test.pt; found {found or 'none'}")
    return os.path.join(base, found[0])


def _inverse_edges(root: str, given: Optional[bool]) -> bool:
    if given is not None:
        return bool(given)
    name = os.path.basename(os.path.normpath(root)).lower()
    for key, undirected in _UNDIRECTED.items():
        if name.endswith(key):
            return undirected
    raise ValueError(f"directgnn.datasets.import_ogbl: {root}: not a dataset this importer knows "
                     f"({', '.join('ogbl-' + k for k in _UNDIRECTED)}); say whether its graph is "
                     "undirected with add_inverse_edges=True or False (OGB's add_inverse_edge)")


def _ids(value, where: str) -> torch.Tensor:
    array = np.asarray(value.numpy() if torch.is_tensor(value) else value)
    if array.dtype.kind not in "iu":
        raise ValueError(f"directgnn.datasets.import_ogbl: {where} has dtype {array.dtype}; "
                         "node ids must be integers")
    return torch.from_numpy(array.astype(np.int64, copy=False))


def _unique_pairs(pairs: torch.Tensor, undirected: bool) -> torch.Tensor:
    """Training positives with multi-edges collapsed (each undirected pair once)."""
    if undirected:
        pairs = torch.stack([pairs.min(1).values, pairs.max(1).values], 1)
    return torch.unique(pairs, dim=0)


def _read_split(path: str, undirected: bool) -> dict:
    """The three .pt files as Dataset.link: ogbl-collab's layout (``edge``, ``edge_neg``: shared
    negative pairs) or ogbl-citation2's (``source_node``, ``target_node``,
    ``target_node_neg``: negative destinations per positive)."""
    parts = {}
    for name in ("train", "valid", "test"):
        # OGB's own files; torch pickles of numpy arrays need weights_only=False.
        parts[name] = torch.load(os.path.join(path, f"{name}.pt"), weights_only=False)
    link = {}
    if "edge" in parts["train"]:
        for name, key in (("train", "train"), ("valid", "val"), ("test", "test")):
            link[key] = _ids(parts[name]["edge"], f"{path}/{name}.pt['edge']")
            if name != "train":
                link[key + "_neg"] = _ids(parts[name]["edge_neg"], f"{path}/{name}.pt['edge_neg']")
        link["negatives"] = "shared"
    elif "source_node" in parts["train"]:
        for name, key in (("train", "train"), ("valid", "val"), ("test", "test")):
            p = parts[name]
            link[key] = torch.stack([_ids(p["source_node"], f"{path}/{name}.pt['source_node']"),
                                     _ids(p["target_node"], f"{path}/{name}.pt['target_node']")], 1)
            if name != "train":
                link[key + "_neg"] = _ids(p["target_node_neg"],
                                          f"{path}/{name}.pt['target_node_neg']")
        link["negatives"] = "per_source"
    else:
        raise ValueError(f"directgnn.datasets.import_ogbl: {path}/train.pt holds "
                         f"{sorted(parts['train'])}; expected 'edge' (as ogbl-collab) or "
                         "'source_node' and 'target_node' (as ogbl-citation2)")
    link["train"] = _unique_pairs(link["train"], undirected)
    return link


def _published_faults(ds: Dataset, link: dict, undirected: bool) -> dict:
    """What a hand-written split may not have, counted in a published one (the library's own
    rules, as loading a hand-written split refuses them): evaluation positives that are edges
    of the graph, repeated evaluation positives, and negatives that are edges (of the graph or
    positives)."""
    tensors = [link[k] for k in ("train", "val", "test", "val_neg", "test_neg") if k in link]
    counts = ops.link_split_faults(ds.indptr, ds.indices, not undirected, tensors,
                                   link["negatives"])
    return dict(zip(("in_graph", "repeated", "negative_edges"), counts))


def import_ogbl(root: Union[str, os.PathLike], out: Union[str, os.PathLike], *,
                add_inverse_edges: Optional[bool] = None, keep_self_loops: bool = False) -> Dataset:
    """Writes an OGB link-property dataset (its raw directory as OGB downloads it:
    ``raw/edge.csv.gz``, ``raw/node-feat.csv.gz``, ``raw/num-node-list.csv.gz`` and
    ``split/NAME/{train,valid,test}.pt``) as a dataset directory at ``out`` and returns it.

    The graph is OGB's (its training edges), undirected with ``add_inverse_edges`` (by default
    OGB's own setting for ogbl-collab, -ppa, -ddi and -citation2). The split keeps OGB's
    validation and test edges and negatives as they are; training positives collapse
    multi-edges (ogbl-collab lists a pair once per year). Validation and test pairs that are
    also edges of the graph (pairs that interact again later, as ogbl-collab's authors) stay
    in it, as OGB's leaderboard has them; a warning counts them, and also repeated validation
    and test positives and negatives that are edges, which a hand-written split may not have
    (the split is marked ``published``). The .pt files are read with
    ``torch.load(weights_only=False)``: load only files from a source you trust (OGB's)."""
    root, out = os.fspath(root), os.fspath(out)
    split = _split_dir(root)
    undirected = _inverse_edges(root, add_inverse_edges)
    ds = load(root, keep_self_loops=keep_self_loops, add_inverse_edges=undirected,
              _skip_link_split_files=True)
    link = _read_split(split, undirected)
    faults = _published_faults(ds, link, undirected)
    for count, text in ((faults["in_graph"], "validation and test positives are also edges of the "
                         "graph (pairs that interact again); they stay in it"),
                        (faults["repeated"], "validation and test positives repeat an earlier one "
                         "of their split (a pair listed once per year); each is kept"),
                        (faults["negative_edges"], "evaluation negatives are edges of the graph "
                         "or positives; they are kept")):
        if count:
            warnings.warn(f"directgnn.datasets.import_ogbl: {count} {text}, as in OGB",
                          stacklevel=2)
    link["eval_edges_in_graph"] = faults["in_graph"] > 0
    link["published"] = True
    ds.link = link
    ds.save(out)
    return load(out)
