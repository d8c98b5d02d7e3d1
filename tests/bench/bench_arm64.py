#!/usr/bin/env python3
"""`make bench`: what `rootlock ldd` and `check` cost on an arm64 root, beside asking the root's
own loader under emulation, which is what a user on an x86-64 machine would otherwise do.

    python3 tests/bench/bench_arm64.py build/rootlock [--runs N] [--json OUT]

The root: roots.arm64_root() (Debian 12 arm64, minbase with python3, made under qemu-user once).
Rows, each over the same objects (every loadable ELF file under /usr):
  rootlock ldd --root ROOT --json FILE...   every object listed, in one call;
  rootlock check --root ROOT /usr           the closure of the same objects, found by itself;
  emulated ld.so trace                      LD_TRACE_LOADED_OBJECTS=1 qemu-aarch64-static -L ROOT
                                            ROOT/lib/ld-linux-aarch64.so.1 FILE, per object from
                                            one host sh (what tests/fixtures/referee.py runs);
  chroot ldd                                the root's own ldd (bash, under binfmt's qemu), 64
                                            objects per call, as a user would type it.
Wall time is the median of --runs runs after a warm-up; peak RSS is `/usr/bin/time -f %M` around
one run (for the shell loops: the largest process of the loop, one emulated loader or ldd). The
ratio is each row's time over `rootlock ldd`'s.

A benchmark is not a test: it never fails on a figure. It exits 1 only when a command fails.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import roots  # noqa: E402
from fixtures import referee  # noqa: E402

LDD_BATCH = 64


def timed(argv, runs, env=None):
    """(median seconds, peak RSS in MiB, the last CompletedProcess) of argv."""
    subprocess.run(argv, capture_output=True, env=env)  # warm-up: the page cache
    times = []
    for _ in range(runs):
        t = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, env=env)
        times.append(time.monotonic() - t)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{argv[0]} exited {proc.returncode}: {proc.stderr[-500:]!r}")
    mem = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, capture_output=True, text=True,
                         env=env)
    peak = int(mem.stderr.strip().splitlines()[-1]) / 1024
    return statistics.median(times), peak, proc


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("rootlock")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args(argv[1:])
    rootlock = os.path.abspath(args.rootlock)
    root = roots.arm64_root()
    files = roots.elf_files(root)
    print(f"arm64 root {root}: {len(files)} ELF objects under /usr")
    loop = 'for f in "$@"; do LD_TRACE_LOADED_OBJECTS=1 {} "$f"; done'.format(
        referee.emulated_loader(root))
    batches = " ; ".join(
        "chroot " + shlex.quote(root) + " /usr/bin/ldd " +
        " ".join(shlex.quote(f) for f in files[i:i + LDD_BATCH]) + " >/dev/null 2>&1"
        for i in range(0, len(files), LDD_BATCH))
    rows = [
        ("rootlock ldd --json (one call)", [rootlock, "ldd", "--root", root, "--json"] + files),
        ("rootlock check --root ROOT /usr", [rootlock, "check", "--root", root, "--json", "/usr"]),
        ("emulated ld.so trace, per object", ["/bin/sh", "-c", loop, "sh"] + files),
        (f"chroot ldd under binfmt, {LDD_BATCH} per call", ["/bin/sh", "-c", batches + "; true"]),
    ]
    results = []
    for label, command in rows:
        seconds, peak, _ = timed(command, args.runs)
        results.append({"row": label, "seconds": round(seconds, 3), "peak_mib": round(peak, 1)})
    base = results[0]["seconds"]
    print(f"{'':44} {'wall':>9} {'ratio':>8} {'peak RSS':>10}")
    for r in results:
        r["ratio"] = round(r["seconds"] / base, 1) if base else None
        print(f"{r['row']:44} {r['seconds']:8.2f}s {r['ratio']:7.1f}x {r['peak_mib']:8.1f} MiB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"objects": len(files), "rows": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
