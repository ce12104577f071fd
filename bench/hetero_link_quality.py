"""Link prediction quality on a relation of the mag generator (`directgnn train --task link
--target-relation ...`): each model over seeds, the test metric at the epoch of best
validation metric (ROC-AUC with shared negatives), mean and range per (relation, model).

    .venv/bin/python bench/hetero_link_quality.py [--binary build/directgnn] [--scale 0.05]
        [--relations author,writes,paper paper,cites,paper] [--models rgcn hsage mlp]
        [--seeds 0 1 2] [--epochs 5] [--hidden 64] [--threads 2] [--json OUT]

The mlp reads paper features only (no relation): the baseline a model of the relations must
beat. The graph is made in memory from each run's seed (`--dataset mag:SCALE`).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(args, relation, model, seed):
    """One training run's final metrics record."""
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        command = [args.binary, "train", "--dataset", f"mag:{args.scale}", "--task", "link",
                   "--target-relation", relation, "--model", model, "--seed", str(seed),
                   "--epochs", str(args.epochs), "--hidden", str(args.hidden), "--threads",
                   str(args.threads), "--metrics", metrics]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
        with open(metrics) as f:
            return [json.loads(line) for line in f][-1]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default="build/directgnn")
    p.add_argument("--scale", default="0.05")
    p.add_argument("--relations", nargs="+", default=["author,writes,paper", "paper,cites,paper"])
    p.add_argument("--models", nargs="+", default=["rgcn", "hsage", "mlp"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    for relation in args.relations:
        for model in args.models:
            finals = []
            for seed in args.seeds:
                final = run(args, relation, model, seed)
                finals.append(final)
                print(f"  {relation} {model} seed {seed}: test {final['primary_metric']} "
                      f"{final['test'][final['primary_metric']]:.4f}, "
                      f"{final['epoch_time_s']:.2f} s/epoch", file=sys.stderr, flush=True)
            metric = finals[0]["primary_metric"]
            tests = [f["test"][metric] for f in finals]
            row = {"relation": relation, "model": model, "metric": metric, "test": tests,
                   "mean": statistics.mean(tests), "epoch_time_s":
                   statistics.mean(f["epoch_time_s"] for f in finals), "runs": finals}
            rows.append(row)
            print(f"{relation:24} {model:6} test {metric} {row['mean']:.4f} "
                  f"({min(tests):.4f}-{max(tests):.4f}), {row['epoch_time_s']:.2f} s/epoch",
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"scale": args.scale, "epochs": args.epochs, "hidden": args.hidden,
                       "threads": args.threads, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
