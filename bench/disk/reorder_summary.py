"""The table of bench/disk/reorder.sh: per node order and run, the warm epochs' mean time, the
cache's hit rate, the bytes read from disk per epoch, the bytes of the distinct rows missed, and
their ratio (a row smaller than a 4 KiB block costs the whole block unless its neighbours in the
file are wanted too), with the convert's time and peak memory. Writes OUT_DIR/summary.json.

    python bench/disk/reorder_summary.py OUT_DIR
"""
import json
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).parent


def convert_cost(out, order):
    log = out / f"convert-{order}.log"
    if not log.exists():
        return {}
    text = log.read_text()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    seconds = 0.0
    for part in (wall.group(1).split(":") if wall else []):
        seconds = seconds * 60 + float(part)
    return {"convert_s": seconds if wall else None,
            "convert_peak_rss_gib": int(rss.group(1)) * 1024 / 2**30 if rss else None}


def main(out):
    out = pathlib.Path(out)
    rows = []
    for order_dir in sorted(p for p in out.iterdir() if p.is_dir()):
        subprocess.run([sys.executable, str(HERE / "policies_summary.py"), str(order_dir)],
                       check=True, stdout=subprocess.DEVNULL)
        for row in json.loads((order_dir / "summary.json").read_text()):
            row = {"order": order_dir.name, **row, **convert_cost(out, order_dir.name)}
            rows.append(row)
    print("| order | run | warm epoch | hits | read / epoch | distinct missed | read / missed |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        read, missed = r.get("bytes_read"), r.get("distinct_bytes_missed")
        print(f"| {r['order']} | {r['run']} | {r['epoch_s']:.2f} s | "
              f"{100 * r.get('hit_rate', 0):.1f}% | "
              + (f"{read / 1e9:.2f} GB | {missed / 1e9:.2f} GB | {read / missed:.2f}x |"
                 if read and missed else " | | |"))
    (out / "summary.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
