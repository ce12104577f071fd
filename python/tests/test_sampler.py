import pytest
import torch

import directgnn
from conftest import needs_gpu


@pytest.fixture(scope="module")
def graph():
    return directgnn.datasets.synthetic(2000, 8, 4, seed=3)


def edges_of(data):
    src = torch.repeat_interleave(torch.arange(data.num_nodes), data.indptr[1:] - data.indptr[:-1])
    return set(zip(src.tolist(), data.indices.long().tolist()))


def check_sample(data, seeds, sample, fanouts):
    node = sample.node
    assert torch.equal(node[: seeds.numel()], seeds)  # seeds first
    assert node.unique().numel() == node.numel()
    edges = edges_of(data)
    # blocks[0] is the outermost hop; the last block's destinations are the seeds.
    assert sample.blocks[-1].num_dst == seeds.numel()
    for block, fanout in zip(sample.blocks, reversed(fanouts)):
        counts = block.indptr[1:] - block.indptr[:-1]
        degrees = (data.indptr[1:] - data.indptr[:-1])[node[: block.num_dst]]
        assert torch.equal(counts, degrees.clamp(max=fanout) if fanout > 0 else degrees)
        src, dst = block.edge_index
        assert int(src.max()) < block.num_src
        for s, d in zip(node[src].tolist(), node[dst].tolist()):
            assert (d, s) in edges  # s is a neighbour of d


def test_sampled_blocks_are_real_edges_within_the_fanouts(graph):
    sampler = directgnn.NeighborSampler(graph.indptr, graph.indices, [5, 3], seed=1)
    seeds = torch.tensor([0, 17, 1999, 400])
    check_sample(graph, seeds, sampler.sample(seeds), [5, 3])


def test_the_class_and_the_operator_draw_the_same(graph):
    sampler = directgnn.NeighborSampler(graph.indptr, graph.indices, [4, 4])
    seeds = torch.arange(0, 2000, 7)
    a = sampler.sample(seeds, seed=11)
    node, indptrs, indices, edge, hop_nodes, hop_edges = torch.ops.directgnn.sample_neighbors(
        graph.indptr, graph.indices, seeds, [4, 4], 11)
    assert torch.equal(a.node, node) and edge == []
    assert a.num_sampled_nodes == hop_nodes and a.num_sampled_edges == hop_edges
    for block, p, i in zip(a.blocks, indptrs, indices):
        assert torch.equal(block.indptr, p) and torch.equal(block.indices, i)
    b = sampler.sample(seeds, seed=12)
    assert not torch.equal(a.blocks[0].indices, b.blocks[0].indices)
    pyg = directgnn.NeighborSampler(graph.indptr, graph.indices, [4, 4], mode="pyg")
    c = pyg.sample(seeds, seed=11)
    _, _, _, edge, _, _ = torch.ops.directgnn.sample_neighbors(graph.indptr, graph.indices, seeds,
                                                               [4, 4], 11, "pyg", edge_ids=True)
    assert torch.equal(c.edge, edge[0])


def test_every_neighbour_gives_the_full_two_hop_neighbourhood(graph):
    sampler = directgnn.NeighborSampler(graph.indptr, graph.indices, [-1, -1])
    seeds = torch.tensor([5, 6])
    s = sampler.sample(seeds)
    reach = set(seeds.tolist())
    frontier = set(seeds.tolist())
    for _ in range(2):
        nxt = set()
        for v in frontier:
            nxt.update(graph.indices[graph.indptr[v]:graph.indptr[v + 1]].tolist())
        reach |= nxt
        frontier = nxt
    assert set(s.node.tolist()) == reach


def test_bad_seeds_and_fanouts_raise():
    data = directgnn.datasets.synthetic(100, 4, 2)
    sampler = directgnn.NeighborSampler(data.indptr, data.indices, [2])
    with pytest.raises(IndexError, match="out of range"):
        sampler.sample(torch.tensor([100]))
    with pytest.raises(ValueError, match="appears twice"):
        sampler.sample(torch.tensor([3, 3]))
    with pytest.raises(ValueError, match="fanouts"):
        directgnn.NeighborSampler(data.indptr, data.indices, [0])
    with pytest.raises(RuntimeError, match="indices"):
        directgnn.NeighborSampler(data.indptr, data.indices[:-1].clone(), [2])


@needs_gpu
def test_the_gpu_sampler_keeps_the_invariants(graph):
    for where in ("pinned", "device"):
        sampler = directgnn.NeighborSampler(graph.indptr, graph.indices, [5, 3], device="cuda",
                                            graph=where)
        seeds = torch.tensor([0, 17, 1999, 400])
        s = sampler.sample(seeds.cuda())
        blocks = [directgnn.Block(b.indptr.cpu(), b.indices.cpu(), b.num_src, b.num_dst)
                  for b in s.blocks]
        cpu = directgnn.Sample(s.node.cpu(), blocks, s.num_sampled_nodes, s.num_sampled_edges)
        check_sample(graph, seeds, cpu, [5, 3])
        with pytest.raises(IndexError, match="out of range"):
            sampler.sample(torch.tensor([2000], device="cuda"))


def check_pyg_fields(data, seeds, s, fanouts):
    """PyG's SamplerOutput meaning: seeds first, each node's neighbours drawn once at the hop
    that first reached it, hop h's edges only between nodes known by hop h."""
    node, row, col = s.node, s.row, s.col
    assert torch.equal(node[: seeds.numel()], seeds)
    assert sum(s.num_sampled_nodes) == node.numel()
    assert sum(s.num_sampled_edges) == row.numel() == col.numel()
    assert len(s.num_sampled_nodes) == len(fanouts) + 1
    degree = data.indptr[1:] - data.indptr[:-1]
    begin, known, edge_at = 0, s.num_sampled_nodes[0], 0
    for hop, fanout in enumerate(fanouts):
        end = known  # hop `hop` drew rows [begin, end): the nodes first reached at hop - 1
        known += s.num_sampled_nodes[hop + 1]
        e = slice(edge_at, edge_at + s.num_sampled_edges[hop])
        edge_at = e.stop
        assert bool(((col[e] >= begin) & (col[e] < end)).all())
        assert row[e].numel() == 0 or int(row[e].max()) < known
        counts = torch.bincount(col[e] - begin, minlength=end - begin)
        want = degree[node[begin:end]]
        assert torch.equal(counts, want if fanout < 0 else want.clamp(max=fanout))
        begin = end
    # Each edge is the graph's edge s.edge: from node[col] to node[row].
    assert torch.equal(data.indices[s.edge].long(), node[row])
    assert bool((s.edge >= data.indptr[node[col]]).all())
    assert bool((s.edge < data.indptr[node[col] + 1]).all())
    assert len(set(s.edge.tolist())) == s.edge.numel()


def test_pyg_mode_fills_pyg_fields_with_pyg_meaning(graph):
    sampler = directgnn.NeighborSampler(graph.indptr, graph.indices, [5, 3, 2], mode="pyg",
                                        seed=4)
    seeds = torch.tensor([0, 17, 1999, 400, 3])
    s = sampler.sample(seeds)
    check_pyg_fields(graph, seeds, s, [5, 3, 2])
    # The blocks are PyG's trim_to_layer view: the outermost block holds every hop's edges.
    assert s.blocks[-1].num_dst == seeds.numel()
    assert torch.equal(s.blocks[0].indices, s.row)
    # directgnn.pyg's one-call path gives the same draw as PyG's fields.
    twin = directgnn.NeighborSampler(graph.indptr, graph.indices, [5, 3, 2], mode="pyg", seed=4)
    node, row, col, edge, hop_nodes, hop_edges = twin._draw_pyg(seeds)
    assert row.dtype == col.dtype == torch.int64
    assert torch.equal(node, s.node) and torch.equal(row, s.row) and torch.equal(col, s.col)
    assert torch.equal(edge, s.edge)
    assert hop_nodes == s.num_sampled_nodes and hop_edges == s.num_sampled_edges


def test_pyg_mode_with_every_neighbour_is_the_whole_neighbourhood(graph):
    sampler = directgnn.NeighborSampler(graph.indptr, graph.indices, [-1, -1], mode="pyg")
    seeds = torch.tensor([5, 6, 70])
    s = sampler.sample(seeds)
    # Every edge into a node within one hop of the seeds, found independently.
    ball = set(seeds.tolist())
    for v in seeds.tolist():
        ball.update(graph.indices[graph.indptr[v]:graph.indptr[v + 1]].tolist())
    want = {(d, int(u)) for d in ball for u in graph.indices[graph.indptr[d]:graph.indptr[d + 1]]}
    got = set(zip(s.node[s.col].tolist(), s.node[s.row].tolist()))
    assert got == want and len(want) == s.row.numel()


def test_dgl_mode_refuses_pyg_edges_and_bad_modes_raise(graph):
    s = directgnn.NeighborSampler(graph.indptr, graph.indices, [2, 2]).sample(torch.tensor([1]))
    assert len(s.num_sampled_nodes) == 3 and sum(s.num_sampled_nodes) == s.node.numel()
    with pytest.raises(ValueError, match="mode='pyg'"):
        s.row
    with pytest.raises(ValueError, match="mode.*'pyg'"):
        directgnn.NeighborSampler(graph.indptr, graph.indices, [2])._draw_pyg(torch.tensor([1]))
    with pytest.raises(ValueError, match="'dgl'.*'pyg'"):
        directgnn.NeighborSampler(graph.indptr, graph.indices, [2], mode="PyG")


@needs_gpu
def test_the_gpu_sampler_keeps_pyg_meaning(graph):
    sampler = directgnn.NeighborSampler(graph.indptr, graph.indices, [5, 3], device="cuda",
                                        mode="pyg")
    seeds = torch.tensor([0, 17, 1999, 400])
    s = sampler.sample(seeds.cuda())
    blocks = [directgnn.Block(b.indptr.cpu(), b.indices.cpu(), b.num_src, b.num_dst,
                              b.edge_ids.cpu()) for b in s.blocks]
    cpu = directgnn.Sample(s.node.cpu(), blocks, s.num_sampled_nodes, s.num_sampled_edges, "pyg")
    check_pyg_fields(graph, seeds, cpu, [5, 3])
    want = directgnn.NeighborSampler(graph.indptr, graph.indices, [5, 3], mode="pyg").sample(seeds)
    assert torch.equal(cpu.edge, want.edge)
    # directgnn.pyg's one-call path: PyG's fields made on the device (a twin's first draw).
    twin = directgnn.NeighborSampler(graph.indptr, graph.indices, [5, 3], device="cuda",
                                     mode="pyg")
    node, row, col, edge, _, _ = twin._draw_pyg(seeds.cuda())
    assert row.is_cuda and col.is_cuda
    assert torch.equal(row.cpu(), cpu.row) and torch.equal(col.cpu(), cpu.col)
