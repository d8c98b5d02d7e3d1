"""End-to-end: the command line's promises that the other tests do not exercise.

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

import pytest

from fixtures.cli import run_rootlock
from fixtures.debian_root import copy_root


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


@pytest.fixture(scope="module")
def gpu_root(scratch):
    """A Debian root copy with /opt/gpu/prog (see build_gpu_program) and /opt/vendor's copy."""
    root = copy_root(scratch)
    build_gpu_program(root, scratch)
    return root


@pytest.fixture(scope="module")
def garbage(scratch):
    """A file that starts as zstd and is not."""
    path = os.path.join(scratch, "garbage.tar.zst")
    with open(path, "wb") as f:
        f.write(b"\x28\xb5\x2f\xfd" + b"not really zstd" * 10)
    return path


BAD_INPUT = {
    "unknown-option": ["check", "--bogus"],
    "missing-root": ["check", "--root", "/nonexistent/root"],
    "corrupt-tarball": ["check", "--root", "{garbage}"],
    "unknown-without-dist": ["check", "--root", "{gpu_root}", "--without", "no-such-dist",
                             "/opt"],
}


@pytest.mark.parametrize("args", list(BAD_INPUT.values()), ids=list(BAD_INPUT))
def test_bad_input_one_line_exit_2(rootlock, request, args):
    # Only the cases that name a fixture build it, so `-k unknown-option` needs no root.
    args = [request.getfixturevalue(a[1:-1]) if a.startswith("{") else a for a in args]
    proc = run_rootlock(rootlock, *args, timeout=300)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("rootlock: "), \
        f"exit {proc.returncode}, stderr {proc.stderr.strip()!r}"


def ldd_loaded(rootlock, root, *extra):
    proc = run_rootlock(rootlock, "ldd", "--root", root, "--json", *extra, "/opt/gpu/prog",
                        timeout=300)
    return proc, {e["soname"]: e for e in json.loads(proc.stdout)[0]["loaded"]}


def test_ldd_libcuda_host_provided_libvendor_not_found(rootlock, gpu_root):
    proc, loaded = ldd_loaded(rootlock, gpu_root)
    assert loaded["libcuda.so.1"]["via"] == "host-provided" and \
        loaded["libcuda.so.1"]["path"] is None, f"libcuda.so.1: {loaded['libcuda.so.1']}"
    assert loaded["libvendor.so.3"]["via"] == "not-found" and proc.returncode == 1, \
        f"libvendor.so.3 not found, exit 1: exit {proc.returncode}, {loaded['libvendor.so.3']}"


def test_ldd_ld_library_path_finds_the_copy(rootlock, gpu_root):
    proc, loaded = ldd_loaded(rootlock, gpu_root, "--ld-library-path", "/opt/vendor")
    assert loaded["libvendor.so.3"]["via"] == "ld-library-path" and \
        loaded["libvendor.so.3"]["path"] == "/opt/vendor/libvendor.so.3" and \
        proc.returncode == 0, f"exit {proc.returncode}, {loaded['libvendor.so.3']}"


HOST_PROVIDES = {
    "default-only-libvendor-missing": ([], (1, ["libvendor.so.3"])),
    "host-provides-libvendor-passes": (["--host-provides", "libvendor.so.3"], (0, [])),
    "no-default-host-provides-libcuda-missing-too": (
        ["--no-default-host-provides"], (1, ["libcuda.so.1", "libvendor.so.3"])),
}


@pytest.mark.parametrize("extra, want", list(HOST_PROVIDES.values()), ids=list(HOST_PROVIDES))
def test_check_host_provided_sonames(rootlock, gpu_root, extra, want):
    proc = run_rootlock(rootlock, "check", "--root", gpu_root, "--json", *extra, "/opt/gpu",
                        timeout=300)
    report = json.loads(proc.stdout)
    got = proc.returncode, sorted(p["soname"] for p in report["problems"]
                                  if p["kind"] == "missing-soname")
    assert got == want, f"(exit, missing sonames) {got}"


@pytest.fixture
def latin1_prog(gpu_root):
    """A file name that is not UTF-8 (Latin-1, as old archives have), for one test."""
    latin1 = os.path.join(os.fsencode(gpu_root), b"opt/gpu/caf\xe9-prog")
    shutil.copy(os.path.join(gpu_root, "opt/gpu/prog"), latin1)
    yield latin1
    os.unlink(latin1)


def check_bytes(rootlock, root, *extra):
    return subprocess.run([rootlock, "check", "--root", root, *extra, "/opt/gpu"],
                          capture_output=True, timeout=300)


def test_latin1_name_reported_in_json(rootlock, gpu_root, latin1_prog):
    # In JSON its byte is U+FFFD, never an internal error.
    proc = check_bytes(rootlock, gpu_root, "--json")
    report = json.loads(proc.stdout.decode("utf-8", "strict")) if (
        proc.returncode == 1) else {"problems": []}
    paths = [path for p in report["problems"] for path in p.get("needed_by", [])]
    assert "/opt/gpu/caf\ufffd-prog" in paths, \
        f"exit {proc.returncode}, {paths} {proc.stderr[-300:]!r}"


def test_latin1_name_reported_in_text(rootlock, gpu_root, latin1_prog):
    # Text keeps the name's own bytes, as ls does when its output is not a terminal.
    proc = check_bytes(rootlock, gpu_root)
    assert proc.returncode == 1 and b"caf\xe9-prog" in proc.stdout, \
        f"exit {proc.returncode}, {proc.stderr[-300:]!r}"


def test_text_names_the_problem_without_colour_off_a_terminal(rootlock, gpu_root):
    proc = run_rootlock(rootlock, "check", "--root", gpu_root, "/opt/gpu", timeout=300)
    assert "\x1b[" not in proc.stdout and "libvendor.so.3" in proc.stdout, proc.stdout[-600:]


@pytest.mark.parametrize("command", ["check", "ldd"])
def test_offline_commands_do_not_load_libcurl(rootlock, gpu_root, command):
    """check and ldd never open a socket: libcurl, and the two dozen libraries it brings, is
    opened only when a command first needs the network, so the loader never maps it here."""
    target = "/opt" if command == "check" else "/opt/gpu/prog"
    proc = run_rootlock(rootlock, command, "--root", gpu_root, target,
                        env=dict(os.environ, LD_DEBUG="files"))
    assert "file=libc.so.6" in proc.stderr, "LD_DEBUG did not reach the loader"
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    loaded = [line for line in proc.stderr.splitlines() if "libcurl" in line]
    assert not loaded, f"rootlock {command} loaded libcurl: {loaded[:3]}"
