"""directgnn.load_checkpoint: checkpoints written by the CLI (DIRECTGNN_CLI, set by the build's
test) as modules whose outputs equal `directgnn embed`'s, for every kind of run."""
import os
import subprocess

import numpy as np
import pytest
import torch

import directgnn

CLI = os.environ.get("DIRECTGNN_CLI", "")
needs_cli = pytest.mark.skipif(not CLI, reason="DIRECTGNN_CLI (the directgnn binary) is not set")


def train(tmp_path, name, *args):
    out = str(tmp_path / name)
    subprocess.run([CLI, "train", *args, "--threads", "1", "--checkpoint", out], check=True,
                   capture_output=True)
    return out


def embedded(checkpoint, dataset, tmp_path, name):
    out = str(tmp_path / f"{name}.emb")
    subprocess.run([CLI, "embed", "--checkpoint", checkpoint, "--dataset", dataset, "--out", out,
                    "--threads", "1"], check=True, capture_output=True)
    if os.path.isdir(out):
        return {f[:-4]: torch.from_numpy(np.load(os.path.join(out, f))) for f in os.listdir(out)}
    return torch.from_numpy(np.load(out))


def roc_auc(pos, neg):
    """scikit-learn's ROC-AUC, ties averaged: the Mann-Whitney statistic."""
    scores = torch.cat([pos, neg]).double()
    order = scores.argsort()
    ranks = torch.empty_like(scores)
    ranks[order] = torch.arange(1, scores.numel() + 1, dtype=torch.double)
    values, inverse = scores.unique(return_inverse=True)
    mean = torch.zeros_like(values).index_add_(0, inverse, ranks)
    mean /= torch.bincount(inverse, minlength=values.numel()).double()
    r = mean[inverse][:pos.numel()].sum()
    return float((r - pos.numel() * (pos.numel() + 1) / 2) / (pos.numel() * neg.numel()))


@needs_cli
@pytest.mark.parametrize("flags", [["--model", "sage"], ["--model", "gcn"],
                                   ["--model", "gat", "--norm", "batch", "--residual"],
                                   ["--model", "sage", "--layers", "3", "--norm", "layer",
                                    "--residual"]])
def test_homogeneous_node_models_give_the_logits_of_embed(tmp_path, cora_path, flags):
    from torch_geometric.nn import GATConv, GCNConv, SAGEConv
    ck_dir = train(tmp_path, "ck", "--dataset", cora_path, "--epochs", "2", *flags)
    ck = directgnn.load_checkpoint(ck_dir)
    assert ck.task == "node" and ck.decoder is None and not ck.model.training
    conv = {"sage": SAGEConv, "gcn": GCNConv, "gat": GATConv}[flags[1]]
    assert all(isinstance(c, conv) for c in ck.model.convs)  # PyG's own layers
    data = directgnn.load(cora_path).to_pyg()
    with torch.no_grad():
        logits = ck.model(data.x, data.edge_index)
    assert (logits - embedded(ck_dir, cora_path, tmp_path, "node")).abs().max() < 1e-5


@needs_cli
def test_a_link_checkpoint_gives_the_encoder_and_the_decoder_of_its_metrics(tmp_path, cora_path):
    ck_dir = train(tmp_path, "ck", "--task", "link", "--dataset", cora_path, "--epochs", "2",
                   "--decoder", "mlp", "--seed", "1")
    ck = directgnn.load_checkpoint(ck_dir)
    assert ck.task == "link" and ck.decoder.kind == "mlp"
    ds = directgnn.load(cora_path).random_link_split(seed=1)  # the run's message-passing graph
    data = ds.to_pyg()
    with torch.no_grad():
        h = ck.model(data.x, data.edge_index)
        assert (h - embedded(ck_dir, cora_path, tmp_path, "link")).abs().max() < 1e-5
        pos, neg = ds.link["test"].long(), ds.link["test_neg"].long()
        score = roc_auc(ck.decoder(h[pos[:, 0]], h[pos[:, 1]]),
                        ck.decoder(h[neg[:, 0]], h[neg[:, 1]]))
    assert score == pytest.approx(ck.meta["test"]["roc_auc"], abs=1e-6)


@needs_cli
@pytest.mark.parametrize("flags", [["--model", "rgcn", "--bases", "2", "--layers", "3"],
                                   ["--model", "hsage", "--node-embeddings", "8"],
                                   ["--model", "gcn", "--norm", "batch", "--residual"],
                                   ["--model", "gat", "--heads", "2", "--norm", "layer",
                                    "--residual", "--node-embeddings", "8"],
                                   ["--task", "link", "--target-relation", "author,writes,paper"],
                                   ["--task", "link", "--target-relation", "author,writes,paper",
                                    "--model", "gat", "--heads", "2"]])
def test_heterogeneous_models_give_the_outputs_of_embed(tmp_path, flags):
    ck_dir = train(tmp_path, "ck", "--dataset", "mag:0.01", "--epochs", "1", "--hidden", "16",
                   *flags)
    ck = directgnn.load_checkpoint(ck_dir)
    ds = directgnn.hetero.mag(0.01)
    if ck.task == "hetero_link":
        ds, _ = ds.random_link_split(("author", "writes", "paper"), seed=0)
        assert ck.decoder is not None
    data = ds.to_pyg()
    x = {t: data[t].x for t in data.node_types if "x" in data[t]}
    x.update(ck.embeddings)  # the learnable tables of featureless types
    assert bool(ck.embeddings) == ("--node-embeddings" in flags)
    with torch.no_grad():
        out = ck.model(x, data.edge_index_dict, {t: data[t].num_nodes for t in data.node_types})
    want = embedded(ck_dir, "mag:0.01", tmp_path, "hetero")
    assert sorted(out) == sorted(want)
    for t in out:
        assert (out[t] - want[t]).abs().max() < 1e-5, t


@needs_cli
def test_a_heterogeneous_gat_relation_is_pygs_gatconv_without_self_loops(tmp_path):
    """Each relation of a gat checkpoint computes what PyG's GATConv((-1, -1),
    add_self_loops=False) computes with its weights, as to_hetero(GAT) builds it."""
    from torch_geometric.nn import GATConv
    ck_dir = train(tmp_path, "ck", "--dataset", "mag:0.01", "--epochs", "1", "--hidden", "8",
                   "--model", "gat", "--heads", "2", "--layers", "1")
    ck = directgnn.load_checkpoint(ck_dir)
    data = directgnn.hetero.mag(0.01).to_pyg()
    r = ck.model.edge_types.index(("paper", "cites", "paper"))
    q = f"layer0_rel{r}_"
    classes = int(ck.model.config["num_classes"])
    conv = GATConv((-1, -1), classes, heads=1, add_self_loops=False)
    x = data["paper"].x.float()
    edges = data["paper", "cites", "paper"].edge_index
    with torch.no_grad():
        conv((x, x), edges)  # sizes the lazy layers
        conv.lin_src.weight.copy_(ck.model.params[q + "lin_src"])
        conv.lin_dst.weight.copy_(ck.model.params[q + "lin_dst"])
        conv.att_src.copy_(ck.model.params[q + "att_src"])
        conv.att_dst.copy_(ck.model.params[q + "att_dst"])
        conv.bias.copy_(ck.model.params[q + "bias"])
        theirs = conv((x, x), edges)
        ours = ck.model._gat(0, q, x, x, edges, x.size(0))
    assert (theirs - ours).abs().max() < 1e-5


def test_a_damaged_or_missing_checkpoint_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint here"):
        directgnn.load_checkpoint(tmp_path)
    (tmp_path / "checkpoint.pt").write_bytes(b"DGNNCKPT" + bytes(16) + b"payload")
    with pytest.raises(RuntimeError, match="checkpoint.pt: container version 0"):
        directgnn.load_checkpoint(tmp_path)
    header = b"DGNNCKPT" + (1).to_bytes(4, "little") + bytes(4) + (7).to_bytes(8, "little")
    (tmp_path / "checkpoint.pt").write_bytes(header + b"payload")
    with pytest.raises(RuntimeError, match="damaged"):
        directgnn.load_checkpoint(tmp_path)
    (tmp_path / "checkpoint.pt").write_bytes(b"PK\x03\x04")
    with pytest.raises(RuntimeError, match="not a directgnn checkpoint"):
        directgnn.load_checkpoint(tmp_path / "checkpoint.pt")
