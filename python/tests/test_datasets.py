import dataclasses
import numpy as np
import pytest
import torch

import directgnn


def test_load_reads_cora(cora_path):
    data = directgnn.load(cora_path)
    assert data.num_nodes == 2708 and data.x.shape == (2708, 1433)
    assert data.num_edges == 10556 and data.num_classes == 7
    assert data.splits == []
    split = data.random_split(seed=0)
    assert split["train"].numel() == 140 and split["val"].numel() == 500
    assert split["test"].numel() == 1000
    assert torch.equal(split["train"], data.random_split(seed=0)["train"])


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        directgnn.load(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip archive")
    with pytest.raises(RuntimeError, match="bad.npz"):
        directgnn.load(bad)


def test_load_reads_a_numpy_savez_file(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "g.npz"
    np.savez(path, edges=np.array([[0, 1], [1, 2], [2, 3]]),
             node_features=rng.standard_normal((4, 3)).astype(np.float32),
             node_labels=np.array([0, 1, 0, 1]))
    data = directgnn.load(path)
    assert data.num_nodes == 4 and data.num_edges == 6  # both directions


def test_generators_are_deterministic_and_match_their_arguments():
    a = directgnn.datasets.synthetic(1000, 10, 16, seed=2)
    b = directgnn.datasets.synthetic(1000, 10, 16, seed=2)
    assert a.num_nodes == 1000 and a.x.shape == (1000, 16) and a.num_classes == 8
    assert torch.equal(a.indices, b.indices) and torch.equal(a.x, b.x)
    r = directgnn.datasets.rmat(4096, 4, 8, dtype="float16", train_fraction=0.1)
    assert r.x.dtype == torch.float16 and r.num_nodes == 4096
    assert 300 < r.train_idx.numel() < 520
    with pytest.raises(ValueError, match="dtype"):
        directgnn.datasets.rmat(4096, 4, 8, dtype="int8")


def test_a_random_link_split_is_seeded_disjoint_and_saved_with_its_negatives(tmp_path):
    """PyG's RandomLinkSplit, seeded: val/test edges leave the message-passing graph, fixed
    negatives are no edge, and a dataset directory keeps the split without labels."""
    ds = directgnn.datasets.synthetic(400, 6, 4, seed=2)
    split = ds.random_link_split(seed=3, neg_per_source=4)
    link = split.link
    assert link["negatives"] == "per_source" and link["test_neg"].shape == (len(link["test"]), 4)
    graph = set(zip(split.indices.tolist(),
                    torch.repeat_interleave(torch.arange(split.num_nodes),
                                            split.indptr.diff()).tolist()))
    whole = set(zip(ds.indices.tolist(),
                    torch.repeat_interleave(torch.arange(ds.num_nodes), ds.indptr.diff()).tolist()))
    for u, v in link["train"].tolist():
        assert (u, v) in graph and (v, u) in graph
    for name in ("val", "test"):
        for u, v in link[name].tolist():
            assert (u, v) not in graph and (v, u) not in graph and (u, v) in whole
    for row, (u, _) in zip(link["test_neg"].tolist(), link["test"].tolist()):
        assert all(v != u and (u, v) not in whole for v in row)
    assert torch.equal(ds.random_link_split(seed=3, neg_per_source=4).link["val"], link["val"])
    split.y, split.num_classes, split.splits = None, 0, []
    split.save(tmp_path / "d")
    back = directgnn.load(tmp_path / "d")
    assert back.y is None and back.num_classes == 0
    assert torch.equal(back.link["test_neg"], link["test_neg"])
    with pytest.raises(ValueError, match="no labels"):
        back.random_split(0)
    with pytest.raises(RuntimeError, match="already exists"):
        split.save(tmp_path / "d")


def test_a_hand_written_link_split_lists_each_pair_once_and_draws_no_edge_as_negative(tmp_path):
    """Repeated test positives and a negative that is a real edge are refused, naming the row
    and the fix; the same split marked published (an OGB import) is kept."""
    split = directgnn.datasets.synthetic(400, 6, 4, seed=2).random_link_split(seed=3)
    link = split.link
    repeated = dict(link, test=torch.cat([link["test"], link["test"][:1].flip(1)]),
                    test_neg=torch.cat([link["test_neg"], link["test_neg"][:1] + 1]))
    split.link = repeated
    row = len(link["test"])
    with pytest.raises(RuntimeError, match=f"test.npy: positive {row} .* repeats positive 0 "
                                         r"\(either direction\); list each evaluation pair once"):
        split.save(tmp_path / "repeated")
    edge = dict(link, val_neg=link["val_neg"].clone())
    edge["val_neg"][3] = link["train"][0]
    split.link = edge
    with pytest.raises(RuntimeError, match="val_neg.npy: negative 3 .* is an edge .* draw it again"):
        split.save(tmp_path / "edge")
    split.link = dict(edge, published=True)
    split.save(tmp_path / "published")
    assert directgnn.load(tmp_path / "published").link["published"]


def test_to_pyg_gives_a_data_object_with_the_graph_labels_masks_and_link_split():
    pytest.importorskip("torch_geometric")
    ds = directgnn.datasets.synthetic(300, 5, 4, seed=1)
    data = ds.to_pyg()
    data.validate()
    dst = torch.repeat_interleave(torch.arange(ds.num_nodes), ds.indptr.diff())
    assert torch.equal(data.edge_index[0], ds.indices.long()) and torch.equal(data.edge_index[1], dst)
    assert torch.equal(data.x, ds.x) and torch.equal(data.y, ds.y) and data.num_nodes == 300
    split = ds.split(0)
    for name in ("train", "val", "test"):
        assert torch.equal(data[f"{name}_mask"].nonzero().view(-1), split[name].sort().values)
    two = dataclasses.replace(ds, splits=[split, ds.random_split(3)])
    assert two.to_pyg().val_mask.shape == (300, 2)
    assert torch.equal(two.to_pyg().val_mask[:, 1].nonzero().view(-1),
                       two.splits[1]["val"].sort().values)
    linked = ds.random_link_split(seed=2, neg_per_source=3).to_pyg()
    assert linked.test_pos_edge_index.shape[0] == 2 and linked.test_neg_dst.shape[1] == 3
    assert ds.random_link_split(seed=2).to_pyg().val_neg_edge_index.shape[0] == 2


def test_a_renumbered_dataset_speaks_original_ids(tmp_path, cora_path):
    """``directgnn convert --reorder degree``: arrays in the stored order, node_ids back to the
    original ids, the default split drawn by original ids, and the map kept by save and
    to_pyg."""
    import os
    import subprocess
    cli = os.environ.get("DIRECTGNN_CLI")
    if not cli:
        pytest.skip("DIRECTGNN_CLI (the directgnn binary) is not set")
    subprocess.run([cli, "convert", cora_path, str(tmp_path / "deg"), "--reorder", "degree"],
                   check=True, capture_output=True)
    orig, ds = directgnn.load(cora_path), directgnn.load(tmp_path / "deg")
    assert orig.node_ids is None and ds.node_order == "degree" and ds.node_ids.shape == (2708,)
    assert torch.equal(ds.y, orig.y[ds.node_ids]) and torch.equal(ds.x, orig.x[ds.node_ids])
    degrees = ds.indptr.diff()
    assert bool((degrees[:-1] >= degrees[1:]).all())
    ids = torch.tensor([0, 5, 2707])
    assert torch.equal(ds.stored_ids(ds.original_ids(ids)), ids)
    assert torch.equal(orig.original_ids(ids), ids)
    a, b = orig.random_split(seed=3), ds.random_split(seed=3)
    for name in ("train", "val", "test"):
        assert torch.equal(ds.original_ids(b[name]), a[name])
    ds.save(tmp_path / "again")
    again = directgnn.load(tmp_path / "again")
    assert torch.equal(again.node_ids, ds.node_ids) and again.node_order == "degree"
    assert torch.equal(ds.to_pyg().node_ids, ds.node_ids)
    bad = dataclasses.replace(ds, node_ids=torch.zeros(2708, dtype=torch.long))
    with pytest.raises(RuntimeError, match="both map to original id 0"):
        bad.save(tmp_path / "bad")


def test_partitioned_dataset_exposes_its_book(cora_path, tmp_path):
    """``directgnn partition``: the book (offsets, per-part counts, edge cut) and owners()."""
    import os
    import subprocess
    cli = os.environ.get("DIRECTGNN_CLI")
    if not cli:
        pytest.skip("DIRECTGNN_CLI (the directgnn binary) is not set")
    subprocess.run([cli, "partition", cora_path, str(tmp_path / "p"), "--parts", "3",
                    "--method", "random"], check=True, capture_output=True)
    ds = directgnn.load(tmp_path / "p")
    book = ds.partition
    assert book["method"] == "random" and book["parts"] == 3 and ds.node_order == "random"
    assert book["offsets"][0] == 0 and book["offsets"][-1] == 2708
    assert sum(book["nodes"]) == 2708 and sum(book["edges"]) == ds.num_edges
    assert 0 < book["edge_cut"] < ds.num_edges
    owners = ds.owners(torch.tensor([0, book["offsets"][1] - 1, book["offsets"][1], 2707]))
    assert owners.tolist() == [0, 0, 1, 2]
    assert directgnn.load(cora_path).partition is None
    with pytest.raises(ValueError, match="is not partitioned"):
        directgnn.load(cora_path).owners(torch.tensor([0]))
