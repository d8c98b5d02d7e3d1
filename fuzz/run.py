#!/usr/bin/env python3
"""Runs the fuzz targets, one per core at a time, and prints one table of what each did.

usage: run.py [--jobs N] BUILD_DIR SECONDS [TARGET...]

Targets run N at a time (default: one per core; each libFuzzer process is single-threaded, so
two cores halve a smoke run's wall time). For each target (every BUILD_DIR/fuzz_* binary, or the
ones named) it first replays the kept regression inputs (fuzz/regressions/TARGET/*.hex, hex text
decoded to BUILD_DIR/regressions/), then fuzzes for SECONDS from the seeds in
BUILD_DIR/corpus/TARGET (written by seeds.py), new inputs going to BUILD_DIR/work/TARGET so that a
later run goes on from them. The limits are the issue's: -timeout=1 (an input running over a
second is a finding), -rss_limit_mb=512 (so is one using more than 512 MB), ASan and UBSan reports
abort. A finding's input is kept as BUILD_DIR/findings/TARGET/crash-*, timeout-*, oom-* or
leak-*; the log is BUILD_DIR/logs/TARGET.log.
Exits 1 when any target had a finding, 2 when a target could not run.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

FUZZ_DIR = os.path.dirname(os.path.abspath(__file__))

# Binary formats get room for the real objects seeds.py makes (ELF objects of ~16 KiB, the
# machine's ld.so.cache, wheels); text formats stay short, which keeps executions fast.
MAX_LEN = {"elf": 65536, "elf_stream": 65536, "ld_so_cache": 65536, "zip_index": 65536,
           "tar_index": 65536, "pylock": 32768, "simple_html": 32768, "simple_json": 32768,
           "wheel_scan_json": 32768, "fatbin": 65536}
TEXT_MAX_LEN = 16384

STATS = re.compile(r"^#(\d+)\s+(INITED|NEW|REDUCE|pulse|DONE)\s+cov: (\d+) ft: (\d+)"
                   r"(?: corp: (\d+)/)?")
UNITS = re.compile(r"stat::number_of_executed_units:\s*(\d+)")
FINDING = re.compile(r"ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|"
                     r"libFuzzer)|runtime error:|fuzz invariant broken|out-of-memory")


def decode_regressions(target, out_dir):
    """BUILD/regressions/TARGET/NAME for every fuzz/regressions/TARGET/NAME.hex."""
    paths = []
    for path in sorted(glob.glob(os.path.join(FUZZ_DIR, "regressions", target, "*.hex"))):
        text = "".join(line.split("#", 1)[0] for line in open(path))
        data = bytes.fromhex("".join(text.split()))
        os.makedirs(out_dir, exist_ok=True)
        dest = os.path.join(out_dir, os.path.basename(path)[:-len(".hex")])
        with open(dest, "wb") as f:
            f.write(data)
        paths.append(dest)
    return paths


def common_flags(target, findings):
    flags = ["-rss_limit_mb=512", "-timeout=1", f"-max_len={MAX_LEN.get(target, TEXT_MAX_LEN)}",
             f"-artifact_prefix={findings}/", "-print_final_stats=1"]
    dictionary = os.path.join(FUZZ_DIR, "dicts", f"{target}.dict")
    if os.path.isfile(dictionary):
        flags.append(f"-dict={dictionary}")
    return flags


def environment():
    env = dict(os.environ)
    symbolizer = shutil.which("llvm-symbolizer-19") or shutil.which("llvm-symbolizer")
    if symbolizer:  # stack traces with file:line in the logs
        env.setdefault("ASAN_SYMBOLIZER_PATH", symbolizer)
    # ASan keeps 256 MB of freed memory in quarantine by default; 64 leaves the 512 MB limit
    # to what the parser itself holds.
    env.setdefault("ASAN_OPTIONS", "quarantine_size_mb=64")
    return env


def run_target(build, target, seconds):
    binary = os.path.join(build, f"fuzz_{target}")
    seeds = os.path.join(build, "corpus", target)
    work = os.path.join(build, "work", target)
    findings = os.path.join(build, "findings", target)
    logs = os.path.join(build, "logs")
    for folder in (work, findings, logs, seeds):
        os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(logs, f"{target}.log")
    row = {"target": target, "units": 0, "cov": 0, "ft": 0, "corpus": 0, "findings": [],
           "regressions": 0, "seconds": 0.0}
    started = time.monotonic()
    with open(log_path, "w") as log:
        regressions = decode_regressions(target, os.path.join(build, "regressions", target))
        row["regressions"] = len(regressions)
        if regressions:
            replay = subprocess.run([binary] + common_flags(target, findings) + regressions,
                                    stdout=log, stderr=subprocess.STDOUT, env=environment())
            if replay.returncode != 0:
                row["findings"].append("regression replay failed")
        fuzz = subprocess.run([binary, work, seeds, f"-max_total_time={seconds}"]
                              + common_flags(target, findings),
                              stdout=log, stderr=subprocess.STDOUT, env=environment())
    row["seconds"] = time.monotonic() - started
    text = open(log_path, errors="replace").read()
    for line in text.splitlines():
        m = STATS.match(line)
        if m:
            row["cov"], row["ft"] = int(m.group(3)), int(m.group(4))
            if m.group(5):
                row["corpus"] = int(m.group(5))
    units = UNITS.findall(text)
    row["units"] = int(units[-1]) if units else 0
    artifacts = sorted(os.path.basename(p) for p in glob.glob(os.path.join(findings, "*"))
                       if os.path.getmtime(p) >= time.time() - row["seconds"] - 1)
    # libFuzzer keeps a "slow-unit-*" for the slowest input over 10 s of wall time, which a
    # starved process (a niced run beside a build) also writes. Replayed alone under the same
    # 1 s limit, it is a finding only if it fails again.
    for name in [a for a in artifacts if a.startswith("slow-unit-")]:
        replay = subprocess.run([binary, "-timeout=1", "-rss_limit_mb=512",
                                 os.path.join(findings, name)], capture_output=True)
        if replay.returncode == 0:
            artifacts.remove(name)
            print(f"fuzz {target}: {name} replays within the limit (the run was starved)",
                  flush=True)
    row["findings"] += artifacts
    if fuzz.returncode != 0 and not artifacts:
        first = FINDING.search(text)
        row["findings"].append(f"exit {fuzz.returncode}" + (f" ({first.group(0)})" if first
                                                           else ""))
    return row


def main(argv):
    args = argv[1:]
    jobs = os.cpu_count() or 1
    if args[:1] == ["--jobs"] and len(args) > 1 and args[1].isdigit() and int(args[1]) > 0:
        jobs, args = int(args[1]), args[2:]
    if len(args) < 2 or not args[1].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    build, seconds = args[0], int(args[1])
    targets = args[2:] or sorted(os.path.basename(p)[len("fuzz_"):]
                                 for p in glob.glob(os.path.join(build, "fuzz_*"))
                                 if os.access(p, os.X_OK))
    if not targets:
        print(f"run.py: no fuzz_* binaries in {build}", file=sys.stderr)
        return 2
    for target in targets:
        if shutil.which(os.path.join(build, f"fuzz_{target}")) is None:
            print(f"run.py: {build}/fuzz_{target} is missing", file=sys.stderr)
            return 2

    def run_and_report(target):
        row = run_target(build, target, seconds)
        print(f"fuzz {target}: {row['units']} executions, cov {row['cov']}, ft {row['ft']}, "
              f"{len(row['findings'])} findings", flush=True)
        return row

    # The table keeps the targets' order whatever order they finish in.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        rows = list(pool.map(run_and_report, targets))
    header = ("target", "seconds", "executions", "exec/s", "coverage", "features", "corpus",
              "regressions", "findings")
    table = [header]
    for r in rows:
        rate = int(r["units"] / r["seconds"]) if r["seconds"] else 0
        table.append((r["target"], f"{r['seconds']:.0f}", str(r["units"]), str(rate),
                      str(r["cov"]), str(r["ft"]), str(r["corpus"]), str(r["regressions"]),
                      ", ".join(r["findings"]) or "0"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    print()
    for i, row in enumerate(table):
        print("  ".join(cell.ljust(w) if j in (0, 8) else cell.rjust(w)
                        for j, (cell, w) in enumerate(zip(row, widths))).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    bad = [r["target"] for r in rows if r["findings"]]
    total = sum(r["units"] for r in rows)
    print(f"\n{len(rows)} targets, {total} executions, {len(bad)} with findings"
          + (f": {', '.join(bad)} (inputs under {build}/findings/, logs under {build}/logs/)"
             if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
