"""PyG's training loop on a heterogeneous dataset directory (`directgnn generate mag`), each
epoch split into load time (waiting for the next batch: sampling, feature rows, collation) and
compute time (forward, backward, optimiser step), with the test accuracy at the epoch of best
validation accuracy, over seeds.

Models (PyG, lazily initialised, inputs per node type, featureless types as width-0 inputs as
directgnn's models take them):
  rgcn   the function of `directgnn train --model rgcn` (src/nn/hetero_model.h): per layer a
         HeteroConv of per-relation mean convolutions without root weight or bias
         (SAGEConv(root_weight=False, bias=False): W_r mean_r(x_u)), summed, plus a per-type
         Linear self term with bias; ReLU and dropout between layers; the last layer computes
         the target type only (its relations into the target and its self term)
  sage   PyG's to_hetero(GraphSAGE, metadata, aggr="sum") (directgnn's --model hsage)

Loaders: pyg (PyG's NeighborLoader; pyg-lib or torch-sparse, whichever PyG finds) or directgnn
(directgnn.pyg.NeighborLoader on the same HeteroData). Evaluation is one full-graph forward
(every neighbour, as directgnn's layer-wise inference), every --eval-every epochs and at the
last; its time is not in the epoch.

    .venv/bin/python bench/python/hetero_train.py DIR [--model rgcn|sage] [--loader pyg]
        [--hidden 64] [--epochs 10] [--seeds 0 1 2] [--fan-out 10,10] [--batch-size 1024]
        [--lr 0.005] [--dropout 0.5] [--eval-every 1] [--threads 2] [--trim] [--json OUT]

Without --trim, PyG's layers run on every sampled node (PyG's default: the first layer also
computes the outermost hop's nodes, whose outputs nothing reads); --trim (rgcn) applies PyG's
trim_to_layer, PyG's own remedy, which computes what directgnn's blocks compute.

The defaults are `directgnn train`'s (Adam, lr 0.005, dropout 0.5, batch 1024), except hidden.
Idle OpenMP threads sleep (OMP_WAIT_POLICY=PASSIVE, set before torch loads) unless the
environment says otherwise.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch_geometric.nn import HeteroConv, Linear, SAGEConv, to_hetero
from torch_geometric.nn.models import GraphSAGE
from torch_geometric.utils import trim_to_layer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _hetero_data  # noqa: E402
from hetero_loader import make_loader, pyg_backend  # noqa: E402


class RGCN(torch.nn.Module):
    """directgnn's RGCN in PyG: h_v = W_self[t] x_v + b[t] + sum_r W_r mean_{u in N_r(v)} x_u."""

    def __init__(self, metadata, target, hidden, out, layers=2, dropout=0.5):
        super().__init__()
        node_types, edge_types = metadata
        self.target, self.dropout = target, dropout
        self.convs, self.selfs = torch.nn.ModuleList(), torch.nn.ModuleList()
        for layer in range(layers):
            last = layer == layers - 1
            width = out if last else hidden
            rels = [et for et in edge_types if not last or et[2] == target]
            types = [target] if last else node_types
            self.convs.append(HeteroConv({et: SAGEConv((-1, -1), width, aggr="mean",
                                                       root_weight=False, bias=False)
                                          for et in rels}, aggr="sum"))
            self.selfs.append(torch.nn.ModuleDict({t: Linear(-1, width) for t in types}))

    def forward(self, x_dict, edge_index_dict, trim=None):
        for layer, (conv, selfs) in enumerate(zip(self.convs, self.selfs)):
            if trim is not None:  # PyG's trim_to_layer: drop what later layers cannot reach
                x_dict, edge_index_dict, _ = trim_to_layer(layer, trim[0], trim[1], x_dict,
                                                           edge_index_dict)
            msgs = conv(x_dict, edge_index_dict)
            out = {}
            for t, lin in selfs.items():
                h = lin(x_dict[t])
                if t in msgs:
                    h = h + msgs[t]
                if layer < len(self.convs) - 1:
                    h = F.dropout(F.relu(h), self.dropout, self.training)
                out[t] = h
            x_dict = out
        return x_dict[self.target]


class HeteroSAGE(torch.nn.Module):
    """PyG's to_hetero(GraphSAGE) with the sum over relations; logits of the target type."""

    def __init__(self, metadata, target, hidden, out, layers=2, dropout=0.5):
        super().__init__()
        self.target = target
        self.net = to_hetero(GraphSAGE(-1, hidden, num_layers=layers, out_channels=out,
                                       dropout=dropout), metadata, aggr="sum")

    def forward(self, x_dict, edge_index_dict, trim=None):
        if trim is not None:
            raise ValueError("--trim: only the rgcn model trims")
        return self.net(x_dict, edge_index_dict)[self.target]


MODELS = {"rgcn": RGCN, "sage": HeteroSAGE}


def inputs(batch, node_types):
    """x per node type: the batch's rows, or a width-0 tensor for a featureless type."""
    return {t: batch[t].x if "x" in batch[t] else torch.zeros(batch[t].num_nodes, 0)
            for t in node_types}


def trim_args(batch, trim):
    if not trim:
        return None
    return batch.num_sampled_nodes_dict, batch.num_sampled_edges_dict


def zero_width_biases(model):
    """Zeroes the bias of every linear map with 0 inputs (a featureless type's): PyG's lazy
    initialisation skips them (fan-in 0), leaving uninitialised memory; directgnn starts its
    type biases at 0."""
    for m in model.modules():
        if isinstance(m, Linear) and m.in_channels == 0 and m.bias is not None:
            with torch.no_grad():
                m.bias.zero_()


def train_epoch(model, opt, loader, target, node_types, trim=False):
    model.train()
    load = compute = 0.0
    loss_sum = correct = seen = 0
    it = iter(loader)
    while True:
        t0 = time.perf_counter()
        batch = next(it, None)
        t1 = time.perf_counter()
        load += t1 - t0
        if batch is None:
            break
        b = batch[target].batch_size
        opt.zero_grad()
        logits = model(inputs(batch, node_types), batch.edge_index_dict,
                       trim_args(batch, trim))[:b]
        y = batch[target].y[:b]
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        loss_sum += float(loss.detach()) * b
        correct += int((logits.argmax(1) == y).sum())
        seen += b
        compute += time.perf_counter() - t1
    return load, compute, loss_sum / max(1, seen), correct / max(1, seen)


@torch.no_grad()
def evaluate(model, data, target, splits):
    model.eval()
    x = inputs(data, data.node_types)
    pred = model(x, data.edge_index_dict).argmax(1)
    y = data[target].y
    return {s: float((pred[splits[s]] == y[splits[s]]).float().mean()) for s in ("val", "test")}


def run_seed(seed, a, data, target, splits, fanouts, metadata, num_classes):
    torch.manual_seed(seed)
    loader = make_loader(a.loader, data, target, splits["train"], fanouts, a.batch_size)
    model = MODELS[a.model](metadata, target, a.hidden, num_classes, a.layers, a.dropout)
    with torch.no_grad():  # lazy shapes
        batch = next(iter(loader))
        model(inputs(batch, data.node_types), batch.edge_index_dict, trim_args(batch, a.trim))
    zero_width_biases(model)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    epochs, best = [], None
    for epoch in range(1, a.epochs + 1):
        load, compute, loss, train_acc = train_epoch(model, opt, loader, target,
                                                     data.node_types, a.trim)
        rec = {"epoch": epoch, "load_s": load, "compute_s": compute, "epoch_s": load + compute,
               "loss": loss, "train_acc": train_acc}
        if epoch % a.eval_every == 0 or epoch == a.epochs:
            t = time.perf_counter()
            rec.update({f"{k}_acc": v for k, v in evaluate(model, data, target,
                                                          splits).items()})
            rec["eval_s"] = time.perf_counter() - t
            if best is None or rec["val_acc"] > best["val_acc"]:
                best = rec
        epochs.append(rec)
        print(f"seed {seed} epoch {epoch:3d}  loss {loss:.4f}  train {train_acc:.4f}  "
              + (f"val {rec['val_acc']:.4f}  test {rec['test_acc']:.4f}  " if "val_acc" in rec
                 else "") + f"{load + compute:.2f} s (load {load:.2f}, compute {compute:.2f})",
              flush=True)
    timed = epochs[1:] if len(epochs) > 1 else epochs  # the first epoch warms up
    summary = {k: statistics.median(r[k] for r in timed)
               for k in ("epoch_s", "load_s", "compute_s")}
    summary.update(best_epoch=best["epoch"], val_acc=best["val_acc"], test_acc=best["test_acc"])
    print(f"seed {seed}: best epoch {best['epoch']}: val {best['val_acc']:.4f}, test "
          f"{best['test_acc']:.4f}; epoch {summary['epoch_s']:.3f} s = load "
          f"{summary['load_s']:.3f} + compute {summary['compute_s']:.3f} (median of epochs "
          f"2..{a.epochs})", flush=True)
    return {"seed": seed, "epochs": epochs, **summary}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset", help="a heterogeneous dataset directory")
    p.add_argument("--model", default="rgcn", choices=sorted(MODELS))
    p.add_argument("--loader", default="pyg", choices=["pyg", "directgnn"])
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.005)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--eval-every", type=int, default=1)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--fan-out", default="10,10")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--trim", action="store_true",
                   help="rgcn: PyG's trim_to_layer, so layer l computes only the nodes within "
                        "layers-l hops of the seeds (as directgnn's blocks)")
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    fanouts = [int(f) for f in a.fan_out.split(",")]
    if len(fanouts) != a.layers:
        p.error(f"--fan-out gives {len(fanouts)} hops for {a.layers} layers")
    data, splits = _hetero_data.to_heterodata(a.dataset)
    target = _hetero_data.target_type(a.dataset)
    num_classes = _hetero_data.read_meta(a.dataset)["target"]["num_classes"]
    metadata = data.metadata()
    results = {"dataset": os.path.abspath(a.dataset), "args": vars(a),
               "threads": torch.get_num_threads(), "torch": torch.__version__,
               "pyg_backend": pyg_backend(),
               "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "seeds": []}
    import torch_geometric

    results["torch_geometric"] = torch_geometric.__version__
    for seed in a.seeds:
        results["seeds"].append(run_seed(seed, a, data, target, splits, fanouts, metadata,
                                         num_classes))
    acc = [s["test_acc"] for s in results["seeds"]]
    results["test_acc_mean"] = statistics.mean(acc)
    results["test_acc_std"] = statistics.stdev(acc) if len(acc) > 1 else 0.0
    for k in ("epoch_s", "load_s", "compute_s"):
        results[f"{k}_median"] = statistics.median(s[k] for s in results["seeds"])
    print(f"{a.model} via {a.loader} ({results['pyg_backend']}): test "
          f"{results['test_acc_mean']:.4f} +- {results['test_acc_std']:.4f} over seeds "
          f"{a.seeds}; epoch {results['epoch_s_median']:.3f} s = load "
          f"{results['load_s_median']:.3f} + compute {results['compute_s_median']:.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
