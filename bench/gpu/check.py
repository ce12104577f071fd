"""Checks bench/gpu/run.sh makes on the GPU machine (plain Python 3, no packages).

  check.py skips LOG...          exit 1 if a test skipped for any reason but "a GPU is present"
                                 (GoogleTest logs, and pytest logs written with -rs)
                                 (on the GPU machine every GPU and dataset test must run)
  check.py accuracy REF.jsonl... -- RUN.jsonl...
                                 mean final test accuracy of each group; exit 1 if they
                                 differ by more than 0.02
  check.py link RUN.jsonl...     mean final test ROC-AUC of link runs; exit 1 below 0.90
                                 (issue 31's target for Cora's random split)
"""

import json
import re
import statistics
import sys


def unexpected_skips(path):
    """Tests in a GoogleTest log, or a pytest log written with -rs, that were skipped for
    another reason than a GPU being present."""
    bad, body = [], []
    with open(path, errors="replace") as f:
        for line in f:
            # pytest -rs: "SKIPPED [1] tests/test_x.py:12: reason"
            m = re.match(r"SKIPPED \[\d+\] (\S+): (.*)", line)
            if m and "a GPU is present" not in m.group(2):
                bad.append(f"{m.group(1)}: {m.group(2).strip()[-200:]}")
                continue
            if line.startswith("[ RUN      ]"):
                body = []
                continue
            m = re.match(r"\[  SKIPPED \] (\S+) \(\d+ ms\)", line)
            if m and not any("a GPU is present" in b for b in body):
                reason = " ".join(b.strip() for b in body if b.strip())[-200:]
                bad.append(f"{m.group(1)}: {reason}")
            body.append(line)
    return bad


def final_test_acc(path):
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    final = [r for r in records if r.get("event") == "final"]
    if not final or final[-1].get("test_acc") is None:
        sys.exit(f"{path}: no final record with a test accuracy")
    return final[-1]["test_acc"]


def final_test_auc(path):
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    final = [r for r in records if r.get("event") == "final" and r.get("task") == "link"]
    if not final or "roc_auc" not in final[-1].get("test", {}):
        sys.exit(f"{path}: no final link record with a test ROC-AUC")
    return final[-1]["test"]["roc_auc"]


def main(argv):
    if len(argv) >= 2 and argv[0] == "skips":
        bad = [s for path in argv[1:] for s in unexpected_skips(path)]
        for s in bad:
            print(f"unexpected skip: {s}")
        print(f"skips: {len(bad)} unexpected")
        return 1 if bad else 0
    if len(argv) >= 4 and argv[0] == "accuracy" and "--" in argv:
        cut = argv.index("--")
        ref = [final_test_acc(p) for p in argv[1:cut]]
        run = [final_test_acc(p) for p in argv[cut + 1:]]
        a, b = statistics.mean(ref), statistics.mean(run)
        print(f"mean test accuracy: reference {a:.4f} {ref}, run {b:.4f} {run}, "
              f"difference {b - a:+.4f} (allowed 0.02)")
        return 0 if abs(a - b) <= 0.02 else 1
    if len(argv) >= 2 and argv[0] == "link":
        aucs = [final_test_auc(p) for p in argv[1:]]
        mean = statistics.mean(aucs)
        print(f"link: mean test ROC-AUC {mean:.4f} {[round(a, 4) for a in aucs]} (target 0.90)")
        return 0 if mean >= 0.90 else 1
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
