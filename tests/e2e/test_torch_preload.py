"""End-to-end: torch's Python preload fallback, cuDNN's dlopen edges and a system CUDA that
shadows the wheels, each checked by `rootlock check` and by the real loader in a chroot.

Usage: test_torch_preload.py ROOTLOCK   (or --fixture-only: build the trees and run only the
real loader's side, without rootlock)

Each case takes its own copy of the Debian root with the torch 2.8.0+cu128 venv of stub ELF
objects (fixtures/cuda_env.py, no cu13 twins) and torch/__init__.py WITH the preload fallback
(cuda_env.torch_init_fallback, the stack's 2.8 table), unless it says otherwise:
  a. torch 2.7.0+cu128's layout: torch's DT_RPATH lacks $ORIGIN/../../nvidia/cusparselt/lib
     (it keeps $ORIGIN/../../cusparselt/lib) and libtorch_global_deps.so NEEDs
     libcusparseLt.so.0, as the real one does (cuda-wheels.md section 4). The real `import
     torch` works through the fallback, and fails with the fixture's default __init__.py (no
     fallback); `check` exits 0 with preload-only for libcusparseLt.so.0. a2: when only
     libtorch_cuda.so NEEDs it, the fallback never runs: import fails, check says
     missing-soname. a3: the case-a tree without nvidia-nvtx-cu12: torch 2.8's fallback
     raises ValueError on the required nvtx miss, so the import fails.
  b. libcudnn_graph.so.9 deleted (RECORD left): missing-dlopen (warning, opened_by
     libcudnn.so.9) beside the missing-record-file error; with its RECORD row dropped too,
     the missing-dlopen alone leaves the exit status 0. The import works (cuDNN opens its
     sub-libraries when used, not at import).
  c. an older libnvJitLink.so.12 (version node libnvJitLink.so.12 without
     __nvJitLinkComplete_12_4) in /usr/local/cuda/lib64; libtorch_cuda.so NEEDs
     libcusparse.so.12 as the real one does. With --ld-library-path /usr/local/cuda/lib64:
     wrong-provider (error) and undefined-symbol __nvJitLinkComplete_12_4; the real loader
     fails the same way for libcusparse.so.12 and for `import torch` without 2.6-2.8's
     nvJitLink preload after success (with it, the wheel's copy is loaded first and the import
     works). Without it: neither problem. With /etc/ld.so.conf.d/cuda.conf and ldconfig
     instead: the cache serves bare names from /usr/local/cuda/lib64, but RUNPATH comes first,
     so neither rootlock nor the real loader picks the system copy for libcusparse.
Where rootlock departs from the real loader in a way the cases were not written to fix, the
run prints GAP lines; they do not fail the run (set ROOTLOCK_GAPS_FAIL=1 to make them fail).
"""
import copy
import csv
import json
import os
import shutil
import sys
import tempfile

from fixtures import check_report, cuda_env, elf_stub, pip_like
from fixtures.debian_root import copy_root, run_in_chroot
from fixtures.failures import Failures
from fixtures.check_report import by_kind, summary

NOT_FOUND = "cannot open shared object file"
CUSPARSELT = "libcusparseLt.so.0"
NVIDIA_CUSPARSELT_RPATH = "$ORIGIN/../../nvidia/cusparselt/lib"
SYSTEM_CUDA = "/usr/local/cuda/lib64"
NVJITLINK = "libnvJitLink.so.12"
NVJITLINK_SYMBOL = "__nvJitLinkComplete_12_4"
CUDA_CONF = "/etc/ld.so.conf.d/cuda.conf"

FIELDS = {"preload-only": ("soname", "path", "needed_by"),
          "missing-dlopen": ("soname", "opened_by"),
          "wrong-provider": ("soname", "picked", "via", "packaged", "needed_by", "copies"),
          "missing-soname": ("soname", "needed_by"),
          "missing-record-file": ("dist", "version", "paths"),
          "undefined-symbol": ("library", "provider", "needed_by", "symbols")}


# ---------------------------------------------------------------------------------------------
# rootlock and the real loader.

def run_check(rootlock, root, extra=()):
    """(exit code, parsed JSON report or None, raw output) of `check --json` over the venv."""
    return check_report.run_check(rootlock, root, [*extra, cuda_env.VENV])


def contract_problems(report):
    out = []
    for p in report.get("problems", []):
        if p.get("severity") not in ("error", "warning"):
            out.append(f"problem without error/warning severity: {p}")
        missing = [f for f in FIELDS.get(p.get("kind"), ()) if f not in p]
        if p.get("kind") == "missing-dlopen" and "candidates" not in p and not (
                "provider" in p and "missing_dependencies" in p):
            missing.append("candidates or provider+missing_dependencies")
        if p.get("kind") == "wrong-provider" and p.get("severity") == "error" and not p.get(
                "reason"):
            missing.append("reason")
        if missing:
            out.append(f"{p.get('kind')} problem lacks {missing}: {p}")
    return out


def checked(fail, rootlock, root, label, extra=()):
    """check's (exit code, report), printed, with the contract verified; None on no JSON."""
    rc, report, raw = run_check(rootlock, root, extra)
    if not fail.expect(report is not None, f"{label} check printed no JSON:\n{raw}"):
        return rc, None
    for c in contract_problems(report):
        fail.expect(False, f"{label} contract: {c}")
    args = "".join(" " + e for e in extra)
    print(f"{label} check{args}: exit {rc}, ok={report.get('ok')}; problems: {summary(report)}")
    for p in report.get("problems", []):
        if p.get("kind") != "missing-record-file":
            print(f"{label}   " + json.dumps(p, sort_keys=True)[:700])
    return rc, report


def in_chroot(root, code, ld_library_path=None):
    """Exit code and output of `python3 -c code` with the venv's python in the chroot."""
    env = {"LD_LIBRARY_PATH": ld_library_path} if ld_library_path else None
    proc = run_in_chroot(root, [cuda_env.VENV + "/bin/python3", "-c", code], env=env)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def last_line(out):
    return out.splitlines()[-1] if out else ""


def mapped_code(path, name):
    """Python that dlopens path (RTLD_NOW, as ctypes does) and prints where `name` is mapped."""
    return (f"import ctypes; ctypes.CDLL({path!r}); "
            f"print(sorted({{l.split()[-1] for l in open('/proc/self/maps') if {name!r} in l}}))")


# ---------------------------------------------------------------------------------------------
# The trees.

def tweak_lib(data, path, rpath_drop=None, add_needed=()):
    """In data's default stack: drop rpath_drop from every torch object's DT_RPATH, and add
    add_needed to the DT_NEEDED of the object at path (None: none)."""
    stack = cuda_env.find_stack(data, cuda_env.DEFAULT_STACK)
    for dist in stack["dist"]:
        for lib in dist.get("lib", []):
            if rpath_drop and dist["name"] == "torch" and lib.get("rpath"):
                entries = lib["rpath"].split(":")
                lib["rpath"] = ":".join(e for e in entries if e != rpath_drop)
            if lib["path"] == path:
                lib["needed"] = list(lib["needed"]) + [n for n in add_needed
                                                       if n not in lib["needed"]]


def build_tree(parent, label, tweak=None, fallback=True):
    """A copy of the Debian root with the venv; returns (root, info, stack, data)."""
    data = copy.deepcopy(cuda_env.load_data())
    if tweak:
        tweak(data)
    root = copy_root(parent)
    info = cuda_env.build_cuda_env(root, twins=False, data=data)
    stack = cuda_env.find_stack(data, cuda_env.DEFAULT_STACK)
    if fallback:
        table = cuda_env.preload_table(data, stack)
        cuda_env.replace_torch_init(info, cuda_env.torch_init(stack, True, table))
    print(f"{label} built {len(info['dists'])} dists, {len(info['objects'])} ELF objects in "
          f"{root}")
    return root, info, stack, data


def sp_path(info, rel):
    return f"{info['site_packages']}/{rel}"


def host(root, path):
    return os.path.join(root, path.lstrip("/"))


def drop_record_row(info, dist_name, rel):
    """Remove rel's row from the dist's RECORD (as if the wheel had not listed it)."""
    sp = info["site_packages_host"]
    record = os.path.join(sp, info["dists"][dist_name]["dist_info"], "RECORD")
    with open(record, newline="") as f:
        rows = [tuple(r) for r in csv.reader(f) if r]
    pip_like.write_file(record, pip_like.format_record([r for r in rows if r[0] != rel])
                        .encode())


# ---------------------------------------------------------------------------------------------
# a. torch 2.7.0+cu128: the RPATH misses cusparseLt, the preload finds it.

def tweak_27(global_needs):
    def tweak(data):
        tweak_lib(data, "torch/lib/libtorch_global_deps.so", NVIDIA_CUSPARSELT_RPATH,
                  (CUSPARSELT,) if global_needs else ())
    return tweak


def case_a(fail, rootlock, parent):
    root, info, stack, data = build_tree(parent, "(a)", tweak_27(True))
    global_deps = sp_path(info, "torch/lib/libtorch_global_deps.so")
    lt = sp_path(info, "nvidia/cusparselt/lib/" + CUSPARSELT)
    dyn = elf_stub.dynamic_section(host(root, global_deps))
    fail.expect(CUSPARSELT in dyn["needed"] and dyn["rpath"]
                and NVIDIA_CUSPARSELT_RPATH not in dyn["rpath"].split(":")
                and os.path.isfile(host(root, lt)),
                f"(a) fixture: libtorch_global_deps.so {dyn}, {lt} present: "
                f"{os.path.isfile(host(root, lt))}")
    rc, out = in_chroot(root, "import torch")
    fail.expect(rc == 0, f"(a) import torch with the preload fallback: exit {rc}, {out!r}")
    print(f"(a) import torch with the preload fallback: exit {rc}")
    cuda_env.replace_torch_init(info, cuda_env.torch_init(stack))
    rc_plain, out = in_chroot(root, "import torch")
    fail.expect(rc_plain != 0 and f"{CUSPARSELT}: {NOT_FOUND}" in out,
                f"(a) import torch with the fixture's default __init__.py (no fallback): exit "
                f"{rc_plain}, {out!r}; expected the {CUSPARSELT} '{NOT_FOUND}' error")
    print(f"(a) import torch with the fixture's default __init__.py (no preload fallback): "
          f"exit {rc_plain}: {last_line(out)}")
    print("(a)   rootlock cannot know which __init__.py runs: it models the real torch, "
          "which has the fallback")
    if rootlock:
        rc, report = checked(fail, rootlock, root, "(a)")
        if report is not None:
            want = {"kind": "preload-only", "severity": "warning", "soname": CUSPARSELT,
                    "path": lt, "needed_by": [global_deps]}
            got = [{k: p.get(k) for k in want} for p in by_kind(report, "preload-only")]
            fail.expect(got == [want], f"(a) preload-only problems {got}, expected [{want}]")
            missing = [p for p in by_kind(report, "missing-soname") if p["soname"] == CUSPARSELT]
            errors = [p for p in report.get("problems", []) if p.get("severity") == "error"]
            fail.expect(rc == 0 and report.get("ok") is True and not errors and not missing,
                        f"(a) check exit {rc}, ok={report.get('ok')}, errors {errors}")
    case_a2(fail, rootlock, parent)
    case_a3(fail, rootlock, root, info, stack, data)


def case_a2(fail, rootlock, parent):
    """The fallback runs only on a failure of the global deps: a need of libtorch_cuda.so
    alone is not saved by it."""
    root, info, _, _ = build_tree(parent, "(a2)", tweak_27(False))
    cuda = sp_path(info, "torch/lib/libtorch_cuda.so")
    rc, out = in_chroot(root, "import torch")
    fail.expect(rc != 0 and f"{CUSPARSELT}: {NOT_FOUND}" in out and "torch._C" in out,
                f"(a2) import torch: exit {rc}, {out!r}; expected _C to fail on {CUSPARSELT}")
    print(f"(a2) only libtorch_cuda.so needs {CUSPARSELT}: import torch exit {rc}: "
          f"{last_line(out)}")
    if not rootlock:
        return
    rc, report = checked(fail, rootlock, root, "(a2)")
    if report is not None:
        got = [(p["soname"], p["needed_by"], p.get("severity"))
               for p in by_kind(report, "missing-soname")]
        fail.expect(rc == 1 and got == [(CUSPARSELT, [cuda], "error")]
                    and not by_kind(report, "preload-only"),
                    f"(a2) check exit {rc}, missing-soname {got}, preload-only "
                    f"{by_kind(report, 'preload-only')}; expected exit 1 and only "
                    f"[({CUSPARSELT}, [{cuda}], error)]")


def case_a3(fail, rootlock, root, info, stack, data):
    """torch 2.8's table holds nvtx without a default: its miss raises ValueError."""
    table = cuda_env.preload_table(data, stack)
    cuda_env.replace_torch_init(info, cuda_env.torch_init(stack, True, table))
    required = [g for f, g, r in table if f == "nvtx" and r]
    fail.expect(required, f"(a3) fixture: the stack's preload table has no required nvtx: "
                f"{table}")
    pip_like.uninstall(info["site_packages_host"], "nvidia-nvtx-cu12")
    rc, out = in_chroot(root, "import torch")
    fail.expect(rc != 0 and "ValueError" in out and "libnvToolsExt" in out,
                f"(a3) import torch without nvidia-nvtx-cu12: exit {rc}, {out!r}; expected "
                "the fallback's ValueError")
    print(f"(a3) case-a tree without nvidia-nvtx-cu12: import torch exit {rc}: "
          f"{last_line(out)[:160]}")
    if not rootlock:
        return
    rc, report = checked(fail, rootlock, root, "(a3)")
    if report is not None:
        failed = by_kind(report, "preload-failed")
        fail.expect(rc == 1 and len(failed) == 1 and failed[0]["severity"] == "error"
                    and failed[0]["missing"] == ["libnvToolsExt.so.*[0-9]"]
                    and failed[0]["torch"] == stack["torch_version"],
                    f"(a3) check exits {rc} with preload-failed {failed}; torch "
                    f"{stack['torch_version']}'s preload raises ValueError on the required "
                    "libnvToolsExt miss and the import fails")


# ---------------------------------------------------------------------------------------------
# b. A cuDNN sub-library is gone.

def case_b(fail, rootlock, parent):
    root, info, _, _ = build_tree(parent, "(b)")
    rel = "nvidia/cudnn/lib/libcudnn_graph.so.9"
    graph = sp_path(info, rel)
    cudnn = sp_path(info, "nvidia/cudnn/lib/libcudnn.so.9")
    cudnn_dir = os.path.dirname(cudnn)
    # What cuDNN's dlopen("libcudnn_graph.so.9") searches: its RUNPATH $ORIGIN, then the cache.
    opener = "import ctypes; ctypes.CDLL('libcudnn_graph.so.9')"
    rc, out = in_chroot(root, opener, ld_library_path=cudnn_dir)
    fail.expect(rc == 0, f"(b) intact: libcudnn_graph.so.9 from {cudnn_dir}: exit {rc}, {out!r}")
    report = None
    if rootlock:
        rc, report = checked(fail, rootlock, root, "(b) intact:")
        if report is not None:
            fail.expect(not [p for p in by_kind(report, "missing-dlopen")
                             if p["soname"] == "libcudnn_graph.so.9"],
                        "(b) intact tree has a missing-dlopen for libcudnn_graph.so.9")
    case_b_nvrtc(fail, root, report)
    os.unlink(host(root, graph))
    rc, out = in_chroot(root, "import torch")
    fail.expect(rc == 0, f"(b) import torch without {rel}: exit {rc}, {out!r}")
    print(f"(b) {rel} deleted: import torch exit {rc} (cuDNN opens it when used)")
    rc, out = in_chroot(root, opener, ld_library_path=cudnn_dir)
    fail.expect(rc != 0 and f"libcudnn_graph.so.9: {NOT_FOUND}" in out,
                f"(b) libcudnn_graph.so.9 by bare name from {cudnn_dir}: exit {rc}, {out!r}")
    print(f"(b) dlopen('libcudnn_graph.so.9') searching {cudnn_dir} (cuDNN's $ORIGIN): exit "
          f"{rc}: {last_line(out)}")
    if not rootlock:
        return
    want = {"kind": "missing-dlopen", "severity": "warning", "soname": "libcudnn_graph.so.9",
            "opened_by": [cudnn]}
    rc, report = checked(fail, rootlock, root, "(b) RECORD left:")
    if report is not None:
        got = [{k: p.get(k) for k in want} for p in by_kind(report, "missing-dlopen")
               if p["soname"] == want["soname"]]
        fail.expect(got == [want], f"(b) missing-dlopen {got}, expected [{want}]")
        errors = sorted((p["kind"], p.get("dist"), tuple(p.get("paths", [])))
                        for p in report.get("problems", []) if p.get("severity") == "error")
        fail.expect(rc == 1 and errors == [("missing-record-file", "nvidia-cudnn-cu12",
                                            (graph,))],
                    f"(b) check exit {rc}, errors {errors}; expected exit 1 and only the "
                    f"missing-record-file of nvidia-cudnn-cu12 for {graph}")
        print(f"(b)   errors besides the missing-dlopen warning: {errors}")
    drop_record_row(info, "nvidia-cudnn-cu12", rel)
    rc, report = checked(fail, rootlock, root, "(b) RECORD row dropped:")
    if report is not None:
        got = [{k: p.get(k) for k in want} for p in by_kind(report, "missing-dlopen")
               if p["soname"] == want["soname"]]
        errors = [p for p in report.get("problems", []) if p.get("severity") == "error"]
        fail.expect(rc == 0 and got == [want] and not errors,
                    f"(b) with the RECORD row dropped: exit {rc}, missing-dlopen {got}, errors "
                    f"{errors}; expected exit 0 with the missing-dlopen warning alone")


def case_b_nvrtc(fail, root, report):
    """cuDNN's dlopen of libnvrtc.so.12 by bare name finds nothing from cudnn/lib, but after
    `import torch` 2.6-2.8 the preload after success has loaded it: the soname matches."""
    code = "import ctypes; ctypes.CDLL('libnvrtc.so.12')"
    rc_alone, out = in_chroot(root, code)
    fail.expect(rc_alone != 0 and f"libnvrtc.so.12: {NOT_FOUND}" in out,
                f"(b) dlopen('libnvrtc.so.12') without torch: exit {rc_alone}, {out!r}")
    rc_torch, out = in_chroot(root, "import torch; " + code)
    fail.expect(rc_torch == 0, f"(b) dlopen('libnvrtc.so.12') after import torch: exit "
                f"{rc_torch}, {out!r}")
    print(f"(b) dlopen('libnvrtc.so.12') by bare name: exit {rc_alone} alone, exit {rc_torch} "
          "after import torch (its preload after success loaded nvidia/cuda_nvrtc's)")
    if report is not None:
        reported = [p for p in by_kind(report, "missing-dlopen")
                    if p["soname"] == "libnvrtc.so.12"]
        fail.gap(not reported, "(b) check reports missing-dlopen libnvrtc.so.12 (opened by "
                 "libcudnn.so.9) although torch 2.6-2.8 preloads libnvrtc.so.12 after the "
                 "global deps load, so cuDNN's dlopen finds it loaded")


# ---------------------------------------------------------------------------------------------
# c. A system CUDA shadows the wheels.

def install_system_nvjitlink(root, parent):
    spec = elf_stub.StubSpec(out=os.path.join(parent, "system-cuda", NVJITLINK),
                             soname=NVJITLINK, versions=((NVJITLINK, ("nvJitLinkCreate",)),),
                             tag="libnvJitLink.so.12 of an older system CUDA 12")
    elf_stub.build_stubs([spec])
    dest = host(root, f"{SYSTEM_CUDA}/{NVJITLINK}")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copyfile(spec.out, dest)
    os.chmod(dest, 0o755)
    return f"{SYSTEM_CUDA}/{NVJITLINK}"


def nvjitlink_problems(report):
    return [p for p in report.get("problems", [])
            if p.get("kind") in ("wrong-provider", "undefined-symbol", "missing-version")
            and NVJITLINK in (p.get("soname"), p.get("library"), p.get("file"))]


def case_c(fail, rootlock, parent):
    def tweak(data):
        tweak_lib(data, "torch/lib/libtorch_cuda.so", add_needed=("libcusparse.so.12",))
    root, info, stack, _ = build_tree(parent, "(c)", tweak)
    system = install_system_nvjitlink(root, parent)
    packaged = sp_path(info, "nvidia/nvjitlink/lib/" + NVJITLINK)
    cusparse = sp_path(info, "nvidia/cusparse/lib/libcusparse.so.12")
    wrong = f"undefined symbol: {NVJITLINK_SYMBOL}, version {NVJITLINK}"

    rc, out = in_chroot(root, mapped_code(cusparse, "libnvJitLink"), SYSTEM_CUDA)
    fail.expect(rc != 0 and wrong in out, f"(c) loading libcusparse.so.12 with LD_LIBRARY_PATH="
                f"{SYSTEM_CUDA}: exit {rc}, {out!r}; expected '{wrong}'")
    print(f"(c) LD_LIBRARY_PATH={SYSTEM_CUDA}, dlopen libcusparse.so.12: exit {rc}: "
          f"{last_line(out)}")
    rc, out = in_chroot(root, "import torch", SYSTEM_CUDA)
    import_28_ok = rc == 0
    fail.expect(rc == 0, f"(c) import torch (2.6-2.8 preloads the wheel's nvJitLink after the "
                f"global deps) with LD_LIBRARY_PATH: exit {rc}, {out!r}")
    print(f"(c) LD_LIBRARY_PATH={SYSTEM_CUDA}, import torch {stack['torch_version']}: exit {rc} "
          "(its nvJitLink preload after success loads the wheel's copy first)")
    table = cuda_env.preload_table(cuda_env.load_data(), stack)
    cuda_env.replace_torch_init(info, cuda_env.torch_init(stack, True, table, False))
    rc, out = in_chroot(root, "import torch", SYSTEM_CUDA)
    fail.expect(rc != 0 and wrong in out, f"(c) import torch without the preload after "
                f"success, LD_LIBRARY_PATH={SYSTEM_CUDA}: exit {rc}, {out!r}; expected '{wrong}'")
    print(f"(c) LD_LIBRARY_PATH={SYSTEM_CUDA}, import torch without that preload (torch <= 2.5):"
          f" exit {rc}: {last_line(out)}")
    rc, out = in_chroot(root, "import torch")
    fail.expect(rc == 0, f"(c) import torch without LD_LIBRARY_PATH: exit {rc}, {out!r}")

    if rootlock:
        rc, report = checked(fail, rootlock, root, "(c) no LD_LIBRARY_PATH:")
        if report is not None:
            fail.expect(rc == 0 and not nvjitlink_problems(report),
                        f"(c) without --ld-library-path: exit {rc}, {nvjitlink_problems(report)}")
        rc, report = checked(fail, rootlock, root, "(c)", ["--ld-library-path", SYSTEM_CUDA])
        if report is not None:
            check_shadowed(fail, rc, report, system, packaged, cusparse, import_28_ok)
    case_c_cache(fail, rootlock, root, system, packaged, cusparse)


def check_shadowed(fail, rc, report, system, packaged, cusparse, import_28_ok):
    """rootlock models torch by its installed version: 2.6-2.8 preload the wheel's nvJitLink
    after the global deps load, so libcusparse.so.12, loaded later (by libtorch_cuda.so, or
    by cuSOLVER when torch opens libtorch_cuda_linalg.so), binds that copy, and the real
    import works: no wrong provider, no missing symbol. The failing side of the same shadow
    (a consumer outside torch, or torch <= 2.5) is the real loader's verdict for
    `ctypes.CDLL(libcusparse.so.12)` above, and rootlock's for that case is shown by
    test_symbols.py (c) and the unit tests."""
    problems = nvjitlink_problems(report)
    errors = [p for p in problems if p.get("severity") == "error"]
    fail.expect(import_28_ok and not errors,
                f"(c) --ld-library-path on torch 2.8: exit {rc}, nvJitLink errors {errors}; the "
                f"real import {'works' if import_28_ok else 'fails'}")
    print(f"(c) --ld-library-path: exit {rc}; nvJitLink findings {[(p['kind'], p['severity']) for p in problems]} "
          "(torch 2.8's preload after success maps the wheel's copy first, as the real import shows)")


def case_c_cache(fail, rootlock, root, system, packaged, cusparse):
    """/usr/local/cuda/lib64 in ld.so.conf.d: the cache comes after RUNPATH."""
    pip_like.write_file(host(root, CUDA_CONF), (SYSTEM_CUDA + "\n").encode())
    proc = run_in_chroot(root, ["/sbin/ldconfig"])
    fail.expect(proc.returncode == 0, f"(c) ldconfig: exit {proc.returncode}, {proc.stderr!r}")
    proc = run_in_chroot(root, ["/sbin/ldconfig", "-p"])
    line = [ln.strip() for ln in proc.stdout.splitlines() if NVJITLINK in ln]
    fail.expect(line and line[0].endswith(system), f"(c) ld.so.cache: {line}")
    print(f"(c) {CUDA_CONF} + ldconfig: {line}")
    rc, out = in_chroot(root, mapped_code(NVJITLINK, "libnvJitLink"))
    fail.expect(rc == 0 and system in out, f"(c) dlopen('{NVJITLINK}') by bare name: exit {rc}, "
                f"{out!r}; expected the cache's {system}")
    print(f"(c) dlopen('{NVJITLINK}') by bare name maps {last_line(out)}")
    rc, out = in_chroot(root, mapped_code(cusparse, "libnvJitLink"))
    fail.expect(rc == 0 and packaged in out and system not in out,
                f"(c) dlopen libcusparse.so.12 with the cache: exit {rc}, {out!r}; expected "
                f"{packaged} (RUNPATH before the cache)")
    print(f"(c) dlopen libcusparse.so.12 maps {last_line(out)}")
    rc, out = in_chroot(root, "import torch")
    fail.expect(rc == 0, f"(c) import torch (no preload after success) with the cache: exit "
                f"{rc}, {out!r}")
    print(f"(c) import torch (no preload after success) with the cache: exit {rc}")
    if rootlock:
        rc, report = checked(fail, rootlock, root, "(c) ld.so.conf.d:")
        if report is not None:
            fail.expect(rc == 0 and not nvjitlink_problems(report),
                        f"(c) with {CUDA_CONF}: exit {rc}, {nvjitlink_problems(report)}")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rootlock = None if argv[1] == "--fixture-only" else os.path.abspath(argv[1])
    fail = Failures()
    parent = tempfile.mkdtemp(prefix="rootlock-torch-preload-")
    try:
        case_a(fail, rootlock, parent)
        case_b(fail, rootlock, parent)
        case_c(fail, rootlock, parent)
    finally:
        if os.environ.get("ROOTLOCK_KEEP_ROOT"):
            print("kept", parent)
        else:
            shutil.rmtree(parent, ignore_errors=True)
    gaps_fail = os.environ.get("ROOTLOCK_GAPS_FAIL") == "1"
    if fail.gaps:
        print(f"{len(fail.gaps)} gaps in rootlock's model (printed as GAP above)")
    failed = fail.items + (fail.gaps if gaps_fail else [])
    print(f"{len(failed)} failures" if failed else "all expectations met")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
