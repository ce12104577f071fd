"""directgnn.pyg for link prediction: PyG's edge-sampling semantics written out by hand (CI has
no pyg-lib to compare with)."""

import os
import sys

import pytest
import torch
from torch_geometric.sampler import EdgeSamplerInput, NegativeSampling

import directgnn
from directgnn import pyg

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../examples"))
import pyg_sage  # noqa: E402


@pytest.fixture
def data():
    return pyg_sage.as_pyg(directgnn.datasets.synthetic(800, 6, 8, seed=4))


def edge_set(d):
    return set(zip(d.edge_index[0].tolist(), d.edge_index[1].tolist()))


def pairs(n_id, index):
    return list(zip(n_id[index[0]].tolist(), n_id[index[1]].tolist()))


def test_binary_batches_score_the_input_edges_then_random_pairs(data):
    torch.manual_seed(0)
    edges = data.edge_index[:, :300]
    loader = pyg.LinkNeighborLoader(data, num_neighbors=[5, 5], batch_size=40,
                                    edge_label_index=edges,
                                    neg_sampling=NegativeSampling("binary", 0.5))
    graph, seen = edge_set(data), 0
    for batch in loader:
        b = batch.input_id.numel()
        num_neg = -(-b // 2)  # ceil(0.5 * b): PyG's amount may be fractional
        assert batch.edge_label_index.shape == (2, b + num_neg)
        assert batch.edge_label.tolist() == [1.0] * b + [0.0] * num_neg
        # The first b pairs are the input edges the batch was given, in order.
        want = list(zip(edges[0, batch.input_id].tolist(), edges[1, batch.input_id].tolist()))
        assert pairs(batch.n_id, batch.edge_label_index[:, :b]) == want
        # Every scored endpoint is a seed: the seeds come first in n_id, sorted and distinct.
        seeds = batch.num_sampled_nodes[0]
        assert int(batch.edge_label_index.max()) < seeds
        assert torch.equal(batch.n_id[:seeds], batch.n_id[:seeds].unique())
        # Message passing edges are real edges, from neighbour (row) to node (col).
        assert set(pairs(batch.n_id, batch.edge_index)) <= graph
        assert torch.equal(batch.x, data.x[batch.n_id])
        seen += b
    assert seen == 300


def test_triplet_batches_give_k_destinations_per_source(data):
    edges = data.edge_index[:, 100:164]
    loader = pyg.LinkNeighborLoader(data, num_neighbors=[3], batch_size=64,
                                    edge_label_index=edges,
                                    neg_sampling=NegativeSampling("triplet", 4))
    batch = next(iter(loader))
    assert batch.src_index.shape == (64,) and batch.dst_pos_index.shape == (64,)
    assert batch.dst_neg_index.shape == (64, 4)
    assert "edge_label_index" not in batch
    order = batch.input_id
    assert batch.n_id[batch.src_index].tolist() == edges[0, order].tolist()
    assert batch.n_id[batch.dst_pos_index].tolist() == edges[1, order].tolist()
    assert int(batch.dst_neg_index.max()) < batch.num_sampled_nodes[0]


def test_labels_follow_pygs_rules(data):
    """Without negatives the given labels pass through; with binary negatives PyG's loader
    shifts 0/1 labels to 1/2 so that 0 marks the negatives."""
    edges = data.edge_index[:, :50]
    labels = (torch.arange(50) % 2).float()
    plain = next(iter(pyg.LinkNeighborLoader(data, [2], edge_label_index=edges,
                                             edge_label=labels, batch_size=50)))
    assert torch.equal(plain.edge_label, labels[plain.input_id])
    shifted = next(iter(pyg.LinkNeighborLoader(data, [2], edge_label_index=edges,
                                               edge_label=labels, batch_size=50,
                                               neg_sampling="binary")))
    assert torch.equal(shifted.edge_label[:50], labels[shifted.input_id] + 1)
    assert shifted.edge_label[50:].eq(0).all()


def test_the_sampler_alone_gives_pygs_metadata(data):
    sampler = pyg.NeighborSampler(data, [4])
    index = EdgeSamplerInput(input_id=torch.arange(3), row=torch.tensor([0, 5, 9]),
                             col=torch.tensor([5, 9, 0]))
    out = sampler.sample_from_edges(index)
    input_id, edge_label_index, edge_label, time = out.metadata
    assert torch.equal(input_id, torch.arange(3)) and edge_label is None and time is None
    assert torch.equal(out.node[edge_label_index], torch.tensor([[0, 5, 9], [5, 9, 0]]))
    assert out.node[:3].tolist() == [0, 5, 9]  # the distinct endpoints, sorted, first
    with pytest.raises(NotImplementedError, match="edge_label_time"):
        pyg.LinkNeighborLoader(data, [2], edge_label_index=data.edge_index[:, :4],
                               edge_label_time=torch.zeros(4), time_attr="t")


def test_no_hops_and_no_edges_give_the_endpoints_alone():
    """num_neighbors=[] samples nothing: a batch's nodes are its scored endpoints (PyG's
    semantics), also on a graph without edges."""
    from torch_geometric.data import Data

    label_index = torch.tensor([[0, 3, 7, 3], [5, 5, 1, 8]])
    loader = pyg.LinkNeighborLoader(Data(num_nodes=10), num_neighbors=[], batch_size=4,
                                    edge_label_index=label_index)
    batch = next(iter(loader))
    assert batch.n_id.tolist() == [0, 1, 3, 5, 7, 8]
    assert batch.edge_index is None  # as PyG: the data has no edge_index to filter
    assert pairs(batch.n_id, batch.edge_label_index) == list(zip(*label_index.tolist()))
