"""End-to-end: the CUDA and driver rules of `rootlock check` (issue 6), one small root per case.

Usage: test_cuda_rules.py ROOTLOCK

Each case is a throwaway copy of the Debian root with only what it needs added
(fixtures/cuda_rules_roots.py), checked with `--json` and as text:
  a. a stub libcuda.so.1 (and libcuda.so) in /usr/lib/x86_64-linux-gnu: driver-library-in-image;
  b. /etc/ld.so.conf.d/cuda-stubs.conf naming /usr/local/cuda/lib64/stubs: stubs-on-search-path
     with that conf file as the source;
  c. a program loading a library that needs libcudart.so.12 and libcudart.so.13: a
     cuda-major-mix warning (the program runs in a chroot); with a symbol neither runtime
     defines, an error naming it (the program fails to start); with no program, none;
  d. a CUDA 13 stack with --cuda 13.0 --driver 570.133.07: driver-too-old; with 580.65.06 none,
     and with --cuda 12.8 a cuda-major-mismatch naming the CUDA 13 libraries.
Malformed --cuda and --driver values are refused with one exact line and exit 2. The untouched
root, checked with --cuda 13.0 --driver 580.65.06, has none of these kinds.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from fixtures import cuda_rules_roots as roots
from fixtures.debian_root import copy_root, run_in_chroot
from fixtures.failures import Failures
from fixtures.check_report import by_kind

KINDS = ("driver-library-in-image", "stubs-on-search-path", "cuda-major-mix",
         "cuda-major-mismatch", "driver-too-old")


def run(rootlock, argv):
    proc = subprocess.run([rootlock, *argv], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def check(fail, rootlock, root, label, extra=()):
    """(exit code, JSON report or {}, text output) of `check` over the whole root."""
    argv = ["check", "--root", root, *extra]
    rc, out, err = run(rootlock, argv + ["--json"])
    try:
        report = json.loads(out)
    except json.JSONDecodeError:
        fail.expect(False, f"({label}) no JSON from check {' '.join(extra)}:\n{out[-2000:]}{err}")
        report = {}
    text_rc, text, _ = run(rootlock, argv)
    fail.expect(text_rc == rc, f"({label}) text exit {text_rc}, JSON exit {rc}")
    found = {k: len(by_kind(report, k)) for k in KINDS if by_kind(report, k)}
    print(f"({label}) check {' '.join(extra) or '(no flags)'}: exit {rc}, ok={report.get('ok')}, "
          f"{report.get('objects')} objects; CUDA kinds: {found or 'none'}")
    return rc, report, text


def expect_failed(fail, label, rc, report):
    fail.expect(rc == 1 and report.get("ok") is False,
                f"({label}) exit {rc}, ok={report.get('ok')} (expected 1, false)")


def expect_mentions(fail, label, text, words):
    for word in words:
        fail.expect(word in text, f"({label}) the text output does not mention {word!r}")


def case_a(fail, rootlock, root):
    facts = roots.driver_stub(root)
    rc, report, text = check(fail, rootlock, root, "a")
    expect_failed(fail, "a", rc, report)
    found = by_kind(report, "driver-library-in-image")
    # The link libcuda.so leads to the same file: one problem, at the file.
    if fail.expect(len(found) == 1, f"(a) expected one driver-library-in-image, got {found}"):
        p = found[0]
        fail.expect(p.get("severity") == "error", f"(a) not an error: {p}")
        fail.expect(p.get("path") == facts["path"], f"(a) path {p.get('path')!r}")
        fail.expect(bool(p.get("problem")), f"(a) no problem text: {p}")
        print(f"(a) {p.get('path')}: {p.get('problem')}")
    expect_mentions(fail, "a", text, [facts["path"]])


def case_b(fail, rootlock, root):
    facts = roots.stubs_conf(root)
    rc, report, text = check(fail, rootlock, root, "b")
    expect_failed(fail, "b", rc, report)
    found = by_kind(report, "stubs-on-search-path")
    if fail.expect(len(found) == 1, f"(b) expected one stubs-on-search-path, got {found}"):
        p = found[0]
        fail.expect(p.get("severity") == "error", f"(b) not an error: {p}")
        fail.expect(p.get("directory") == facts["directory"], f"(b) directory {p.get('directory')!r}")
        source = p.get("source", "")
        fail.expect(source.split(":")[0] == facts["conf"], f"(b) source {source!r}")
        print(f"(b) {p.get('directory')} from {source}")
    expect_mentions(fail, "b", text, [facts["directory"], facts["conf"]])


def case_c(fail, rootlock, root):
    facts = roots.major_mix(root)
    run_rc = run_in_chroot(root, [facts["program"]]).returncode
    rc, report, text = check(fail, rootlock, root, "c")
    # The two runtimes have their own sonames: the program runs, so the mix is a warning.
    fail.expect(run_rc == 0, f"(c) {facts['program']} does not run in the chroot: exit {run_rc}")
    fail.expect(rc == 0 and report.get("ok") is True,
                f"(c) exit {rc}, ok={report.get('ok')} (expected 0, true)")
    found = by_kind(report, "cuda-major-mix")
    if fail.expect(len(found) == 1, f"(c) expected one cuda-major-mix, got {found}"):
        p = found[0]
        fail.expect(p.get("family") == "cudart" and p.get("majors") == [12, 13]
                    and p.get("severity") == "warning" and "failures" not in p,
                    f"(c) family/majors/severity: {p}")
        fail.expect(set(facts["cudart"]) <= set(p.get("objects", [])), f"(c) objects: {p}")
        print(f"(c) {p.get('family')} majors {p.get('majors')} ({p.get('severity')}; "
              f"{facts['program']} runs): {p.get('objects')}")
    expect_mentions(fail, "c", text, ["cudart", facts["cudart"][0]])


def case_c_failing(fail, rootlock, root):
    symbol = "cudaRootlockMissing"
    facts = roots.major_mix(root, missing_symbol=symbol)
    proc = run_in_chroot(root, [facts["program"]])
    rc, report, text = check(fail, rootlock, root, "c failing")
    fail.expect(proc.returncode != 0 and symbol in proc.stderr,
                f"(c failing) {facts['program']}: exit {proc.returncode}, {proc.stderr!r}")
    expect_failed(fail, "c failing", rc, report)
    found = by_kind(report, "cuda-major-mix")
    if fail.expect(len(found) == 1, f"(c failing) expected one cuda-major-mix, got {found}"):
        p = found[0]
        fail.expect(p.get("severity") == "error"
                    and any(symbol in f and facts["object"] in f for f in p.get("failures", [])),
                    f"(c failing) the mix should be an error naming {symbol}: {p}")
        print(f"(c failing) {p.get('severity')}: {p.get('failures')}; the program: "
              f"{proc.stderr.strip()}")
    expect_mentions(fail, "c failing", text, ["and it fails:", symbol])


def case_c_unloaded(fail, rootlock, root):
    facts = roots.major_mix(root)
    os.unlink(os.path.join(root, facts["program"].lstrip("/")))
    rc, report, _ = check(fail, rootlock, root, "c unloaded")
    # Nothing loads libboth.so: no process mixes, and no process loads CUDA to compare with.
    fail.expect(rc == 0 and not by_kind(report, "cuda-major-mix")
                and not by_kind(report, "cuda-unloaded-major"),
                f"(c unloaded) exit {rc}: {report.get('problems')}")


def case_d(fail, rootlock, root):
    facts = roots.cuda13_stack(root)
    old = ["--cuda", "13.0", "--driver", "570.133.07"]
    rc, report, text = check(fail, rootlock, root, "d old driver", old)
    expect_failed(fail, "d old driver", rc, report)
    found = by_kind(report, "driver-too-old")
    if fail.expect(len(found) == 1, f"(d) expected one driver-too-old, got {found}"):
        p = found[0]
        fail.expect(p.get("severity") == "error", f"(d) not an error: {p}")
        fail.expect(p.get("driver") == "570.133.07" and p.get("cuda_major") == 13
                    and p.get("minimum_driver") == "580", f"(d) fields: {p}")
        fail.expect(set(facts["libraries"]) <= set(p.get("libraries", [])),
                    f"(d) libraries {p.get('libraries')} lack {facts['libraries']}")
        print(f"(d) driver {p.get('driver')} < {p.get('minimum_driver')} for CUDA "
              f"{p.get('cuda_major')}: {p.get('libraries')}")
    expect_mentions(fail, "d old driver", text, ["570.133.07", "580"])

    rc, report, _ = check(fail, rootlock, root, "d new driver",
                          ["--cuda", "13.0", "--driver", "580.65.06"])
    fail.expect(rc == 0 and report.get("ok") is True,
                f"(d) with 580.65.06: exit {rc}, problems {report.get('problems')}")
    for kind in KINDS:
        fail.expect(not by_kind(report, kind), f"(d) with 580.65.06: {by_kind(report, kind)}")

    rc, report, text = check(fail, rootlock, root, "d cuda 12",
                             ["--cuda", "12.8", "--driver", "580.65.06"])
    expect_failed(fail, "d cuda 12", rc, report)
    found = by_kind(report, "cuda-major-mismatch")
    if fail.expect(len(found) == 1, f"(d) expected one cuda-major-mismatch, got {found}"):
        p = found[0]
        fail.expect(p.get("expected_major") == 12 and p.get("found_major") == 13,
                    f"(d) mismatch majors: {p}")
        fail.expect(set(facts["libraries"]) <= set(p.get("libraries", [])),
                    f"(d) mismatch libraries: {p}")
    expect_mentions(fail, "d cuda 12", text, [facts["libraries"][0]])


def case_plain(fail, rootlock, root):
    rc, report, _ = check(fail, rootlock, root, "plain",
                          ["--cuda", "13.0", "--driver", "580.65.06"])
    fail.expect(rc == 0 and report.get("ok") is True, f"(plain) exit {rc}")
    for kind in KINDS:
        fail.expect(not by_kind(report, kind), f"(plain) {by_kind(report, kind)}")


def case_flags(fail, rootlock, root):
    cases = [
        (["--cuda", "13"],
         'rootlock: --cuda: "13" is not a CUDA version such as 13.0: it needs MAJOR.MINOR'),
        (["--cuda", "14.0"],
         'rootlock: --cuda: CUDA 14 ("14.0") is not one rootlock knows the driver for: 11, 12 or '
         '13'),
        (["--driver", "57x"],
         'rootlock: --driver: "57x" is not a driver version such as 580 or 580.65.06: "57x" is '
         'not a decimal number'),
        (["--driver", "580.65.06.1"],
         'rootlock: --driver: "580.65.06.1" is not a driver version such as 580 or 580.65.06: '
         'it has more than three parts'),
    ]
    for extra, line in cases:
        rc, out, err = run(rootlock, ["check", "--root", root, *extra])
        fail.expect(rc == 2 and err.strip() == line and not out,
                    f"(flags) {extra}: exit {rc}, stderr {err.strip()!r}")
    print(f"(flags) {len(cases)} malformed values refused with exit 2")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    parent = tempfile.mkdtemp(prefix="rootlock-cuda-rules-")
    try:
        plain = copy_root(parent)
        case_plain(fail, rootlock, plain)
        case_flags(fail, rootlock, plain)
        for case in (case_a, case_b, case_c, case_c_failing, case_c_unloaded, case_d):
            case(fail, rootlock, copy_root(parent))
    finally:
        if os.environ.get("ROOTLOCK_KEEP_ROOT"):
            print("kept", parent)
        else:
            shutil.rmtree(parent, ignore_errors=True)
    print(f"{len(fail.items)} failures" if fail.items else "all expectations met")
    return 1 if fail.items else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
