"""OGB's link-property layouts, on small hand-made raw directories."""

import gzip
import os

import numpy as np
import pytest
import torch

import directgnn


def write_raw(root, edges, num_nodes, feat_dim=3):
    os.makedirs(os.path.join(root, "raw"))
    with gzip.open(os.path.join(root, "raw", "edge.csv.gz"), "wt") as f:
        f.writelines(f"{u},{v}\n" for u, v in edges)
    with gzip.open(os.path.join(root, "raw", "num-node-list.csv.gz"), "wt") as f:
        f.write(f"{num_nodes}\n")
    rng = np.random.default_rng(0)
    with gzip.open(os.path.join(root, "raw", "node-feat.csv.gz"), "wt") as f:
        for row in rng.normal(size=(num_nodes, feat_dim)):
            f.write(",".join(f"{x:.4f}" for x in row) + "\n")


def write_split(root, parts):
    path = os.path.join(root, "split", "time")
    os.makedirs(path)
    for name, value in parts.items():
        torch.save(value, os.path.join(path, f"{name}.pt"))  # numpy arrays, as OGB's


def ring(n, chord):
    return [(v, (v + 1) % n) for v in range(n)] + [(v, (v + chord) % n) for v in range(n)]


def test_a_collab_layout_keeps_ogbs_split_and_shared_negatives(tmp_path):
    root = str(tmp_path / "ogbl_collab")
    edges = ring(30, 4)
    write_raw(root, edges, 30)
    train = np.array(edges + edges[:3], dtype=np.int64)  # a pair listed once per year
    valid = {"edge": np.array([[0, 10], [1, 11]]), "edge_neg": np.array([[2, 20], [3, 21], [5, 17]])}
    test = {"edge": np.array([[4, 12], [0, 1]]), "edge_neg": np.array([[6, 22], [7, 23]])}
    write_split(root, {"train": {"edge": train}, "valid": valid, "test": test})
    with pytest.warns(UserWarning, match="1 validation and test positives"):  # (0, 1) again
        ds = directgnn.datasets.import_ogbl(root, tmp_path / "out")
    assert not ds.directed and ds.num_edges == 2 * len(edges) and ds.y is None
    link = ds.link
    assert link["negatives"] == "shared" and link["eval_edges_in_graph"]
    assert len(link["train"]) == len(edges)  # multi-edges collapsed
    assert link["val"].tolist() == [[0, 10], [1, 11]]
    assert link["test_neg"].tolist() == [[6, 22], [7, 23]]
    back = directgnn.load(tmp_path / "out")
    assert torch.equal(back.link["val_neg"], link["val_neg"]) and back.link["eval_edges_in_graph"]


def test_a_citation2_layout_keeps_negatives_per_source_and_direction(tmp_path):
    root = str(tmp_path / "ogbl_citation2")
    edges = ring(40, 7)
    write_raw(root, edges, 40)
    src, dst = np.array(edges).T
    neg = np.arange(6 * 5).reshape(6, 5) % 40
    valid = {"source_node": np.array([0, 1, 2]), "target_node": np.array([20, 21, 22]),
             "target_node_neg": neg[:3]}
    test = {"source_node": np.array([3, 4, 5]), "target_node": np.array([23, 24, 25]),
            "target_node_neg": neg[3:]}
    write_split(root, {"train": {"source_node": src, "target_node": dst}, "valid": valid,
                       "test": test})
    # (0, 1) and (1, 8) are edges, (4, 24) and (5, 25) test positives: kept, counted
    with pytest.warns(UserWarning, match="4 evaluation negatives are edges"):
        ds = directgnn.datasets.import_ogbl(root, tmp_path / "out")
    assert ds.directed and ds.num_edges == len(edges) and ds.link["published"]
    assert ds.link["negatives"] == "per_source" and not ds.link["eval_edges_in_graph"]
    assert ds.link["test"].tolist() == [[3, 23], [4, 24], [5, 25]]
    assert torch.equal(ds.link["test_neg"], torch.from_numpy(neg[3:]))


def test_bad_layouts_say_what_is_wrong(tmp_path):
    root = str(tmp_path / "ogbl_collab")
    write_raw(root, ring(20, 3), 20)
    write_split(root, {"train": {"pairs": np.zeros((2, 2))}, "valid": {}, "test": {}})
    with pytest.raises(ValueError, match="expected 'edge'"):
        directgnn.datasets.import_ogbl(root, tmp_path / "out")
    with pytest.raises(RuntimeError, match="only Python reads"):  # the C++ readers refuse .pt
        directgnn.load(root)
    other = str(tmp_path / "mine")
    write_raw(other, ring(20, 3), 20)
    write_split(other, {"train": {"edge": np.array(ring(20, 3))}, "valid": {}, "test": {}})
    with pytest.raises(ValueError, match="add_inverse_edges=True or False"):
        directgnn.datasets.import_ogbl(other, tmp_path / "out2")
    with pytest.raises(ValueError, match="one split directory"):
        directgnn.datasets.import_ogbl(str(tmp_path), tmp_path / "out3")
