"""A directgnn heterogeneous dataset directory (docs/formats.md, "Heterogeneous dataset
directory") as PyG's HeteroData, read with numpy alone, for the heterogeneous benchmarks.

Relation S___R___D is a CSR by destination: its rows are nodes of D and its indices nodes of S,
so PyG's edge_index[(S, R, D)] is [indices, row of each edge] (messages flow source -> row).
Types without features get no x (``featureless_x=True``: a [count, 0] tensor, which PyG's lazy
layers accept, so a model sees them as directgnn's models do: width-0 inputs that contribute
only through later layers). Labels and splits go on the target type as y and
train/val/test masks.
"""

import json
import os

import numpy as np
import torch


def _load(path, mmap=True):
    return np.load(path, mmap_mode="r" if mmap else None)


def read_meta(root):
    with open(os.path.join(root, "meta.json")) as f:
        meta = json.load(f)
    if meta.get("kind") != "heterogeneous":
        raise ValueError(f"{root}/meta.json: kind is {meta.get('kind')!r}, not 'heterogeneous'")
    return meta


def relation_dir(rel):
    return f"{rel['src']}___{rel['rel']}___{rel['dst']}"


def to_heterodata(root, featureless_x=False, int32_edges=False):
    """(HeteroData, splits): the directory at ``root`` as a HeteroData (int64 edge_index unless
    ``int32_edges``; x per featured type, y on the target type, nothing else, so a loader's
    per-batch work is only the features and labels) and the target type's split ids
    ({"train": int64 tensor, ...}, the directory's split 0)."""
    from torch_geometric.data import HeteroData

    meta = read_meta(root)
    data = HeteroData()
    for t in meta["node_types"]:
        name, count = t["name"], int(t["count"])
        data[name].num_nodes = count
        if int(t.get("feat_dim", 0)) > 0:
            x = np.array(_load(os.path.join(root, "nodes", name, "features.npy")))
            data[name].x = torch.from_numpy(x.astype(np.float32, copy=False))
        elif featureless_x:
            data[name].x = torch.zeros(count, 0)
    dtype = np.int32 if int32_edges else np.int64
    for rel in meta["relations"]:
        d = os.path.join(root, "relations", relation_dir(rel))
        indptr = np.asarray(_load(os.path.join(d, "indptr.npy")), dtype=np.int64)
        indices = np.asarray(_load(os.path.join(d, "indices.npy")), dtype=dtype)
        rows = np.repeat(np.arange(len(indptr) - 1, dtype=dtype), np.diff(indptr))
        assert len(rows) == len(indices) == int(rel["num_edges"]), relation_dir(rel)
        data[rel["src"], rel["rel"], rel["dst"]].edge_index = torch.from_numpy(
            np.stack([indices, rows]))
    splits = {}
    target = meta.get("target")
    if target:
        t = target["type"]
        data[t].y = torch.from_numpy(np.array(_load(os.path.join(root, "labels.npy")),
                                                dtype=np.int64))
        for split in ("train", "val", "test"):
            path = os.path.join(root, f"{split}_idx.npy")
            if os.path.exists(path):
                splits[split] = torch.from_numpy(np.array(_load(path), dtype=np.int64))
    return data, splits


def target_type(root):
    return read_meta(root)["target"]["type"]
