"""Times directgnn builds against each other on the CPU, back to back.

Machine speed drifts between sessions (and within one), so builds are only compared in the
same run: each round runs every benchmark once per binary, the binaries in turn, the first
one first in odd rounds and last in even ones. Per binary and benchmark it reports the median
over rounds, and with two binaries each round's ratio (second / first).

Benchmarks (each a real `directgnn` command):
  sage100k  bench train --synthetic 100000,20,128 --layers 3 --fan-out 15,10,5 --epochs 2:
            seconds per step (epoch time / steps)
  cora      train on cora.npz, 2 layers x 64, fan-out 10,10, batch 64, 50 epochs:
            median epoch seconds
  link      link prediction on cora.npz (train --task link, 8 epochs): median epoch seconds
  hetero    heterogeneous node classification on mag:0.01 (rgcn, 4 epochs): median epoch seconds
  hetero_link  link prediction on mag:0.01's author-writes-paper (4 epochs)
  default   the default job (`directgnn train`): median epoch seconds, alone
  busy      the default job beside one single-threaded busy loop (`yes > /dev/null`)
  KIND_busy cora, link, hetero or hetero_link beside that busy loop
  The busy/alone ratios are the oversubscription figures (target: at most 2x).

Usage: .venv/bin/python bench/cpu/compare.py [--rounds N] [--only a,b] [--json OUT] NAME=BINARY ...
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

DATA = os.environ.get("DIRECTGNN_DATA", os.path.join(os.path.dirname(__file__),
                                                     "../../../shared/datasets"))
CORA = ["--dataset", os.path.join(DATA, "cora.npz"), "--layers", "2", "--hidden", "64",
        "--fan-out", "10,10", "--batch-size", "64", "--lr", "0.01", "--weight-decay", "5e-4",
        "--epochs", "50"]
LINK = ["--task", "link", "--dataset", os.path.join(DATA, "cora.npz"), "--epochs", "8"]
HETERO = ["--dataset", "mag:0.01", "--epochs", "4"]
HETERO_LINK = [*HETERO, "--task", "link", "--target-relation", "author,writes,paper"]
SAGE100K = ["--synthetic", "100000,20,128", "--layers", "3", "--fan-out", "15,10,5",
            "--epochs", "2"]


def run(cmd, env=None):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-2000:]}")
    return done.stdout


def epoch_times(binary, args, busy=False):
    """Median epoch time of `train ARGS`, skipping the first (warm-up) epoch."""
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        loop = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if busy else None
        try:
            run([binary, "train", *args, "--metrics", metrics])
        finally:
            if loop:
                loop.kill()
                loop.wait()
        with open(metrics) as f:
            records = [json.loads(line) for line in f]
    times = [r["epoch_time_s"] for r in records if "epoch_time_s" in r and r.get("event") != "final"]
    return statistics.median(times[1:] if len(times) > 1 else times)


def step_time(binary):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        run([binary, "bench", "train", *SAGE100K, "--json", out])
        with open(out) as f:
            r = json.load(f)
    return r["epoch_time_s"] / r["steps_per_epoch"]


KINDS = {"cora": CORA, "link": LINK, "hetero": HETERO, "hetero_link": HETERO_LINK}
BENCHES = {"sage100k": step_time}
for _kind, _args in KINDS.items():
    BENCHES[_kind] = lambda b, a=_args: epoch_times(b, a)
    BENCHES[_kind + "_busy"] = lambda b, a=_args: epoch_times(b, a, busy=True)
BENCHES["default"] = lambda b: epoch_times(b, [])
BENCHES["busy"] = lambda b: epoch_times(b, [], busy=True)


def busy_ratios(med):
    """Each busy figure over its figure alone, where both were measured."""
    pairs = [("busy", "default")] + [(k + "_busy", k) for k in KINDS]
    return {b: med[b] / med[q] for b, q in pairs if b in med and q in med}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("builds", nargs="+", help="NAME=BINARY")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default=",".join(BENCHES), help="benchmarks to run")
    p.add_argument("--json", help="write every figure here")
    a = p.parse_args()
    builds = [b.split("=", 1) for b in a.builds]
    benches = a.only.split(",")
    figures = {name: {bench: [] for bench in benches} for name, _ in builds}
    for r in range(a.rounds):
        for bench in benches:
            for name, binary in (builds if r % 2 == 0 else builds[::-1]):
                v = BENCHES[bench](binary)
                figures[name][bench].append(v)
                print(f"round {r + 1}/{a.rounds} {bench:9s} {name:10s} {v:.4f} s", flush=True)
    print(f"\n{'build':12s}" + "".join(f"{b:>17s}" for b in benches))
    for name, _ in builds:
        med = {b: statistics.median(figures[name][b]) for b in benches}
        print(f"{name:12s}" + "".join(f"{med[b]:17.4f}" for b in benches))
        ratios = busy_ratios(med)
        if ratios:
            print(f"{'':12s}busy / alone: " + ", ".join(f"{b} {q:.2f}x" for b, q in ratios.items()))
    if len(builds) == 2:
        first, second = (name for name, _ in builds)
        for b in benches:
            ratios = [y / x for x, y in zip(figures[first][b], figures[second][b])]
            print(f"{b}: {second}/{first} per round " + " ".join(f"{q:.3f}" for q in ratios) +
                  f", median {statistics.median(ratios):.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"builds": dict(builds), "figures": figures}, f, indent=1)


if __name__ == "__main__":
    main()
