#!/usr/bin/env python3
"""`make bench`: the symbol-level check beside `ldd -r` per object, on the real torch root.

    python3 tests/bench/bench_symbols.py build/rootlock [--runs N] [--ldd-runs N] [--json OUT]

The root is the cached Debian 12 root with python3-torch (roots.py torch_root(), ~1700 ELF
objects under /usr, real libtorch 1.13). Two rows, over the same objects, in one run:

  rootlock  `rootlock check --root ROOT --json /usr`: every object's closure, every symbol
            version, and every undefined symbol bound as glibc would (always on);
  ldd -r    `ldd -r FILE` for each object of roots.elf_files(), one shell loop in one chroot:
            the real loader with full relocation (every symbol bound) per object.

Printed: wall time of each (rootlock: median of --runs after a warm-up; ldd -r: one run unless
--ldd-runs), the ratio (the aim is rootlock at least 20x faster), peak RSS of each (GNU time;
for the ldd loop, the largest single process), rootlock's "objects" and "symbols" counts and
its problems by kind, and how many objects `ldd -r` says have undefined symbols (it binds each
object as the main program, so plugins and Python extensions show their host's symbols
undefined: a figure, not a referee).

A benchmark is not a test: it never fails on a figure. The exit status is 0 unless a measured
tool died of a signal, rootlock exited with something other than 0 or 1 or printed JSON that
does not parse.
"""
import argparse
import collections
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import bench_check  # noqa: E402
import roots  # noqa: E402

LDD_SCRIPT = "ldd-r.sh"
LDD_OUT = "ldd-r.out"
_MARK = "\x1eOBJECT "


def ldd_script():
    """The sh loop the chroot runs: ldd -r on every object, each framed by a marker line."""
    objects = bench_check.BENCH_DIR_IN_ROOT + "/objects"
    return ('while IFS= read -r f; do\n'
            f'  printf "{_MARK}%s\\n" "$f"\n'
            '  ldd -r "$f" 2>&1\n'
            f'done < {objects}\n'
            'exit 0\n')


def parse_ldd(path):
    """{object: number of "undefined symbol" lines} from the loop's output."""
    counts, current = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(_MARK):
                current = line[len(_MARK):].rstrip("\n")
                counts[current] = 0
            elif current is not None and line.startswith("undefined symbol:"):
                counts[current] += 1
    return counts


def run_ldd(root, objects, opts):
    """The ldd -r loop in a chroot (bench_check's private namespace); its result row and the
    per-object undefined-symbol counts."""
    bench_dir = bench_check.prepare_bench_dir(objects)
    try:
        inner = os.path.join(bench_dir, "rootlock-bench")
        with open(os.path.join(inner, LDD_SCRIPT), "w") as f:
            f.write(ldd_script())
        out = os.path.join(bench_dir, LDD_OUT)
        job = {"name": "ldd -r", "runs": opts.ldd_runs, "warmup": 0, "stdout": out,
               "argv": ["chroot", root, "/bin/sh",
                        f"{bench_check.BENCH_DIR_IN_ROOT}/{LDD_SCRIPT}"]}
        row = bench_check.run_in_root(root, [job], bench_dir)[0]
        counts = parse_ldd(out)
    finally:
        shutil.rmtree(bench_dir, ignore_errors=True)
    row["note"] = "per object, one chroot, full relocation"
    return row, counts


def run_rootlock(rootlock, root, opts, crashed):
    out = tempfile.NamedTemporaryFile(prefix="rootlock-bench-", suffix=".json", delete=False)
    out.close()
    argv = [rootlock, "check", "--root", root, "--json", "/usr"]
    row = bench_check.measure({"name": "rootlock", "argv": argv, "runs": opts.runs,
                               "warmup": 1, "stdout": out.name})
    report = bench_check.read_report(out.name, crashed)
    if row["signal"] is not None or row["rc"] not in (0, 1):
        crashed.append(f"rootlock exited {row['rc']} (signal {row['signal']}): "
                       f"{row['stderr_tail'][-500:]}")
    row["note"] = "check /usr: closure, versions, every undefined symbol"
    return row, report


def report_summary(report):
    kinds = collections.Counter((p.get("kind"), p.get("severity", "?"))
                                for p in report.get("problems", []))
    return {"objects": report.get("objects"), "symbols": report.get("symbols"),
            "ok": report.get("ok"),
            "problems": {f"{k} ({s})": n for (k, s), n in sorted(kinds.items())}}


def print_rows(rows, base):
    print(f"{'tool':8} | {'objects':7} | {'wall (s)':8} | {'x rootlock':10} | "
          f"{'peak RSS (MB)':13} | note")
    print("-" * 90)
    for r in rows:
        ratio = r["wall"] / base["wall"] if base.get("wall") else None
        n = len(r.get("times", []))
        how = f"median of {n} ({r.get('how')})" if n > 1 else "1 run"
        rss = f"{r['rss_kb'] / 1024:.1f}" if r.get("rss_kb") else "-"
        print(f"{r['name']:8} | {str(r.get('objects', '-')):7} | {r['wall']:8.3f} | "
              f"{(f'{ratio:.1f}' if ratio is not None else '-'):10} | {rss:13} | "
              f"{how}; {r.get('note', '')}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rootlock", help="the rootlock binary (build/rootlock)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of rootlock (median)")
    ap.add_argument("--ldd-runs", type=int, default=0,
                    help="timed runs of the ldd -r loop after the first (0: the first only)")
    ap.add_argument("--json", help="also write every figure to this file")
    opts = ap.parse_args(argv)
    if not os.access(opts.rootlock, os.X_OK):
        ap.error("give the rootlock binary, e.g. build/rootlock")
    if os.geteuid() != 0:
        print("bench_symbols: needs root (mmdebstrap, chroot, unshare)", file=sys.stderr)
        return 2
    # Measure a private copy: a rebuild of build/ during the run must not swap the binary.
    snapshot = tempfile.mkdtemp(prefix="rootlock-bench-bin-")
    try:
        rootlock = os.path.join(snapshot, "rootlock")
        shutil.copy2(opts.rootlock, rootlock)
        return run(rootlock, opts)
    finally:
        shutil.rmtree(snapshot, ignore_errors=True)


def run(rootlock, opts):
    info = bench_check.machine()
    root = roots.torch_root()
    objects = roots.elf_files(root, "/usr")
    print(f"rootlock symbol bench, {info['date']}, {info['cpus']} CPUs ({info['cpu']}), load "
          f"average {info['load']:.1f}\n== Debian 12 root with python3-torch: {len(objects)} "
          f"ELF objects under /usr of {root}", flush=True)
    crashed = []
    rl, report = run_rootlock(rootlock, root, opts, crashed)
    rl["objects"] = report.get("objects") if report else None
    ldd, counts = run_ldd(root, objects, opts)
    ldd["objects"] = len(counts)
    if ldd.get("signal") is not None:
        crashed.append(f"ldd -r died of signal {ldd['signal']}")
    if ldd.get("error"):
        crashed.append(f"ldd -r: {ldd['error']}")
    print_rows([rl, ldd], rl)
    ratio = ldd["wall"] / rl["wall"] if rl.get("wall") else None
    if ratio is not None:
        print(f"ldd -r / rootlock: {ratio:.1f}x (aim: at least 20x)")
    result = {"machine": info, "root": root, "elf_objects": len(objects),
              "rootlock": {k: rl.get(k) for k in ("wall", "times", "cpu", "rss_kb", "rc")},
              "ldd_r": {k: ldd.get(k) for k in ("wall", "times", "cpu", "rss_kb", "rc")},
              "ratio": ratio}
    if report:
        s = report_summary(report)
        result["report"] = s
        print(f"rootlock: {s['objects']} objects, {s['symbols']} symbols checked, "
              f"ok={str(s['ok']).lower()}, {sum(s['problems'].values())} problems")
        for kind, n in s["problems"].items():
            print(f"  {n:6d}  {kind}")
    flagged = {f: n for f, n in counts.items() if n}
    lines = sum(flagged.values())
    result["ldd_r_undefined"] = {"objects": len(flagged), "lines": lines}
    print(f"ldd -r: {len(counts)} objects listed, {len(flagged)} with undefined symbols "
          f"({lines} lines; each object bound as the main program)")
    missing = sorted(set(objects) - set(counts))
    if missing:
        print(f"ldd -r: {len(missing)} objects produced no output block, e.g. {missing[:3]}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(result, f, indent=1)
    for c in crashed:
        print("CRASH: " + c, file=sys.stderr)
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
