"""Neighbour sampling."""

import dataclasses
from typing import List, Optional, Sequence, Union

import numpy as np
import torch

from ._ops import classes
from .tensor import _as_tensor, _ids


@dataclasses.dataclass
class Block:
    """One layer's sampled bipartite graph over local ids (DGL's block): destination node i
    reads source nodes ``indices[indptr[i]:indptr[i + 1]]``. The destination nodes are the
    first ``num_dst`` source nodes."""

    indptr: torch.Tensor
    indices: torch.Tensor
    num_src: int
    num_dst: int
    edge_ids: Optional[torch.Tensor] = None
    """int64 [num_edges]: each edge's position in the CSR graph (its edge id, which indexes
    edge attributes), when the sampler was asked for them."""

    def to(self, device, non_blocking: bool = False) -> "Block":
        """The block with its tensors on ``device``."""
        move = lambda t: None if t is None else t.to(device, non_blocking=non_blocking)  # noqa
        return Block(move(self.indptr), move(self.indices), self.num_src, self.num_dst,
                     move(self.edge_ids))

    @property
    def edge_index(self) -> torch.Tensor:
        """The block's edges as PyG's [2, E] (source, destination) local ids."""
        return torch.stack([self.indices.to(torch.int64), _rows(self.indptr, self.indices.numel())])


def _rows(indptr, num_edges):
    """Each CSR edge's row: ``repeat_interleave(indptr.diff())``, on a GPU with the output size
    given (the host does not wait for the device). A small CPU block takes a serial cumulative
    sum instead: torch's CPU repeat_interleave wakes every thread of the pool for any size
    (70 us a call with 2 sleeping threads, more than a small batch's sampling)."""
    if indptr.is_cuda or num_edges > 65536:  # large: the threads pay for themselves
        return torch.repeat_interleave(indptr.diff(), output_size=num_edges)
    starts = torch.zeros(num_edges + 1, dtype=torch.int64)
    starts.index_add_(0, indptr[1:-1], torch.ones(max(indptr.numel() - 2, 0), dtype=torch.int64))
    return starts[:num_edges].cumsum(0)


_NO_PYG_EDGES = ("row, col and edge are PyG's hop-wise edges, which need mode='pyg' (every "
                 "node's neighbours drawn once); mode='dgl' draws each layer anew, which they "
                 "cannot express: use the blocks")


@dataclasses.dataclass
class Sample:
    """A sampled minibatch.

    DGL's view: ``node`` holds the global ids of every input node, seeds first, and
    ``blocks`` one block per layer, the outermost (the one that reads the input features)
    first.

    PyG's view (``torch_geometric.sampler.SamplerOutput``): ``node``, ``row``/``col`` (the
    edges as local source/destination ids, ``edge_index = [row, col]``), ``edge`` (each
    edge's position in the CSR graph: its edge id; None from the GPU sampler),
    ``num_sampled_nodes`` (per hop, seeds first, the nodes first reached there) and
    ``num_sampled_edges`` (per hop, the edges drawn there), so ``trim_to_layer`` applies.
    ``row``, ``col`` and ``edge`` need ``mode="pyg"``.
    """

    node: torch.Tensor
    blocks: List[Block]
    num_sampled_nodes: List[int]
    num_sampled_edges: List[int]
    mode: str = "dgl"

    def to(self, device, non_blocking: bool = False) -> "Sample":
        """The sample with its tensors on ``device``."""
        return dataclasses.replace(self, node=self.node.to(device, non_blocking=non_blocking),
                                   blocks=[b.to(device, non_blocking) for b in self.blocks])

    def _pyg(self):
        if self.mode != "pyg":
            raise ValueError(f"directgnn.Sample: {_NO_PYG_EDGES}")
        return self.blocks[0]

    @property
    def row(self) -> torch.Tensor:
        """Local source ids of the sampled edges, hop by hop (PyG's ``row``)."""
        return self._pyg().edge_index[0]

    @property
    def col(self) -> torch.Tensor:
        """Local destination ids of the sampled edges, hop by hop (PyG's ``col``)."""
        return self._pyg().edge_index[1]

    @property
    def edge(self) -> Optional[torch.Tensor]:
        """Each sampled edge's id, its position in the CSR graph (PyG's ``edge``); None unless
        the sampler was asked for edge ids."""
        return self._pyg().edge_ids


def _blocks(node, indptrs, indices, edges):
    blocks, num_src = [], node.numel()
    for layer, (p, i) in enumerate(zip(indptrs, indices)):
        num_dst = p.numel() - 1
        blocks.append(Block(p, i, num_src, num_dst, edges[layer] if edges else None))
        num_src = num_dst
    return blocks


def _sample(result, mode):
    node, indptrs, indices, edges, hop_nodes, hop_edges = result
    return Sample(node, _blocks(node, indptrs, indices, edges), list(hop_nodes), list(hop_edges),
                  mode)


def _array(data):
    """A tensor over ``data``: tensors and numpy arrays in place, lists converted."""
    if isinstance(data, (torch.Tensor, np.ndarray)):
        return _as_tensor(data)
    return torch.as_tensor(data)


def _mode(mode, where):
    if mode not in ("dgl", "pyg"):
        raise ValueError(f"{where}: mode {mode!r} is not 'dgl' (each layer draws its neighbours "
                         "anew) or 'pyg' (each node's neighbours drawn once, reused by every "
                         "layer)")
    return mode


def _fanouts(fanouts):
    out = [int(f) for f in fanouts]
    if not out or any(f == 0 or f < -1 for f in out):
        raise ValueError(f"directgnn: fanouts {list(fanouts)} must be a non-empty list of "
                         "positive counts or -1 (every neighbour)")
    return out


class NeighborSampler:
    """k-hop neighbour sampling without replacement, as ``directgnn train`` samples: uniform,
    or weighted by the edges' weights.

    Fan-outs are in PyG order, seed hop first (``[15, 10, 5]``); -1 takes every neighbour.
    Sampled nodes are relabelled in order of first appearance, seeds first. The result
    depends only on the graph, seeds, fan-outs and seed, not on the number of threads.

    Args:
        indptr, indices: the CSR graph, CPU tensors (used in place where their dtypes allow).
        fanouts: neighbours per hop.
        device: "cpu" (the CPU sampler) or "cuda[:N]" (the GPU sampler).
        graph: where the GPU sampler reads the graph: "pinned" (host memory, in place, over
            PCIe) or "device" (copied to GPU memory once).
        seed: the base of every draw; each call to :meth:`sample` draws anew.
        mode: "dgl": each layer draws anew for all its destination nodes (DGL's
            ``MultiLayerNeighborSampler``, and ``directgnn train``); "pyg": each node's
            neighbours are drawn once, at the hop that first reaches it, and every layer
            reuses them (PyG's ``NeighborSampler``; fills ``row``, ``col`` and ``edge``).
        weights: float32 [E] edge weights in the order of ``indices`` (finite, >= 0): each
            draw picks a neighbour with probability proportional to its edge's weight among
            those left (Efraimidis-Spirakis, as pyg-lib). An edge of weight 0 is never drawn,
            but a node with no more neighbours than the fan-out keeps them all.
        edge_ids: give each block's edge ids (``Block.edge_ids``, and ``Sample.edge``);
            default: True for mode "pyg", as PyG's samplers always give them.
    """

    def __init__(self, indptr: torch.Tensor, indices: torch.Tensor, fanouts: Sequence[int], *,
                 device: Union[str, torch.device] = "cpu", graph: str = "pinned", seed: int = 0,
                 mode: str = "dgl", weights: Optional[torch.Tensor] = None,
                 edge_ids: Optional[bool] = None):
        if graph not in ("pinned", "device"):
            raise ValueError(f"directgnn.NeighborSampler: graph {graph!r} is not 'pinned' or "
                             "'device'")
        self.fanouts = _fanouts(fanouts)
        self.mode = _mode(mode, "directgnn.NeighborSampler")
        self.device = torch.device(device)
        self.weighted = weights is not None
        indptr, indices = _array(indptr), _array(indices)
        if weights is not None:
            weights = _array(weights)
        self.edge_ids = mode == "pyg" if edge_ids is None else bool(edge_ids)
        self._sampler = classes.NeighborSampler(indptr, indices, self.fanouts, str(self.device),
                                                graph, mode, weights, self.edge_ids)
        self._seed = int(seed)
        self._calls = 0
        self._nodes = indptr.numel() - 1

    def __repr__(self):
        return (f"NeighborSampler(nodes={self._nodes}, fanouts={self.fanouts}, "
                f"device={self.device}, mode={self.mode!r}, weighted={self.weighted})")

    def sample(self, seeds: Union[torch.Tensor, np.ndarray, Sequence[int]],
               seed: Optional[int] = None) -> Sample:
        """Samples the blocks for ``seeds`` (distinct node ids: a tensor, numpy array or list, or
        a bool mask over the nodes). ``seed`` fixes this call's draw (default: the sampler's
        seed and a call counter)."""
        seeds = _ids(seeds, self._nodes, "directgnn.NeighborSampler")
        return _sample(self._draw(seeds, seed), self.mode)

    def _draw(self, seeds: torch.Tensor, seed: Optional[int] = None):
        """The C++ sampler's result tuple for an id tensor (directgnn.pyg's fast path)."""
        return self._sampler.sample(seeds, self._next_seed() if seed is None else int(seed))

    def _draw_pyg(self, seeds: torch.Tensor):
        """The draw as PyG's fields, ``(node, row, col, edge, num_sampled_nodes,
        num_sampled_edges)``, in one C++ call (mode "pyg"; directgnn.pyg's fast path)."""
        return self._sampler.sample_pyg(seeds, self._next_seed())

    def _next_seed(self) -> int:
        """The sampler's seed and a call counter: each call draws anew."""
        self._calls += 1
        return self._seed * 1_000_003 + self._calls - 1
