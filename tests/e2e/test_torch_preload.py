"""End-to-end: torch's Python preload fallback, cuDNN's dlopen edges and a system CUDA that
shadows the wheels, each checked by `rootlock check` and by the real loader in a chroot.

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
     libcusparse.so.12 as the real one does. With LD_LIBRARY_PATH=/usr/local/cuda/lib64 the
     real loader fails on the missing __nvJitLinkComplete_12_4 for libcusparse.so.12 and for
     `import torch` without 2.6-2.8's nvJitLink preload after success; with it, the wheel's
     copy is loaded first and the import works, and `check --ld-library-path
     /usr/local/cuda/lib64`, which models torch by its installed version (2.8), reports no
     nvJitLink error. Without the path: no nvJitLink problem. With /etc/ld.so.conf.d/cuda.conf
     and ldconfig instead: the cache serves bare names from /usr/local/cuda/lib64, but RUNPATH
     comes first, so neither rootlock nor the real loader picks the system copy for libcusparse.
Each state of a tree is a root of its own (a hard-linked copy, cuda_env.linked_copy), so any
one test runs alone. Only the tests named `check` run rootlock: `-k "not check"` runs the real
loader's side without it. Where rootlock departs from the real loader in a way the cases were
not written to fix, the `gap` fixture warns; it does not fail the run (set ROOTLOCK_GAPS_FAIL=1
to make it fail).
"""
import copy
import csv
import json
import os
import shutil

import pytest

from fixtures import check_report, cuda_env, elf_stub, pip_like
from fixtures.check_report import by_kind, summary
from fixtures.debian_root import copy_root, run_in_chroot

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


def checked(rootlock, root, label, extra=()):
    """check's (exit code, report), printed, with the report's contract verified."""
    rc, report, raw = run_check(rootlock, root, extra)
    assert report is not None, f"{label} check printed no JSON:\n{raw}"
    broken = contract_problems(report)
    assert not broken, f"{label} contract: " + "\n".join(broken)
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


def linked_state(scratch, tree, name):
    """A hard-linked copy of tree (root, info, stack, data) for one state of it."""
    _, info, stack, data = tree
    copied = cuda_env.linked_copy(info, os.path.join(scratch, name))
    return copied["root"], copied, stack, data


# ---------------------------------------------------------------------------------------------
# a. torch 2.7.0+cu128: the RPATH misses cusparseLt, the preload finds it.

def tweak_27(global_needs):
    def tweak(data):
        tweak_lib(data, "torch/lib/libtorch_global_deps.so", NVIDIA_CUSPARSELT_RPATH,
                  (CUSPARSELT,) if global_needs else ())
    return tweak


@pytest.fixture(scope="module")
def tree_a(scratch):
    """torch 2.7.0's layout, with the preload fallback (only read: the states below copy it)."""
    return build_tree(scratch, "(a)", tweak_27(True))


@pytest.fixture(scope="module")
def tree_a_default_init(scratch, tree_a):
    """tree_a with the fixture's default torch/__init__.py: no preload fallback."""
    state = linked_state(scratch, tree_a, "a-default-init")
    _, info, stack, _ = state
    cuda_env.replace_torch_init(info, cuda_env.torch_init(stack))
    return state


def test_a_fixture_global_deps_needs_cusparselt_outside_the_rpath(tree_a):
    root, info, _, _ = tree_a
    global_deps = sp_path(info, "torch/lib/libtorch_global_deps.so")
    lt = sp_path(info, "nvidia/cusparselt/lib/" + CUSPARSELT)
    dyn = elf_stub.dynamic_section(host(root, global_deps))
    assert CUSPARSELT in dyn["needed"] and dyn["rpath"] \
        and NVIDIA_CUSPARSELT_RPATH not in dyn["rpath"].split(":") \
        and os.path.isfile(host(root, lt)), \
        f"libtorch_global_deps.so {dyn}, {lt} present: {os.path.isfile(host(root, lt))}"


def test_a_import_torch_works_through_the_fallback(tree_a):
    rc, out = in_chroot(tree_a[0], "import torch")
    assert rc == 0, f"import torch with the preload fallback: exit {rc}, {out!r}"
    print(f"(a) import torch with the preload fallback: exit {rc}")


def test_a_import_torch_fails_without_the_fallback(tree_a_default_init):
    rc_plain, out = in_chroot(tree_a_default_init[0], "import torch")
    assert rc_plain != 0 and f"{CUSPARSELT}: {NOT_FOUND}" in out, \
        f"import torch with the fixture's default __init__.py (no fallback): exit {rc_plain}, " \
        f"{out!r}; expected the {CUSPARSELT} '{NOT_FOUND}' error"
    print(f"(a) import torch with the fixture's default __init__.py (no preload fallback): "
          f"exit {rc_plain}: {last_line(out)}")


def test_a_check_preload_only_for_cusparselt(rootlock, tree_a_default_init):
    # Checked over the default __init__.py: rootlock cannot know which __init__.py runs, it
    # models the real torch, which has the fallback.
    root, info, _, _ = tree_a_default_init
    global_deps = sp_path(info, "torch/lib/libtorch_global_deps.so")
    lt = sp_path(info, "nvidia/cusparselt/lib/" + CUSPARSELT)
    rc, report = checked(rootlock, root, "(a)")
    want = {"kind": "preload-only", "severity": "warning", "soname": CUSPARSELT,
            "path": lt, "needed_by": [global_deps]}
    got = [{k: p.get(k) for k in want} for p in by_kind(report, "preload-only")]
    assert got == [want], f"preload-only problems {got}, expected [{want}]"
    missing = [p for p in by_kind(report, "missing-soname") if p["soname"] == CUSPARSELT]
    errors = [p for p in report.get("problems", []) if p.get("severity") == "error"]
    assert rc == 0 and report.get("ok") is True and not errors and not missing, \
        f"check exit {rc}, ok={report.get('ok')}, errors {errors}, missing-soname {missing}"


@pytest.fixture(scope="module")
def tree_a2(scratch):
    """The fallback runs only on a failure of the global deps: a need of libtorch_cuda.so
    alone is not saved by it."""
    return build_tree(scratch, "(a2)", tweak_27(False))


def test_a2_import_fails_when_only_libtorch_cuda_needs_cusparselt(tree_a2):
    rc, out = in_chroot(tree_a2[0], "import torch")
    assert rc != 0 and f"{CUSPARSELT}: {NOT_FOUND}" in out and "torch._C" in out, \
        f"import torch: exit {rc}, {out!r}; expected _C to fail on {CUSPARSELT}"
    print(f"(a2) only libtorch_cuda.so needs {CUSPARSELT}: import torch exit {rc}: "
          f"{last_line(out)}")


def test_a2_check_missing_soname_not_preload_only(rootlock, tree_a2):
    root, info, _, _ = tree_a2
    cuda = sp_path(info, "torch/lib/libtorch_cuda.so")
    rc, report = checked(rootlock, root, "(a2)")
    got = [(p["soname"], p["needed_by"], p.get("severity"))
           for p in by_kind(report, "missing-soname")]
    assert rc == 1 and got == [(CUSPARSELT, [cuda], "error")] \
        and not by_kind(report, "preload-only"), \
        f"check exit {rc}, missing-soname {got}, preload-only " \
        f"{by_kind(report, 'preload-only')}; expected exit 1 and only " \
        f"[({CUSPARSELT}, [{cuda}], error)]"


@pytest.fixture(scope="module")
def tree_a3(scratch, tree_a):
    """torch 2.8's table holds nvtx without a default: its miss raises ValueError. The case-a
    tree, with the fallback, without nvidia-nvtx-cu12; returns the state and the table."""
    state = linked_state(scratch, tree_a, "a3")
    _, info, stack, data = state
    table = cuda_env.preload_table(data, stack)
    cuda_env.replace_torch_init(info, cuda_env.torch_init(stack, True, table))
    pip_like.uninstall(info["site_packages_host"], "nvidia-nvtx-cu12")
    return state, table


def test_a3_fixture_preload_table_requires_nvtx(tree_a3):
    _, table = tree_a3
    required = [g for f, g, r in table if f == "nvtx" and r]
    assert required, f"the stack's preload table has no required nvtx: {table}"


def test_a3_import_fails_on_the_fallbacks_valueerror(tree_a3):
    (root, _, _, _), _ = tree_a3
    rc, out = in_chroot(root, "import torch")
    assert rc != 0 and "ValueError" in out and "libnvToolsExt" in out, \
        f"import torch without nvidia-nvtx-cu12: exit {rc}, {out!r}; expected the fallback's " \
        "ValueError"
    print(f"(a3) case-a tree without nvidia-nvtx-cu12: import torch exit {rc}: "
          f"{last_line(out)[:160]}")


def test_a3_check_preload_failed_on_the_required_nvtx_miss(rootlock, tree_a3):
    (root, _, stack, _), _ = tree_a3
    rc, report = checked(rootlock, root, "(a3)")
    failed = by_kind(report, "preload-failed")
    assert rc == 1 and len(failed) == 1 and failed[0]["severity"] == "error" \
        and failed[0]["missing"] == ["libnvToolsExt.so.*[0-9]"] \
        and failed[0]["torch"] == stack["torch_version"], \
        f"check exits {rc} with preload-failed {failed}; torch {stack['torch_version']}'s " \
        "preload raises ValueError on the required libnvToolsExt miss and the import fails"


# ---------------------------------------------------------------------------------------------
# b. A cuDNN sub-library is gone.

GRAPH_REL = "nvidia/cudnn/lib/libcudnn_graph.so.9"
# What cuDNN's dlopen("libcudnn_graph.so.9") searches: its RUNPATH $ORIGIN, then the cache.
GRAPH_OPENER = "import ctypes; ctypes.CDLL('libcudnn_graph.so.9')"


def cudnn_paths(info):
    """(libcudnn_graph.so.9, libcudnn.so.9, the directory of both), inside the root."""
    cudnn = sp_path(info, "nvidia/cudnn/lib/libcudnn.so.9")
    return sp_path(info, GRAPH_REL), cudnn, os.path.dirname(cudnn)


def graph_missing_dlopen(info):
    return {"kind": "missing-dlopen", "severity": "warning", "soname": "libcudnn_graph.so.9",
            "opened_by": [cudnn_paths(info)[1]]}


@pytest.fixture(scope="module")
def tree_b(scratch):
    """The intact tree (only read: the states below copy it)."""
    return build_tree(scratch, "(b)")


@pytest.fixture(scope="module")
def tree_b_intact_check(rootlock, tree_b):
    return checked(rootlock, tree_b[0], "(b) intact:")


@pytest.fixture(scope="module")
def tree_b_graph_deleted(scratch, tree_b):
    """libcudnn_graph.so.9 deleted, its RECORD row left."""
    state = linked_state(scratch, tree_b, "b-graph-deleted")
    os.unlink(host(state[0], cudnn_paths(state[1])[0]))
    return state


@pytest.fixture(scope="module")
def tree_b_row_dropped(scratch, tree_b):
    """libcudnn_graph.so.9 deleted and its RECORD row dropped too."""
    state = linked_state(scratch, tree_b, "b-row-dropped")
    os.unlink(host(state[0], cudnn_paths(state[1])[0]))
    drop_record_row(state[1], "nvidia-cudnn-cu12", GRAPH_REL)
    return state


def test_b_intact_graph_opens_from_the_cudnn_dir(tree_b):
    root, info, _, _ = tree_b
    cudnn_dir = cudnn_paths(info)[2]
    rc, out = in_chroot(root, GRAPH_OPENER, ld_library_path=cudnn_dir)
    assert rc == 0, f"intact: libcudnn_graph.so.9 from {cudnn_dir}: exit {rc}, {out!r}"


def test_b_intact_check_no_missing_dlopen_for_graph(tree_b_intact_check):
    _, report = tree_b_intact_check
    found = [p for p in by_kind(report, "missing-dlopen") if p["soname"] == "libcudnn_graph.so.9"]
    assert not found, f"intact tree has a missing-dlopen for libcudnn_graph.so.9: {found}"


def test_b_nvrtc_by_bare_name_found_only_after_import_torch(tree_b):
    """cuDNN's dlopen of libnvrtc.so.12 by bare name finds nothing from cudnn/lib, but after
    `import torch` 2.6-2.8 the preload after success has loaded it: the soname matches."""
    code = "import ctypes; ctypes.CDLL('libnvrtc.so.12')"
    rc_alone, out = in_chroot(tree_b[0], code)
    assert rc_alone != 0 and f"libnvrtc.so.12: {NOT_FOUND}" in out, \
        f"dlopen('libnvrtc.so.12') without torch: exit {rc_alone}, {out!r}"
    rc_torch, out = in_chroot(tree_b[0], "import torch; " + code)
    assert rc_torch == 0, f"dlopen('libnvrtc.so.12') after import torch: exit {rc_torch}, {out!r}"
    print(f"(b) dlopen('libnvrtc.so.12') by bare name: exit {rc_alone} alone, exit {rc_torch} "
          "after import torch (its preload after success loaded nvidia/cuda_nvrtc's)")


def test_b_intact_check_nvrtc_not_missing_after_torchs_preload(tree_b_intact_check, gap):
    _, report = tree_b_intact_check
    reported = [p for p in by_kind(report, "missing-dlopen") if p["soname"] == "libnvrtc.so.12"]
    gap(not reported, "(b) check reports missing-dlopen libnvrtc.so.12 (opened by "
        "libcudnn.so.9) although torch 2.6-2.8 preloads libnvrtc.so.12 after the global deps "
        "load, so cuDNN's dlopen finds it loaded")


def test_b_graph_deleted_import_torch_still_works(tree_b_graph_deleted):
    rc, out = in_chroot(tree_b_graph_deleted[0], "import torch")
    assert rc == 0, f"import torch without {GRAPH_REL}: exit {rc}, {out!r}"
    print(f"(b) {GRAPH_REL} deleted: import torch exit {rc} (cuDNN opens it when used)")


def test_b_graph_deleted_not_found_by_bare_name(tree_b_graph_deleted):
    root, info, _, _ = tree_b_graph_deleted
    cudnn_dir = cudnn_paths(info)[2]
    rc, out = in_chroot(root, GRAPH_OPENER, ld_library_path=cudnn_dir)
    assert rc != 0 and f"libcudnn_graph.so.9: {NOT_FOUND}" in out, \
        f"libcudnn_graph.so.9 by bare name from {cudnn_dir}: exit {rc}, {out!r}"
    print(f"(b) dlopen('libcudnn_graph.so.9') searching {cudnn_dir} (cuDNN's $ORIGIN): exit "
          f"{rc}: {last_line(out)}")


def test_b_graph_deleted_check_missing_dlopen_beside_record_error(rootlock,
                                                                   tree_b_graph_deleted):
    root, info, _, _ = tree_b_graph_deleted
    graph = cudnn_paths(info)[0]
    want = graph_missing_dlopen(info)
    rc, report = checked(rootlock, root, "(b) RECORD left:")
    got = [{k: p.get(k) for k in want} for p in by_kind(report, "missing-dlopen")
           if p["soname"] == want["soname"]]
    assert got == [want], f"missing-dlopen {got}, expected [{want}]"
    errors = sorted((p["kind"], p.get("dist"), tuple(p.get("paths", [])))
                    for p in report.get("problems", []) if p.get("severity") == "error")
    assert rc == 1 and errors == [("missing-record-file", "nvidia-cudnn-cu12", (graph,))], \
        f"check exit {rc}, errors {errors}; expected exit 1 and only the missing-record-file " \
        f"of nvidia-cudnn-cu12 for {graph}"
    print(f"(b)   errors besides the missing-dlopen warning: {errors}")


def test_b_row_dropped_check_missing_dlopen_alone_exits_0(rootlock, tree_b_row_dropped):
    root, info, _, _ = tree_b_row_dropped
    want = graph_missing_dlopen(info)
    rc, report = checked(rootlock, root, "(b) RECORD row dropped:")
    got = [{k: p.get(k) for k in want} for p in by_kind(report, "missing-dlopen")
           if p["soname"] == want["soname"]]
    errors = [p for p in report.get("problems", []) if p.get("severity") == "error"]
    assert rc == 0 and got == [want] and not errors, \
        f"with the RECORD row dropped: exit {rc}, missing-dlopen {got}, errors {errors}; " \
        "expected exit 0 with the missing-dlopen warning alone"


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


WRONG = f"undefined symbol: {NVJITLINK_SYMBOL}, version {NVJITLINK}"


def nvjitlink_paths(info):
    """(the wheel's libnvJitLink.so.12, the wheel's libcusparse.so.12), inside the root."""
    return (sp_path(info, "nvidia/nvjitlink/lib/" + NVJITLINK),
            sp_path(info, "nvidia/cusparse/lib/libcusparse.so.12"))


@pytest.fixture(scope="module")
def tree_c(scratch):
    """libtorch_cuda.so NEEDs libcusparse.so.12; an older libnvJitLink.so.12 in
    /usr/local/cuda/lib64. torch/__init__.py has 2.8's preload after success (only read)."""
    def tweak(data):
        tweak_lib(data, "torch/lib/libtorch_cuda.so", add_needed=("libcusparse.so.12",))
    tree = build_tree(scratch, "(c)", tweak)
    install_system_nvjitlink(tree[0], scratch)
    return tree


@pytest.fixture(scope="module")
def tree_c_import_28(tree_c):
    """The real `import torch` 2.8 with LD_LIBRARY_PATH=/usr/local/cuda/lib64: (exit, output)."""
    return in_chroot(tree_c[0], "import torch", SYSTEM_CUDA)


@pytest.fixture(scope="module")
def tree_c_no_success_preload(scratch, tree_c):
    """tree_c with torch/__init__.py lacking the preload after success (torch <= 2.5)."""
    state = linked_state(scratch, tree_c, "c-no-success-preload")
    _, info, stack, _ = state
    table = cuda_env.preload_table(cuda_env.load_data(), stack)
    cuda_env.replace_torch_init(info, cuda_env.torch_init(stack, True, table, False))
    return state


@pytest.fixture(scope="module")
def tree_c_cache(scratch, tree_c_no_success_preload):
    """/usr/local/cuda/lib64 in ld.so.conf.d: the cache comes after RUNPATH. Returns the state
    and ldconfig's exit code and stderr."""
    state = linked_state(scratch, tree_c_no_success_preload, "c-cache")
    root = state[0]
    pip_like.write_file(host(root, CUDA_CONF), (SYSTEM_CUDA + "\n").encode())
    # ldconfig writes a new ld.so.cache and renames it: the other states keep theirs.
    proc = run_in_chroot(root, ["/sbin/ldconfig"])
    return state, proc.returncode, proc.stderr


def test_c_cusparse_with_ld_library_path_misses_the_versioned_symbol(tree_c):
    root, info, _, _ = tree_c
    _, cusparse = nvjitlink_paths(info)
    rc, out = in_chroot(root, mapped_code(cusparse, "libnvJitLink"), SYSTEM_CUDA)
    assert rc != 0 and WRONG in out, f"loading libcusparse.so.12 with LD_LIBRARY_PATH=" \
        f"{SYSTEM_CUDA}: exit {rc}, {out!r}; expected '{WRONG}'"
    print(f"(c) LD_LIBRARY_PATH={SYSTEM_CUDA}, dlopen libcusparse.so.12: exit {rc}: "
          f"{last_line(out)}")


def test_c_import_torch_28_with_ld_library_path_works(tree_c, tree_c_import_28):
    rc, out = tree_c_import_28
    assert rc == 0, f"import torch (2.6-2.8 preloads the wheel's nvJitLink after the global " \
        f"deps) with LD_LIBRARY_PATH: exit {rc}, {out!r}"
    print(f"(c) LD_LIBRARY_PATH={SYSTEM_CUDA}, import torch {tree_c[2]['torch_version']}: exit "
          f"{rc} (its nvJitLink preload after success loads the wheel's copy first)")


def test_c_import_torch_without_success_preload_misses_the_symbol(tree_c_no_success_preload):
    rc, out = in_chroot(tree_c_no_success_preload[0], "import torch", SYSTEM_CUDA)
    assert rc != 0 and WRONG in out, f"import torch without the preload after success, " \
        f"LD_LIBRARY_PATH={SYSTEM_CUDA}: exit {rc}, {out!r}; expected '{WRONG}'"
    print(f"(c) LD_LIBRARY_PATH={SYSTEM_CUDA}, import torch without that preload (torch <= 2.5):"
          f" exit {rc}: {last_line(out)}")


def test_c_import_torch_without_ld_library_path_works(tree_c_no_success_preload):
    rc, out = in_chroot(tree_c_no_success_preload[0], "import torch")
    assert rc == 0, f"import torch without LD_LIBRARY_PATH: exit {rc}, {out!r}"


def test_c_check_without_ld_library_path_no_nvjitlink_problem(rootlock,
                                                              tree_c_no_success_preload):
    rc, report = checked(rootlock, tree_c_no_success_preload[0], "(c) no LD_LIBRARY_PATH:")
    assert rc == 0 and not nvjitlink_problems(report), \
        f"without --ld-library-path: exit {rc}, {nvjitlink_problems(report)}"


def test_c_check_ld_library_path_on_torch_28_no_nvjitlink_error(rootlock,
                                                               tree_c_no_success_preload,
                                                               tree_c_import_28):
    """rootlock models torch by its installed version: 2.6-2.8 preload the wheel's nvJitLink
    after the global deps load, so libcusparse.so.12, loaded later (by libtorch_cuda.so, or
    by cuSOLVER when torch opens libtorch_cuda_linalg.so), binds that copy, and the real
    import works: no wrong provider, no missing symbol. The failing side of the same shadow
    (a consumer outside torch, or torch <= 2.5) is the real loader's verdict for
    `ctypes.CDLL(libcusparse.so.12)` above, and rootlock's for that case is shown by
    test_symbols.py (c) and the unit tests."""
    rc, report = checked(rootlock, tree_c_no_success_preload[0], "(c)",
                         ["--ld-library-path", SYSTEM_CUDA])
    import_28_ok = tree_c_import_28[0] == 0
    problems = nvjitlink_problems(report)
    errors = [p for p in problems if p.get("severity") == "error"]
    assert import_28_ok and not errors, \
        f"--ld-library-path on torch 2.8: exit {rc}, nvJitLink errors {errors}; the real " \
        f"import {'works' if import_28_ok else 'fails'}"
    print(f"(c) --ld-library-path: exit {rc}; nvJitLink findings "
          f"{[(p['kind'], p['severity']) for p in problems]} (torch 2.8's preload after "
          "success maps the wheel's copy first, as the real import shows)")


def test_c_cache_ldconfig_serves_the_system_copy(tree_c_cache):
    (root, _, _, _), ldconfig_rc, ldconfig_err = tree_c_cache
    assert ldconfig_rc == 0, f"ldconfig: exit {ldconfig_rc}, {ldconfig_err!r}"
    system = f"{SYSTEM_CUDA}/{NVJITLINK}"
    proc = run_in_chroot(root, ["/sbin/ldconfig", "-p"])
    line = [ln.strip() for ln in proc.stdout.splitlines() if NVJITLINK in ln]
    assert line and line[0].endswith(system), f"ld.so.cache: {line}"
    print(f"(c) {CUDA_CONF} + ldconfig: {line}")
    rc, out = in_chroot(root, mapped_code(NVJITLINK, "libnvJitLink"))
    assert rc == 0 and system in out, f"dlopen('{NVJITLINK}') by bare name: exit {rc}, " \
        f"{out!r}; expected the cache's {system}"
    print(f"(c) dlopen('{NVJITLINK}') by bare name maps {last_line(out)}")


def test_c_cache_runpath_wins_for_cusparse(tree_c_cache):
    (root, info, _, _), _, _ = tree_c_cache
    system = f"{SYSTEM_CUDA}/{NVJITLINK}"
    packaged, cusparse = nvjitlink_paths(info)
    rc, out = in_chroot(root, mapped_code(cusparse, "libnvJitLink"))
    assert rc == 0 and packaged in out and system not in out, \
        f"dlopen libcusparse.so.12 with the cache: exit {rc}, {out!r}; expected {packaged} " \
        "(RUNPATH before the cache)"
    print(f"(c) dlopen libcusparse.so.12 maps {last_line(out)}")


def test_c_cache_import_torch_works(tree_c_cache):
    (root, _, _, _), _, _ = tree_c_cache
    rc, out = in_chroot(root, "import torch")
    assert rc == 0, f"import torch (no preload after success) with the cache: exit {rc}, {out!r}"
    print(f"(c) import torch (no preload after success) with the cache: exit {rc}")


def test_c_cache_check_no_nvjitlink_problem(rootlock, tree_c_cache):
    (root, _, _, _), _, _ = tree_c_cache
    rc, report = checked(rootlock, root, "(c) ld.so.conf.d:")
    assert rc == 0 and not nvjitlink_problems(report), \
        f"with {CUDA_CONF}: exit {rc}, {nvjitlink_problems(report)}"
