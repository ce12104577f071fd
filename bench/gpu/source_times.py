"""Keeps a warm GPU machine's build incremental (plain Python 3, no packages).

Every device call copies the working tree afresh, so every source file arrives with a new
modification time and ninja would rebuild everything, although the build folder from the last
call is still there. This script remembers each file's content and time after a build, and
before the next one gives the files whose content is unchanged their old time back: ninja then
rebuilds only what really changed.

  source_times.py restore MANIFEST   before the build: unchanged files get their recorded time
  source_times.py record MANIFEST    after the build: record every file's digest and time

Files are those under the repository root, the carried .deps folder included, except build
folders, .git and caches. A file whose content changed keeps its new time, so it (and what
depends on it) rebuilds.
"""

import hashlib
import json
import os
import sys

SKIP_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".whl", ".gl"}


def source_files(root):
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs
                         if d not in SKIP_DIRS and not (top == root and d.startswith("build")))
        for name in files:
            path = os.path.join(top, name)
            if os.path.isfile(path) and not os.path.islink(path):
                yield os.path.relpath(path, root)


def digest(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def restore(root, manifest):
    try:
        with open(manifest) as f:
            known = json.load(f)
    except (OSError, ValueError):
        print("source times: no record of an earlier build; building everything")
        return 0
    kept = changed = 0
    for rel in source_files(root):
        entry = known.get(rel)
        path = os.path.join(root, rel)
        if entry is not None and entry["sha1"] == digest(path):
            os.utime(path, ns=(entry["mtime_ns"], entry["mtime_ns"]))
            kept += 1
        else:
            changed += 1
    print(f"source times: {kept} unchanged file(s) got their times back, {changed} new or changed")
    return 0


def record(root, manifest):
    known = {}
    for rel in source_files(root):
        path = os.path.join(root, rel)
        known[rel] = {"sha1": digest(path), "mtime_ns": os.stat(path).st_mtime_ns}
    tmp = f"{manifest}.tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(known, f)
    os.replace(tmp, manifest)
    return 0


def main(argv):
    if len(argv) != 2 or argv[0] not in ("restore", "record"):
        sys.exit(__doc__)
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    return (restore if argv[0] == "restore" else record)(root, os.path.abspath(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
