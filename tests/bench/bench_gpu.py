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
  wheel    the device code of a wheel as `lock` reads it, streaming (NVIDIA's real libcurand in
           a wheel served on 127.0.0.1): a cold lock minus a warm one is the wheel's scan, beside
           `unzip -t` of the wheel (inflating it once, as any installer does).
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


def bench_wheel(rootlock, runs, scratch):
    """The device code of a wheel read as `lock` scans it: NVIDIA's real libcurand.so.10 in a
    deflated wheel, served on 127.0.0.1; a cold lock (downloaded, inflated, hashed, ELF and
    fatbin read in one pass) minus a warm one (the scan cached) is the scan, beside `unzip -t`
    (inflating every member once, as any installer must)."""
    library = os.path.join(CUDA13, "libcurand.so.10")
    if not os.path.isfile(library) or shutil.which("unzip") is None:
        print(f"wheel: skipped ({library} or unzip is absent)")
        return
    from fixtures import index_server, package_graph, pip_like, wheel_builder
    from fixtures.debian_root import base_tarball
    with open(library, "rb") as f:
        native = f.read()
    rel = "curand/libcurand.so.10"
    spec = wheel_builder.WheelSpec(name="curand", version="10.0",
                                   files={"curand/__init__.py": b"", rel: native},
                                   tags=("py3-none-manylinux_2_17_x86_64",),
                                   root_is_purelib=False, executable=frozenset([rel]))
    wheels = os.path.join(scratch, "wheels")
    os.makedirs(wheels)
    built = wheel_builder.build_wheel(spec, wheels)
    graph = package_graph.Graph(root=wheels, stacks=(), files=[package_graph.IndexFile(
        project="curand", name="curand", version="10.0", filename=built.filename,
        path=built.path, sha256=built.sha256, size=built.size, metadata=built.metadata,
        requires_python=None, yanked=False, hash_listed=True,
        upload_time="2025-03-01T12:00:00.000000Z")], rebuilt={})
    base_path, base_sha = base_tarball()
    print(f"wheel: {built.filename}, {built.size / MB:.0f} MB deflated, "
          f"{len(native) / MB:.0f} MB of libcurand.so.10 (10 architectures)")
    unzip, unzip_rss = timed(["unzip", "-tq", built.path], runs, ok=(0,))
    row("unzip -t WHEEL (every member inflated once)", unzip, unzip_rss)
    with index_server.IndexServer(graph, style="pypi") as server:
        recipe = os.path.join(scratch, "curand.toml")
        with open(recipe, "w") as f:
            f.write(f'[image]\nname = "curand"\n\n[base]\ntarball = "{base_path}"\n'
                    f'sha256 = "{base_sha}"\n\n[python]\nversion = "3.11"\n\n'
                    f'[cuda]\ndriver = "580.65.06"\ngpus = ["9.0"]\n\n'
                    f'[[index]]\nname = "fixture"\nurl = "{server.simple_url}"\n\n'
                    f'[packages]\nrequires = ["curand"]\n')
        out = os.path.join(scratch, "pylock.curand.toml")
        caches = iter(range(10 ** 6))

        def cold():
            return [rootlock, "lock", recipe, "-o", out, "--cache-dir",
                    os.path.join(scratch, f"cache-{next(caches)}")]
        times, peak = [], None
        for _ in range(runs):
            seconds, rss = timed(cold(), 1, ok=(0,))
            times.append(seconds)
            peak = rss if peak is None else max(peak, rss or 0)
        cold_s = statistics.median(times)
        warm_cache = os.path.join(scratch, "cache-warm")
        subprocess.run([rootlock, "lock", recipe, "-o", out, "--cache-dir", warm_cache],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        warm_s, warm_rss = timed([rootlock, "lock", recipe, "-o", out, "--cache-dir",
                                  warm_cache], runs, ok=(0,))
    row("rootlock lock, cold (wheel fetched and scanned)", cold_s, peak, unzip)
    row("rootlock lock, warm (scan from the cache)", warm_s, warm_rss, unzip)
    scan = max(cold_s - warm_s, 1e-6)
    print(f"  the scan (inflate, SHA-256, RECORD, ELF, fatbin) takes {scan * 1000:.0f} ms: "
          f"{scan / unzip:.2f}x unzip -t, {len(native) / MB / scan:,.0f} MB/s of library")


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
        bench_wheel(rootlock, min(args.runs, 5), scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
