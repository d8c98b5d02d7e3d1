"""End-to-end: the command line's promises that the other tests do not exercise.

Usage: test_cli.py ROOTLOCK

- bad input gets one line on stderr and exit 2: an unknown option, a missing root, a corrupt
  tarball, an unknown --without distribution;
- the NVIDIA driver's libraries count as host-provided by default (a program needing
  libcuda.so.1 passes `check`, and `ldd` says host-provided), `--no-default-host-provides` turns
  that off, and `--host-provides` adds sonames;
- `--ld-library-path` is modelled: a copy named there is found by ldd;
- text output carries no colour escapes when not on a terminal;
- a file name that is not UTF-8 is reported, in text and JSON, not an internal error.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from fixtures.debian_root import copy_root


def run(rootlock, *args):
    return subprocess.run([rootlock, *args], capture_output=True, text=True, timeout=300)


def build_gpu_program(root, scratch):
    """/opt/gpu/prog needing libcuda.so.1 and libvendor.so.3, neither present in the root."""
    src = os.path.join(scratch, "src")
    os.makedirs(src)
    for soname in ("libcuda.so.1", "libvendor.so.3"):
        c = os.path.join(src, soname + ".c")
        with open(c, "w") as f:
            f.write("int f_%s(void) { return 1; }\n" % soname.split(".")[0])
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", os.path.join(src, soname),
                        "-Wl,-soname," + soname, c], check=True)
    main = os.path.join(src, "main.c")
    with open(main, "w") as f:
        f.write("int f_libcuda(void); int f_libvendor(void);\n"
                "int main(void) { return f_libcuda() + f_libvendor(); }\n")
    os.makedirs(os.path.join(root, "opt/gpu"))
    subprocess.run(["gcc", "-o", os.path.join(root, "opt/gpu/prog"), main,
                    os.path.join(src, "libcuda.so.1"), os.path.join(src, "libvendor.so.3")],
                   check=True)
    os.makedirs(os.path.join(root, "opt/vendor"))
    shutil.copy(os.path.join(src, "libvendor.so.3"), os.path.join(root, "opt/vendor"))


def main(argv):
    rootlock = os.path.abspath(argv[1])
    failures = []

    def expect(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    def one_line_exit_2(proc, what):
        lines = proc.stderr.splitlines()
        expect(proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("rootlock: "),
               f"{what}: exit {proc.returncode}, stderr {proc.stderr.strip()!r}")

    scratch = tempfile.mkdtemp(prefix="rootlock-cli-")
    try:
        one_line_exit_2(run(rootlock, "check", "--bogus"), "unknown option")
        one_line_exit_2(run(rootlock, "check", "--root", "/nonexistent/root"), "missing root")
        garbage = os.path.join(scratch, "garbage.tar.zst")
        with open(garbage, "wb") as f:
            f.write(b"\x28\xb5\x2f\xfd" + b"not really zstd" * 10)
        one_line_exit_2(run(rootlock, "check", "--root", garbage), "corrupt tarball")

        root = copy_root(scratch)
        build_gpu_program(root, scratch)
        one_line_exit_2(run(rootlock, "check", "--root", root, "--without", "no-such-dist",
                            "/opt"), "unknown --without distribution")

        proc = run(rootlock, "ldd", "--root", root, "--json", "/opt/gpu/prog")
        loaded = {e["soname"]: e for e in json.loads(proc.stdout)[0]["loaded"]}
        expect(loaded["libcuda.so.1"]["via"] == "host-provided" and
               loaded["libcuda.so.1"]["path"] is None, "ldd: libcuda.so.1 is host-provided")
        expect(loaded["libvendor.so.3"]["via"] == "not-found" and proc.returncode == 1,
               "ldd: libvendor.so.3 not found, exit 1")

        proc = run(rootlock, "ldd", "--root", root, "--json", "--ld-library-path", "/opt/vendor",
                   "/opt/gpu/prog")
        loaded = {e["soname"]: e for e in json.loads(proc.stdout)[0]["loaded"]}
        expect(loaded["libvendor.so.3"]["via"] == "ld-library-path" and
               loaded["libvendor.so.3"]["path"] == "/opt/vendor/libvendor.so.3" and
               proc.returncode == 0, f"ldd --ld-library-path finds it: {loaded['libvendor.so.3']}")

        def missing(*extra):
            proc = run(rootlock, "check", "--root", root, "--json", *extra, "/opt/gpu")
            report = json.loads(proc.stdout)
            return proc.returncode, sorted(p["soname"] for p in report["problems"]
                                           if p["kind"] == "missing-soname")

        expect(missing() == (1, ["libvendor.so.3"]), f"check: only libvendor missing: {missing()}")
        expect(missing("--host-provides", "libvendor.so.3") == (0, []),
               "check --host-provides libvendor.so.3 passes")
        expect(missing("--no-default-host-provides") == (1, ["libcuda.so.1", "libvendor.so.3"]),
               "check --no-default-host-provides: libcuda.so.1 missing too")

        # A file name that is not UTF-8 (Latin-1, as old archives have): reported in text and
        # in JSON (its byte as U+FFFD), never an internal error.
        latin1 = os.path.join(os.fsencode(root), b"opt/gpu/caf\xe9-prog")
        shutil.copy(os.path.join(root, "opt/gpu/prog"), latin1)
        for extra in ([], ["--json"]):
            proc = subprocess.run([rootlock, "check", "--root", root, *extra, "/opt/gpu"],
                                  capture_output=True, timeout=300)
            if extra:
                report = json.loads(proc.stdout.decode("utf-8", "strict")) if (
                    proc.returncode == 1) else {"problems": []}
                paths = [path for p in report["problems"] for path in p.get("needed_by", [])]
                expect("/opt/gpu/caf\ufffd-prog" in paths,
                       f"check --json: the Latin-1 name is reported: exit {proc.returncode}, "
                       f"{paths} {proc.stderr[-300:]!r}")
            else:
                # Text keeps the name's own bytes, as ls does when its output is not a terminal.
                expect(proc.returncode == 1 and b"caf\xe9-prog" in proc.stdout,
                       f"check: the Latin-1 name is reported: exit {proc.returncode}, "
                       f"{proc.stderr[-300:]!r}")
        os.unlink(latin1)

        proc = run(rootlock, "check", "--root", root, "/opt/gpu")
        expect("\x1b[" not in proc.stdout and "libvendor.so.3" in proc.stdout,
               "text output names the problem, without colour off a terminal")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
