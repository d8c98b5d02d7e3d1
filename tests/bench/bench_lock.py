#!/usr/bin/env python3
"""`make bench`: what `rootlock lock` costs beside `pip install --dry-run --report`.

    python3 tests/bench/bench_lock.py build/rootlock [--runs N]

The input is the loopback fixture index (tests/fixtures/index_server.py, JSON style) serving the
generated graph (tests/fixtures/package_graph.py): the torch 2.8.0+cu128 stack as real wheels with
stub ELF objects plus the synthetic packages, 109 packages in the resolution, which needs
backtracking. Both tools resolve ROOTS_BACKTRACK for CPython 3.11 on manylinux_2_36 x86_64:

  rootlock lock, cold   empty cache: index pages, metadata files and every chosen wheel downloaded,
                        every wheel scanned, the closure of base plus wheels checked;
  rootlock lock, warm   the same cache: pages revalidated (304), nothing downloaded or scanned;
  rootlock lock --offline  the cache alone, no request;
  pip, cold             `pip install --dry-run --report --no-cache-dir` (pip downloads the
                        metadata files, resolves, does not download wheels nor check anything);
  pip, warm             the same with a warm pip cache.

rootlock does strictly more (downloads and scans the wheels, checks the closure over a real
Debian base tarball). Wall time is the median of --runs runs; peak RSS from /usr/bin/time. Not a
test: it never fails on a figure.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)

from fixtures import index_server, package_graph  # noqa: E402
from fixtures.debian_root import base_tarball  # noqa: E402

GNU_TIME = "/usr/bin/time"
# pip takes --platform literally: the target's whole manylinux ladder, as rootlock derives it
# from the base's glibc 2.36.
PLATFORMS = ([f"manylinux_2_{n}_x86_64" for n in range(36, 4, -1)] +
             ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"])
SYSTEM_PYTHON = "/usr/bin/python3"


def timed(argv, env=None):
    """(seconds, peak RSS in MB, completed process) of one run under /usr/bin/time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        started = time.monotonic()
        proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", out.name, *argv], capture_output=True,
                              text=True, env=env)
        took = time.monotonic() - started
        lines = [line for line in out.read().splitlines() if line.strip().isdigit()]
        rss = int(lines[-1]) / 1024 if lines else float("nan")
    return took, rss, proc


def median_of(runs, argv, prepare=None, env=None):
    times, rss = [], 0.0
    for _ in range(runs):
        if prepare:
            prepare()
        took, peak, proc = timed(argv, env)
        if proc.returncode != 0:
            sys.exit(f"{argv[0]} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        times.append(took)
        rss = max(rss, peak)
    return statistics.median(times), rss


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("rootlock")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv[1:])
    rootlock = os.path.abspath(args.rootlock)
    work = tempfile.mkdtemp(prefix="rootlock-bench-lock-")
    try:
        graph = package_graph.build_graph(os.path.join(work, "graph"))
        base_path, base_sha = base_tarball()
        roots = [r for r in package_graph.ROOTS_BACKTRACK if not r.startswith("torch")]
        with index_server.IndexServer(graph, style="pypi") as server:
            recipe = os.path.join(work, "bench.toml")
            with open(recipe, "w") as f:
                f.write(f'[image]\nname = "bench"\n\n[base]\ntarball = "{base_path}"\n'
                        f'sha256 = "{base_sha}"\n\n[python]\nversion = "3.11"\n\n'
                        '[torch]\nversion = "2.8.0"\ncuda = "12.8"\n\n'
                        '[cuda]\ndriver = "570.133.07"\n\n'
                        f'[[index]]\nname = "fixture"\nurl = "{server.simple_url}"\n\n'
                        f'[packages]\nrequires = {roots!r}\n'.replace("'", '"'))
            lock_path = os.path.join(work, "pylock.bench.toml")
            cache = os.path.join(work, "cache")

            def empty_cache():
                shutil.rmtree(cache, ignore_errors=True)
                if os.path.exists(lock_path):
                    os.unlink(lock_path)

            lock_argv = [rootlock, "lock", recipe, "-o", lock_path, "--cache-dir", cache]
            cold, cold_rss = median_of(args.runs, lock_argv, prepare=empty_cache)
            warm, warm_rss = median_of(args.runs, lock_argv)
            offline, offline_rss = median_of(args.runs, lock_argv + ["--offline"])
            packages = sum(1 for line in open(lock_path) if line.startswith("[[packages]]"))

            requirements = os.path.join(work, "requirements.txt")
            with open(requirements, "w") as f:
                f.write("\n".join(["torch==2.8.0+cu128", *roots]) + "\n")
            pip_cache = os.path.join(work, "pip-cache")
            pip_argv = [SYSTEM_PYTHON, "-m", "pip", "install", "--dry-run", "--quiet",
                        "--report", os.path.join(work, "report.json"), "--ignore-installed",
                        "--only-binary=:all:", "--python-version", "3.11", "--abi", "cp311",
                        *[a for p in PLATFORMS for a in ("--platform", p)],
                        "--implementation", "cp", "--target",
                        os.path.join(work, "target"), "--index-url", server.simple_url,
                        "-r", requirements]
            env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
                       PIP_CONFIG_FILE=os.devnull, no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
            pip_cold, pip_cold_rss = median_of(args.runs, pip_argv + ["--no-cache-dir"], env=env)
            pip_warm, pip_warm_rss = median_of(
                args.runs, pip_argv + ["--cache-dir", pip_cache], env=env,
                prepare=lambda: None)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"lock of {packages} packages from a loopback index ({len(graph.files)} files, "
          f"{graph.total_bytes() / 1e6:.1f} MB of wheels), base {os.path.basename(base_path)}")
    print(f"{'':34} {'wall':>9} {'peak RSS':>10}")
    rows = [("rootlock lock, cold cache", cold, cold_rss),
            ("rootlock lock, warm cache", warm, warm_rss),
            ("rootlock lock --offline", offline, offline_rss),
            ("pip --dry-run --report, cold", pip_cold, pip_cold_rss),
            ("pip --dry-run --report, warm", pip_warm, pip_warm_rss)]
    for name, seconds, rss in rows:
        print(f"{name:34} {seconds:8.3f}s {rss:8.1f}MB")
    print(f"cold: pip / rootlock = {pip_cold / cold:.1f}x   "
          f"warm: pip / rootlock = {pip_warm / warm:.1f}x   (aims: cold >= 5x, warm relock < 0.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
