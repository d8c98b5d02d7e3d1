"""End-to-end: CUDA 13 libraries in a torch cu128 venv, loaded by nothing, then by the torch
process, then failing there (issue 13, part 4).

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
Each case has a root of its own (b and c hard-linked copies of a's, the extension added), so
any one of them runs alone.
"""
import json
import os
import shutil
import tempfile
from types import SimpleNamespace

import pytest

from fixtures import check_report, cuda_env, elf_stub, pip_like
from fixtures.check_report import by_kind, summary
from fixtures.cli import run_rootlock
from fixtures.debian_root import copy_root, run_in_chroot

EXT_DIST = "cu13ext"
EXT = "cu13ext/_C.cpython-311-x86_64-linux-gnu.so"
MISSING_SYMBOL = "cublasLtRootlockMissing_13"


def check(rootlock, root):
    """(exit code, JSON report or None, raw, text output) of `check` over the venv."""
    rc, report, raw = check_report.run_check(rootlock, root, [cuda_env.VENV])
    text = run_rootlock(rootlock, "check", "--root", root, cuda_env.VENV, timeout=300).stdout
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


def observe(rootlock, root, modules, label):
    """The real import and rootlock's check of one root, as the cases below read them."""
    rc_import, out = real_import(root, modules)
    rc, report, raw, text = check(rootlock, root)
    assert report is not None, f"({label}) no JSON:\n{raw}"
    print(f"({label}) exit {rc}, ok={report.get('ok')}; problems: {summary(report)}; "
          f"import {modules}: exit {rc_import}")
    return SimpleNamespace(import_rc=rc_import, import_out=out, rc=rc, report=report, text=text)


@pytest.fixture(scope="module")
def orphan_env(scratch):
    """The cu12 torch venv with the CUDA 13 orphans beside it: (info, orphans)."""
    data = cuda_env.load_data()
    root = copy_root(scratch)
    info = cuda_env.build_cuda_env(root, twins=False, data=data)
    orphans = cuda_env.install_orphans(info, data)
    print(f"built {len(info['dists'])} dists, {len(info['objects'])} ELF objects; orphans: "
          + ", ".join(f"{n} {v}" for n, v, _ in orphans))
    return info, orphans


@pytest.fixture(scope="module")
def unloaded(rootlock, orphan_env):
    info, _ = orphan_env
    return observe(rootlock, info["root"], "torch", "a")


@pytest.fixture(scope="module")
def mixed(rootlock, orphan_env, scratch):
    info = cuda_env.linked_copy(orphan_env[0], os.path.join(scratch, "mixed"))
    ext = install_extension(info)
    print(f"(b) loaded by {ext}")
    return observe(rootlock, info["root"], "torch, cu13ext._C", "b")


@pytest.fixture(scope="module")
def failing(rootlock, orphan_env, scratch):
    info = cuda_env.linked_copy(orphan_env[0], os.path.join(scratch, "failing"))
    install_extension(info, imports=(MISSING_SYMBOL,))
    return observe(rootlock, info["root"], "torch, cu13ext._C", "c")


def test_a_real_import_torch_works(unloaded):
    assert unloaded.import_rc == 0, f"import torch failed: {unloaded.import_out}"


def test_a_check_passes_without_a_mix(unloaded):
    report = unloaded.report
    errors = [p for p in report["problems"] if p.get("severity") == "error"]
    assert unloaded.rc == 0 and report.get("ok") is True and not errors, \
        f"exit {unloaded.rc}, errors: {json.dumps(errors)[:2000]}"
    assert not by_kind(report, "cuda-major-mix"), \
        f"a mix from libraries nothing loads: {by_kind(report, 'cuda-major-mix')}"


def test_a_one_unloaded_major_warning_names_the_orphans(unloaded, orphan_env):
    _, orphans = orphan_env
    found = by_kind(unloaded.report, "cuda-unloaded-major")
    assert len(found) == 1, f"expected one cuda-unloaded-major, got {found}"
    p = found[0]
    dists = [(d["dist"], d["version"]) for d in p.get("distributions", [])]
    want = sorted((name, version) for name, version, _ in orphans)
    assert p.get("severity") == "warning" and p.get("cuda_major") == 13 \
        and p.get("loaded_majors") == [12] and dists == want, \
        f"cuda-unloaded-major: {p}; expected distributions {want}"
    cuda_objects = {o for _, _, objs in orphans for o in objs if "libnvblas" not in o}
    assert cuda_objects <= set(p.get("libraries", [])), \
        f"libraries {p.get('libraries')} lack {sorted(cuda_objects)}"


def test_a_text_names_the_unloaded_distributions(unloaded, orphan_env):
    _, orphans = orphan_env
    want = sorted((name, version) for name, version, _ in orphans)
    line = "CUDA 13 libraries that nothing loads: " + ", ".join(f"{n} {v}" for n, v in want)
    assert line in unloaded.text, f"the text lacks {line!r}:\n{unloaded.text}"
    print(f"(a) text: {line}")


def test_b_real_import_with_cublas_12_and_13_works(mixed):
    assert mixed.import_rc == 0, f"import torch, cu13ext._C failed: {mixed.import_out}"


def test_b_check_passes_with_a_cublas_mix_warning(mixed):
    assert mixed.rc == 0 and mixed.report.get("ok") is True, \
        f"exit {mixed.rc}: {mixed.report['problems']}"
    mixes = by_kind(mixed.report, "cuda-major-mix")
    assert len(mixes) == 1, f"expected one cuda-major-mix, got {mixes}"
    p = mixes[0]
    assert p.get("severity") == "warning" and p.get("family") == "cublas" \
        and p.get("majors") == [12, 13] and "failures" not in p, f"the mix: {p}"
    assert any(o.endswith("nvidia/cu13/lib/libcublas.so.13") for o in p["objects"]) \
        and any(o.endswith("nvidia/cublas/lib/libcublas.so.12") for o in p["objects"]), \
        f"the mix's objects: {p['objects']}"


def test_b_text_says_cublas_12_and_13_in_one_process(mixed):
    assert "cublas: CUDA 12 and 13 in one process" in mixed.text, f"text:\n{mixed.text}"


def test_c_real_import_fails_on_the_missing_symbol(failing):
    out = failing.import_out
    assert failing.import_rc != 0 and f"undefined symbol: {MISSING_SYMBOL}" in out, \
        f"the real import should fail on {MISSING_SYMBOL}: exit {failing.import_rc}, " \
        f"{out}"
    print(f"(c) real import: exit {failing.import_rc}: {out.splitlines()[-1]}")


def test_c_check_fails_the_mix_is_an_error_naming_the_symbol(failing):
    assert failing.rc == 1 and failing.report.get("ok") is False, f"exit {failing.rc}"
    mixes = by_kind(failing.report, "cuda-major-mix")
    assert len(mixes) == 1, f"expected one cuda-major-mix, got {mixes}"
    p = mixes[0]
    failures = p.get("failures", [])
    assert p.get("severity") == "error" \
        and any(MISSING_SYMBOL in f and EXT in f for f in failures), \
        f"the mix should be an error naming {MISSING_SYMBOL}: {p}"
    print(f"(c) cuda-major-mix error: {failures}")


def test_c_undefined_symbol_error_beside_the_mix(failing):
    symbols = by_kind(failing.report, "undefined-symbol")
    assert any(s.get("severity") == "error"
               and MISSING_SYMBOL in json.dumps(s.get("symbols")) for s in symbols), \
        f"undefined-symbol for {MISSING_SYMBOL}: {symbols}"


def test_c_text_says_and_it_fails(failing):
    assert "and it fails:" in failing.text and MISSING_SYMBOL in failing.text, \
        f"text:\n{failing.text}"
