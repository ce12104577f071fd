"""Checks bench/gpu/run.sh makes on the GPU machine (plain Python 3, no packages).

  check.py skips [--no-gpu] LOG...
                                 exit 1 if a test skipped for any reason but "a GPU is present"
                                 or one of ALLOWED_SKIPS (GoogleTest logs, and pytest logs
                                 written with -rs): on the GPU machine every GPU and dataset
                                 test must run. --no-gpu (a rehearsal without a GPU): a skip for
                                 want of a GPU is "not run here", not a failure
  check.py accuracy REF.jsonl... -- RUN.jsonl...
                                 mean final test accuracy of each group; exit 1 if they
                                 differ by more than 0.02
  check.py link RUN.jsonl...     mean final test ROC-AUC of link runs; exit 1 below 0.90
                                 (issue 31's target for Cora's random split)
  check.py count LIST "PATTERN MIN"...
                                 for each entry, "PATTERN MIN N": how many tests of LIST
                                 (a GoogleTest --gtest_list_tests output) PATTERN selects
"""

import fnmatch
import json
import re
import statistics
import sys


# Skips that say nothing about the GPU machine's GPU: the environment refuses what the test
# needs, and the test says so. Each: a phrase of the skip's reason, and why it is allowed.
ALLOWED_SKIPS = [
    ("this file system refuses O_DIRECT",
     "the temporary directory's file system (a tmpfs or an overlay) refuses O_DIRECT; the "
     "disk store's buffered reads are tested all the same"),
    ("the fused path is off here",
     "a CPU property: this CPU's ATen kernels round differently from the fused Adam's start-up "
     "probe, which then trains with torch's Adam"),
    ("this build has no METIS",
     "the pack is built without METIS (the device has no libmetis; prepare.sh's "
     "-DDIRECTGNN_METIS=OFF): METIS partitioning runs on the CPU, tested by CI"),
]
NO_GPU = re.compile(r"no GPU here|needs a GPU|no GPU \(|no CUDA device|has no CUDA support")


def skips(path):
    """(test, reason) of every skipped test in a GoogleTest log, or a pytest log written with
    -rs."""
    found, body = [], []
    with open(path, errors="replace") as f:
        for line in f:
            # pytest -rs: "SKIPPED [1] tests/test_x.py:12: reason"
            m = re.match(r"SKIPPED \[\d+\] (\S+): (.*)", line)
            if m:
                found.append((m.group(1), m.group(2).strip()))
                continue
            if line.startswith("[ RUN      ]"):
                body = []
                continue
            m = re.match(r"\[  SKIPPED \] (\S+) \(\d+ ms\)", line)
            if m:
                found.append((m.group(1), " ".join(b.strip() for b in body if b.strip())))
            body.append(line)
    return found


def judge_skips(paths, no_gpu):
    """Prints every skip with its verdict; returns how many are unexpected."""
    bad = allowed = missing_gpu = 0
    for path in paths:
        for test, reason in skips(path):
            if "a GPU is present" in reason:
                continue
            why = next((w for phrase, w in ALLOWED_SKIPS if phrase in reason), None)
            if why is not None:
                allowed += 1
                print(f"allowed skip: {test}: {reason[-160:]} ({why})")
            elif no_gpu and NO_GPU.search(reason):
                missing_gpu += 1
            else:
                bad += 1
                print(f"unexpected skip: {test}: {reason[-200:]}")
    note = f", {missing_gpu} not run here (no GPU)" if no_gpu else ""
    print(f"skips: {bad} unexpected, {allowed} allowed{note}")
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


def listed_tests(path):
    """Full names (Suite.Test) of a --gtest_list_tests output."""
    names, suite = [], ""
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            if not line.startswith(" "):
                suite = line.split("#")[0].strip()
            else:
                names.append(suite + line.split("#")[0].strip())
    return names


def main(argv):
    if len(argv) >= 2 and argv[0] == "count":
        names = listed_tests(argv[1])
        for entry in argv[2:]:
            pattern, want = entry.rsplit(" ", 1)
            got = sum(fnmatch.fnmatchcase(n, pattern) for n in names)
            print(f"{pattern} {want} {got}")
        return 0
    if len(argv) >= 2 and argv[0] == "skips":
        no_gpu = "--no-gpu" in argv[1:]
        paths = [a for a in argv[1:] if a != "--no-gpu"]
        return 1 if judge_skips(paths, no_gpu) else 0
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
