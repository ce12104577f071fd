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
