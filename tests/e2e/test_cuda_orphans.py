"""End-to-end: CUDA 13 libraries in a torch cu128 venv, loaded by nothing, then by the torch
process, then failing there (issue 13, part 4).

Usage: test_cuda_orphans.py ROOTLOCK

A Debian root gets /opt/venv with torch 2.8.0+cu128 and its nvidia-*-cu12 wheels as stub ELF
objects (fixtures/cuda_env.py), plus the CUDA 13 toolkit dists other packages leave in
nvidia/cu13/lib (nvidia-cuda-runtime, nvidia-cublas, nvidia-nvjitlink 13). Then:
  a. nothing loads the cu13 libraries: `check` exits 0 with one cuda-unloaded-major warning
     naming the three distributions and no cuda-major-mix; the real `import torch` in a chroot
     works;
  b. an extension (cu13ext._C) needs libtorch_cuda.so and libcublas.so.13: the torch process
     now holds cuBLAS 12 and 13. A cuda-major-mix warning, exit 0; the real `import torch,
     cu13ext._C` works;
  c. the extension also needs a symbol no cuBLAS defines (a data reference: bound at load): the
     mix is an error naming that failure, beside the undefined-symbol error, exit 1; the real
     import fails on that symbol.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from fixtures import check_report, cuda_env, elf_stub, pip_like
from fixtures.check_report import by_kind, summary
from fixtures.debian_root import copy_root, run_in_chroot
from fixtures.failures import Failures

EXT_DIST = "cu13ext"
EXT = "cu13ext/_C.cpython-311-x86_64-linux-gnu.so"
MISSING_SYMBOL = "cublasLtRootlockMissing_13"


def check(rootlock, root):
    """(exit code, JSON report or None, raw, text output) of `check` over the venv."""
    rc, report, raw = check_report.run_check(rootlock, root, [cuda_env.VENV])
    text = subprocess.run([rootlock, "check", "--root", root, cuda_env.VENV], capture_output=True,
                          text=True, timeout=300).stdout
    return rc, report, raw, text


def real_import(root, modules):
    proc = run_in_chroot(root, [cuda_env.VENV + "/bin/python3", "-c", f"import {modules}"])
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def install_extension(info, imports=()):
    """cu13ext: one extension linked against torch and CUDA 13's cuBLAS, installed as pip
    would (a RECORD of its own); `imports` are symbols it references as data."""
    sp = info["site_packages_host"]
    if os.path.isdir(os.path.join(sp, "cu13ext-1.0.dist-info")):
        pip_like.uninstall(sp, EXT_DIST)
    scratch = tempfile.mkdtemp(prefix="rootlock-cu13ext-")
    try:
        out = os.path.join(scratch, EXT)
        spec = elf_stub.StubSpec(
            out=out, needed=("libtorch_cuda.so", "libcublas.so.13"),
            runpath="$ORIGIN/../torch/lib:$ORIGIN/../nvidia/cu13/lib", imports=tuple(imports),
            python_module="cu13ext._C", tag="cu13ext " + ",".join(imports))
        elf_stub.build_stubs([spec], providers=cuda_env._providers(info))
        with open(out, "rb") as f:
            files = {EXT: f.read(), "cu13ext/__init__.py": b""}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    dist = pip_like.Dist(name=EXT_DIST, version="1.0", dist_info="cu13ext-1.0.dist-info",
                         files=files, metadata="Metadata-Version: 2.1\nName: cu13ext\n"
                                               "Version: 1.0\n",
                         wheel="Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
                               "Tag: cp311-cp311-linux_x86_64\n",
                         executable=frozenset([EXT]))
    pip_like.install(sp, dist)
    return f"{info['site_packages']}/{EXT}"


def step_a(fail, rootlock, root, orphans):
    rc, out = real_import(root, "torch")
    fail.expect(rc == 0, f"(a) import torch failed: {out}")
    rc, report, raw, text = check(rootlock, root)
    if not fail.expect(report is not None, f"(a) no JSON:\n{raw}"):
        return
    print(f"(a) orphans: exit {rc}, ok={report.get('ok')}; problems: {summary(report)}; "
          f"import torch: exit 0")
    errors = [p for p in report["problems"] if p.get("severity") == "error"]
    fail.expect(rc == 0 and report.get("ok") is True and not errors,
                f"(a) exit {rc}, errors: {json.dumps(errors)[:2000]}")
    fail.expect(not by_kind(report, "cuda-major-mix"),
                f"(a) a mix from libraries nothing loads: {by_kind(report, 'cuda-major-mix')}")
    found = by_kind(report, "cuda-unloaded-major")
    if not fail.expect(len(found) == 1, f"(a) expected one cuda-unloaded-major, got {found}"):
        return
    p = found[0]
    dists = [(d["dist"], d["version"]) for d in p.get("distributions", [])]
    want = sorted((name, version) for name, version, _ in orphans)
    fail.expect(p.get("severity") == "warning" and p.get("cuda_major") == 13
                and p.get("loaded_majors") == [12] and dists == want,
                f"(a) cuda-unloaded-major: {p}; expected distributions {want}")
    cuda_objects = {o for _, _, objs in orphans for o in objs if "libnvblas" not in o}
    fail.expect(cuda_objects <= set(p.get("libraries", [])),
                f"(a) libraries {p.get('libraries')} lack {sorted(cuda_objects)}")
    line = "CUDA 13 libraries that nothing loads: " + ", ".join(f"{n} {v}" for n, v in want)
    fail.expect(line in text, f"(a) the text lacks {line!r}:\n{text}")
    print(f"(a) text: {line}")


def step_b(fail, rootlock, info):
    root = info["root"]
    ext = install_extension(info)
    rc, out = real_import(root, "torch, cu13ext._C")
    fail.expect(rc == 0, f"(b) import torch, cu13ext._C failed: {out}")
    rc, report, raw, text = check(rootlock, root)
    if not fail.expect(report is not None, f"(b) no JSON:\n{raw}"):
        return
    print(f"(b) loaded by {ext}: exit {rc}, ok={report.get('ok')}; problems: {summary(report)}; "
          f"real import: exit 0")
    fail.expect(rc == 0 and report.get("ok") is True, f"(b) exit {rc}: {report['problems']}")
    mixes = by_kind(report, "cuda-major-mix")
    if fail.expect(len(mixes) == 1, f"(b) expected one cuda-major-mix, got {mixes}"):
        p = mixes[0]
        fail.expect(p.get("severity") == "warning" and p.get("family") == "cublas"
                    and p.get("majors") == [12, 13] and "failures" not in p,
                    f"(b) the mix: {p}")
        fail.expect(any(o.endswith("nvidia/cu13/lib/libcublas.so.13") for o in p["objects"])
                    and any(o.endswith("nvidia/cublas/lib/libcublas.so.12") for o in p["objects"]),
                    f"(b) the mix's objects: {p['objects']}")
    fail.expect("cublas: CUDA 12 and 13 in one process" in text, f"(b) text:\n{text}")


def step_c(fail, rootlock, info):
    root = info["root"]
    install_extension(info, imports=(MISSING_SYMBOL,))
    rc_import, out = real_import(root, "torch, cu13ext._C")
    fail.expect(rc_import != 0 and f"undefined symbol: {MISSING_SYMBOL}" in out,
                f"(c) the real import should fail on {MISSING_SYMBOL}: exit {rc_import}, {out}")
    rc, report, raw, text = check(rootlock, root)
    if not fail.expect(report is not None, f"(c) no JSON:\n{raw}"):
        return
    print(f"(c) with {MISSING_SYMBOL}: exit {rc}, ok={report.get('ok')}; problems: "
          f"{summary(report)}; real import: exit {rc_import}: {out.splitlines()[-1]}")
    fail.expect(rc == 1 and report.get("ok") is False, f"(c) exit {rc}")
    mixes = by_kind(report, "cuda-major-mix")
    if fail.expect(len(mixes) == 1, f"(c) expected one cuda-major-mix, got {mixes}"):
        p = mixes[0]
        failures = p.get("failures", [])
        fail.expect(p.get("severity") == "error"
                    and any(MISSING_SYMBOL in f and EXT in f for f in failures),
                    f"(c) the mix should be an error naming {MISSING_SYMBOL}: {p}")
        print(f"(c) cuda-major-mix error: {failures}")
    symbols = by_kind(report, "undefined-symbol")
    fail.expect(any(s.get("severity") == "error"
                    and MISSING_SYMBOL in json.dumps(s.get("symbols")) for s in symbols),
                f"(c) undefined-symbol for {MISSING_SYMBOL}: {symbols}")
    fail.expect("and it fails:" in text and MISSING_SYMBOL in text, f"(c) text:\n{text}")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    data = cuda_env.load_data()
    parent = tempfile.mkdtemp(prefix="rootlock-cuda-orphans-")
    try:
        root = copy_root(parent)
        info = cuda_env.build_cuda_env(root, twins=False, data=data)
        orphans = cuda_env.install_orphans(info, data)
        print(f"built {len(info['dists'])} dists, {len(info['objects'])} ELF objects; orphans: "
              + ", ".join(f"{n} {v}" for n, v, _ in orphans))
        step_a(fail, rootlock, root, orphans)
        step_b(fail, rootlock, info)
        step_c(fail, rootlock, info)
    finally:
        if os.environ.get("ROOTLOCK_KEEP_ROOT"):
            print("kept", parent)
        else:
            shutil.rmtree(parent, ignore_errors=True)
    print(f"{len(fail.items)} failures" if fail.items else "all expectations met")
    return 1 if fail.items else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
