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
    node, indptrs, indices = torch.ops.directgnn.sample_neighbors(graph.indptr, graph.indices,
                                                                   seeds, [4, 4], 11)
    assert torch.equal(a.node, node)
    for block, p, i in zip(a.blocks, indptrs, indices):
        assert torch.equal(block.indptr, p) and torch.equal(block.indices, i)
    b = sampler.sample(seeds, seed=12)
    assert not torch.equal(a.blocks[0].indices, b.blocks[0].indices)


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
    with pytest.raises(RuntimeError, match="out of range"):
        sampler.sample(torch.tensor([100]))
    with pytest.raises(RuntimeError, match="appears twice"):
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
        cpu = directgnn.Sample(s.node.cpu(), [directgnn.Block(b.indptr.cpu(), b.indices.cpu(),
                                                              b.num_src, b.num_dst)
                                              for b in s.blocks])
        check_sample(graph, seeds, cpu, [5, 3])
        with pytest.raises(RuntimeError, match="out of range"):
            sampler.sample(torch.tensor([2000], device="cuda"))
