"""Neighbour sampling."""

import dataclasses
from typing import List

import torch

from ._ops import classes


@dataclasses.dataclass
class Block:
    """One layer's sampled bipartite graph over local ids (DGL's block): destination node i
    reads source nodes ``indices[indptr[i]:indptr[i + 1]]``. The destination nodes are the
    first ``num_dst`` source nodes."""

    indptr: torch.Tensor
    indices: torch.Tensor
    num_src: int
    num_dst: int

    @property
    def edge_index(self):
        """The block's edges as PyG's [2, E] (source, destination) local ids."""
        counts = self.indptr[1:] - self.indptr[:-1]
        dst = torch.repeat_interleave(torch.arange(self.num_dst, device=counts.device), counts)
        return torch.stack([self.indices.to(torch.int64), dst])


@dataclasses.dataclass
class Sample:
    """A sampled minibatch: ``node`` holds the global ids of every input node, seeds first;
    ``blocks`` one per layer, the outermost (the one that reads the input features) first."""

    node: torch.Tensor
    blocks: List[Block]


def _blocks(node, indptrs, indices):
    blocks, num_src = [], node.numel()
    for p, i in zip(indptrs, indices):
        num_dst = p.numel() - 1
        blocks.append(Block(p, i, num_src, num_dst))
        num_src = num_dst
    return blocks


def _fanouts(fanouts):
    out = [int(f) for f in fanouts]
    if not out or any(f == 0 or f < -1 for f in out):
        raise ValueError(f"directgnn: fanouts {list(fanouts)} must be a non-empty list of "
                         "positive counts or -1 (every neighbour)")
    return out


class NeighborSampler:
    """Uniform k-hop neighbour sampling without replacement, as ``directgnn train`` samples.

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
    """

    def __init__(self, indptr, indices, fanouts, *, device="cpu", graph="pinned", seed=0):
        if graph not in ("pinned", "device"):
            raise ValueError(f"directgnn.NeighborSampler: graph {graph!r} is not 'pinned' or "
                             "'device'")
        self.fanouts = _fanouts(fanouts)
        self.device = torch.device(device)
        self._sampler = classes.NeighborSampler(indptr, indices, self.fanouts, str(self.device),
                                                graph)
        self._seed = int(seed)
        self._calls = 0

    def sample(self, seeds, seed=None):
        """Samples the blocks for ``seeds`` (distinct int64 node ids). ``seed`` fixes this
        call's draw (default: the sampler's seed and a call counter)."""
        if not isinstance(seeds, torch.Tensor):
            seeds = torch.as_tensor(seeds, dtype=torch.int64)
        if seed is None:
            seed = self._seed * 1_000_003 + self._calls
            self._calls += 1
        node, indptrs, indices = self._sampler.sample(seeds, int(seed))
        return Sample(node, _blocks(node, indptrs, indices))
