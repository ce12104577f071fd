"""Sampling options in their own words: weighted draws, edge ids in every mode, and PyG's
induced and bidirectional subgraph types through directgnn.pyg."""

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

import directgnn
from directgnn import pyg


def stars(count, weights):
    """``count`` nodes, each with the same leaves (ids count, count + 1, ...) weighted
    ``weights``, as a CSR graph by destination."""
    d = len(weights)
    indptr = torch.cat([torch.arange(0, count * d + 1, d), torch.full((d,), count * d)])
    indices = (torch.arange(d) + count).repeat(count)
    return indptr, indices, torch.tensor(weights, dtype=torch.float32).repeat(count)


def leaf_counts(count, weights, fanout, seed=1):
    indptr, indices, w = stars(count, weights)
    s = directgnn.NeighborSampler(indptr, indices, [fanout], weights=w).sample(
        torch.arange(count), seed=seed)
    leaves = s.node[s.blocks[0].indices.long()] - count
    return torch.bincount(leaves, minlength=len(weights))


def test_weighted_draws_follow_the_weights():
    counts = leaf_counts(20000, [1.0, 3.0, 0.0, 6.0], 1).double()
    assert counts[2] == 0  # weight 0: never drawn
    assert torch.allclose(counts / 20000, torch.tensor([0.1, 0.3, 0.0, 0.6], dtype=torch.float64),
                          atol=0.015)
    # Fewer positive weights than the fan-out: just those; degree <= fan-out: all of them.
    assert leaf_counts(10, [0.0, 2.0, 0.0], 2).tolist() == [0, 10, 0]
    assert leaf_counts(10, [0.0, 2.0], 2).tolist() == [10, 10]


def test_weights_are_checked():
    indptr, indices, w = stars(3, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="edge weight 1 is -1"):
        directgnn.NeighborSampler(indptr, indices, [1], weights=torch.tensor([1.0, -1, 1, 1, 1, 1]))
    with pytest.raises(RuntimeError, match=r"shape \[5\]"):
        directgnn.NeighborSampler(indptr, indices, [1], weights=w[:5])
    # Lists and numpy arrays are weights too.
    directgnn.NeighborSampler(indptr, indices, [1], weights=np.ones(6, dtype=np.float32))


@pytest.mark.parametrize("mode", ["dgl", "pyg"])
def test_edge_ids_in_both_modes(mode):
    data = directgnn.datasets.synthetic(500, 6, 4, seed=2)
    sampler = directgnn.NeighborSampler(data.indptr, data.indices, [4, 3], mode=mode,
                                        edge_ids=True)
    s = sampler.sample(torch.tensor([3, 50, 499]))
    for block in s.blocks:
        src, dst = block.edge_index
        # Edge e of the block is the graph's edge block.edge_ids[e]: in dst's row, naming src.
        assert torch.equal(data.indices[block.edge_ids].long(), s.node[src])
        assert bool((block.edge_ids >= data.indptr[s.node[dst]]).all())
        assert bool((block.edge_ids < data.indptr[s.node[dst] + 1]).all())
    plain = directgnn.NeighborSampler(data.indptr, data.indices, [4, 3], mode=mode,
                                      edge_ids=False).sample(torch.tensor([3, 50, 499]))
    assert plain.blocks[0].edge_ids is None
    assert torch.equal(plain.blocks[0].indices, s.blocks[0].indices)


def test_the_loader_samples_by_weight_and_gives_edge_ids(tmp_path):
    data = directgnn.datasets.synthetic(400, 6, 4, seed=5)
    with pytest.raises(ValueError, match="edge_weight"):
        directgnn.Loader(data, torch.arange(10), fanouts=[2], weighted=True)
    # Only the first neighbour of every node has weight: with fan-out 1 it is always drawn.
    first = torch.zeros(data.num_edges)
    first[data.indptr[:-1][data.indptr[1:] > data.indptr[:-1]]] = 1.0
    loader = directgnn.Loader(data, torch.arange(400), fanouts=[1], batch_size=100, device="cpu",
                              weighted=True, edge_weight=first, edge_ids=True, shuffle=False)
    for batch in loader:
        block = batch.blocks[0]
        dst = block.edge_index[1]
        assert torch.equal(block.edge_ids, data.indptr[batch.n_id[dst]])


def test_pyg_weighted_sampling_never_draws_a_zero_weight():
    # Node 2 receives from 1 (weight 0) and 3 (weight 1); node 3 from 4 (weight 1).
    data = Data(num_nodes=5, edge_index=torch.tensor([[1, 3, 0, 4], [2, 2, 1, 3]]),
                edge_weight=torch.tensor([0.0, 1.0, 0.0, 1.0]))
    loader = pyg.NeighborLoader(data, num_neighbors=[1, 1], input_nodes=torch.tensor([2]),
                                batch_size=1, weight_attr="edge_weight")
    batch = next(iter(loader))
    assert batch.n_id.tolist() == [2, 3, 4]
    assert batch.edge_weight.tolist() == [1.0, 1.0]


@pytest.fixture(scope="module")
def random_data():
    g = torch.Generator().manual_seed(0)
    edge_index = torch.randint(0, 60, (2, 400), generator=g)
    return Data(x=torch.arange(60), edge_index=edge_index, edge_attr=torch.arange(400))


def test_pyg_induced_subgraph_holds_every_edge_among_the_nodes(random_data):
    loader = pyg.NeighborLoader(random_data, num_neighbors=[2, 2], batch_size=6,
                                subgraph_type="induced")
    batch = next(iter(loader))
    nodes = set(batch.n_id.tolist())
    want = sorted(e for e, (u, v) in enumerate(random_data.edge_index.t().tolist())
                  if u in nodes and v in nodes)
    assert sorted(batch.e_id.tolist()) == want
    assert torch.equal(random_data.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
    assert torch.equal(batch.edge_attr, batch.e_id)


def test_pyg_bidirectional_subgraph_holds_each_edge_both_ways(random_data):
    directional = next(iter(pyg.NeighborLoader(random_data, num_neighbors=[3, 2], batch_size=6)))
    both = next(iter(pyg.NeighborLoader(random_data, num_neighbors=[3, 2], batch_size=6,
                                        subgraph_type="bidirectional")))
    assert torch.equal(both.n_id, directional.n_id)
    pairs = set(zip(both.edge_index[0].tolist(), both.edge_index[1].tolist()))
    assert all((v, u) in pairs for u, v in pairs)
    sampled = set(zip(directional.edge_index[0].tolist(), directional.edge_index[1].tolist()))
    assert pairs == sampled | {(v, u) for u, v in sampled}
