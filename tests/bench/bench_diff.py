#!/usr/bin/env python3
"""`make bench`: what `rootlock diff` costs on two 300-package locks, beside GNU diff.

    python3 tests/bench/bench_diff.py build/rootlock [--packages 300] [--runs 20]

The input: two generated PEP 751 locks in rootlock's form (each package with one wheel, its
sha256, and a [packages.tool.rootlock] soname table with symbol versions), B being A with 30
upgrades, 5 packages removed, 5 added, 3 artifacts rebuilt, the nvidia-* set moved from cu12 to
cu13 and the target's CUDA major changed. In one run:

  rootlock diff A B --json   the meaning-level diff (parse both, compare, render);
  diff -u A B                what a user would otherwise read: the text lines that changed.

Wall time is the median of --runs runs (whole process), peak RSS from /usr/bin/time. Aim: under
50 ms for rootlock. Not a test: it never fails on a figure.
"""
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GNU_TIME = "/usr/bin/time"


def lock_text(packages, cuda):
    out = ['lock-version = "1.0"', 'created-by = "rootlock"', 'requires-python = "==3.11.*"', ""]
    for name, version, sha, provides, needs, versions in packages:
        wheel = f"{name.replace('-', '_')}-{version}-cp311-cp311-manylinux_2_28_x86_64.whl"
        out += ["[[packages]]", f'name = "{name}"', f'version = "{version}"',
                'index = "https://index.invalid/simple/"',
                "wheels = [",
                f'    {{ name = "{wheel}", url = "https://index.invalid/{wheel}", size = 1000, '
                f'hashes = {{ sha256 = "{sha}" }} }},',
                "]", "", "[packages.tool.rootlock]",
                "provides = [" + ", ".join(f'"{p}"' for p in provides) + "]",
                "needs = [" + ", ".join(f'"{n}"' for n in needs) + "]",
                "requested = false",
                "needs-versions = [" + ", ".join(f'"{v}"' for v in versions) + "]", ""]
    out += ["[tool.rootlock]", 'recipe = "bench.toml"', f'recipe-sha256 = "{"a" * 64}"',
            'image-name = "bench"', 'output = "images/bench.tar.zst"', 'venv = "/opt/venv"',
            "source-date-epoch = 0", "requirements = []", "environment = []",
            "host-provides = []", "closure-ok = true", "closure-objects = 0", "problems = []",
            "indexes = []", "",
            "[tool.rootlock.target]", 'python = "3.11"', 'python-full = "3.11.2"',
            'glibc = "2.36"', 'arch = "x86_64"', f'cuda = "{cuda}"', 'driver = "580.65.06"',
            'torch = ""', "", "[tool.rootlock.base]", 'kind = "tarball"',
            'url = "https://base.invalid/base.tar.zst"', f'sha256 = "{"b" * 64}"', ""]
    return "\n".join(out)


def make_pair(count, seed=7):
    rng = random.Random(seed)

    def sha():
        return "%064x" % rng.getrandbits(256)

    packages = []
    for i in range(count):
        name = f"nvidia-lib{i}-cu12" if i < 20 else f"pkg-{i:03}"
        soname = f"liblib{i}.so.{12 if i < 20 else 1}"
        packages.append((name, f"1.{i % 7}.{i % 5}", sha(), [soname],
                         [f"liblib{(i + 1) % count}.so.1", "libc.so.6"],
                         [f"GLIBC_2.{17 + i % 12}", "GLIBCXX_3.4.29"]))
    after = []
    for i, (name, version, digest, provides, needs, versions) in enumerate(packages):
        if 100 <= i < 105:
            continue  # removed
        if i < 20:  # the nvidia set moves to cu13
            name = name.replace("-cu12", "-cu13")
            provides = [p.replace(".so.12", ".so.13") for p in provides]
        elif i % 9 == 0 and len([1 for j in range(i) if j % 9 == 0]) <= 30:
            version = version + ".post1"  # upgraded
        if i in (200, 201, 202):
            digest = sha()  # rebuilt
        after.append((name, version, digest, provides, needs, versions))
    for i in range(5):
        after.append((f"newpkg-{i}", "0.1.0", sha(), [], ["libc.so.6"], ["GLIBC_2.34"]))
    rng.shuffle(after)  # order is not meaning
    return lock_text(packages, "12.8"), lock_text(after, "13.0")


def timed(argv, ok_codes):
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        started = time.monotonic()
        proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", out.name, *argv],
                              capture_output=True, text=True)
        took = time.monotonic() - started
        lines = [line for line in out.read().splitlines() if line.strip().isdigit()]
    if proc.returncode not in ok_codes:
        sys.exit(f"{argv[:3]} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return took, (int(lines[-1]) / 1024 if lines else float("nan")), proc.stdout


def median_of(runs, argv, ok_codes):
    times, rss, out = [], 0.0, ""
    for _ in range(runs):
        took, peak, out = timed(argv, ok_codes)
        times.append(took)
        rss = max(rss, peak)
    return statistics.median(times), rss, out


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("rootlock")
    parser.add_argument("--packages", type=int, default=300)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv[1:])
    work = tempfile.mkdtemp(prefix="rootlock-bench-diff-")
    try:
        before, after = make_pair(args.packages)
        a, b = os.path.join(work, "pylock.a.toml"), os.path.join(work, "pylock.b.toml")
        with open(a, "w") as f:
            f.write(before)
        with open(b, "w") as f:
            f.write(after)
        ours, ours_rss, out = median_of(args.runs, [os.path.abspath(args.rootlock), "diff", a, b,
                                                    "--json"], (1,))
        import json
        report = json.loads(out)
        gnu, gnu_rss, gnu_out = median_of(args.runs, ["diff", "-u", a, b], (1,))
        print(f"two locks of {args.packages} packages ({len(before) // 1024} KiB and "
              f"{len(after) // 1024} KiB): rootlock reports {len(report['nvidia'])} nvidia-* and "
              f"{len(report['packages'])} other package changes, "
              f"{len(report['sonames']['changes'])} soname changes; diff -u prints "
              f"{len(gnu_out.splitlines())} lines")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'':34} {'wall':>9} {'peak RSS':>10}")
    for name, seconds, rss in [("rootlock diff --json", ours, ours_rss),
                               ("diff -u (GNU, text lines)", gnu, gnu_rss)]:
        print(f"{name:34} {seconds * 1000:7.1f}ms {rss:8.1f}MB")
    print(f"rootlock diff: {ours * 1000:.1f} ms (aim < 50 ms); {ours / gnu:.1f}x the time of "
          f"GNU diff, which compares lines, not meaning")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
