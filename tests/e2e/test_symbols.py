"""End-to-end: `rootlock check` binds undefined symbols as glibc does, against the real loader.

A throwaway copy of the Debian 12 root gets the fixtures, each in its own directory, each
checked by path (c also over the whole root, as the LD_LIBRARY_PATH of a container applies to
everything); the real loader in the chroot is the referee for every verdict:
  a. torch ABI (fixtures/torch_abi.py): torchfix._ext built against fixture torch build 1.
     With build 2 in torchfix/lib (a root copy of its own), `check /opt/venv` exits 1 with one
     undefined-symbol problem (library libc10.so, needed_by the extension, the demangled
     changed signature), and the real `import torchfix._ext` fails on a mangled name check
     listed. With build 1 back (the shared root: build 2 installed, then build 1): exit 0, no
     undefined-symbol problem, and the import works.
  b. /opt/glibc299/bin/prog (DT_RUNPATH $ORIGIN/../lib) loads libneeds299.so.1, which needs
     GLIBC_2.99 (linked against a stub libc.so.6 whose version script defines it): check
     reports missing-version GLIBC_2.99 from the root's real libc and exits 1; ld.so in the
     chroot says "version `GLIBC_2.99' not found", and so does running the program.
  c. /opt/app/bin/app (DT_RUNPATH $ORIGIN/../lib) calls f_new of its libshadow.so.1; a second
     copy in /opt/other/lib exports only f_old. With --ld-library-path /opt/other/lib, check
     reports wrong-provider (error: the winner lacks f_new) and undefined-symbol f_new;
     `rootlock ldd` picks the same copy as ld.so with that LD_LIBRARY_PATH; running the app in
     the chroot fails with "undefined symbol: f_new" after it started. Checking /opt/app alone,
     the wrong-provider's copies still name the copy that won. Without it: neither problem.
  d. the cached Debian root itself (read-only): `check` has no undefined-symbol error; the
     "objects" and "symbols" counts are printed.
  e. when a missing symbol fails: three programs under /opt/bind use a symbol the installed
     libbind.so.1 lacks, by a PLT call (lazy), through its address in data, and by a PLT call
     linked with -z now. Each prints "started" first, so running it shows whether the real
     loader failed at load or at the first call; check's "fails" must say the same.

The roots are module fixtures, every fixture of (a)-(e) installed before any case runs, so a
case runs alone. `-k "fixture or real"` builds the roots and runs only the cases that need no
rootlock (the fixtures' own facts and the real loader's side).
"""
import json
import os
import shutil

import pytest

from fixtures import elf_stub, referee, torch_abi
from fixtures.check_report import by_kind, run_check, summary
from fixtures.debian_root import copy_root, debian_root, run_in_chroot

GLIBC_DIR = "/opt/glibc299/lib"
GLIBC_LIB = GLIBC_DIR + "/libneeds299.so.1"
GLIBC_VERSION = "GLIBC_2.99"
GLIBC_SYMBOL = "rootlock_glibc_299_function"
GLIBC_PROG = "/opt/glibc299/bin/prog"
GLIBC_PROG_SOURCE = """/* rootlock test program: loads libneeds299.so.1, which needs GLIBC_2.99 */
int main(void) { return 0; }
"""
REAL_LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
APP = "/opt/app/bin/app"
PACKAGED = "/opt/app/lib/libshadow.so.1"
OTHER_DIR = "/opt/other/lib"
SHADOW = OTHER_DIR + "/libshadow.so.1"
BIND_DIR = "/opt/bind"
# program -> the libbind.so.1 symbol it uses, which the installed copy lacks.
BIND_PROGRAMS = {"lazy": "g_call", "address": "g_addr", "now": "g_now"}
_BIND_HEAD = ("#include <unistd.h>\n"
              "static void started(void) { (void)!write(1, \"started\\n\", 8); }\n")
BIND_SOURCES = {
    # A PLT call: R_X86_64_JUMP_SLOT, bound when first called.
    "lazy": (_BIND_HEAD + "extern int g_call(void);\n"
             "int main(void) { started(); return g_call(); }\n", ()),
    # The function's address in data: R_X86_64_GLOB_DAT / _64 in .rela.dyn, bound at load.
    "address": (_BIND_HEAD + "extern int g_addr(void);\nint (*volatile g_ptr)(void) = g_addr;\n"
                "int main(void) { started(); return g_ptr(); }\n", ()),
    # A PLT call in a program linked with -z now (DF_1_NOW, BIND_NOW): bound at load.
    "now": (_BIND_HEAD + "extern int g_now(void);\n"
            "int main(void) { started(); return g_now(); }\n", ("-Wl,-z,now",)),
}
BIND_EXPECTED = {"lazy": "at-first-call", "address": "at-load", "now": "at-load"}
APP_SOURCE = """/* rootlock test program: calls f_new of the libshadow.so.1 packaged with it */
#include <unistd.h>
extern int f_new(void);
extern int f_old(void);
int main(void) {
  if (write(1, "started\\n", 8) != 8) return 2;
  return f_new() + f_old();
}
"""



def symbol_names(problem):
    return [s.get("name") for s in problem.get("symbols", [])]


def host(root, path):
    return os.path.join(root, path.lstrip("/"))


def install_file(root, path, src, mode=0o755):
    dest = host(root, path)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copyfile(src, dest)
    os.chmod(dest, mode)


def build_program(out, source, libs, runpath, extra=()):
    """A real executable (PIE, linked against the host's Debian 12 libc, lazily bound unless
    extra says otherwise) with DT_RUNPATH runpath, DT_NEEDED on libs (paths) in order."""
    argv = (["gcc", "-O1", "-s", "-Wl,--build-id=sha1", *extra, "-o", "OUT", "prog.c",
             "-Wl,--enable-new-dtags", "-Wl,-rpath," + runpath,
             # The libraries' own needs (a stub libc's GLIBC_2.99) are not the linker's concern.
             "-Wl,--allow-shlib-undefined", "-Wl,--no-as-needed"]
            + [os.path.abspath(p) for p in libs])
    return torch_abi.compile_cached(out, {"prog.c": source}, argv, deps=list(libs))


def build_glibc299(root, scratch):
    libc = elf_stub.StubSpec(out=os.path.join(scratch, "stub-libc", "libc.so.6"),
                             soname="libc.so.6", tag="stub libc defining GLIBC_2.99",
                             versions=((GLIBC_VERSION, (GLIBC_SYMBOL,)),))
    lib = elf_stub.StubSpec(out=os.path.join(scratch, "libneeds299.so.1"),
                            soname="libneeds299.so.1", needed=("libc.so.6",),
                            imports=(GLIBC_SYMBOL,), tag="needs GLIBC_2.99")
    elf_stub.build_stubs([libc, lib])
    prog = build_program(os.path.join(scratch, "prog299"), GLIBC_PROG_SOURCE, [lib.out],
                         "$ORIGIN/../lib")
    install_file(root, GLIBC_LIB, lib.out)
    install_file(root, GLIBC_PROG, prog)


def build_shadow(root, scratch):
    packaged = elf_stub.StubSpec(out=os.path.join(scratch, "app-lib", "libshadow.so.1"),
                                 soname="libshadow.so.1", exports=("f_new", "f_old"),
                                 tag="libshadow 2.0, packaged with app")
    other = elf_stub.StubSpec(out=os.path.join(scratch, "other-lib", "libshadow.so.1"),
                              soname="libshadow.so.1", exports=("f_old",),
                              tag="libshadow 1.0, elsewhere")
    elf_stub.build_stubs([packaged])
    elf_stub.build_stubs([other])
    app = build_program(os.path.join(scratch, "app"), APP_SOURCE, [packaged.out],
                        "$ORIGIN/../lib")
    install_file(root, APP, app)
    install_file(root, PACKAGED, packaged.out)
    install_file(root, SHADOW, other.out)


def build_binding(root, scratch):
    """libbind.so.1 as linked against (exports every g_*) and as installed (exports none),
    and one program per binding mode, each printing "started" before it uses its symbol."""
    full = elf_stub.StubSpec(out=os.path.join(scratch, "bind-full", "libbind.so.1"),
                             soname="libbind.so.1", exports=tuple(BIND_PROGRAMS.values()),
                             tag="libbind 2.0")
    empty = elf_stub.StubSpec(out=os.path.join(scratch, "bind-empty", "libbind.so.1"),
                              soname="libbind.so.1", tag="libbind 1.0")
    elf_stub.build_stubs([full])
    elf_stub.build_stubs([empty])
    install_file(root, BIND_DIR + "/lib/libbind.so.1", empty.out)
    for name, (source, extra) in BIND_SOURCES.items():
        prog = build_program(os.path.join(scratch, "bind-" + name), source, [full.out],
                             "$ORIGIN/../lib", extra)
        install_file(root, f"{BIND_DIR}/bin/{name}", prog)


def checked(rootlock, root, args, label):
    """`check --json ARGS` over root: (exit code, report), the report printed."""
    rc, report, raw = run_check(rootlock, root, args)
    assert report is not None, f"{label} check printed no JSON:\n{raw}"
    print(f"{label} check {' '.join(args)}: exit {rc}, ok={report.get('ok')}, "
          f"{report.get('objects')} objects, {report.get('symbols')} symbols; problems: "
          f"{summary(report)}")
    for p in report.get("problems", []):
        print(f"{label}   " + json.dumps(p, sort_keys=True)[:400])
    return rc, report


# -- the roots -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def root(scratch):
    """The shared root: torchfix with build 2 then build 1 again, and the fixtures of (b), (c)
    and (e), each in its own directory."""
    path = copy_root(scratch)
    build = os.path.join(scratch, "build")
    os.makedirs(build)
    torch_abi.install(path, 2)
    torch_abi.install(path, 1)
    build_glibc299(path, build)
    build_shadow(path, build)
    build_binding(path, build)
    return path


@pytest.fixture(scope="module")
def broken_abi(scratch):
    """(root, install info): a root copy of its own with torchfix on torch build 2."""
    path = copy_root(scratch)
    return path, torch_abi.install(path, 2)


# -- a. the torch ABI ----------------------------------------------------------------------------

def import_ext(root):
    proc = run_in_chroot(root, [torch_abi.VENV + "/bin/python3", "-c",
                                "import torchfix._ext as e; print('numel', e.numel)"])
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def test_a_fixture_build2_drops_the_changed_symbol(broken_abi):
    path, info = broken_abi
    ext_undefined = torch_abi.dynamic_symbols(host(path, info["extension"]), defined=False)
    new_c10 = torch_abi.dynamic_symbols(host(path, info["libs"]["libc10.so"]), defined=True)
    assert torch_abi.CHANGED_MANGLED in ext_undefined and \
        torch_abi.CHANGED_MANGLED not in new_c10 and torch_abi.NEW_MANGLED in new_c10, \
        f"(a) fixture: the extension should import {torch_abi.CHANGED_MANGLED}, which build " \
        f"2's libc10.so replaces by {torch_abi.NEW_MANGLED}: the extension imports " \
        f"{sorted(ext_undefined)}, libc10.so exports {sorted(new_c10)}"


@pytest.fixture(scope="module")
def broken_import(broken_abi):
    rc, out = import_ext(broken_abi[0])
    print(f"(a) build 2, real import: exit {rc}: {out.splitlines()[-1] if out else ''}")
    return rc, out


def test_a_build2_real_import_fails_on_changed_symbol(broken_import):
    rc, out = broken_import
    needle = "undefined symbol: " + torch_abi.CHANGED_MANGLED
    assert rc != 0 and needle in out, \
        f"(a) build 2: import torchfix._ext gave exit {rc}, {out!r}; expected {needle!r}"


@pytest.fixture(scope="module")
def broken_check(rootlock, broken_abi):
    return checked(rootlock, broken_abi[0], [torch_abi.VENV], "(a) build 2,")


def test_a_build2_check_exits_1_not_ok(broken_check):
    rc, report = broken_check
    assert rc == 1 and report.get("ok") is False, \
        f"(a) build 2: check exit {rc}, ok={report.get('ok')} (expected 1, false)"


@pytest.fixture(scope="module")
def broken_problem(broken_check):
    """The one undefined-symbol problem of build 2's check."""
    undefined = by_kind(broken_check[1], "undefined-symbol")
    assert len(undefined) == 1, \
        f"(a) build 2: expected one undefined-symbol problem, got {len(undefined)}: " \
        f"{json.dumps(undefined)[:2000]}"
    return undefined[0]


def test_a_build2_check_one_undefined_symbol(broken_check):
    undefined = by_kind(broken_check[1], "undefined-symbol")
    assert len(undefined) == 1, \
        f"(a) build 2: expected one undefined-symbol problem, got {len(undefined)}: " \
        f"{json.dumps(undefined)[:2000]}"


def first_symbol(p):
    return (p.get("symbols") or [{}])[0]


# (field, what the problem holds, what it should hold); info is build 2's install info.
BROKEN_FIELDS = {
    "severity": (lambda p, info: p.get("severity"), lambda info: "error"),
    "library": (lambda p, info: p.get("library"), lambda info: torch_abi.CHANGED_LIBRARY),
    "provider": (lambda p, info: p.get("provider"),
                 lambda info: f"{info['package']}/lib/{torch_abi.CHANGED_LIBRARY}"),
    "needed_by": (lambda p, info: p.get("needed_by"), lambda info: [info["extension"]]),
    "count-and-symbols": (lambda p, info: (p.get("count"), symbol_names(p)),
                          lambda info: (1, [torch_abi.CHANGED_MANGLED])),
    "demangled": (lambda p, info: first_symbol(p).get("demangled"),
                  lambda info: torch_abi.CHANGED_DEMANGLED),
    "version": (lambda p, info: first_symbol(p).get("version"), lambda info: ""),
    # CPython dlopens extensions with RTLD_NOW (sys.getdlopenflags()): the import fails at load.
    "fails-at-load": (lambda p, info: first_symbol(p).get("fails"), lambda info: "at-load"),
}


@pytest.mark.parametrize("field", list(BROKEN_FIELDS))
def test_a_build2_problem(broken_abi, broken_problem, field):
    got_of, want_of = BROKEN_FIELDS[field]
    info = broken_abi[1]
    got, want = got_of(broken_problem, info), want_of(info)
    assert got == want, f"(a) build 2: {field} {got!r}, expected {want!r}"


def test_a_build2_import_fails_on_a_symbol_check_listed(broken_import, broken_problem):
    out = broken_import[1]
    assert torch_abi.CHANGED_MANGLED in out and \
        torch_abi.CHANGED_MANGLED in symbol_names(broken_problem), \
        f"(a) the import's undefined symbol should be one check listed " \
        f"({symbol_names(broken_problem)}): {out!r}"


def test_a_build1_real_import_works(root):
    rc, out = import_ext(root)
    print(f"(a) build 1, real import: exit {rc}: {out}")
    assert rc == 0 and "numel 6" in out, \
        f"(a) build 1: import torchfix._ext gave exit {rc}, {out!r}; expected 'numel 6'"


@pytest.fixture(scope="module")
def intact_check(rootlock, root):
    return checked(rootlock, root, [torch_abi.VENV], "(a) build 1,")


def test_a_build1_check_ok(intact_check):
    rc, report = intact_check
    undefined = by_kind(report, "undefined-symbol")
    assert rc == 0 and report.get("ok") is True and not undefined, \
        f"(a) build 1: check exit {rc}, ok={report.get('ok')}, undefined-symbol {undefined} " \
        f"(expected 0, true, none)"


def test_a_build1_check_three_objects(intact_check):
    objects = intact_check[1].get("objects")
    assert objects == 3, \
        f"(a) build 1: {objects} objects, expected 3 (ext, libc10, libtorch_cpu)"


# -- b. a GLIBC_2.99 requirement against the real libc --------------------------------------------

def test_b_real_loader_version_error(root):
    ref = referee.ld_so_list(root, GLIBC_PROG)
    errors = sorted(ref.version_errors, key=str)
    for version, provider, needed_by in errors:
        print(f"(b) ld.so: {provider}: version `{version}' not found (required by {needed_by})")
    assert [(v, os.path.normpath(n)) for v, _, n in errors] == [(GLIBC_VERSION, GLIBC_LIB)], \
        f"(b) ld.so version errors {errors}, expected {GLIBC_VERSION} required by " \
        f"{GLIBC_LIB}: {ref.raw!r}"


def test_b_real_program_fails_on_version(root):
    proc = run_in_chroot(root, [GLIBC_PROG])
    out = (proc.stdout + proc.stderr).strip()
    print(f"(b) running {GLIBC_PROG}: exit {proc.returncode}: {out}")
    assert proc.returncode != 0 and f"version `{GLIBC_VERSION}' not found" in out, \
        f"(b) running {GLIBC_PROG}: exit {proc.returncode}, {out!r}; expected " \
        f"version `{GLIBC_VERSION}' not found"


@pytest.fixture(scope="module")
def glibc_check(rootlock, root):
    return checked(rootlock, root, [os.path.dirname(GLIBC_DIR)], "(b)")


def test_b_check_exits_1_not_ok(glibc_check):
    rc, report = glibc_check
    assert rc == 1 and report.get("ok") is False, \
        f"(b) check exit {rc}, ok={report.get('ok')} (expected 1, false)"


def test_b_check_missing_version_from_the_roots_libc(glibc_check):
    want = {"soname": "libc.so.6", "version": GLIBC_VERSION, "needed_by": [GLIBC_LIB],
            "provider": REAL_LIBC, "severity": "error"}
    got = [{k: p.get(k) for k in want} for p in by_kind(glibc_check[1], "missing-version")]
    assert got == [want], f"(b) missing-version problems {got}, expected [{want}]"


# -- c. LD_LIBRARY_PATH shadows the packaged copy -------------------------------------------------

LLP = [None, OTHER_DIR]
LLP_IDS = ["no-ld-library-path", "ld-library-path-other"]


def run_app(root, ld_library_path):
    env = {"LD_LIBRARY_PATH": ld_library_path} if ld_library_path else None
    proc = run_in_chroot(root, [APP], env=env)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def loader_pick(root, llp):
    """The libshadow.so.1 path ld.so lists for the app (as it lists it)."""
    ref = referee.ld_so_list(root, APP, ld_library_path=llp)
    return dict(ref.loaded).get("libshadow.so.1")


@pytest.mark.parametrize("llp", LLP, ids=LLP_IDS)
def test_c_real_loader_picks(root, llp):
    pick = loader_pick(root, llp)
    want = PACKAGED if llp is None else SHADOW
    print(f"(c) ld.so, LD_LIBRARY_PATH={llp}: libshadow.so.1 => {pick}")
    assert (os.path.normpath(pick) if pick else None) == want, \
        f"(c) ld.so (LD_LIBRARY_PATH={llp}) picked {pick}, fixture expects {want}"


def test_c_real_app_runs_without_ld_library_path(root):
    rc, out = run_app(root, None)
    assert rc == 0 and out == "started", \
        f"(c) the app without LD_LIBRARY_PATH: exit {rc}, {out!r}; expected exit 0, 'started'"


def test_c_real_app_fails_on_f_new_with_ld_library_path(root):
    rc, out = run_app(root, OTHER_DIR)
    print(f"(c) the app, LD_LIBRARY_PATH={OTHER_DIR}: exit {rc}: {out}")
    assert rc != 0 and out.startswith("started") and "undefined symbol: f_new" in out, \
        f"(c) the app with LD_LIBRARY_PATH: exit {rc}, {out!r}; expected it to start, then " \
        "fail binding f_new"


@pytest.fixture(scope="module")
def hwcaps(root):
    return referee.ld_so_hwcaps(root)[0]


@pytest.mark.parametrize("llp", LLP, ids=LLP_IDS)
def test_c_rootlock_ldd_as_ld_so(rootlock, root, hwcaps, llp):
    args = (["--hwcaps", ",".join(hwcaps)] if hwcaps else []) + \
        (["--ld-library-path", llp] if llp else [])
    got = referee.rootlock_ldd(rootlock, root, [APP], args)[APP]
    ref = referee.ld_so_list(root, APP, ld_library_path=llp)
    pick = dict(ref.loaded).get("libshadow.so.1")
    diffs = referee.compare_listing(ref, got)
    entry = referee.find_entry(got, "libshadow.so.1") or {}
    print(f"(c) rootlock ldd, --ld-library-path {llp}: libshadow.so.1 => "
          f"{entry.get('path')} via {entry.get('via')}")
    assert not diffs and entry.get("path") == pick, \
        f"(c) rootlock ldd (LD_LIBRARY_PATH={llp}) differs from ld.so: {diffs}; " \
        f"libshadow.so.1 => {entry.get('path')}, ld.so {pick}"


def about_app(problems):
    return [p for p in problems if APP in p.get("needed_by", [])]


@pytest.fixture(scope="module")
def shadow_check(rootlock, root):
    """check --ld-library-path OTHER_DIR over the whole root (the other fixtures' problems are
    left out by needed_by): (exit code, report, wrong-provider, undefined-symbol about APP)."""
    rc, report = checked(rootlock, root, ["--ld-library-path", OTHER_DIR], "(c) whole root,")
    wp = about_app(by_kind(report, "wrong-provider"))
    us = about_app(by_kind(report, "undefined-symbol"))
    print(f"(c) about {APP}: {len(wp)} wrong-provider, {len(us)} undefined-symbol")
    return rc, report, wp, us


def test_c_check_with_ld_library_path_exits_1_not_ok(shadow_check):
    rc, report, _, _ = shadow_check
    assert rc == 1 and report.get("ok") is False, \
        f"(c) check exit {rc}, ok={report.get('ok')} (expected 1, false)"


def test_c_check_wrong_provider(shadow_check):
    wp = shadow_check[2]
    want = {"severity": "error", "soname": "libshadow.so.1", "picked": SHADOW,
            "via": "ld-library-path", "packaged": PACKAGED, "needed_by": [APP],
            "copies": sorted([PACKAGED, SHADOW])}
    got = [{k: p.get(k) for k in want} for p in wp]
    assert got == [want], f"(c) wrong-provider problems {got}, expected [{want}]"


def test_c_check_wrong_provider_has_a_reason(shadow_check):
    wp = shadow_check[2]
    assert wp and all(p.get("reason") for p in wp), \
        f"(c) each wrong-provider error should give a reason: {wp}"


def test_c_check_undefined_f_new(shadow_check):
    us = shadow_check[3]
    want_u = {"severity": "error", "library": "libshadow.so.1", "provider": SHADOW,
              "needed_by": [APP]}
    got_u = [{k: p.get(k) for k in want_u} for p in us]
    assert got_u == [want_u] and symbol_names(us[0]) == ["f_new"], \
        f"(c) undefined-symbol problems {got_u} symbols {[symbol_names(p) for p in us]}, " \
        f"expected [{want_u}] with [f_new]"


def test_c_check_f_new_fails_at_first_call(shadow_check):
    # The app is not linked with BIND_NOW: ld.so binds f_new at its first call (it printed
    # "started" first).
    us = shadow_check[3]
    assert us and us[0].get("symbols"), f"(c) no undefined-symbol f_new to read: {us}"
    fails = us[0]["symbols"][0].get("fails")
    assert fails == "at-first-call", f"(c) f_new fails {fails!r}, expected at-first-call"


def test_c_check_app_alone_copies_name_the_winner(rootlock, root):
    rc, report = checked(rootlock, root, ["--ld-library-path", OTHER_DIR, "/opt/app"], "(c)")
    wp = by_kind(report, "wrong-provider")
    print(f"(c) wrong-provider copies {[p.get('copies') for p in wp]}")
    assert rc == 1 and len(wp) == 1 and wp[0].get("picked") == SHADOW and \
        {PACKAGED, SHADOW} <= set(wp[0].get("copies", [])), \
        f"(c) check of /opt/app alone: exit {rc}, wrong-provider {wp}; expected one whose " \
        f"copies include the picked {SHADOW} and the packaged {PACKAGED}"


@pytest.mark.parametrize("args", [["/opt/app"], []], ids=["app", "whole-root"])
def test_c_check_without_ld_library_path_no_problem(rootlock, root, args):
    rc, report = checked(rootlock, root, args, "(c) without LD_LIBRARY_PATH,")
    about = about_app(by_kind(report, "wrong-provider") + by_kind(report, "undefined-symbol"))
    where = args[0] if args else "whole root"
    assert not about and (rc == 0 or not args), \
        f"(c) without LD_LIBRARY_PATH ({where}): exit {rc}, problems about {APP} {about}; " \
        f"expected none{' and exit 0' if args else ''}"


# -- e. when a missing symbol fails: at load or at the first call ---------------------------------

@pytest.fixture(scope="module")
def bind_runs(root):
    """{program: (exit code, output, "at-load" or "at-first-call")} of the real loader."""
    out = {}
    for name in BIND_PROGRAMS:
        proc = run_in_chroot(root, [f"{BIND_DIR}/bin/{name}"])
        text = (proc.stdout + proc.stderr).strip()
        out[name] = (proc.returncode, text,
                     "at-first-call" if text.startswith("started") else "at-load")
        print(f"(e) real loader, {name}: {out[name][2]} (exit {proc.returncode}: {text!r})")
    return out


@pytest.mark.parametrize("name", list(BIND_PROGRAMS))
def test_e_real_loader_fails_on_the_symbol(bind_runs, name):
    rc, out, _ = bind_runs[name]
    assert rc != 0 and f"undefined symbol: {BIND_PROGRAMS[name]}" in out, \
        f"(e) running {name}: exit {rc}, {out!r}; expected undefined symbol: " \
        f"{BIND_PROGRAMS[name]}"


@pytest.mark.parametrize("name", list(BIND_PROGRAMS))
def test_e_real_loader_fails_when_the_fixture_expects(bind_runs, name):
    real = bind_runs[name][2]
    assert real == BIND_EXPECTED[name], \
        f"(e) fixture: the real loader failed {name} {real}, expected {BIND_EXPECTED[name]}"


def test_e_check_fails_as_ld_so_did(rootlock, root, bind_runs):
    rc, report = checked(rootlock, root, [BIND_DIR], "(e)")
    got = {}
    for p in by_kind(report, "undefined-symbol"):
        for sym in p.get("symbols", []):
            for needer in p.get("needed_by", []):
                got[(os.path.basename(needer), sym.get("name"))] = sym.get("fails")
    print(f"(e) fails per (program, symbol): {sorted(got.items())}")
    want = {(name, BIND_PROGRAMS[name]): bind_runs[name][2] for name in BIND_PROGRAMS}
    assert rc == 1 and got == want, \
        f"(e) check exit {rc}, fails {got}, expected 1 and {want} (what the real loader did)"


# -- d. the real Debian root ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def debian_check(rootlock):
    return checked(rootlock, debian_root(), [], "(d) Debian 12 root,")


def test_d_debian_root_no_undefined_symbol_error(debian_check):
    errors = [p for p in by_kind(debian_check[1], "undefined-symbol")
              if p.get("severity") == "error"]
    assert not errors, "(d) undefined-symbol errors in the real Debian root: " + \
        "; ".join(json.dumps(p)[:300] for p in errors[:10])


def test_d_debian_root_counts(debian_check):
    # Sanity: the counts exist and are of the size of a minbase root (hundreds of objects).
    report = debian_check[1]
    objects, symbols = report.get("objects"), report.get("symbols")
    assert isinstance(objects, int) and objects > 300 and \
        isinstance(symbols, int) and symbols > objects, \
        f"(d) counts: objects {objects}, symbols {symbols}; expected over 300 objects and " \
        f"more symbols than objects"
