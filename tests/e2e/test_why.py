"""End-to-end: `rootlock why` over the CUDA fixture environment.

- `why libnccl.so.2`: needed by libtorch_cuda.so, provided by the one file, picked through
  libtorch_cuda.so's DT_RPATH, and without it libnccl.so.2 goes missing;
- `why nvidia-nccl-cu13`: the soname it provides and what uninstalling it breaks (the cu12 twin
  left metadata-only), which must be the same as `check --without` reports;
- a second copy of libnccl.so.2 in /usr/local/lib: both listed as providers, the RPATH copy
  still picked for torch;
- an unknown subject: exit 2 and one line.
"""
import json
import os
import shutil
import subprocess

import pytest

from fixtures import cuda_env
from fixtures.debian_root import copy_root

SITE = "/opt/venv/lib/python3.11/site-packages"
TORCH_CUDA = SITE + "/torch/lib/libtorch_cuda.so"
NCCL = SITE + "/nvidia/nccl/lib/libnccl.so.2"
LOCAL_NCCL = "/usr/local/lib/libnccl.so.2"


def why(rootlock, root, subject):
    proc = subprocess.run([rootlock, "why", "--json", "--root", root, subject],
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, (json.loads(proc.stdout) if proc.returncode == 0 else None), proc


@pytest.fixture(scope="module")
def cuda_root(scratch):
    """A copy of the Debian root with the CUDA fixture venv (the cases below only read it)."""
    root = copy_root(scratch)
    cuda_env.build_cuda_env(root)
    return root


@pytest.fixture(scope="module")
def two_copies_root(scratch, cuda_root):
    """cuda_root plus a second libnccl.so.2 that only the ld.so cache reaches."""
    root = os.path.join(scratch, "two-copies")
    subprocess.run(["cp", "-al", cuda_root, root], check=True)
    shutil.copy(os.path.join(root, NCCL[1:]), os.path.join(root, LOCAL_NCCL[1:]))
    # ldconfig writes a new ld.so.cache and renames it, so cuda_root's hard link keeps its own.
    subprocess.run(["ldconfig", "-r", root], check=True)
    return root


def test_soname_needed_by_provided_by_picked(rootlock, cuda_root):
    rc, answer, proc = why(rootlock, cuda_root, "libnccl.so.2")
    assert rc == 0 and answer["kind"] == "soname", proc.stderr
    assert answer["needed_by"] == [TORCH_CUDA]
    assert answer["providers"] == [NCCL]
    picks = [(p["via"], p.get("via_object")) for p in answer["picks"]]
    assert picks == [("rpath", TORCH_CUDA)], "picked through torch's RPATH"
    missing = [b["soname"] for b in answer["breaks"] if b["kind"] == "missing-soname"]
    assert missing == ["libnccl.so.2"], "without it libnccl.so.2 is missing"


def test_dist_breaks_agree_with_check_without(rootlock, cuda_root):
    rc, answer, proc = why(rootlock, cuda_root, "nvidia-nccl-cu13")
    assert rc == 0 and answer["kind"] == "dist", proc.stderr
    assert answer["sonames"] == ["libnccl.so.2"]
    broken = sorted((b["kind"], b.get("soname") or b.get("dist")) for b in answer["breaks"])
    assert broken == [("missing-record-file", "nvidia-nccl-cu12"),
                      ("missing-soname", "libnccl.so.2")], "it breaks libnccl.so.2 and the cu12 twin"
    check = subprocess.run([rootlock, "check", "--json", "--root", cuda_root, "--without",
                            "nvidia-nccl-cu13", "/"], capture_output=True, text=True)
    report = json.loads(check.stdout)
    errors = sorted((p["kind"], p.get("soname") or p.get("dist")) for p in report["problems"]
                    if p["severity"] == "error")
    assert errors == broken, "why agrees with check --without"


def test_second_copy_listed_rpath_still_wins(rootlock, two_copies_root):
    rc, answer, proc = why(rootlock, two_copies_root, "libnccl.so.2")
    assert rc == 0, proc.stderr
    assert sorted(answer["providers"]) == sorted([NCCL, LOCAL_NCCL]), "both copies listed"
    picks = [(p["via"], p.get("via_object")) for p in answer["picks"]]
    assert picks == [("rpath", TORCH_CUDA)], "torch still gets its own copy"
    assert answer["breaks"] != [], "hiding every copy still breaks torch"


def test_unknown_subject_one_line_exit_2(rootlock, cuda_root):
    rc, _, proc = why(rootlock, cuda_root, "no-such-thing")
    assert rc == 2
    assert proc.stderr.count("\n") == 1 and "no-such-thing" in proc.stderr, proc.stderr
