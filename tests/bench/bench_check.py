#!/usr/bin/env python3
"""`make bench`: what `rootlock check` costs beside the tools a user would otherwise run.

    python3 tests/bench/bench_check.py build/rootlock [--only debian|cuda] [--json OUT] ...

Two benchmarks (tests/bench/README.md says what each measures and what the figures mean):

  debian  every loadable ELF file under /usr of a real Debian 12 root with python3-torch
          (roots.py);
  cuda    every ELF file under /opt/venv of the torch + CUDA fixture venv (stubs padded with
          sparse zeros to the size of the real libraries).

Rows, each over the same objects: rootlock check PATH (finds the objects itself); rootlock check
-- FILE... (handed the list, as libtree is); rootlock ldd FILE... (ldd's trace of each, one
call); scanelf -R (only finds the ELF files: the floor of the first row's walk); libtree -p, all
files in one call, in a chroot; ldd, 64 objects per call, in a chroot; lddtree -R ROOT -l, once
(about a minute on the torch root). Each row's wall time is shown over rootlock check's and over
libtree's, and below the table each rootlock row's time ratio and peak RSS beside libtree's
(issue 16's aims: at most 5x libtree's time; check under 64 MB).

Wall time is the median of several runs (hyperfine when installed, else a timing loop), after a
warm-up; peak RSS comes from one run under `/usr/bin/time -v`. Where the kernel lets us drop
the page cache, rootlock, scanelf and libtree are also timed cold. The peers run in the same run
as rootlock, on the same objects, so the ratio holds across machines where the seconds drift.

A benchmark is not a test: it never fails on a figure. The exit status is 0 unless a measured
tool died of a signal, rootlock exited with something other than 0 or 1 or printed JSON that
does not parse, or hyperfine could not time a command.
"""
import argparse
import collections
import datetime
import json
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
sys.path.insert(0, HERE)

import roots  # noqa: E402

GNU_TIME = "/usr/bin/time"
# lddtree is a Python script that needs pyelftools; Debian installs that for /usr/bin/python3,
# which need not be the python3 first in PATH.
SYSTEM_PYTHON = "/usr/bin/python3"
DROP_CACHES = "/proc/sys/vm/drop_caches"
DROP_CMD = "sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'"
# Inside a chroot the peers see only the root: the helpers go to a host directory bound over
# the root's /tmp in a private mount namespace (the cached root is never written).
BENCH_DIR_IN_ROOT = "/tmp/rootlock-bench"
LDD_BATCH = 64
MB = 1 << 20


class Crash(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Measuring one command.

def have(tool):
    return shutil.which(tool) is not None


def drop_caches_allowed():
    """True when writing drop_caches works here (root in a VM or on bare metal, not a container
    that mounts /proc/sys read-only)."""
    try:
        subprocess.run(["sync"], check=True)
        with open(DROP_CACHES, "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def run_once(argv, stdout_path=None):
    """One run under GNU time -v: (wall seconds, peak RSS in KiB, exit status, signal)."""
    with tempfile.NamedTemporaryFile("r", prefix="rootlock-bench-time-", suffix=".txt") as tf:
        out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
        try:
            t0 = time.perf_counter()
            p = subprocess.run([GNU_TIME, "-v", "-o", tf.name] + argv, stdout=out,
                               stderr=subprocess.PIPE)
            wall = time.perf_counter() - t0
        finally:
            if stdout_path:
                out.close()
        report = tf.read()
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report)
    status = re.search(r"Exit status: (-?\d+)", report)
    signal = re.search(r"Command terminated by signal (\d+)", report)
    cpu = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([0-9.]+)", report))
    return {"wall": wall, "cpu": cpu, "rss_kb": int(rss.group(1)) if rss else None,
            "rc": int(status.group(1)) if status else p.returncode,
            "signal": int(signal.group(1)) if signal else None,
            "stderr_tail": p.stderr.decode(errors="replace")[-2000:]}


def timed_runs(argv, runs, warmup, prepare=None):
    """Wall times of `runs` runs after `warmup` runs, and their mean CPU time (user + system,
    of the command and its children): hyperfine when installed, else a loop. prepare (a
    command line) runs before each timed run, outside the timing."""
    if have("hyperfine"):
        with tempfile.NamedTemporaryFile("r", prefix="rootlock-bench-hf-", suffix=".json") as tf:
            cmd = ["hyperfine", "-N", "-i", "--style", "none", "-w", str(warmup), "-r", str(runs),
                   "--export-json", tf.name]
            if prepare:
                cmd += ["--prepare", prepare]
            p = subprocess.run(cmd + [shlex.join(argv)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                raise Crash(f"hyperfine failed on {argv[0]}: {p.stderr.strip()[-500:]}")
            result = json.load(tf)["results"][0]
        return result["times"], result["user"] + result["system"], "hyperfine"
    for _ in range(warmup):
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times, cpu = [], 0.0
    for _ in range(runs):
        if prepare:
            subprocess.run(shlex.split(prepare), check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return times, cpu / max(runs, 1), "loop"


def measure(job):
    """job: {name, argv, runs, warmup, cold_runs, stdout}. One run under GNU time first (the
    peak RSS, and a warm-up), then the timed runs; runs == 0 means that run is the timing."""
    first = run_once(job["argv"], job.get("stdout"))
    res = {"name": job["name"], "rc": first["rc"], "signal": first["signal"],
           "rss_kb": first["rss_kb"], "stderr_tail": first["stderr_tail"]}
    res.update(wall=first["wall"], cpu=first["cpu"], times=[first["wall"]], how="once")
    try:
        if job.get("runs", 0) > 0:
            times, cpu, how = timed_runs(job["argv"], job["runs"], job.get("warmup", 1))
            res.update(wall=statistics.median(times), cpu=cpu, times=times, how=how)
        if job.get("cold_runs", 0) > 0:
            times, _, how = timed_runs(job["argv"], job["cold_runs"], 0, prepare=DROP_CMD)
            res.update(cold=statistics.median(times), cold_times=times)
    except Crash as e:
        res["error"] = str(e)
    return res


# ---------------------------------------------------------------------------------------------
# The chroot side: peers run inside the root, in a private mount and PID namespace with the
# root's /proc mounted (as tests/fixtures/debian_root.run_in_chroot does) and a host directory
# bound over the root's /tmp.

def inside_main(args):
    """Entered by re-executing this script under unshare; runs the jobs, writes the results."""
    tmp = os.path.join(args.inside, "tmp")
    subprocess.run(["mount", "--bind", args.bind, tmp], check=True)
    with open(args.jobs) as f:
        jobs = json.load(f)
    results = [measure(job) for job in jobs]
    with open(args.out, "w") as f:
        json.dump(results, f)
    return 0


def run_in_root(root, jobs, bench_dir):
    """Run jobs (argv already prefixed with chroot) in the namespace; their results."""
    jobs_path = os.path.join(bench_dir, "jobs.json")
    out_path = os.path.join(bench_dir, "results.json")
    with open(jobs_path, "w") as f:
        json.dump(jobs, f)
    cmd = ["unshare", "--mount", "--pid", "--fork",
           "--mount-proc=" + os.path.join(root, "proc"),
           sys.executable, os.path.abspath(__file__), "--inside", root, "--bind", bench_dir,
           "--jobs", jobs_path, "--out", out_path]
    subprocess.run(cmd, check=True)
    with open(out_path) as f:
        return json.load(f)


def prepare_bench_dir(objects):
    """A host directory holding libtree, the object list and the ldd driver, for the chroot."""
    d = tempfile.mkdtemp(prefix="rootlock-bench-")
    os.chmod(d, 0o755)
    bench = os.path.join(d, "rootlock-bench")
    os.mkdir(bench)
    if have("libtree"):
        shutil.copy2(shutil.which("libtree"), os.path.join(bench, "libtree"))
    with open(os.path.join(bench, "objects"), "w") as f:
        f.write("".join(p + "\n" for p in objects))
    # ldd, LDD_BATCH objects per call, every line of output read (to /dev/null).
    with open(os.path.join(bench, "ldd-all.sh"), "w") as f:
        f.write(f"xargs -d '\\n' -n {LDD_BATCH} ldd < {BENCH_DIR_IN_ROOT}/objects "
                ">/dev/null 2>&1\nexit 0\n")
    return d


# ---------------------------------------------------------------------------------------------
# One benchmark: a root, a set of objects, a rootlock check path.

def peer_jobs(root, objects, opts, cold):
    jobs = []
    if have("libtree"):
        argv = ["chroot", root, BENCH_DIR_IN_ROOT + "/libtree", "-p", "--"] + objects
        jobs.append({"name": "libtree", "argv": argv, "runs": opts.runs, "warmup": 1,
                     "cold_runs": opts.cold_runs if cold else 0})
    if not opts.skip_ldd:
        jobs.append({"name": "ldd", "argv": ["chroot", root, "/bin/sh",
                                             BENCH_DIR_IN_ROOT + "/ldd-all.sh"],
                     "runs": opts.ldd_runs, "warmup": 1})
    return jobs


def lddtree_argv(root, objects):
    if not have("lddtree"):
        return None, "lddtree not installed (apt-get install pax-utils)"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import elftools"], capture_output=True)
    if probe.returncode != 0:
        return None, "lddtree needs pyelftools (apt-get install python3-pyelftools)"
    return [SYSTEM_PYTHON, shutil.which("lddtree"), "-R", root, "-l"] + objects, None


def read_report(path, crashed):
    """rootlock's JSON report from path (then removed), or None with the reason in crashed."""
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        crashed.append(f"rootlock printed JSON that does not parse: {e}")
        return None
    finally:
        os.unlink(path)


def read_ldd_report(path, crashed):
    """How many objects `rootlock ldd --json` traced (path then removed), or None."""
    try:
        with open(path) as f:
            report = json.load(f)
    except ValueError as e:
        crashed.append(f"rootlock ldd printed JSON that does not parse: {e}")
        return None
    finally:
        os.unlink(path)
    return len(report) if isinstance(report, list) else report.get("objects")


def run_benchmark(title, rootlock, root, check_path, objects, opts, cold):
    print(f"\n== {title}: {len(objects)} ELF objects under {check_path} of {root}", flush=True)
    rows, crashed = [], []
    json_out = tempfile.NamedTemporaryFile(prefix="rootlock-bench-", suffix=".json", delete=False)
    json_out.close()
    argv = [os.path.abspath(rootlock), "check", "--root", root, "--json", check_path]
    rl = measure({"name": "rootlock", "argv": argv, "runs": opts.runs, "warmup": 1,
                  "cold_runs": opts.cold_runs if cold else 0, "stdout": json_out.name})
    report = read_report(json_out.name, crashed)
    if rl["signal"] is not None or rl["rc"] not in (0, 1):
        crashed.append(f"rootlock exited {rl['rc']} (signal {rl['signal']}): "
                       f"{rl['stderr_tail'][-500:]}")
    rl["objects"] = report["objects"] if report else None
    rl["note"] = f"check {check_path}: finds the objects itself"
    rows.append(rl)

    # The same check handed the file list libtree gets: no directory walk, no magic probing.
    json_out = tempfile.NamedTemporaryFile(prefix="rootlock-bench-", suffix=".json", delete=False)
    json_out.close()
    listed = measure({"name": "rootlock, file list",
                      "argv": argv[:-1] + ["--"] + objects, "runs": opts.runs, "warmup": 1,
                      "cold_runs": opts.cold_runs if cold else 0, "stdout": json_out.name})
    listed_report = read_report(json_out.name, crashed)
    if listed["signal"] is not None or listed["rc"] not in (0, 1):
        crashed.append(f"rootlock (file list) exited {listed['rc']} (signal {listed['signal']})")
    listed.update(objects=listed_report["objects"] if listed_report else None,
                  note="the objects given, as libtree gets them")
    rows.append(listed)
    # ldd's trace of every object, in one call: what libtree does (headers and search paths),
    # with symbol versions, and no symbol binding.
    ldd_out = tempfile.NamedTemporaryFile(prefix="rootlock-bench-", suffix=".json", delete=False)
    ldd_out.close()
    traced = measure({"name": "rootlock ldd",
                      "argv": [os.path.abspath(rootlock), "ldd", "--root", root, "--json"] +
                      objects, "runs": opts.runs, "warmup": 1,
                      "cold_runs": opts.cold_runs if cold else 0, "stdout": ldd_out.name})
    ldd_report = read_ldd_report(ldd_out.name, crashed)
    if traced["signal"] is not None or traced["rc"] not in (0, 1):
        crashed.append(f"rootlock ldd exited {traced['rc']} (signal {traced['signal']}): "
                       f"{traced['stderr_tail'][-500:]}")
    traced.update(objects=ldd_report, note="ldd's trace of the objects, one call")
    rows.append(traced)
    # What finding the ELF objects costs a C tool: walk the tree, open and probe every file.
    if have("scanelf"):
        found = measure({"name": "scanelf -R", "runs": opts.runs, "warmup": 1,
                         "cold_runs": opts.cold_runs if cold else 0,
                         "argv": ["scanelf", "-R", "-B", "-F", "%F",
                                  os.path.join(root, check_path.lstrip("/"))]})
        found.update(objects=len(objects), note="only finds the ELF files (pax-utils)")
        rows.append(found)

    bench_dir = prepare_bench_dir(objects)
    try:
        jobs = peer_jobs(root, objects, opts, cold)
        if jobs:
            for res in run_in_root(root, jobs, bench_dir):
                res["objects"] = len(objects)
                if res["name"] == "ldd":
                    res["note"] = f"{LDD_BATCH} objects per call"
                rows.append(res)
    finally:
        shutil.rmtree(bench_dir, ignore_errors=True)
    if not have("libtree"):
        rows.append({"name": "libtree", "skipped": "not installed (apt-get install libtree)"})

    if not opts.skip_lddtree:
        argv, why = lddtree_argv(root, objects)
        if argv:
            res = measure({"name": "lddtree", "argv": argv, "runs": 0})
            res["objects"] = len(objects)
            rows.append(res)
        else:
            rows.append({"name": "lddtree", "skipped": why})

    for r in rows:
        if not r["name"].startswith("rootlock") and r.get("signal") is not None:
            crashed.append(f"{r['name']} died of signal {r['signal']}")
        if r.get("error"):
            crashed.append(f"{r['name']}: {r['error']}")
    print_table(rows, rl)
    print_beside_libtree(rows)
    if report:
        print_report(report)
    return {"title": title, "root": root, "path": check_path, "objects": len(objects),
            "rows": rows, "report_summary": summary(report) if report else None}, crashed


# ---------------------------------------------------------------------------------------------
# Output.

def summary(report):
    kinds = collections.Counter((p["kind"], p.get("severity", "?")) for p in report["problems"])
    return {"objects": report["objects"], "ok": report["ok"],
            "problems": {f"{k} ({s})": n for (k, s), n in sorted(kinds.items())},
            "notes": report.get("notes", [])}


def print_report(report):
    s = summary(report)
    print(f"rootlock reported: {s['objects']} objects, ok={str(s['ok']).lower()}, "
          f"{sum(s['problems'].values())} problems")
    for kind, n in s["problems"].items():
        print(f"  {n:6d}  {kind}")
    for note in s["notes"]:
        print(f"  note: {note}")


def fmt_s(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def libtree_row(rows):
    return next((r for r in rows if r["name"] == "libtree" and r.get("wall")), None)


def print_beside_libtree(rows):
    """rootlock's rows over libtree's: the time ratio (issue 16's aim: at most 5x) and both
    peak RSS figures (the aim for check: under 64 MB)."""
    peer = libtree_row(rows)
    if peer is None:
        print("beside libtree: not run (libtree missing)")
        return
    peer_rss = f"{peer['rss_kb'] / 1024:.1f} MB" if peer.get("rss_kb") else "-"
    print(f"beside libtree ({fmt_s(peer['wall'])} s, peak RSS {peer_rss}):")
    for r in rows:
        if not r["name"].startswith("rootlock") or not r.get("wall"):
            continue
        rss = f"{r['rss_kb'] / 1024:.1f} MB" if r.get("rss_kb") else "-"
        print(f"  {r['name']:<20} {r['wall'] / peer['wall']:6.1f}x its time "
              f"({fmt_s(r['wall'])} s), peak RSS {rss}")


def print_table(rows, base):
    head = ["tool", "objects", "wall (s)", "x rootlock", "x libtree", "cpu (s)", "cold (s)",
            "peak RSS (MB)", "note"]
    peer = libtree_row(rows)
    lines = []
    for r in rows:
        if "skipped" in r:
            lines.append([r["name"], "-", "-", "-", "-", "-", "-", "-",
                          "not run: " + r["skipped"]])
            continue
        ratio = r["wall"] / base["wall"] if base.get("wall") else None
        over_libtree = r["wall"] / peer["wall"] if peer else None
        note = r.get("note", "")
        n = len(r.get("times", []))
        how = r.get("how", "")
        spread = f"median of {n} ({how})" if n > 1 else how
        if r["name"].startswith("rootlock") and r.get("rc") not in (0, None):
            note = (note + "; " if note else "") + f"exit {r['rc']}"
        if r.get("error"):
            note = (note + "; " if note else "") + "timing failed (see below)"
        lines.append([r["name"], str(r.get("objects", "-")), fmt_s(r["wall"]),
                      f"{ratio:.2f}" if ratio is not None else "-",
                      f"{over_libtree:.2f}" if over_libtree is not None else "-",
                      fmt_s(r.get("cpu")),
                      fmt_s(r.get("cold")),
                      f"{r['rss_kb'] / 1024:.1f}" if r.get("rss_kb") else "-",
                      "; ".join(x for x in (spread, note) if x)])
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(head)]
    print(" | ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("-+-".join("-" * w for w in widths))
    for line in lines:
        print(" | ".join(c.ljust(w) for c, w in zip(line, widths)))


# ---------------------------------------------------------------------------------------------
# The CUDA-sized tree.

# Approximate share of each library in its wheel, for wheels holding more than one big file.
# The data gives wheel sizes (compressed), not file sizes: a library of a dist with a known
# wheel size is padded to wheel size x share, a lower bound of the real file (deflate shrinks
# GPU code about 1.5-3x). A file not named here gets SMALL_FILE.
SHARE = {
    "libtorch_cuda.so": 0.62, "libtorch_cpu.so": 0.30, "libtorch_python.so": 0.03,
    "libcublasLt": 0.75, "libcublas": 0.24,
    "libcudnn_engines_precompiled": 0.55, "libcudnn_adv": 0.18, "libcudnn_ops": 0.12,
    "libcudnn_heuristic": 0.06, "libcudnn_engines_runtime_compiled": 0.03,
    "libcudnn_cnn": 0.02, "libcudnn_graph": 0.01,
    "libcufft": 0.97, "libcusolver": 0.6, "libcusolverMg": 0.4,
    "libnvrtc": 0.55, "libnvrtc.alt": 0.35, "libnvrtc-builtins": 0.05,
    "libnvrtc-builtins.alt": 0.05,
    "libcupti": 0.6, "libnvperf_host": 0.3, "libnvperf_target": 0.05,
}
# Where the data gives no wheel size (torch 2.9.1's libtorch_nvshmem, the nvshmem wheel): a few
# hundred MB for the big ones, as their real files are.
FALLBACK = {"libtorch_nvshmem.so": 200 * MB, "libnvshmem_host": 150 * MB}
SMALL_FILE = 1 * MB


def _stem(path):
    """libcublasLt.so.12 -> libcublasLt; libtorch_cuda.so stays; libnvrtc.alt.so.12 ->
    libnvrtc.alt: the name without its soname version, to match cu12 and cu13 builds."""
    base = os.path.basename(path)
    if base in SHARE or base in FALLBACK:
        return base
    return re.sub(r"\.so(\.[0-9.]+)?$", "", base)


def real_sizes(data):
    """{(stack id, lib path): bytes} for every library of every stack."""
    by_stem = {}
    sizes = {}
    for stack in data["stack"]:
        for dist in stack["dist"]:
            wheel = max((w.get("size", 0) for w in dist.get("wheel", [])), default=0)
            libs = dist.get("lib", [])
            for lib in libs:
                stem = _stem(lib["path"])
                size = None
                if wheel:
                    share = SHARE.get(stem, 1.0 if len(libs) == 1 else None)
                    size = int(wheel * share) if share else SMALL_FILE
                    by_stem.setdefault(stem, size)
                sizes[(stack["id"], lib["path"])] = size
    for key, size in sizes.items():
        if size is None:
            stem = _stem(key[1])
            sizes[key] = by_stem.get(stem) or FALLBACK.get(stem) or SMALL_FILE
    return sizes


def pad_cuda_env(info, data):
    """Append zeros (a sparse hole) to every ELF object of the venv up to its real size.
    Returns (apparent bytes, allocated bytes) of the venv's ELF objects after padding."""
    sizes = real_sizes(data)
    stack_of = {d: info["dists"][d]["stack"] for d in info["dists"]}
    apparent = allocated = 0
    for path, fact in info["objects"].items():
        host = os.path.join(info["root"], path.lstrip("/"))
        rel = os.path.relpath(path, info["site_packages"])
        stack = stack_of[fact["dist"]]
        size = sizes.get((stack, rel))
        if size is None:  # libgomp-<hash>: the data's path holds the placeholder
            size = sizes.get((stack, re.sub(r"-[0-9a-f]{8}\.so", "-<hash>.so", rel)), SMALL_FILE)
        st = os.stat(host)
        if st.st_nlink != 1:
            raise RuntimeError(f"{host} is hard-linked: padding it would change its twin")
        if size > st.st_size:
            os.truncate(host, size)
        st = os.stat(host)
        apparent += st.st_size
        allocated += st.st_blocks * 512
    return apparent, allocated


def cuda_root(opts):
    """A copy_root() of the test root with the CUDA fixture venv, padded. Caller removes it."""
    from fixtures import cuda_env, debian_root
    root = debian_root.copy_root()
    data = cuda_env.load_data()
    info = cuda_env.build_cuda_env(root, twin_toolkit=True, data=data)
    apparent, allocated = pad_cuda_env(info, data)
    print(f"\nCUDA fixture venv: {len(info['dists'])} dists, {len(info['objects'])} ELF objects "
          f"padded to {apparent / 1e9:.2f} GB apparent, {allocated / 1e6:.1f} MB allocated "
          "(sparse)", flush=True)
    return root, {"dists": len(info["dists"]), "elf_objects": len(info["objects"]),
                  "apparent_bytes": apparent, "allocated_bytes": allocated}


# ---------------------------------------------------------------------------------------------

def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            cpu = m.group(1) if m else ""
    except OSError:
        pass
    return {"date": datetime.date.today().isoformat(), "kernel": platform.release(),
            "cpus": os.cpu_count(), "cpu": cpu, "load": os.getloadavg()[0]}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rootlock", nargs="?", help="the rootlock binary (build/rootlock)")
    ap.add_argument("--only", choices=["debian", "cuda"], action="append",
                    help="run only this benchmark (repeatable)")
    ap.add_argument("--runs", type=int, default=7, help="timed runs of rootlock and libtree")
    ap.add_argument("--ldd-runs", type=int, default=3, help="timed runs of the ldd batch")
    ap.add_argument("--cold-runs", type=int, default=3,
                    help="runs with the page cache dropped before each (0: none)")
    ap.add_argument("--skip-lddtree", action="store_true", help="lddtree takes about a minute")
    ap.add_argument("--skip-ldd", action="store_true")
    ap.add_argument("--keep-cuda-root", action="store_true",
                    help="leave the padded CUDA root in place (its path is printed)")
    ap.add_argument("--json", help="also write every figure to this file")
    ap.add_argument("--inside", help=argparse.SUPPRESS)
    ap.add_argument("--bind", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    if opts.inside:
        return inside_main(opts)
    if not opts.rootlock or not os.access(opts.rootlock, os.X_OK):
        ap.error("give the rootlock binary, e.g. build/rootlock")
    if os.geteuid() != 0:
        print("bench_check: needs root (mmdebstrap, chroot, unshare)", file=sys.stderr)
        return 2
    which = opts.only or ["debian", "cuda"]
    # Measure a private copy: a rebuild of build/ during the run must not swap the binary.
    snapshot_dir = tempfile.mkdtemp(prefix="rootlock-bench-bin-")
    given = opts.rootlock
    opts.rootlock = os.path.join(snapshot_dir, "rootlock")
    shutil.copy2(given, opts.rootlock)
    try:
        return run_all(opts, which, given)
    finally:
        shutil.rmtree(snapshot_dir, ignore_errors=True)


def run_all(opts, which, given):
    cold = opts.cold_runs > 0 and drop_caches_allowed()
    info = machine()
    version = subprocess.run([opts.rootlock, "--version"], capture_output=True, text=True)
    info["rootlock"] = (version.stdout.strip() or version.stderr.strip()).splitlines()[0:1]
    info["rootlock_mtime"] = datetime.datetime.fromtimestamp(
        os.stat(given).st_mtime).isoformat(timespec="seconds")
    info["page_cache_drop"] = cold if opts.cold_runs > 0 else "not asked"
    print(f"rootlock bench, {info['date']}, {info['cpus']} CPUs ({info['cpu']}), "
          f"kernel {info['kernel']}, load average {info['load']:.1f}; cold runs: "
          f"{'yes' if cold else 'no (writing ' + DROP_CACHES + ' is not permitted)'}\n"
          f"binary: {given} {' '.join(info['rootlock'])} (built {info['rootlock_mtime']}; "
          "a copy is measured)")
    results, crashed = {"machine": info, "benchmarks": []}, []

    if "debian" in which:
        root = roots.torch_root()
        objects = roots.elf_files(root, "/usr")
        res, bad = run_benchmark("Debian 12 root with python3-torch", opts.rootlock, root,
                                 "/usr", objects, opts, cold)
        results["benchmarks"].append(res)
        crashed += bad

    if "cuda" in which:
        root, env = cuda_root(opts)
        try:
            objects = roots.elf_files(root, "/opt/venv")
            res, bad = run_benchmark("torch + CUDA fixture venv, padded", opts.rootlock, root,
                                     "/opt/venv", objects, opts, cold)
            res["env"] = env
            results["benchmarks"].append(res)
            crashed += bad
        finally:
            if opts.keep_cuda_root:
                print(f"kept {root}")
            else:
                shutil.rmtree(root, ignore_errors=True)

    results["machine"]["load_after"] = os.getloadavg()[0]
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)
    for c in crashed:
        print("CRASH: " + c, file=sys.stderr)
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
