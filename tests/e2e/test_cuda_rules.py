"""End-to-end: the CUDA and driver rules of `rootlock check` (issue 6), one small root per case.

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

import pytest

from fixtures import cuda_rules_roots as roots
from fixtures.check_report import by_kind
from fixtures.cli import run_rootlock
from fixtures.debian_root import copy_root, run_in_chroot

KINDS = ("driver-library-in-image", "stubs-on-search-path", "cuda-major-mix",
         "cuda-major-mismatch", "driver-too-old")


def check(rootlock, root, label, extra=()):
    """(exit code, JSON report, text output) of `check` over the whole root."""
    argv = ["check", "--root", root, *extra]
    proc = run_rootlock(rootlock, *argv, "--json", timeout=120)
    rc = proc.returncode
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"({label}) no JSON from check {' '.join(extra)}:\n"
                    f"{proc.stdout[-2000:]}{proc.stderr}")
    text = run_rootlock(rootlock, *argv, timeout=120)
    assert text.returncode == rc, f"({label}) text exit {text.returncode}, JSON exit {rc}"
    found = {k: len(by_kind(report, k)) for k in KINDS if by_kind(report, k)}
    print(f"({label}) check {' '.join(extra) or '(no flags)'}: exit {rc}, ok={report.get('ok')}, "
          f"{report.get('objects')} objects; CUDA kinds: {found or 'none'}")
    return rc, report, text.stdout


def assert_failed(rc, report):
    assert rc == 1 and report.get("ok") is False, \
        f"exit {rc}, ok={report.get('ok')} (expected 1, false)"


def assert_mentions(text, words):
    missing = [w for w in words if w not in text]
    assert not missing, f"the text output does not mention {missing}:\n{text}"


@pytest.fixture(scope="module")
def plain_root(scratch):
    """The untouched Debian root (only read)."""
    return copy_root(scratch)


@pytest.fixture
def fresh_root(scratch):
    """A throwaway copy of the Debian root for one case to add to."""
    return copy_root(scratch)


def test_plain_root_has_none_of_the_cuda_kinds(rootlock, plain_root):
    rc, report, _ = check(rootlock, plain_root, "plain",
                          ["--cuda", "13.0", "--driver", "580.65.06"])
    assert rc == 0 and report.get("ok") is True, f"exit {rc}: {report.get('problems')}"
    found = {kind: by_kind(report, kind) for kind in KINDS if by_kind(report, kind)}
    assert not found, f"{found}"


@pytest.mark.parametrize("extra, line", [
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
], ids=["cuda-without-minor", "cuda-unknown-major", "driver-not-decimal", "driver-four-parts"])
def test_malformed_flag_refused_with_one_line(rootlock, plain_root, extra, line):
    proc = run_rootlock(rootlock, "check", "--root", plain_root, *extra, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip() == line and not proc.stdout, \
        f"{extra}: exit {proc.returncode}, stderr {proc.stderr.strip()!r}, stdout {proc.stdout!r}"


def test_a_driver_stub_in_image(rootlock, fresh_root):
    facts = roots.driver_stub(fresh_root)
    rc, report, text = check(rootlock, fresh_root, "a")
    assert_failed(rc, report)
    found = by_kind(report, "driver-library-in-image")
    # The link libcuda.so leads to the same file: one problem, at the file.
    assert len(found) == 1, f"expected one driver-library-in-image, got {found}"
    p = found[0]
    assert p.get("severity") == "error", f"not an error: {p}"
    assert p.get("path") == facts["path"], f"path {p.get('path')!r}, expected {facts['path']!r}"
    assert p.get("problem"), f"no problem text: {p}"
    print(f"(a) {p.get('path')}: {p.get('problem')}")
    assert_mentions(text, [facts["path"]])


def test_b_stubs_directory_on_the_search_path(rootlock, fresh_root):
    facts = roots.stubs_conf(fresh_root)
    rc, report, text = check(rootlock, fresh_root, "b")
    assert_failed(rc, report)
    found = by_kind(report, "stubs-on-search-path")
    assert len(found) == 1, f"expected one stubs-on-search-path, got {found}"
    p = found[0]
    assert p.get("severity") == "error", f"not an error: {p}"
    assert p.get("directory") == facts["directory"], f"directory {p.get('directory')!r}"
    source = p.get("source", "")
    assert source.split(":")[0] == facts["conf"], f"source {source!r}, expected {facts['conf']}"
    print(f"(b) {p.get('directory')} from {source}")
    assert_mentions(text, [facts["directory"], facts["conf"]])


def test_c_cudart_12_and_13_in_a_running_program_warn(rootlock, fresh_root):
    facts = roots.major_mix(fresh_root)
    run_rc = run_in_chroot(fresh_root, [facts["program"]]).returncode
    rc, report, text = check(rootlock, fresh_root, "c")
    # The two runtimes have their own sonames: the program runs, so the mix is a warning.
    assert run_rc == 0, f"{facts['program']} does not run in the chroot: exit {run_rc}"
    assert rc == 0 and report.get("ok") is True, \
        f"exit {rc}, ok={report.get('ok')} (expected 0, true)"
    found = by_kind(report, "cuda-major-mix")
    assert len(found) == 1, f"expected one cuda-major-mix, got {found}"
    p = found[0]
    assert p.get("family") == "cudart" and p.get("majors") == [12, 13] \
        and p.get("severity") == "warning" and "failures" not in p, \
        f"family/majors/severity: {p}"
    assert set(facts["cudart"]) <= set(p.get("objects", [])), f"objects: {p}"
    print(f"(c) {p.get('family')} majors {p.get('majors')} ({p.get('severity')}; "
          f"{facts['program']} runs): {p.get('objects')}")
    assert_mentions(text, ["cudart", facts["cudart"][0]])


def test_c_failing_mix_is_an_error_naming_the_symbol(rootlock, fresh_root):
    symbol = "cudaRootlockMissing"
    facts = roots.major_mix(fresh_root, missing_symbol=symbol)
    proc = run_in_chroot(fresh_root, [facts["program"]])
    rc, report, text = check(rootlock, fresh_root, "c failing")
    assert proc.returncode != 0 and symbol in proc.stderr, \
        f"{facts['program']}: exit {proc.returncode}, {proc.stderr!r}"
    assert_failed(rc, report)
    found = by_kind(report, "cuda-major-mix")
    assert len(found) == 1, f"expected one cuda-major-mix, got {found}"
    p = found[0]
    assert p.get("severity") == "error" \
        and any(symbol in f and facts["object"] in f for f in p.get("failures", [])), \
        f"the mix should be an error naming {symbol}: {p}"
    print(f"(c failing) {p.get('severity')}: {p.get('failures')}; the program: "
          f"{proc.stderr.strip()}")
    assert_mentions(text, ["and it fails:", symbol])


def test_c_unloaded_mix_nothing_loads_no_finding(rootlock, fresh_root):
    facts = roots.major_mix(fresh_root)
    os.unlink(os.path.join(fresh_root, facts["program"].lstrip("/")))
    rc, report, _ = check(rootlock, fresh_root, "c unloaded")
    # Nothing loads libboth.so: no process mixes, and no process loads CUDA to compare with.
    assert rc == 0 and not by_kind(report, "cuda-major-mix") \
        and not by_kind(report, "cuda-unloaded-major"), f"exit {rc}: {report.get('problems')}"


@pytest.fixture(scope="module")
def cuda13_root(scratch):
    """A CUDA 13 stack and a library loading it: (root, facts); the d cases only read it."""
    root = copy_root(scratch)
    return root, roots.cuda13_stack(root)


def test_d_driver_570_too_old_for_cuda_13(rootlock, cuda13_root):
    root, facts = cuda13_root
    rc, report, text = check(rootlock, root, "d old driver",
                             ["--cuda", "13.0", "--driver", "570.133.07"])
    assert_failed(rc, report)
    found = by_kind(report, "driver-too-old")
    assert len(found) == 1, f"expected one driver-too-old, got {found}"
    p = found[0]
    assert p.get("severity") == "error", f"not an error: {p}"
    assert p.get("driver") == "570.133.07" and p.get("cuda_major") == 13 \
        and p.get("minimum_driver") == "580", f"fields: {p}"
    assert set(facts["libraries"]) <= set(p.get("libraries", [])), \
        f"libraries {p.get('libraries')} lack {facts['libraries']}"
    print(f"(d) driver {p.get('driver')} < {p.get('minimum_driver')} for CUDA "
          f"{p.get('cuda_major')}: {p.get('libraries')}")
    assert_mentions(text, ["570.133.07", "580"])


def test_d_driver_580_is_new_enough(rootlock, cuda13_root):
    root, _ = cuda13_root
    rc, report, _ = check(rootlock, root, "d new driver",
                          ["--cuda", "13.0", "--driver", "580.65.06"])
    assert rc == 0 and report.get("ok") is True, \
        f"with 580.65.06: exit {rc}, problems {report.get('problems')}"
    found = {kind: by_kind(report, kind) for kind in KINDS if by_kind(report, kind)}
    assert not found, f"with 580.65.06: {found}"


def test_d_cuda_12_target_mismatches_the_cuda_13_libraries(rootlock, cuda13_root):
    root, facts = cuda13_root
    rc, report, text = check(rootlock, root, "d cuda 12",
                             ["--cuda", "12.8", "--driver", "580.65.06"])
    assert_failed(rc, report)
    found = by_kind(report, "cuda-major-mismatch")
    assert len(found) == 1, f"expected one cuda-major-mismatch, got {found}"
    p = found[0]
    assert p.get("expected_major") == 12 and p.get("found_major") == 13, \
        f"mismatch majors: {p}"
    assert set(facts["libraries"]) <= set(p.get("libraries", [])), f"mismatch libraries: {p}"
    assert_mentions(text, [facts["libraries"][0]])
