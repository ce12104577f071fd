"""Load-only passes of heterogeneous link loaders: PyG's LinkNeighborLoader against
directgnn.pyg.LinkNeighborLoader on the same HeteroData (the mag generator, made in memory),
label edge type, label edges, fan-outs, batch size and negatives (binary, ratio 1).

    PYTHONPATH=build/python:PYG_LIB_DIR .venv/bin/python bench/python/hetero_link_loader.py
        [--scale 0.05] [--edges 100000] [--fan-out 10,10] [--batch-size 1024] [--pairs 5]
        [--threads 2] [--json OUT]

PyG's loader needs pyg-lib (or torch-sparse) importable; without either it is skipped and only
directgnn's time is printed. Each round times one pass of each loader, the order reversed every
other round (after one warm-up pass each); the figures are the median seconds per pass over
rounds and the median of the per-round ratio PyG / directgnn. Threads: torch.set_num_threads,
idle OpenMP threads sleeping (OMP_WAIT_POLICY=PASSIVE unless the environment says otherwise).
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import statistics
import time

import torch

import directgnn
import directgnn.pyg

WRITES = ("author", "writes", "paper")


def make_loaders(data, edges, fanouts, batch_size):
    kwargs = dict(num_neighbors=fanouts, batch_size=batch_size, shuffle=True,
                  edge_label_index=(WRITES, edges), neg_sampling_ratio=1.0)
    loaders = {"directgnn": directgnn.pyg.LinkNeighborLoader(data, **kwargs)}
    import torch_geometric.typing as t

    if t.WITH_PYG_LIB or t.WITH_TORCH_SPARSE:
        from torch_geometric.loader import LinkNeighborLoader

        loaders["pyg"] = LinkNeighborLoader(data, **kwargs)
    return loaders, ("pyg-lib" if t.WITH_PYG_LIB else
                     "torch-sparse" if t.WITH_TORCH_SPARSE else None)


def load_pass(loader):
    t = time.perf_counter()
    for _ in loader:
        pass
    return time.perf_counter() - t


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=0.05)
    p.add_argument("--edges", type=int, default=100_000, help="label edges per pass")
    p.add_argument("--fan-out", default="10,10")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--pairs", type=int, default=5, help="measured rounds")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    data = directgnn.hetero.mag(a.scale).to_pyg()
    all_edges = data[WRITES].edge_index
    edges = all_edges[:, torch.randperm(all_edges.size(1))[:a.edges]]
    fanouts = [int(f) for f in a.fan_out.split(",")]
    loaders, backend = make_loaders(data, edges, fanouts, a.batch_size)
    names = list(loaders)
    print(f"mag({a.scale}): {sum(data[t].num_nodes for t in data.node_types)} nodes, "
          f"{sum(data[e].edge_index.size(1) for e in data.edge_types)} edges; "
          f"{edges.size(1)} label edges of {WRITES}; PyG backend {backend}", flush=True)
    times = {n: [] for n in names}
    for n in names:
        load_pass(loaders[n])  # warm-up
    for r in range(a.pairs):
        for n in (names if r % 2 == 0 else names[::-1]):
            times[n].append(load_pass(loaders[n]))
        print(f"round {r}: " + ", ".join(f"{n} {times[n][-1]:.3f} s" for n in names),
              flush=True)
    out = {n: {"median_s": statistics.median(v), "seconds_per_pass": v} for n, v in times.items()}
    if "pyg" in times:
        ratios = [p_ / d for p_, d in zip(times["pyg"], times["directgnn"])]
        out["speedup_over_pyg"] = {"median": statistics.median(ratios), "min": min(ratios),
                                   "max": max(ratios)}
        print(f"pyg / directgnn: median {statistics.median(ratios):.2f}x "
              f"({min(ratios):.2f}-{max(ratios):.2f})")
    for n in names:
        print(f"{n}: {out[n]['median_s']:.3f} s per pass (median of {a.pairs})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"scale": a.scale, "edges": edges.size(1), "fanouts": fanouts,
                       "batch_size": a.batch_size, "threads": torch.get_num_threads(),
                       "pyg_backend": backend, "torch": torch.__version__, "rounds": a.pairs,
                       "loaders": out}, f, indent=1)


if __name__ == "__main__":
    main()
