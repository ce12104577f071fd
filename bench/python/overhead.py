"""Microseconds per gather call from Python, to set against the C++ call
(`build/bench/directgnn_bench --benchmark_filter=BM_GatherCall`, the same table and ids).

    .venv/bin/python bench/python/overhead.py [--json OUT]
"""

import argparse
import json
import statistics
import timeit

import torch

import directgnn


def per_call_us(fn, number=20000, repeat=7):
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    torch.set_num_threads(1)
    table = torch.ones(100000, 128)
    u = directgnn.UnifiedTensor(table)
    results = {}
    for count in (1, 64, 1024):
        ids = torch.randint(0, 100000, (count,))
        results[count] = {
            "directgnn.gather": per_call_us(lambda: directgnn.gather(table, ids)),
            "torch.ops.directgnn.gather": per_call_us(lambda: torch.ops.directgnn.gather(table, ids)),
            "UnifiedTensor[ids]": per_call_us(lambda: u[ids]),
            "torch index_select": per_call_us(lambda: table.index_select(0, ids)),
        }
        for name, us in results[count].items():
            print(f"{count:5d} ids  {name:28s} {us:8.2f} us/call")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"us_per_call": results, "torch": torch.__version__}, f, indent=1)


if __name__ == "__main__":
    main()
