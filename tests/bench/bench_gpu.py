#!/usr/bin/env python3
"""`make bench`: what the GPU container checks of issue 31 cost.

    python3 tests/bench/bench_gpu.py build/rootlock [--runs 10]

Two benchmarks, each beside what a user would otherwise run on the same input, in one run:

  host     `rootlock check --root ROOT --host-root HOST` (the container as it will run: the host
           probed, its driver files laid over the image, the cache regenerated, the check) beside
           the plain `rootlock check --root ROOT` and `rootlock host --host-root HOST` alone.
           ROOT is the demo image (images/demo.tar.zst) when `make demo` built it, else the torch
           2.8 + CUDA 12.8 fixture venv in the cached Debian root; HOST is NVIDIA's real 535
           driver laid out from Debian's packages (tests/fixtures/nvidia_host.py).
  fatbin   the device code of the real CUDA 13 libraries in /usr/local/cuda-13.0/lib64:
           `rootlock check --gpu 9.0 PATH` minus the same check without --gpu (the fatbin
           headers read and judged), as MB/s of .nv_fatbin bytes covered, beside `cat` of the same
           files once (what reading them costs) and readelf -S (the section table alone).

Wall time is the median of --runs runs, peak RSS from /usr/bin/time. Not a test: it never fails
on a figure; it exits non-zero only when a measured command fails.
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPO = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)

GNU_TIME = "/usr/bin/time"
CUDA13 = "/usr/local/cuda-13.0/lib64"
MB = 1 << 20


def timed(argv, runs, ok=(0, 1)):
    """(median seconds, peak RSS in MB) of argv."""
    times = []
    for _ in range(runs):
        start = time.monotonic()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.monotonic() - start)
        if proc.returncode not in ok:
            sys.exit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.decode()[-500:]}")
    rss = None
    if os.access(GNU_TIME, os.X_OK):
        proc = subprocess.run([GNU_TIME, "-f", "%M", *argv], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        rss = int(proc.stderr.strip().splitlines()[-1]) / 1024
    return statistics.median(times), rss


def row(label, seconds, rss, base=None):
    ratio = f"{seconds / base:6.2f}x" if base else "       "
    memory = f"{rss:7.1f} MB" if rss is not None else "      ?"
    print(f"  {label:<58} {seconds * 1000:8.1f} ms {ratio} {memory}")


def image_root(scratch):
    demo = os.path.join(REPO, "images", "demo.tar.zst")
    if os.path.isfile(demo):
        return demo, "the demo image"
    from fixtures import cuda_env
    from fixtures.debian_root import copy_root
    root = copy_root(scratch)
    cuda_env.build_cuda_env(root, twins=False)
    return root, "the torch 2.8 + CUDA 12.8 fixture venv in the Debian root"


def bench_host(rootlock, runs, scratch):
    from fixtures import nvidia_host
    if not nvidia_host.is_cached("535") and not nvidia_host.archive_reachable():
        print("host: skipped (driver 535 not cached and Debian's archive unreachable)")
        return
    host = os.path.join(scratch, "host-535")
    nvidia_host.make_host(host, branch="535", layout="debian", gpus=["NVIDIA GeForce RTX 3090"])
    root, what = image_root(scratch)
    print(f"host: {what} on NVIDIA's real 535.261.03 driver (Debian's layout)")
    plain, plain_rss = timed([rootlock, "check", "--root", root], runs)
    row("rootlock check --root ROOT", plain, plain_rss)
    probe, probe_rss = timed([rootlock, "host", "--host-root", host, "--json"], runs)
    row("rootlock host --host-root HOST --json", probe, probe_rss, plain)
    both, both_rss = timed([rootlock, "check", "--root", root, "--host-root", host], runs)
    row("rootlock check --root ROOT --host-root HOST", both, both_rss, plain)
    print(f"  the container view costs {(both - plain) * 1000:.1f} ms over the plain check")


def fatbin_bytes(paths):
    """Bytes of .nv_fatbin sections, from readelf -S (the section table alone)."""
    total = 0
    for path in paths:
        out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.search(r"\.nv_fatbin\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)", line)
            if m:
                total += int(m.group(1), 16)
    return total


def bench_fatbin(rootlock, runs):
    if not os.path.isdir(CUDA13):
        print(f"fatbin: skipped ({CUDA13} is absent)")
        return
    real = os.path.realpath(CUDA13)
    files = sorted(p for p in glob.glob(os.path.join(real, "*.so.*"))
                   if os.path.isfile(p) and not os.path.islink(p))
    size = sum(os.path.getsize(p) for p in files)
    device = fatbin_bytes(files)
    print(f"fatbin: {len(files)} real CUDA 13 libraries, {size / MB:.0f} MB, "
          f"{device / MB:.0f} MB of .nv_fatbin")
    subprocess.run(["cat", *files], stdout=subprocess.DEVNULL)  # warm the page cache
    cat, cat_rss = timed(["cat", *files], runs, ok=(0,))
    row("cat FILES > /dev/null (reading them once)", cat, cat_rss)
    readelf, readelf_rss = timed(["readelf", "-SW", *files], runs, ok=(0,))
    row("readelf -SW FILES (the section tables)", readelf, readelf_rss, cat)
    plain, plain_rss = timed([rootlock, "check", CUDA13], runs)
    row("rootlock check PATH", plain, plain_rss, cat)
    gpu, gpu_rss = timed([rootlock, "check", "--gpu", "9.0", CUDA13], runs)
    row("rootlock check --gpu 9.0 PATH", gpu, gpu_rss, cat)
    extra = max(gpu - plain, 1e-6)
    print(f"  fatbin headers read and judged in {extra * 1000:.1f} ms: "
          f"{device / MB / extra:,.0f} MB/s of device code covered, beside "
          f"{size / MB / cat:,.0f} MB/s for cat reading the files")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rootlock")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    rootlock = os.path.abspath(args.rootlock)
    scratch = tempfile.mkdtemp(prefix="rootlock-bench-gpu-")
    try:
        bench_host(rootlock, args.runs, scratch)
        bench_fatbin(rootlock, args.runs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
