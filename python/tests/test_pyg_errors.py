"""directgnn.pyg's errors name what the user wrote and how to fix it: a node type PyG cannot
count, a heterogeneous loader without the seeds' type, an edge index column out of range."""

import pytest
import torch

pyg = pytest.importorskip("torch_geometric")
from torch_geometric.data import Data, HeteroData  # noqa: E402

import directgnn.pyg  # noqa: E402

RATES = ("user", "rates", "item")


def users_and_items():
    data = HeteroData()
    data["user"].num_nodes = 5
    data["item"].x = torch.randn(4, 3)
    data[RATES].edge_index = torch.tensor([[0, 1, 4], [0, 3, 2]])
    data["item", "rev_rates", "user"].edge_index = torch.tensor([[0, 3, 2], [0, 1, 4]])
    return data


def test_a_node_type_pyg_cannot_count_is_named_with_the_fix():
    fix = r"node type 'user' has no number of nodes .*set data\['user'\]\.num_nodes = N"
    only_in_edges = HeteroData()  # 'user' appears in the edge types only
    only_in_edges["item"].x = torch.randn(4, 3)
    only_in_edges[RATES].edge_index = torch.tensor([[0, 1], [0, 3]])
    with pytest.raises(ValueError, match=fix):
        directgnn.pyg.NeighborLoader(only_in_edges, [2], input_nodes="item", batch_size=2)
    uncounted = users_and_items()  # a store with nothing PyG counts nodes by
    del uncounted["user"].num_nodes
    uncounted["user"].kind = "people"
    with pytest.warns(UserWarning), pytest.raises(ValueError, match=fix):
        directgnn.pyg.NeighborLoader(uncounted, [2], input_nodes="item", batch_size=2)


def test_a_heterogeneous_loader_needs_the_seeds_node_type():
    data = users_and_items()
    for input_nodes in (None, torch.tensor([0, 1])):
        with pytest.raises(ValueError, match=r"input_nodes=\(node_type, ids\)"):
            directgnn.pyg.NeighborLoader(data, [2], input_nodes=input_nodes, batch_size=2)
    loader = directgnn.pyg.NeighborLoader(data, [2], input_nodes="item", batch_size=2)
    assert sum(batch["item"].batch_size for batch in loader) == 4


def test_an_edge_out_of_range_names_its_column():
    data = Data(x=torch.randn(5, 2), edge_index=torch.tensor([[0, 1, 7, 2], [1, 2, 0, 9]]))
    with pytest.raises(IndexError, match=r"edge_index\[:, 2\] = \(7, 0\) names a node out of "
                                         r"range for a graph of 5 nodes"):
        directgnn.pyg.NeighborLoader(data, [2], batch_size=2)
    hetero = users_and_items()
    hetero[RATES].edge_index = torch.tensor([[0, 1, 4], [0, 4, 2]])
    with pytest.raises(IndexError, match=r"data\[\('user', 'rates', 'item'\)\]\.edge_index"
                                         r"\[:, 1\] = \(1, 4\) names a node out of range for 5 "
                                         r"source and 4 destination nodes"):
        directgnn.pyg.NeighborLoader(hetero, [2], input_nodes="item", batch_size=2)
