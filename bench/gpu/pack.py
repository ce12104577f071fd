"""The prebuilt binaries a GPU day carries (plain Python 3, no packages).

  pack.py make BUILD_DIR PACK.tar.gz DIGEST
                                       here (bench/gpu/prepare.sh): strip the CLI, both test
                                       binaries and the ops library of BUILD_DIR, check them
                                       (no AVX-512, no RPATH, what they need), pack them with a
                                       manifest (PACK.json beside PACK.tar.gz); DIGEST is the
                                       tree's digest taken before the build, which must still
                                       hold (no source changed while it built)
  pack.py check PACK.json TORCH        on the device (bench/gpu/run.sh): exit 0 when the pack
                                       was built from this tree for TORCH (the device's
                                       version), else say why not (which files differ) and
                                       exit 1
  pack.py digest                       the tree's digest, as the manifest records it

The manifest names the git commit it was built at, the digest of every file the build reads
(so a tree copied without .git can be compared), the torch and CUDA versions it was built
against, the build's switches and what the binaries need from the system.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# What the build reads: a change anywhere here makes the pack stale. (The Python package's
# tests are read from the tree when they run, so they may change.)
BUILD_INPUTS = ["CMakeLists.txt", "cmake", "include", "src", "apps", "tests", "python/CMakeLists.txt",
                "python/csrc", "python/directgnn"]
SKIP_DIRS = {"__pycache__", ".pytest_cache"}
# The binaries, as built under BUILD_DIR, and where they go in the pack.
BINARIES = {
    "directgnn": "bin/directgnn",
    "tests/directgnn_tests": "bin/directgnn_tests",
    "tests/directgnn_e2e_tests": "bin/directgnn_e2e_tests",
    "python/directgnn/libdirectgnn_ops.so": "python/directgnn/libdirectgnn_ops.so",
}
MAX_PACK_BYTES = 40 << 20
# Libraries the binaries may need: torch's (and the CUDA libraries pip's torch brings), zlib
# and the C and C++ runtimes. Anything else would be missing on the device.
ALLOWED_NEEDED = re.compile(
    r"^(libtorch\w*|libc10\w*|libcudart|libnccl|libz|libc|libm|libgcc_s|libstdc\+\+|"
    r"libpthread|libdl|librt|ld-linux-x86-64|libgomp)[\w.+-]*\.so[.\d]*$")


def tree_files(root):
    """The build's input files as a device call sends them: what git tracks or would track
    (untracked files it does not ignore), where the tree is a checkout; every file below the
    inputs elsewhere (the device's copy is exactly that set)."""
    if os.path.isdir(os.path.join(root, ".git")):
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z",
                              "--", *BUILD_INPUTS], check=True, capture_output=True).stdout
        yield from sorted(p for p in out.decode().split("\0")
                          if p and os.path.isfile(os.path.join(root, p)))
        return
    found = []
    for top in BUILD_INPUTS:
        path = os.path.join(root, top)
        if os.path.isfile(path):
            found.append(top)
            continue
        for d, dirs, files in os.walk(path):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
            found += [os.path.relpath(os.path.join(d, n), root) for n in files
                      if not n.endswith((".pyc", ".swp"))]
    yield from sorted(found)


def file_digests(root=ROOT):
    digests = {}
    for rel in tree_files(root):
        with open(os.path.join(root, rel), "rb") as f:
            digests[rel] = hashlib.sha256(f.read()).hexdigest()
    return digests


def tree_digest(root=ROOT, digests=None):
    h = hashlib.sha256()
    for rel, d in sorted((digests or file_digests(root)).items()):
        h.update(rel.encode() + b"\0" + bytes.fromhex(d))
    return h.hexdigest()


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def git_commit():
    try:
        commit = run("git", "-C", ROOT, "rev-parse", "HEAD").strip()
        dirty = run("git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--",
                    *BUILD_INPUTS).strip()
        return commit + ("+uncommitted" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cmake_cache(build_dir):
    cache = {}
    with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))
            if m:
                cache[m.group(1)] = m.group(2)
    return cache


def check_binary(path):
    """What `path` needs, with the problems that would stop it on the device."""
    problems = []
    dynamic = run("readelf", "-d", path)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic)
    for lib in needed:
        if not ALLOWED_NEEDED.match(lib):
            problems.append(f"needs {lib}, which the device does not have")
    if re.search(r"\((RPATH|RUNPATH)\)", dynamic):
        problems.append("has an RPATH into this machine (configure with CMAKE_SKIP_RPATH=ON)")
    # AVX-512 code would fault on a device CPU without it: no zmm register may appear.
    zmm = subprocess.run(f"objdump -d --no-show-raw-insn '{path}' | grep -c zmm", shell=True,
                         capture_output=True, text=True).stdout.strip()
    if zmm not in ("", "0"):
        problems.append(f"{zmm} instructions use AVX-512 registers")
    symbols = run("objdump", "-T", path)
    versions = re.findall(r"GLIBC_(\d+)\.(\d+)", symbols)
    glibc = max(((int(a), int(b)) for a, b in versions), default=(0, 0))
    cxx = re.findall(r"GLIBCXX_3\.4\.(\d+)", symbols)
    return {"needed": needed, "glibc": f"{glibc[0]}.{glibc[1]}",
            "glibcxx": f"3.4.{max(map(int, cxx), default=0)}"}, problems


def torch_versions(python):
    out = run(python, "-c", "import torch; print(torch.__version__); print(torch.version.cuda)")
    version, cuda = out.split()
    return version, cuda


def make(build_dir, pack_path, digest_before):
    digests = file_digests()
    if tree_digest(digests=digests) != digest_before:
        sys.exit("pack: not made: sources changed while the pack was built; run "
                 "bench/gpu/prepare.sh again")
    build_dir = os.path.abspath(build_dir)
    cache = cmake_cache(build_dir)
    python = cache.get("DIRECTGNN_PYTHON") or os.path.join(ROOT, ".venv", "bin", "python")
    torch_version, torch_cuda = torch_versions(python)
    staging = tempfile.mkdtemp(prefix="directgnn-pack-")
    try:
        files, problems = {}, []
        for src, dest in BINARIES.items():
            target = os.path.join(staging, dest)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(build_dir, src), target)
            run("strip", "--strip-unneeded", target)
            info, bad = check_binary(target)
            info["bytes"] = os.path.getsize(target)
            files[dest] = info
            problems += [f"{dest}: {p}" for p in bad]
        package = os.path.join(build_dir, "python", "directgnn")
        for name in sorted(os.listdir(package)):
            if name.endswith(".py"):
                shutil.copy2(os.path.join(package, name), os.path.join(staging, "python",
                                                                       "directgnn", name))
        if problems:
            sys.exit("pack: not made:\n  " + "\n  ".join(problems))
        manifest = {
            "commit": git_commit(),
            "tree_digest": digest_before,
            "file_digests": digests,
            "torch": torch_version,
            "torch_cuda": torch_cuda,
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "switches": {k: cache.get(k, "") for k in (
                "CMAKE_BUILD_TYPE", "DIRECTGNN_CUDA_ARCHITECTURES", "DIRECTGNN_NATIVE",
                "CMAKE_CXX_FLAGS", "DIRECTGNN_IO_URING", "CMAKE_SKIP_RPATH")},
            "files": files,
        }
        with open(os.path.join(staging, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=2)
        tmp = pack_path + ".tmp"
        with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
            tar.add(staging, arcname=".")
        size = os.path.getsize(tmp)
        if size > MAX_PACK_BYTES:
            os.remove(tmp)
            sys.exit(f"pack: {size / 2**20:.1f} MiB packed, over the {MAX_PACK_BYTES >> 20} MiB "
                     "a device call can spare for it")
        manifest["pack_bytes"] = size
        json_path = os.path.splitext(os.path.splitext(pack_path)[0])[0] + ".json"
        with open(json_path + ".tmp", "w") as f:
            json.dump(manifest, f, indent=2)
        os.replace(tmp, pack_path)
        os.replace(json_path + ".tmp", json_path)
        unpacked = sum(v["bytes"] for v in files.values())
        print(f"pack: {pack_path}, {size / 2**20:.1f} MiB ({unpacked / 2**20:.1f} MiB "
              f"unpacked), commit {manifest['commit']}, torch {torch_version} (CUDA {torch_cuda})")
        for dest, info in files.items():
            print(f"  {dest}: {info['bytes'] / 2**20:.1f} MiB, glibc {info['glibc']}, needs "
                  f"{', '.join(info['needed'])}")
        return 0
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def check(manifest_path, torch_version):
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        print(f"pack: none usable ({manifest_path}: {e})")
        return 1
    reasons = []
    digests = file_digests()
    if manifest.get("tree_digest") != tree_digest(digests=digests):
        saved = manifest.get("file_digests", {})
        differ = sorted(p for p in set(saved) | set(digests) if saved.get(p) != digests.get(p))
        reasons.append(f"built from another tree (commit {manifest.get('commit')}); "
                       f"{len(differ)} file(s) differ here, e.g. {', '.join(differ[:5])}: run "
                       "bench/gpu/prepare.sh again")
    if torch_version != manifest.get("torch"):
        reasons.append(f"built against torch {manifest.get('torch')}, this machine has "
                       f"{torch_version or 'none'}")
    if reasons:
        print("pack: not usable: " + "; ".join(reasons))
        return 1
    print(f"pack: usable (commit {manifest['commit']}, torch {manifest['torch']}, built "
          f"{manifest['built']})")
    return 0


def main(argv):
    if len(argv) == 4 and argv[0] == "make":
        return make(argv[1], argv[2], argv[3])
    if len(argv) == 3 and argv[0] == "check":
        return check(argv[1], argv[2])
    if argv == ["digest"]:
        print(tree_digest())
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
