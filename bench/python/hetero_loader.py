"""Load-only passes over a heterogeneous dataset directory (`directgnn generate mag`): PyG's
NeighborLoader on the HeteroData built from the directory, against directgnn's loaders, on the
same graph, seeds (the target type's training ids), fan-outs (every relation) and batch size.

Loaders:
  pyg        PyG's NeighborLoader; its backend is whichever PyG finds: pyg-lib when importable,
             else torch-sparse (run once per backend, with PYTHONPATH naming only that one);
             the JSON records which
  directgnn  directgnn.pyg.NeighborLoader on the same HeteroData (skipped while directgnn.pyg
             refuses heterogeneous graphs)
  native     the C++ loader as `directgnn train` runs it: `build/directgnn train --model mlp
             --hidden 1 --prefetch 0` in a subprocess, per epoch the time the loop waited for
             its batches (with no prefetch: sampling plus the rows' gather, all of the load);
             the first epoch of each run is a warm-up. No Python per batch.

    .venv/bin/python bench/python/hetero_loader.py DIR [--loaders pyg native directgnn]
        [--fan-out 10,10] [--batch-size 1024] [--pairs 7] [--repeat 2] [--json OUT]

Each round times --repeat passes of each loader in turn, the order reversed every other round
(after one warm-up pass each); the figures are the median over rounds of each loader's seconds
per pass and of its ratio to the first loader named, round by round, so the ratio stays
meaningful while the machine's speed drifts. Per batch, the sampled nodes and edges are counted
too: PyG draws each node's neighbours once, at the hop that first reaches it, while directgnn's
native sampler (as DGL's) draws anew at every layer for all of the layer's destination nodes.

Threads: torch.set_num_threads(--threads) here and `--threads` for the native run; idle OpenMP
threads sleep (OMP_WAIT_POLICY=PASSIVE, set before torch loads) unless the environment says
otherwise.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _hetero_data  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")


def pyg_backend():
    import torch_geometric.typing as t

    if t.WITH_PYG_LIB:
        return "pyg-lib"
    if t.WITH_TORCH_SPARSE:
        return "torch-sparse"
    return None


def make_loader(name, data, target, seeds, fanouts, batch_size):
    kwargs = dict(num_neighbors=list(fanouts), batch_size=batch_size,
                  input_nodes=(target, seeds), shuffle=True)
    if name == "pyg":
        from torch_geometric.loader import NeighborLoader

        if pyg_backend() is None:
            raise ImportError("PyG's NeighborLoader needs pyg-lib or torch-sparse")
        return NeighborLoader(data, **kwargs)
    if name == "directgnn":
        from directgnn import pyg

        return pyg.NeighborLoader(data, **kwargs)
    raise ValueError(f"unknown loader {name!r}")


def load_pass(loader):
    t = time.perf_counter()
    for _ in loader:
        pass
    return time.perf_counter() - t


def batch_sizes(loader, target, batches=20):
    """Mean sampled nodes (per type and in all) and edges of the first ``batches`` batches."""
    nodes, edges, n = {}, 0, 0
    for batch in loader:
        for t in batch.node_types:
            nodes[t] = nodes.get(t, 0) + batch[t].num_nodes
        edges += sum(batch[et].edge_index.size(1) for et in batch.edge_types)
        n += 1
        if n == batches:
            break
    return {"nodes": {t: c / n for t, c in nodes.items()},
            "all_nodes": sum(nodes.values()) / n, "edges": edges / n, "batches": n}


class Native:
    """The C++ loader through `directgnn train --model mlp --hidden 1 --prefetch 0`."""

    def __init__(self, root, fanouts, batch_size, threads, binary):
        self.cmd = [binary, "train", "--dataset", root, "--model", "mlp", "--hidden", "1",
                    "--prefetch", "0", "--fan-out", ",".join(map(str, fanouts)),
                    "--batch-size", str(batch_size), "--threads", str(threads)]
        self.last = None

    def passes(self, count):
        """Seconds per epoch waited for batches, for ``count`` epochs after a warm-up one."""
        with tempfile.TemporaryDirectory() as tmp:
            metrics = os.path.join(tmp, "m.jsonl")
            cmd = self.cmd + ["--epochs", str(count + 1), "--eval-every", str(count + 1),
                              "--metrics", metrics]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            with open(metrics) as f:
                records = [json.loads(line) for line in f]
        epochs = [r for r in records if r.get("event") == "epoch"][1:]
        self.last = epochs
        return [r["wait_s"] for r in epochs]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset", help="a heterogeneous dataset directory")
    p.add_argument("--loaders", nargs="+", default=["pyg", "native", "directgnn"],
                   choices=["pyg", "directgnn", "native"])
    p.add_argument("--fan-out", default="10,10")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--pairs", type=int, default=7, help="measured rounds")
    p.add_argument("--repeat", type=int, default=2, help="passes of each loader per round")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--binary", default=os.path.join(ROOT, "build/directgnn"))
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    fanouts = [int(f) for f in a.fan_out.split(",")]
    t0 = time.perf_counter()
    data, splits = _hetero_data.to_heterodata(a.dataset)
    target = _hetero_data.target_type(a.dataset)
    seeds = splits["train"]
    print(f"{a.dataset}: HeteroData built in {time.perf_counter() - t0:.2f} s; "
          f"{sum(data[t].num_nodes for t in data.node_types)} nodes, "
          f"{sum(data[e].edge_index.size(1) for e in data.edge_types)} edges; "
          f"{len(seeds)} seeds of {target}", flush=True)
    results = {"dataset": os.path.abspath(a.dataset), "threads": torch.get_num_threads(),
               "torch": torch.__version__, "pyg_backend": pyg_backend(), "fanouts": fanouts,
               "batch_size": a.batch_size, "seeds": len(seeds),
               "batches_per_pass": -(-len(seeds) // a.batch_size),
               "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "skipped": {},
               "batch_sizes": {}}
    import torch_geometric

    results["torch_geometric"] = torch_geometric.__version__
    torch.manual_seed(0)
    runners = {}
    for name in a.loaders:
        if name == "native":
            runners[name] = Native(a.dataset, fanouts, a.batch_size, a.threads, a.binary)
            continue
        try:
            loader = make_loader(name, data, target, seeds, fanouts, a.batch_size)
            results["batch_sizes"][name] = batch_sizes(loader, target)
        except (ImportError, NotImplementedError) as error:
            print(f"{name}: skipped ({error})", flush=True)
            results["skipped"][name] = str(error)
            continue
        runners[name] = loader
    names = list(runners)
    times = {n: [] for n in names}

    def run(name):
        if name == "native":
            return statistics.mean(runners[name].passes(a.repeat))
        return statistics.mean(load_pass(runners[name]) for _ in range(a.repeat))

    for name in names:  # warm-up
        if name != "native":
            load_pass(runners[name])
    for r in range(a.pairs):
        order = names if r % 2 == 0 else names[::-1]
        for n in order:
            times[n].append(run(n))
        print(f"round {r}: " + ", ".join(f"{n} {times[n][-1]:.3f} s" for n in names),
              flush=True)
    base = names[0]
    out = {}
    for n in names:
        ratios = [b / x for x, b in zip(times[n], times[base])]
        out[n] = {"median_s": statistics.median(times[n]), "min_s": min(times[n]),
                  "max_s": max(times[n]), "seconds_per_pass": times[n],
                  f"speedup_over_{base}": {"median": statistics.median(ratios),
                                           "min": min(ratios), "max": max(ratios)}}
        print(f"{n}: {out[n]['median_s']:.3f} s per pass (median of {a.pairs}; "
              f"{out[n]['min_s']:.3f}-{out[n]['max_s']:.3f}); {base} / {n}: median "
              f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})",
              flush=True)
    if "native" in runners and runners["native"].last:
        results["native_last_epochs"] = runners["native"].last
    results.update(rounds=a.pairs, repeat=a.repeat, loaders=out)
    for n, s in results["batch_sizes"].items():
        types = ", ".join(f"{t} {c:.0f}" for t, c in s["nodes"].items())
        print(f"{n}: per batch {s['all_nodes']:.0f} nodes ({types}), {s['edges']:.0f} edges")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
