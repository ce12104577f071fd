"""Tables of bench/embeddings/recipe.sh's runs: per run name, the test metric (accuracy, or
ROC-AUC for links) of seeds 0-2 at the best validation epoch and their mean.

    .venv/bin/python bench/embeddings/summary.py OUT_DIR
"""
import collections
import glob
import json
import os
import re
import sys


def final(path):
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    last = records[-1]
    return last["test_acc"] if "test_acc" in last else last["test"]["roc_auc"]


def main():
    out = sys.argv[1]
    runs = collections.defaultdict(dict)
    for path in glob.glob(os.path.join(out, "*-seed*.jsonl")):
        m = re.match(r"(.*)-seed(\d+)\.jsonl$", os.path.basename(path))
        runs[m.group(1)][int(m.group(2))] = final(path)
    print("| run | seed 0, 1, 2 | mean |")
    print("|---|---|---|")
    for name in sorted(runs):
        values = [runs[name][s] for s in sorted(runs[name])]
        mean = sum(values) / len(values)
        print(f"| {name} | {', '.join(f'{v:.3f}' for v in values)} | **{mean:.3f}** |")


if __name__ == "__main__":
    main()
