"""End-to-end: `rootlock why` over the CUDA fixture environment.

Usage: test_why.py ROOTLOCK

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
import sys
import tempfile

from fixtures import cuda_env
from fixtures.debian_root import copy_root

SITE = "/opt/venv/lib/python3.11/site-packages"
TORCH_CUDA = SITE + "/torch/lib/libtorch_cuda.so"
NCCL = SITE + "/nvidia/nccl/lib/libnccl.so.2"


def why(rootlock, root, subject):
    proc = subprocess.run([rootlock, "why", "--json", "--root", root, subject],
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, (json.loads(proc.stdout) if proc.returncode == 0 else None), proc


def main(argv):
    rootlock = os.path.abspath(argv[1])
    failures = []

    def expect(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    scratch = tempfile.mkdtemp(prefix="rootlock-why-")
    try:
        root = copy_root(scratch)
        cuda_env.build_cuda_env(root)

        rc, answer, _ = why(rootlock, root, "libnccl.so.2")
        expect(rc == 0 and answer["kind"] == "soname", "why libnccl.so.2 answers as a soname")
        expect(answer["needed_by"] == [TORCH_CUDA], f"needed by libtorch_cuda.so: {answer['needed_by']}")
        expect(answer["providers"] == [NCCL], f"provided by the nccl wheel: {answer['providers']}")
        picks = [(p["via"], p.get("via_object")) for p in answer["picks"]]
        expect(picks == [("rpath", TORCH_CUDA)], f"picked through torch's RPATH: {picks}")
        missing = [b["soname"] for b in answer["breaks"] if b["kind"] == "missing-soname"]
        expect(missing == ["libnccl.so.2"], f"without it libnccl.so.2 is missing: {missing}")

        rc, answer, _ = why(rootlock, root, "nvidia-nccl-cu13")
        expect(rc == 0 and answer["kind"] == "dist", "why nvidia-nccl-cu13 answers as a dist")
        expect(answer["sonames"] == ["libnccl.so.2"], f"it provides libnccl.so.2: {answer['sonames']}")
        broken = sorted((b["kind"], b.get("soname") or b.get("dist")) for b in answer["breaks"])
        expect(broken == [("missing-record-file", "nvidia-nccl-cu12"),
                          ("missing-soname", "libnccl.so.2")],
               f"uninstalling it breaks libnccl.so.2 and the cu12 twin: {broken}")
        check = subprocess.run([rootlock, "check", "--json", "--root", root, "--without",
                                "nvidia-nccl-cu13", "/"], capture_output=True, text=True)
        report = json.loads(check.stdout)
        errors = sorted((p["kind"], p.get("soname") or p.get("dist")) for p in report["problems"]
                        if p["severity"] == "error")
        expect(errors == broken, f"why agrees with check --without: {errors}")

        # A second copy where only the cache can reach it: listed, but torch's RPATH still wins.
        local = os.path.join(root, "usr/local/lib/libnccl.so.2")
        shutil.copy(os.path.join(root, NCCL[1:]), local)
        subprocess.run(["ldconfig", "-r", root], check=True)
        rc, answer, _ = why(rootlock, root, "libnccl.so.2")
        expect(answer["providers"] == [NCCL, "/usr/local/lib/libnccl.so.2"] or
               sorted(answer["providers"]) == sorted([NCCL, "/usr/local/lib/libnccl.so.2"]),
               f"both copies listed: {answer['providers']}")
        picks = [(p["via"], p.get("via_object")) for p in answer["picks"]]
        expect(picks == [("rpath", TORCH_CUDA)], f"torch still gets its own copy: {picks}")
        expect(answer["breaks"] != [], "hiding every copy still breaks torch")

        rc, _, proc = why(rootlock, root, "no-such-thing")
        expect(rc == 2 and proc.stderr.count("\n") == 1 and "no-such-thing" in proc.stderr,
               f"an unknown subject: exit {rc}, {proc.stderr.strip()!r}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
