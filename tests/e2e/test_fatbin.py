"""End-to-end: GPU architecture coverage from real fatbins (issue 31).

Libraries compiled by nvcc 13.0 with chosen -gencode lists (fixtures/fatbin_libs.py: the flags
are the referee) are put in a copy of the Debian root and checked with `--gpu` for the GPUs
6.1, 7.5, 8.6, 9.0 and 12.0 and the fixture's own table:
  a. `check --json` lists each library's device code exactly as the flags asked (cubins and
     PTX, arch-specific and family variants), compressed or not;
  b. each GPU's verdict follows CUDA's run rules, computed here independently: a cubin of the same
     major with a minor at most the GPU's (an `a` cubin only on its exact capability), else PTX at
     most the GPU's (`a` PTX exactly, `f` PTX within its major) is a `gpu-arch-ptx-only` warning,
     else `gpu-arch-missing` ("no kernel image is available for execution on the device");
  c. the real CUDA 13 libraries in /usr/local/cuda-13.0/lib64 are read without error and all run
     on 9.0: cuFFT's kernels are fatbins in .ldata (loaded through the module API), and a module
     without a kernel (libcufftw's, or nvcc's for a .cu file without one) is no device code;
  d. `ldd` and `why` show the architectures of a library that another one loads;
  e. the same root as a tarball, read once: the device code read as it streams equals the
     directory's, verdicts and all.
Skipped, with the reason, where nvcc or CUDA 13 is absent.
"""
import json
import os
import re
import subprocess

import pytest

from fixtures import fatbin_libs
from fixtures.cli import run_rootlock
from fixtures.debian_root import copy_root
from fixtures.elf_stub import StubSpec, build_stubs

GPUS = ["6.1", "7.5", "8.6", "9.0", "12.0"]
LIBS = "/opt/fatbin"
CUDA13 = "/usr/local/cuda-13.0/lib64"


def parse(name):
    """"sm_90a" -> (ptx, major, minor, variant)."""
    m = re.match(r"^(sm|compute)_(\d+)(\d)([af]?)$", name)
    return m.group(1) == "compute", int(m.group(2)), int(m.group(3)), m.group(4)


def runs_on(name, gpu):
    ptx, major, minor, variant = parse(name)
    g_major, g_minor = (int(x) for x in gpu.split("."))
    if variant == "a":
        return (major, minor) == (g_major, g_minor)
    if not ptx or variant == "f":
        return major == g_major and minor <= g_minor
    return (major, minor) <= (g_major, g_minor)


def expected_verdict(architectures, gpu):
    if any(runs_on(n, gpu) for n in architectures if n.startswith("sm_")):
        return "cubin"
    if any(runs_on(n, gpu) for n in architectures if n.startswith("compute_")):
        return "ptx_jit"
    return "none"


@pytest.fixture(scope="module")
def root(scratch):
    reason = fatbin_libs.unavailable_reason()
    if reason:
        pytest.skip(reason)
    dest = copy_root(scratch)
    libs = os.path.join(dest, LIBS.lstrip("/"))
    os.makedirs(libs)
    for name, case in fatbin_libs.CASES.items():
        fatbin_libs.build(libs, name, case.gencode, compress=case.compress,
                          compress_mode=case.compress_mode, extra=case.extra)
    # A .cu file without a kernel, as a cubin alone: an empty module, as the real libcufftw.so.12
    # carries, which nothing can fail to launch (nvcc's default would add compressed PTX, whose
    # emptiness cannot be told without decompressing it).
    source = os.path.join(libs, "nokernels.cu")
    with open(source, "w") as f:
        f.write('extern "C" int nokernels_answer(void) { return 42; }\n')
    subprocess.run([fatbin_libs.nvcc(), "-shared", "-Xcompiler", "-fPIC", "-gencode",
                    "arch=compute_75,code=sm_75", source, "-o",
                    os.path.join(libs, "libnokernels.so")], check=True, capture_output=True)
    build_stubs([StubSpec(out=os.path.join(libs, "consumer", "libconsumer.so"),
                          soname="libconsumer.so", needed=("libmixed.so",), runpath=LIBS,
                          tag="loads libmixed")])
    return dest


def lib_path(name):
    return f"{LIBS}/lib{name}.so"


@pytest.fixture(scope="module")
def report(rootlock, root):
    gpus = sorted(set(GPUS) | {g for table in fatbin_libs.COVERAGE.values() for g in table},
                  key=lambda g: tuple(int(x) for x in g.split(".")))
    argv = ["check", "--root", root, "--json", LIBS]
    for gpu in gpus:
        argv += ["--gpu", gpu]
    proc = run_rootlock(rootlock, *argv, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return gpus, json.loads(proc.stdout)


def test_a_device_code_is_what_the_flags_asked(report):
    _, out = report
    for name, case in fatbin_libs.CASES.items():
        code = out["device_code"].get(lib_path(name))
        assert code is not None, f"{name}: no device code reported ({sorted(out['device_code'])})"
        found = set(code["cubin"]) | set(code["ptx"])
        print(f"(a) {name}: {sorted(found)}{' compressed' if code['compressed'] else ''}")
        assert found == case.architectures, f"{name}: {found} != {case.architectures}"
        has_cubin = any(n.startswith("sm_") for n in found)
        has_ptx = any(n.startswith("compute_") for n in found)
        assert code["compressed"] == bool((has_cubin and case.cubin_compression) or
                                          (has_ptx and case.ptx_compression))


def test_b_verdicts_follow_cudas_run_rules(report):
    gpus, out = report
    verdicts = {}
    for problem in out["problems"]:
        kind = {"gpu-arch-missing": "none", "gpu-arch-ptx-only": "ptx_jit"}.get(problem["kind"])
        if kind:
            for obj in problem["objects"]:
                verdicts[(obj["path"], problem["gpu"])] = kind
    for name, case in fatbin_libs.CASES.items():
        row = []
        for gpu in gpus:
            got = verdicts.get((lib_path(name), gpu), "cubin")
            want = expected_verdict(case.architectures, gpu)
            row.append(f"{gpu}:{got}")
            assert got == want, f"{name} on {gpu}: rootlock says {got}, the rules {want}"
            table = fatbin_libs.COVERAGE.get(name, {}).get(gpu)
            if table:
                assert got == table.split()[0], f"{name} on {gpu}: {got}, fixture table {table}"
        print(f"(b) {name}: {' '.join(row)}")
    assert lib_path("nokernels") not in out["device_code"], "an empty module is no device code"
    assert not any(o["path"] == lib_path("nokernels") for p in out["problems"]
                   for o in p.get("objects", []))
    missing = [p for p in out["problems"] if p["kind"] == "gpu-arch-missing"]
    assert missing and all(p["problem"] == "no kernel image is available for execution on the "
                           "device" and p["severity"] == "error" for p in missing)
    assert out["ok"] is False


def test_b_text_names_the_gpu_and_what_each_library_holds(rootlock, root):
    proc = run_rootlock(rootlock, "check", "--root", root, LIBS, "--gpu", "6.1")
    assert proc.returncode == 1
    assert "GPU 6.1 sm_61 (--gpu 6.1): no kernel image is available for execution on the " \
           "device" in proc.stdout, proc.stdout
    assert f"{lib_path('mixed')} (holds sm_75 sm_86 compute_86)" in proc.stdout, proc.stdout


def test_c_real_cuda13_libraries_are_read(rootlock):
    if not os.path.isdir(CUDA13):
        pytest.skip(f"{CUDA13} is absent: the real CUDA 13 libraries are not on this machine")
    proc = run_rootlock(rootlock, "check", "--json", CUDA13, "--gpu", "9.0", timeout=300)
    out = json.loads(proc.stdout)
    notes = [n for n in out["notes"] if "device code not read" in n]
    real = os.path.realpath(CUDA13)  # lib64 is a link to targets/x86_64-linux/lib
    with_code = {p: c for p, c in out["device_code"].items() if p.startswith(real)}
    print(f"(c) {len(with_code)} CUDA 13 libraries with device code; e.g. " +
          ", ".join(f"{os.path.basename(p)}: {len(c['cubin'])} cubins"
                    for p, c in sorted(with_code.items())[:4]))
    assert not notes, notes
    assert len(with_code) >= 10
    # The toolkit's link stubs (lib64/stubs/libcuda.so) are not a problem by themselves: no
    # search path reaches them (NVIDIA's own images carry them).
    assert not [p for p in out["problems"] if p["kind"] == "driver-library-in-image"], \
        out["problems"]
    blas = [c for p, c in with_code.items() if "libcublasLt.so" in p]
    assert blas and "sm_90" in blas[0]["cubin"] and blas[0]["compressed"]
    # cuFFT keeps its kernels in .ldata (loaded through the module API), beside one empty module
    # in .nv_fatbin; libcufftw's only module is empty.
    fft = [c for p, c in with_code.items() if "libcufft.so" in p]
    assert fft and {"sm_90", "compute_90"} <= set(fft[0]["cubin"]) | set(fft[0]["ptx"]), fft
    assert not [p for p in with_code if "libcufftw.so" in p]
    # Every real CUDA 13 library runs on an H100 (9.0).
    assert not [p for p in out["problems"] if p["kind"].startswith("gpu-arch")], out["problems"]


def test_d_ldd_and_why_show_the_architectures(rootlock, root):
    consumer = f"{LIBS}/consumer/libconsumer.so"
    proc = run_rootlock(rootlock, "ldd", "--root", root, "--json", consumer)
    loaded = {item["soname"]: item for item in json.loads(proc.stdout)[0]["loaded"]}
    assert set(loaded["libmixed.so"]["device_code"]["cubin"]) == {"sm_75", "sm_86"}
    assert loaded["libmixed.so"]["device_code"]["ptx"] == ["compute_86"]
    text = run_rootlock(rootlock, "ldd", "--root", root, consumer).stdout
    assert "[sm_75 sm_86 compute_86]" in text, text
    why = json.loads(run_rootlock(rootlock, "why", "--root", root, "--json", "libmixed.so",
                                  "--path", LIBS).stdout)
    assert why["device_code"][lib_path("mixed")]["ptx"] == ["compute_86"], why
    print(f"(d) ldd: {[line.strip() for line in text.splitlines() if 'libmixed' in line]}")


def test_e_a_tarball_read_once_gives_the_same_verdicts(rootlock, root, report, scratch):
    """A rootfs tarball is read once, front to back: its device code is read as it streams
    (gpu/fatbin_stream) and must equal what the directory gave through the section tables,
    verdicts and all; before, `check --gpu` of a tarball said in a note that it read nothing."""
    gpus, from_directory = report
    tarball = os.path.join(scratch, "fatbin-root.tar")
    subprocess.run(["tar", "--sort=name", "-C", root, "-cf", tarball, "."], check=True)
    argv = ["check", "--root", tarball, "--json", LIBS]
    for gpu in gpus:
        argv += ["--gpu", gpu]
    proc = run_rootlock(rootlock, *argv, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    from_tarball = json.loads(proc.stdout)
    assert not [n for n in from_tarball["notes"] if "device code" in n], from_tarball["notes"]
    assert from_tarball["device_code"] == from_directory["device_code"]
    coverage = ("gpu-arch-missing", "gpu-arch-ptx-only")
    assert [p for p in from_tarball["problems"] if p["kind"] in coverage] == \
        [p for p in from_directory["problems"] if p["kind"] in coverage]
