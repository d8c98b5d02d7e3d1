#!/usr/bin/env python3
"""`make bench`: what `rootlock freeze` costs on a venv of 2 GB, beside sha256sum of its files.

    python3 tests/bench/bench_freeze.py build/rootlock [--gb 2.0] [--runs 3]

The input: the four bench wheels of bench_build.py (real ELF objects padded to --gb GB, cached),
installed by pip (`pip install --no-index --no-deps --no-compile`) into a fresh venv, once. Then,
in one run, warm page cache, on the same files:

  rootlock freeze VENV -o LOCK   every distribution read, every RECORD row hashed and compared,
                                 ELF soname tables, the lock written;
  sha256sum                      `find VENV -type f -print0 | xargs -0 sha256sum`: hashing the
                                 same files and nothing else, what a user would script.

Wall time is the median of --runs runs, peak RSS from /usr/bin/time. Aim: within 1.2x of
sha256sum. Not a test: it never fails on a figure.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import bench_build  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("rootlock")
    parser.add_argument("--gb", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv[1:])
    rootlock = os.path.abspath(args.rootlock)
    work = tempfile.mkdtemp(prefix="rootlock-bench-freeze-")
    try:
        wheel_dir = os.path.join(work, "wheels")
        os.makedirs(wheel_dir)
        wheels = bench_build.make_wheels(int(args.gb * 1e9), wheel_dir)
        venv = os.path.join(work, "venv")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", venv], check=True)
        subprocess.run(["/usr/bin/python3", "-m", "pip", "--python", venv + "/bin/python",
                        "install", "--quiet", "--no-index", "--no-deps", "--no-compile", *wheels],
                       check=True)
        shutil.rmtree(wheel_dir)
        size = sum(os.path.getsize(os.path.join(d, f))
                   for d, _, files in os.walk(venv) for f in files
                   if not os.path.islink(os.path.join(d, f)))
        lock = os.path.join(work, "pylock.frozen.toml")
        ours, ours_rss = bench_build.median_of(
            args.runs, [rootlock, "freeze", venv, "--no-debian", "-o", lock])
        peer_cmd = f"find {venv} -type f -print0 | xargs -0 sha256sum > /dev/null"
        peer, peer_rss = bench_build.median_of(args.runs, ["bash", "-c", peer_cmd])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"a venv of {size / 1e9:.2f} GB ({len(wheels)} distributions, warm page cache)")
    print(f"{'':40} {'wall':>9} {'peak RSS':>10}")
    for name, seconds, rss in [("rootlock freeze (RECORDs verified)", ours, ours_rss),
                               ("find | xargs sha256sum", peer, peer_rss)]:
        print(f"{name:40} {seconds:8.2f}s {rss:8.1f}MB")
    print(f"rootlock freeze / sha256sum = {ours / peer:.2f}x (aim <= 1.2x); "
          f"{size / 1e6 / ours:.0f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
