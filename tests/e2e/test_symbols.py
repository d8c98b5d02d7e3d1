"""End-to-end: `rootlock check` binds undefined symbols as glibc does, against the real loader.

Usage: test_symbols.py ROOTLOCK   (or --fixture-only: build the fixtures and run only the real
loader's side in the chroot, without rootlock)

One throwaway copy of the Debian 12 root gets four fixtures, each in its own directory, each
checked by path (c also over the whole root, as the LD_LIBRARY_PATH of a container applies to
everything); the real loader in the chroot is the referee for every verdict:
  a. torch ABI (fixtures/torch_abi.py): torchfix._ext built against fixture torch build 1.
     With build 2 in torchfix/lib, `check /opt/venv` exits 1 with one undefined-symbol problem
     (library libc10.so, needed_by the extension, the demangled changed signature), and the
     real `import torchfix._ext` fails on a mangled name check listed. With build 1: exit 0,
     no undefined-symbol problem, and the import works.
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
"""
import json
import os
import shutil
import sys
import tempfile

from fixtures import elf_stub, referee, torch_abi
from fixtures.debian_root import copy_root, debian_root, run_in_chroot
from fixtures.failures import Failures
from fixtures.check_report import by_kind, run_check, summary

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


# ---------------------------------------------------------------------------------------------
# a. The torch ABI.

def import_ext(root):
    proc = run_in_chroot(root, [torch_abi.VENV + "/bin/python3", "-c",
                                "import torchfix._ext as e; print('numel', e.numel)"])
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def case_a_broken(fail, rootlock, root, info):
    rc, out = import_ext(root)
    needle = "undefined symbol: " + torch_abi.CHANGED_MANGLED
    fail.expect(rc != 0 and needle in out,
                f"(a) build 2: import torchfix._ext gave exit {rc}, {out!r}; expected {needle!r}")
    print(f"(a) build 2, real import: exit {rc}: {out.splitlines()[-1] if out else ''}")
    if not rootlock:
        return
    rc, report, raw = run_check(rootlock, root, [torch_abi.VENV])
    if not fail.expect(report is not None, f"(a) check printed no JSON:\n{raw}"):
        return
    undefined = by_kind(report, "undefined-symbol")
    print(f"(a) build 2, check: exit {rc}, ok={report.get('ok')}, {report.get('objects')} "
          f"objects, {report.get('symbols')} symbols; problems: {summary(report)}")
    for p in undefined:
        print("(a)   " + json.dumps(p, sort_keys=True))
    fail.expect(rc == 1 and report.get("ok") is False,
                f"(a) build 2: check exit {rc}, ok={report.get('ok')} (expected 1, false)")
    if not fail.expect(len(undefined) == 1,
                       f"(a) build 2: expected one undefined-symbol problem, got "
                       f"{len(undefined)}:\n{raw}"):
        return
    p = undefined[0]
    lib_dir = f"{info['package']}/lib"
    fail.expect(p.get("severity") == "error", f"(a) severity {p.get('severity')!r}, not error")
    fail.expect(p.get("library") == torch_abi.CHANGED_LIBRARY,
                f"(a) library {p.get('library')!r}, expected {torch_abi.CHANGED_LIBRARY!r}")
    fail.expect(p.get("provider") == f"{lib_dir}/{torch_abi.CHANGED_LIBRARY}",
                f"(a) provider {p.get('provider')!r}, expected "
                f"{lib_dir}/{torch_abi.CHANGED_LIBRARY}")
    fail.expect(p.get("needed_by") == [info["extension"]],
                f"(a) needed_by {p.get('needed_by')}, expected [{info['extension']}]")
    fail.expect(p.get("count") == 1 and symbol_names(p) == [torch_abi.CHANGED_MANGLED],
                f"(a) count {p.get('count')}, symbols {symbol_names(p)}; expected exactly "
                f"[{torch_abi.CHANGED_MANGLED}]")
    sym = (p.get("symbols") or [{}])[0]
    fail.expect(sym.get("demangled") == torch_abi.CHANGED_DEMANGLED,
                f"(a) demangled {sym.get('demangled')!r}, expected {torch_abi.CHANGED_DEMANGLED!r}")
    fail.expect(sym.get("version") == "", f"(a) version {sym.get('version')!r}, expected ''")
    # CPython dlopens extensions with RTLD_NOW (sys.getdlopenflags()): the import fails at load.
    fail.expect(sym.get("fails") == "at-load",
                f"(a) fails {sym.get('fails')!r}: python imports with RTLD_NOW, so at-load")
    fail.expect(torch_abi.CHANGED_MANGLED in out and torch_abi.CHANGED_MANGLED in symbol_names(p),
                f"(a) the import's undefined symbol is not one check listed: {out!r}")


def case_a_intact(fail, rootlock, root):
    rc, out = import_ext(root)
    fail.expect(rc == 0 and "numel 6" in out,
                f"(a) build 1: import torchfix._ext gave exit {rc}, {out!r}")
    print(f"(a) build 1, real import: exit {rc}: {out}")
    if not rootlock:
        return
    rc, report, raw = run_check(rootlock, root, [torch_abi.VENV])
    if not fail.expect(report is not None, f"(a) check printed no JSON:\n{raw}"):
        return
    print(f"(a) build 1, check: exit {rc}, ok={report.get('ok')}, {report.get('objects')} "
          f"objects, {report.get('symbols')} symbols; problems: {summary(report)}")
    fail.expect(rc == 0 and report.get("ok") is True and not by_kind(report, "undefined-symbol"),
                f"(a) build 1: check exit {rc}, ok={report.get('ok')}:\n{raw}")
    fail.expect(report.get("objects") == 3,
                f"(a) build 1: {report.get('objects')} objects, expected 3 (ext, libc10, "
                f"libtorch_cpu)")


def case_a(fail, rootlock, root):
    info = torch_abi.install(root, 2)
    ext_undefined = torch_abi.dynamic_symbols(host(root, info["extension"]), defined=False)
    new_c10 = torch_abi.dynamic_symbols(host(root, info["libs"]["libc10.so"]), defined=True)
    fail.expect(torch_abi.CHANGED_MANGLED in ext_undefined and
                torch_abi.CHANGED_MANGLED not in new_c10 and torch_abi.NEW_MANGLED in new_c10,
                f"(a) fixture: the extension imports {sorted(ext_undefined)}, build 2's "
                f"libc10.so exports {sorted(new_c10)}")
    case_a_broken(fail, rootlock, root, info)
    torch_abi.install(root, 1)
    case_a_intact(fail, rootlock, root)


# ---------------------------------------------------------------------------------------------
# b. A GLIBC_2.99 requirement against the real libc.

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


def case_b(fail, rootlock, root, scratch):
    build_glibc299(root, scratch)
    ref = referee.ld_so_list(root, GLIBC_PROG)
    errors = sorted(ref.version_errors, key=str)
    fail.expect([(v, os.path.normpath(n)) for v, _, n in errors] == [(GLIBC_VERSION, GLIBC_LIB)],
                f"(b) ld.so version errors {errors}, expected {GLIBC_VERSION} required by "
                f"{GLIBC_LIB}: {ref.raw!r}")
    for version, provider, needed_by in errors:
        print(f"(b) ld.so: {provider}: version `{version}' not found (required by {needed_by})")
    proc = run_in_chroot(root, [GLIBC_PROG])
    out = (proc.stdout + proc.stderr).strip()
    fail.expect(proc.returncode != 0 and f"version `{GLIBC_VERSION}' not found" in out,
                f"(b) running {GLIBC_PROG}: exit {proc.returncode}, {out!r}")
    print(f"(b) running {GLIBC_PROG}: exit {proc.returncode}: {out}")
    if not rootlock:
        return
    rc, report, raw = run_check(rootlock, root, [os.path.dirname(GLIBC_DIR)])
    if not fail.expect(report is not None, f"(b) check printed no JSON:\n{raw}"):
        return
    print(f"(b) check: exit {rc}, ok={report.get('ok')}; problems: {summary(report)}")
    for p in report.get("problems", []):
        print("(b)   " + json.dumps(p, sort_keys=True))
    fail.expect(rc == 1 and report.get("ok") is False,
                f"(b) check exit {rc}, ok={report.get('ok')} (expected 1, false)")
    mv = by_kind(report, "missing-version")
    want = {"soname": "libc.so.6", "version": GLIBC_VERSION, "needed_by": [GLIBC_LIB],
            "provider": REAL_LIBC, "severity": "error"}
    got = [{k: p.get(k) for k in want} for p in mv]
    fail.expect(got == [want], f"(b) missing-version problems {got}, expected [{want}]")


# ---------------------------------------------------------------------------------------------
# c. LD_LIBRARY_PATH shadows the packaged copy.

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


def run_app(root, ld_library_path):
    env = {"LD_LIBRARY_PATH": ld_library_path} if ld_library_path else None
    proc = run_in_chroot(root, [APP], env=env)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def case_c_loader(fail, root, hwcaps):
    """The real loader's side: which copy it picks, and whether the app runs."""
    picks, normal = {}, {}
    for llp in (None, OTHER_DIR):
        ref = referee.ld_so_list(root, APP, ld_library_path=llp)
        picks[llp] = dict(ref.loaded).get("libshadow.so.1")
        normal[llp] = os.path.normpath(picks[llp]) if picks[llp] else None
        rc, out = run_app(root, llp)
        print(f"(c) ld.so, LD_LIBRARY_PATH={llp}: libshadow.so.1 => {picks[llp]}; app exit "
              f"{rc}: {out.splitlines()[-1] if out else ''}")
        if llp is None:
            fail.expect(rc == 0 and out == "started",
                        f"(c) the app without LD_LIBRARY_PATH: exit {rc}, {out!r}")
        else:
            fail.expect(rc != 0 and out.startswith("started") and "undefined symbol: f_new" in out,
                        f"(c) the app with LD_LIBRARY_PATH: exit {rc}, {out!r}; expected it to "
                        "start, then fail binding f_new")
    fail.expect(normal == {None: PACKAGED, OTHER_DIR: SHADOW},
                f"(c) ld.so picked {picks}, fixture expects {PACKAGED} then {SHADOW}")
    return picks


def case_c_ldd(fail, rootlock, root, hwcaps, picks):
    extra = ["--hwcaps", ",".join(hwcaps)] if hwcaps else []
    for llp in (None, OTHER_DIR):
        args = extra + (["--ld-library-path", llp] if llp else [])
        got = referee.rootlock_ldd(rootlock, root, [APP], args)[APP]
        ref = referee.ld_so_list(root, APP, ld_library_path=llp)
        diffs = referee.compare_listing(ref, got)
        entry = referee.find_entry(got, "libshadow.so.1") or {}
        print(f"(c) rootlock ldd, --ld-library-path {llp}: libshadow.so.1 => "
              f"{entry.get('path')} via {entry.get('via')}")
        fail.expect(not diffs and entry.get("path") == picks[llp],
                    f"(c) rootlock ldd (LD_LIBRARY_PATH={llp}) differs from ld.so: {diffs}; "
                    f"libshadow.so.1 => {entry.get('path')}, ld.so {picks[llp]}")


def about_app(problems):
    return [p for p in problems if APP in p.get("needed_by", [])]


def case_c_check(fail, rootlock, root):
    """The whole root with LD_LIBRARY_PATH (the other fixtures' problems are left out by
    needed_by), then /opt/app alone, with and without it."""
    rc, report, raw = run_check(rootlock, root, ["--ld-library-path", OTHER_DIR])
    if not fail.expect(report is not None, f"(c) check printed no JSON:\n{raw}"):
        return
    wp = about_app(by_kind(report, "wrong-provider"))
    us = about_app(by_kind(report, "undefined-symbol"))
    print(f"(c) check --ld-library-path {OTHER_DIR} (whole root): exit {rc}; about {APP}: "
          f"{len(wp)} wrong-provider, {len(us)} undefined-symbol")
    for p in wp + us:
        print("(c)   " + json.dumps(p, sort_keys=True))
    fail.expect(rc == 1 and report.get("ok") is False,
                f"(c) check exit {rc}, ok={report.get('ok')} (expected 1, false)")
    want = {"severity": "error", "soname": "libshadow.so.1", "picked": SHADOW,
            "via": "ld-library-path", "packaged": PACKAGED, "needed_by": [APP],
            "copies": sorted([PACKAGED, SHADOW])}
    got = [{k: p.get(k) for k in want} for p in wp]
    fail.expect(got == [want], f"(c) wrong-provider problems {got}, expected [{want}]")
    fail.expect(all(p.get("reason") for p in wp), "(c) a wrong-provider error has no reason")
    want_u = {"severity": "error", "library": "libshadow.so.1", "provider": SHADOW,
              "needed_by": [APP]}
    got_u = [{k: p.get(k) for k in want_u} for p in us]
    fail.expect(got_u == [want_u] and symbol_names(us[0]) == ["f_new"],
                f"(c) undefined-symbol problems {got_u} symbols "
                f"{[symbol_names(p) for p in us]}, expected [{want_u}] with [f_new]")
    if us and us[0].get("symbols"):
        # The app is not linked with BIND_NOW: ld.so binds f_new at its first call (it printed
        # "started" first).
        fails = us[0]["symbols"][0].get("fails")
        fail.expect(fails == "at-first-call", f"(c) f_new fails {fails!r}, expected at-first-call")

    # Checking /opt/app alone: the same verdict, and the copies still name the one that won.
    rc, report, raw = run_check(rootlock, root, ["--ld-library-path", OTHER_DIR, "/opt/app"])
    if not fail.expect(report is not None, f"(c) check printed no JSON:\n{raw}"):
        return
    wp = by_kind(report, "wrong-provider")
    print(f"(c) check --ld-library-path {OTHER_DIR} /opt/app: exit {rc}; problems: "
          f"{summary(report)}; wrong-provider copies {[p.get('copies') for p in wp]}")
    fail.expect(rc == 1 and len(wp) == 1 and wp[0].get("picked") == SHADOW and
                {PACKAGED, SHADOW} <= set(wp[0].get("copies", [])),
                f"(c) check of /opt/app alone: exit {rc}, wrong-provider {wp}; expected one "
                f"whose copies include the picked {SHADOW} and the packaged {PACKAGED}")

    for args in (["/opt/app"], []):
        rc, report, raw = run_check(rootlock, root, args)
        if not fail.expect(report is not None, f"(c) check printed no JSON:\n{raw}"):
            return
        about = about_app(by_kind(report, "wrong-provider") + by_kind(report, "undefined-symbol"))
        where = args[0] if args else "whole root"
        print(f"(c) check without LD_LIBRARY_PATH ({where}): exit {rc}; problems about {APP}: "
              f"{len(about)}")
        fail.expect(not about and (rc == 0 or not args),
                    f"(c) without LD_LIBRARY_PATH ({where}): exit {rc}, problems {about}")


def case_c(fail, rootlock, root, scratch):
    build_shadow(root, scratch)
    hwcaps, _ = referee.ld_so_hwcaps(root)
    picks = case_c_loader(fail, root, hwcaps)
    if rootlock:
        case_c_ldd(fail, rootlock, root, hwcaps, picks)
        case_c_check(fail, rootlock, root)


# ---------------------------------------------------------------------------------------------
# e. When a missing symbol fails: at load or at the first call.

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


def case_e(fail, rootlock, root, scratch):
    build_binding(root, scratch)
    real = {}
    for name in BIND_PROGRAMS:
        proc = run_in_chroot(root, [f"{BIND_DIR}/bin/{name}"])
        out = (proc.stdout + proc.stderr).strip()
        real[name] = "at-first-call" if out.startswith("started") else "at-load"
        fail.expect(proc.returncode != 0 and f"undefined symbol: {BIND_PROGRAMS[name]}" in out,
                    f"(e) running {name}: exit {proc.returncode}, {out!r}")
        print(f"(e) real loader, {name}: {real[name]} (exit {proc.returncode}: {out!r})")
    fail.expect(real == BIND_EXPECTED, f"(e) fixture: the real loader failed {real}, "
                f"expected {BIND_EXPECTED}")
    if not rootlock:
        return
    rc, report, raw = run_check(rootlock, root, [BIND_DIR])
    if not fail.expect(report is not None, f"(e) check printed no JSON:\n{raw}"):
        return
    got = {}
    for p in by_kind(report, "undefined-symbol"):
        for sym in p.get("symbols", []):
            for needer in p.get("needed_by", []):
                got[(os.path.basename(needer), sym.get("name"))] = sym.get("fails")
    print(f"(e) check: exit {rc}; fails per (program, symbol): {sorted(got.items())}")
    want = {(name, BIND_PROGRAMS[name]): real[name] for name in BIND_PROGRAMS}
    fail.expect(rc == 1 and got == want, f"(e) check exit {rc}, fails {got}, expected {want} "
                "(what the real loader did)")


# ---------------------------------------------------------------------------------------------
# d. The real Debian root.

def case_d(fail, rootlock):
    root = debian_root()
    rc, report, raw = run_check(rootlock, root, [])
    if not fail.expect(report is not None, f"(d) check printed no JSON:\n{raw}"):
        return
    errors = [p for p in by_kind(report, "undefined-symbol") if p.get("severity") == "error"]
    print(f"(d) Debian 12 root: exit {rc}, ok={report.get('ok')}, objects checked: "
          f"{report.get('objects')}, symbols checked: {report.get('symbols')}; problems: "
          f"{summary(report)}")
    for p in by_kind(report, "undefined-symbol"):
        print("(d)   " + json.dumps(p, sort_keys=True)[:400])
    fail.expect(not errors, "(d) undefined-symbol errors in the real Debian root: "
                + "; ".join(json.dumps(p)[:300] for p in errors[:10]))
    # Sanity: the counts exist and are of the size of a minbase root (hundreds of objects).
    fail.expect(isinstance(report.get("objects"), int) and report["objects"] > 300 and
                isinstance(report.get("symbols"), int) and report["symbols"] > report["objects"],
                f"(d) counts: objects {report.get('objects')}, symbols {report.get('symbols')}")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rootlock = None if argv[1] == "--fixture-only" else os.path.abspath(argv[1])
    fail = Failures()
    parent = tempfile.mkdtemp(prefix="rootlock-symbols-")
    try:
        root = copy_root(parent)
        scratch = os.path.join(parent, "scratch")
        os.makedirs(scratch)
        case_a(fail, rootlock, root)
        case_b(fail, rootlock, root, scratch)
        case_c(fail, rootlock, root, scratch)
        case_e(fail, rootlock, root, scratch)
        if rootlock:
            case_d(fail, rootlock)
    finally:
        if os.environ.get("ROOTLOCK_KEEP_ROOT"):
            print("kept", parent)
        else:
            shutil.rmtree(parent, ignore_errors=True)
    print(f"{len(fail.items)} failures" if fail.items else "all expectations met")
    return 1 if fail.items else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
