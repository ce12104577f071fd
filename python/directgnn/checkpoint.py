"""``directgnn.load_checkpoint``: a checkpoint written by ``directgnn train --checkpoint DIR`` as
PyTorch modules with their trained weights, to score, fine-tune or export in your own code.

Homogeneous models are stacks of PyG's own layers (``SAGEConv``, ``GCNConv``, ``GATConv``) with
torch's ``BatchNorm1d``/``LayerNorm`` and ``Linear`` skips, called as any PyG model:
``model(x, edge_index)``. Heterogeneous models (``rgcn``, ``hsage``, ``gcn``, ``gat``, ``mlp``) are this
package's ``HeteroGNN``, called as a ``to_hetero`` model: ``model(x_dict, edge_index_dict)``;
a link run's decoder is ``LinkDecoder``. docs/python.md describes each."""

import io
import json
import os
import struct
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

_MAGIC = b"DGNNCKPT"
_HEADER = struct.Struct("<8sIIQ")  # magic, container version, CRC-32, payload length
_VERSION = 1


def _payload(path: str) -> bytes:
    """checkpoint.pt's payload, its header checked as the library checks it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no checkpoint here (train with --checkpoint "
                                f"{os.path.dirname(path) or '.'} first)") from None
    if len(data) < _HEADER.size or data[:8] != _MAGIC:
        raise RuntimeError(f"{path}: not a directgnn checkpoint (no DGNNCKPT header); give the "
                           "directory that `directgnn train --checkpoint` wrote")
    _, version, crc, length = _HEADER.unpack_from(data)
    if version != _VERSION:
        raise RuntimeError(f"{path}: container version {version} is not supported (this "
                           f"package reads version {_VERSION})")
    payload = data[_HEADER.size:]
    if len(payload) != length or zlib.crc32(payload) != crc:
        raise RuntimeError(f"{path}: damaged: its length or CRC-32 does not match its header "
                           "(a partial copy?); copy or train it again")
    return payload


def _read(path: str):
    """(description, {name: tensor}) of the model stored in checkpoint.pt."""
    payload = _payload(path)
    with warnings.catch_warnings():
        # The payload is the archive torch::serialize writes, which torch.jit.load reads (its
        # deprecation points to torch.export, which reads no such archive).
        warnings.simplefilter("ignore", DeprecationWarning)
        archive = torch.jit.load(io.BytesIO(payload), map_location="cpu")
    meta = json.loads(archive.meta)
    tensors = {}
    for name, t in list(archive.named_parameters()) + list(archive.named_buffers()):
        if name.startswith("model."):
            tensors[name[len("model."):]] = t.detach().clone()
    return meta, tensors


def _take(tensors: Dict[str, torch.Tensor], name: str, where: str) -> torch.Tensor:
    if name not in tensors:
        raise RuntimeError(f"{where}: the checkpoint has no parameter '{name}' that its model "
                           "configuration implies (written by another version?)")
    return tensors.pop(name)


def _assign(param: torch.Tensor, value: torch.Tensor, name: str, where: str) -> None:
    if tuple(param.shape) != tuple(value.shape):
        raise RuntimeError(f"{where}: parameter '{name}' has shape {tuple(value.shape)}, the "
                           f"model configuration gives {tuple(param.shape)}")
    with torch.no_grad():
        param.copy_(value)


class GNN(nn.Module):
    """A homogeneous model as ``directgnn train`` builds it: ``layers`` convolutions (PyG's
    ``SAGEConv``, ``GCNConv`` or ``GATConv``), each hidden one followed by the optional norm,
    ReLU (ELU for GAT), dropout and the optional residual skip. ``forward(x, edge_index)``
    gives the last layer's output (logits, or a link run's embeddings) for every node."""

    def __init__(self, config: dict):
        super().__init__()
        from torch_geometric.nn import GATConv, GCNConv, SAGEConv
        self.config = dict(config)
        arch, layers = config["arch"], int(config["layers"])
        heads = int(config.get("heads", 8)) if arch == "gat" else 1
        width = int(config["hidden"]) * heads
        self.dropout = float(config["dropout"])
        self.residual = bool(config.get("residual", False))
        norm = config.get("norm", "none")
        self.convs, self.norms, self.skips = nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        for layer in range(layers):
            last = layer + 1 == layers
            d_in = int(config["in_dim"]) if layer == 0 else width
            d_out = int(config["num_classes"]) if last else width
            if arch == "sage":
                conv = SAGEConv(d_in, d_out)
            elif arch == "gcn":
                conv = GCNConv(d_in, d_out)
            else:
                h = 1 if last else heads  # the output layer has one head
                conv = GATConv(d_in, d_out // h, heads=h, concat=not last,
                               dropout=float(config.get("attn_dropout", 0.6)))
            self.convs.append(conv)
            if last:
                break
            self.norms.append(nn.BatchNorm1d(d_out) if norm == "batch" else
                              nn.LayerNorm(d_out) if norm == "layer" else nn.Identity())
            skip = nn.Identity()
            if self.residual and d_in != d_out:
                skip = nn.Linear(d_in, d_out, bias=False)
            self.skips.append(skip)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """The last layer's output for every node of ``x`` ([N, in_dim]) and ``edge_index``
        ([2, E]: sources, destinations)."""
        x = x.float()
        act = F.elu if self.config["arch"] == "gat" else F.relu
        for layer, conv in enumerate(self.convs):
            h = conv(x, edge_index)
            if layer + 1 < len(self.convs):
                h = F.dropout(act(self.norms[layer](h)), self.dropout, self.training)
                if self.residual:
                    h = h + self.skips[layer](x)
            x = h
        return x

    def _load(self, tensors: Dict[str, torch.Tensor], prefix: str, where: str) -> None:
        names = {"sage": {"lin_l_weight": "lin_l.weight", "lin_l_bias": "lin_l.bias",
                          "lin_r_weight": "lin_r.weight"},
                 "gcn": {"weight": "lin.weight", "bias": "bias"},
                 "gat": {"lin_weight": "lin.weight", "att_src": "att_src", "att_dst": "att_dst",
                         "bias": "bias"}}[self.config["arch"]]
        params = dict(self.named_parameters())
        params.update(self.named_buffers())
        for layer in range(len(self.convs)):
            for theirs, ours in names.items():
                name = f"{prefix}conv{layer}.{theirs}"
                _assign(params[f"convs.{layer}.{ours}"], _take(tensors, name, where), name, where)
        for layer, norm in enumerate(self.norms):
            for p in ("weight", "bias", "running_mean", "running_var"):
                if hasattr(norm, p) and getattr(norm, p) is not None:
                    name = f"{prefix}norm{layer}.{p}"
                    _assign(getattr(norm, p), _take(tensors, name, where), name, where)
        for layer, skip in enumerate(self.skips):
            if isinstance(skip, nn.Linear):
                name = f"{prefix}skip{layer}_weight"
                _assign(skip.weight, _take(tensors, name, where), name, where)


class LinkDecoder(nn.Module):
    """A link run's decoder: the score (a logit) of each (src, dst) pair from its endpoints'
    embeddings. ``dot``: their dot product; ``mlp``: an MLP on their Hadamard product (ReLU
    between its linear layers, one output), as OGB's baselines."""

    def __init__(self, kind: str, dim: int, layers: int = 2):
        super().__init__()
        self.kind = kind
        self.lins = nn.ModuleList()
        if kind == "mlp":
            for layer in range(layers):
                self.lins.append(nn.Linear(dim, 1 if layer + 1 == layers else dim))

    def forward(self, h_src: torch.Tensor, h_dst: torch.Tensor) -> torch.Tensor:
        """A logit per pair: row i of ``h_src`` and ``h_dst`` ([E, dim]) are pair i's ends."""
        if self.kind == "dot":
            return (h_src * h_dst).sum(-1)
        h = h_src * h_dst
        for layer, lin in enumerate(self.lins):
            h = lin(h)
            if layer + 1 < len(self.lins):
                h = F.relu(h)
        return h.squeeze(-1)

    def _load(self, tensors, prefix: str, where: str) -> None:
        for layer, lin in enumerate(self.lins):
            for p in ("weight", "bias"):
                name = f"{prefix}mlp{layer}_{p}"
                _assign(getattr(lin, p), _take(tensors, name, where), name, where)


def _mean(x_src: torch.Tensor, edge_index: torch.Tensor, rows: int) -> torch.Tensor:
    """The mean of each destination's sources' rows (zero without sources)."""
    src, dst = edge_index[0].long(), edge_index[1].long()
    total = x_src.new_zeros(rows, x_src.size(1)).index_add_(0, dst, x_src.index_select(0, src))
    count = torch.bincount(dst, minlength=rows).clamp_(min=1).to(x_src.dtype)
    return total / count.unsqueeze(1)


class HeteroGNN(nn.Module):
    """A heterogeneous model as ``directgnn train`` builds it (docs/heterogeneous.md): ``rgcn``
    (a self weight and bias per type, a weight per relation, optionally from bases), ``hsage``
    (``to_hetero(GraphSAGE)``: a SAGE convolution per relation, summed), ``gcn`` (DGL's
    ``HeteroGraphConv`` of ``GraphConv(norm='both')``, summed), ``gat`` (``to_hetero(GAT)``
    with ``GATConv((-1, -1), add_self_loops=False)``, summed) or ``mlp`` (the target's own
    features only); hidden layers with the run's norm, activation, dropout and residual.
    ``forward(x_dict, edge_index_dict, num_nodes_dict)`` gives the last layer's output for each
    type it emits (the target type; a link run's two endpoint types). ``x_dict`` holds each
    type's features, or its learnable table (``Checkpoint.embeddings``); a type with neither is
    left out, and its node count given in ``num_nodes_dict``. Edge indices are PyG's ``[2, E]``
    (source ids, destination ids): the whole graph, whose degrees ``gcn`` normalises by."""

    def __init__(self, config: dict, node_types: List[str], edge_types: List[tuple],
                 tensors: Dict[str, torch.Tensor]):
        super().__init__()
        self.config = dict(config)
        self.node_types = list(node_types)
        self.edge_types = [tuple(e) for e in edge_types]
        # Each hidden layer's norm per type ("layerL_typeT_norm.weight", ...) as torch's own.
        norm = config.get("norm", "none")
        self.norms = nn.ModuleDict()
        for key in sorted({k.split(".")[0] for k in tensors if "." in k}):
            width = tensors[key + ".weight"].numel()
            module = nn.BatchNorm1d(width) if norm == "batch" else nn.LayerNorm(width)
            for name, value in list(tensors.items()):
                if name.startswith(key + "."):
                    _assign(getattr(module, name[len(key) + 1:]), tensors.pop(name), name,
                            "HeteroGNN")
            self.norms[key] = module
        self.params = nn.ParameterDict({k: nn.Parameter(v) for k, v in tensors.items()})
        outputs = config.get("output_types") or [config["target_type"]]
        self.outputs = [self.node_types[t] for t in outputs]

    def _heads(self, layer: int) -> int:
        last = layer + 1 == int(self.config["layers"])
        return 1 if last or self.config["kind"] != "gat" else int(self.config.get("heads", 8))

    def _out_width(self, layer: int) -> int:
        if layer + 1 == int(self.config["layers"]):
            return int(self.config["num_classes"])
        return int(self.config["hidden"]) * self._heads(layer)

    def _in_width(self, layer: int, t: int) -> int:
        return int(self.config["in_dims"][t]) if layer == 0 else self._out_width(layer - 1)

    def _param(self, name: str) -> torch.Tensor:
        if name not in self.params:
            raise RuntimeError(f"HeteroGNN: the checkpoint has no parameter '{name}' that its "
                               "model configuration implies (written by another version?)")
        return self.params[name]

    def _relation_weight(self, layer: int, r: int) -> torch.Tensor:
        bases = f"layer{layer}_bases"
        if bases in self.params:
            return torch.tensordot(self.params[f"layer{layer}_coeffs"][r], self.params[bases],
                                   dims=([0], [0]))
        return self._param(f"layer{layer}_rel{r}_weight")

    def _gcn(self, q: str, x_src, edges, rows) -> torch.Tensor:
        src, dst = edges[0].long(), edges[1].long()
        d_src = torch.bincount(src, minlength=x_src.size(0)).clamp_(min=1).float()
        d_dst = torch.bincount(dst, minlength=rows).clamp_(min=1).float()
        w = (d_src[src] * d_dst[dst]).rsqrt().unsqueeze(1)
        total = x_src.new_zeros(rows, x_src.size(1)).index_add_(0, dst, x_src[src] * w)
        return F.linear(total, self._param(q + "weight"), self._param(q + "bias"))

    def _gat(self, layer: int, q: str, x_src, x_dst, edges, rows) -> torch.Tensor:
        heads = self._heads(layer)
        channels = self._out_width(layer) // heads
        src, dst = edges[0].long(), edges[1].long()
        h = F.linear(x_src, self._param(q + "lin_src")).view(-1, heads, channels)
        score = (h * self._param(q + "att_src")).sum(-1)[src]
        if q + "lin_dst" in self.params:
            h_dst = F.linear(x_dst, self.params[q + "lin_dst"]).view(-1, heads, channels)
            score = score + (h_dst * self._param(q + "att_dst")).sum(-1)[dst]
        score = F.leaky_relu(score, 0.2)
        index = dst.unsqueeze(1).expand(-1, heads)
        peak = score.new_full((rows, heads), float("-inf")).scatter_reduce(
            0, index, score, "amax", include_self=True)
        p = (score - peak[dst]).exp()
        alpha = p / p.new_zeros(rows, heads).index_add_(0, dst, p)[dst]
        alpha = F.dropout(alpha, float(self.config.get("attn_dropout", 0)), self.training)
        out = h.new_zeros(rows, heads, channels).index_add_(0, dst, h[src] * alpha.unsqueeze(2))
        # Hidden layers concatenate their heads; the output layer has one.
        return out.reshape(rows, heads * channels) + self._param(q + "bias")

    def _term(self, layer, r, s, t, h, edges, rows, width) -> Optional[torch.Tensor]:
        """Relation r's term of type t's outputs (None where it adds nothing)."""
        kind = self.config["kind"]
        reads = self._in_width(layer, s) > 0
        q = f"layer{layer}_rel{r}_"
        if kind == "rgcn":
            return (F.linear(_mean(h[s], edges[r], rows[t]), self._relation_weight(layer, r))
                    if reads else None)
        if kind in ("gcn", "gat") and not reads:
            return self._param(q + "bias").expand(rows[t], width)
        if kind == "gcn":
            return self._gcn(q, h[s], edges[r], rows[t])
        if kind == "gat":
            return self._gat(layer, q, h[s], h[t], edges[r], rows[t])
        term = (F.linear(_mean(h[s], edges[r], rows[t]), self._param(q + "weight"),
                         self._param(q + "bias"))
                if reads else self._param(q + "bias").expand(rows[t], width))
        if self._in_width(layer, t) > 0:
            term = term + F.linear(h[t], self._param(q + "root"))
        return term

    def _output(self, layer, t, h, edges, rows) -> torch.Tensor:
        kind = self.config["kind"]
        width = self._out_width(layer)
        acc = None
        if kind in ("rgcn", "mlp"):
            bias = self._param(f"layer{layer}_type{t}_bias")
            acc = (F.linear(h[t], self._param(f"layer{layer}_type{t}_self"), bias)
                   if self._in_width(layer, t) > 0 else bias.expand(rows[t], width))
        for r, (s, d) in enumerate(self.config["relations"]):
            if d != t or kind == "mlp":
                continue
            term = self._term(layer, r, s, t, h, edges, rows, width)
            if term is not None:
                acc = term if acc is None else acc + term
        return acc if acc is not None else torch.zeros(rows[t], width)

    def _hidden(self, layer, t, acc, x) -> torch.Tensor:
        """A hidden layer's norm, activation, dropout and residual of type t."""
        key = f"layer{layer}_type{t}_norm"
        if key in self.norms and acc.size(0) > 0:
            acc = self.norms[key](acc)
        act = F.elu if self.config["kind"] == "gat" else F.relu
        acc = F.dropout(act(acc), self.config["dropout"], self.training)
        if self.config.get("residual", False) and self._in_width(layer, t) > 0:
            skip = f"layer{layer}_type{t}_skip"
            acc = acc + (F.linear(x, self.params[skip]) if skip in self.params else x)
        return acc

    def forward(self, x_dict: Dict[str, torch.Tensor], edge_index_dict: Dict[tuple, torch.Tensor],
                num_nodes_dict: Optional[Dict[str, int]] = None) -> Dict[str, torch.Tensor]:
        """The last layer's output per emitted type (see the class)."""
        types = range(len(self.node_types))
        for t, n in enumerate(self.node_types):
            if self._in_width(0, t) > 0 and n not in x_dict:
                raise KeyError(f"HeteroGNN: x_dict has no input for node type '{n}', which "
                               "the model reads (its features, or Checkpoint.embeddings)")
        h = [x_dict[n].float() if self._in_width(0, t) > 0 else None
             for t, n in enumerate(self.node_types)]
        rows = [_count(n, x_dict, num_nodes_dict, edge_index_dict) for n in self.node_types]
        edges = [edge_index_dict[e] for e in self.edge_types]
        layers = int(self.config["layers"])
        emits = {self.node_types.index(n) for n in self.outputs}
        for layer in range(layers):
            last = layer + 1 == layers
            out = [None] * len(h)
            for t in types:
                if (last or self.config["kind"] == "mlp") and t not in emits:
                    continue
                acc = self._output(layer, t, h, edges, rows)
                out[t] = acc if last else self._hidden(layer, t, acc, h[t])
            h = out
        return {self.node_types[t]: h[t] for t in sorted(emits)}


def _count(name, x_dict, num_nodes_dict, edge_index_dict) -> int:
    if num_nodes_dict and name in num_nodes_dict:
        return int(num_nodes_dict[name])
    if name in x_dict:
        return int(x_dict[name].size(0))
    raise ValueError(f"HeteroGNN: node type '{name}' has no input; give its node count in "
                     f"num_nodes_dict (e.g. num_nodes_dict={{'{name}': N}})")


@dataclass
class Checkpoint:
    """What ``load_checkpoint`` returns: ``model`` (``GNN``, or ``HeteroGNN`` for a
    heterogeneous run; a link run's encoder), ``decoder`` (a link run's ``LinkDecoder``, else
    None), ``embeddings`` (learnable tables by node type, ``--node-embeddings``), ``task``
    ("node", "link", "hetero" or "hetero_link") and ``meta`` (the checkpoint's description:
    model configuration, options, epoch, seed and metrics)."""
    task: str
    model: nn.Module
    decoder: Optional[LinkDecoder] = None
    embeddings: Dict[str, torch.Tensor] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)


def _graph_names(meta: dict):
    config = meta["model"]
    graph = meta.get("graph")
    if graph:
        return graph["node_types"], [tuple(e) for e in graph["relations"]]
    # Checkpoints written before the names were recorded: types and relations by index.
    types = [f"type{t}" for t in range(len(config["in_dims"]))]
    return types, [(types[s], f"rel{r}", types[d]) for r, (s, d) in enumerate(config["relations"])]


def load_checkpoint(path: Union[str, os.PathLike]) -> Checkpoint:
    """Reads the checkpoint directory ``path`` (or its ``checkpoint.pt``) written by
    ``directgnn train --checkpoint``: the best epoch's model as ``torch.nn.Module``s, in eval
    mode, on the CPU. Raises FileNotFoundError when there is none, RuntimeError when the file
    is damaged or not a checkpoint."""
    path = os.fspath(path)
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    file = os.path.join(path, "checkpoint.pt") if os.path.isdir(path) else path
    meta, tensors = _read(file)
    task = meta.get("task", "node")
    link = task in ("link", "hetero_link")
    prefix = "encoder." if link else ""
    config = meta["model"]
    if task in ("hetero", "hetero_link"):
        types, relations = _graph_names(meta)
        own = {k[len(prefix):]: tensors.pop(k) for k in list(tensors) if k.startswith(prefix)}
        model = HeteroGNN(config, types, relations, own)
    else:
        model = GNN(config)
        model._load(tensors, prefix, file)
    decoder = None
    if link:
        options = meta.get("options", {})
        dim = int(config["num_classes"])
        decoder = LinkDecoder(options.get("decoder", "dot"), dim,
                              int(options.get("decoder_layers", 2)))
        decoder._load(tensors, "decoder.", file)
        decoder.eval()
    left = sorted(k for k in tensors if not k.endswith("num_batches_tracked"))
    if left:
        raise RuntimeError(f"{file}: parameters {left[:4]} fit no module of its model "
                           "configuration (written by another version?)")
    embeddings = {}
    for name, entry in (meta.get("embeddings") or {}).items():
        embeddings[name] = torch.from_numpy(np.load(os.path.join(directory, entry["file"])))
    return Checkpoint(task, model.eval(), decoder, embeddings, meta)
