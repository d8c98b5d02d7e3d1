"""End-to-end: the recipe's [cuda] gpus proven by `lock` before any host exists, the lock's record
of each wheel's GPU architectures, and `diff` naming what a new build drops.

Wheels hold real fatbins compiled by nvcc 13.0 for chosen -gencode lists (fixtures/fatbin_libs:
the flags are the referee), served on 127.0.0.1 over the real Debian base tarball:
  kernels 1.0: sm_75, sm_86 and compute_86 (the "mixed" case);
  kernels 2.0: sm_86, sm_90 and compute_90: drops sm_75 and compute_86;
  curand 10.0: NVIDIA's real libcurand.so.10 from /usr/local/cuda-13.0, when present.
Then:
  a. `lock` with gpus 7.5 and 8.6 passes; the lock records the target's GPUs and each wheel's
     architectures, which equal what the flags asked and what `check --json` reads from the same
     library on disk (the lock read them streaming, `check` through the section table);
  b. kernels 2.0 with gpus 7.5: no lock, exit 1, `gpu-arch-missing` for 7.5 naming the library
     and what it holds, said as CUDA would ("no kernel image is available ...");
  c. kernels 2.0 with gpu 12.0: compute_90 PTX only, a `gpu-arch-ptx-only` warning, the lock
     written;
  d. `diff` of the locks of (a) and (c): "kernels 1.0 -> 2.0 drops sm_75, compute_86; adds
     sm_90, compute_90" in text, and the same in JSON, with the target's GPUs;
  e. NVIDIA's real libcurand in a wheel: the streaming read gives the architectures `check`
     reads from the file itself;
  f. a base tarball holding a library without kernels for 7.5 (as a Debian base with CUDA
     packages may): the base's device code, read as its tarball streams, refuses the lock too.
Tests that need nvcc or the CUDA 13 libraries skip, saying why, where they are absent.
"""
import hashlib
import json
import os
import shutil
import subprocess
import tomllib

import pytest

from fixtures import fatbin_libs, index_server, package_graph, pip_like, wheel_builder
from fixtures.cli import json_or_none, run
from fixtures.debian_root import base_tarball, copy_root

CURAND = "/usr/local/cuda-13.0/lib64/libcurand.so.10"
WHEEL_TAGS = ("py3-none-manylinux_2_17_x86_64",)
V2_GENCODE = ["arch=compute_86,code=sm_86", "arch=compute_90,code=[sm_90,compute_90]"]
LIB = "kernels/libkernels.so"


def spec_with_library(name, version, rel, library):
    with open(library, "rb") as f:
        native = f.read()
    return wheel_builder.WheelSpec(name=name, version=version,
                                   files={f"{rel.split('/')[0]}/__init__.py": b"", rel: native},
                                   tags=WHEEL_TAGS, root_is_purelib=False,
                                   executable=frozenset([rel]))


def index_of(specs, out_dir):
    files = []
    for rank, spec in enumerate(specs):
        built = wheel_builder.build_wheel(spec, out_dir)
        files.append(package_graph.IndexFile(
            project=pip_like.canonical_name(spec.name), name=spec.name, version=spec.version,
            filename=built.filename, path=built.path, sha256=built.sha256, size=built.size,
            metadata=built.metadata, requires_python=None, yanked=False, hash_listed=True,
            upload_time=f"2025-03-{rank + 1:02d}T12:00:00.000000Z"))
    files.sort(key=lambda f: (f.project, package_graph.version_key(f.version), f.filename))
    return package_graph.Graph(root=out_dir, stacks=(), files=files, rebuilt={})


@pytest.fixture(scope="module")
def libraries(scratch):
    reason = fatbin_libs.unavailable_reason()
    if reason:
        pytest.skip(reason)
    out = {}
    for version, gencode in (("1.0", fatbin_libs.CASES["mixed"].gencode), ("2.0", V2_GENCODE)):
        directory = os.path.join(scratch, "libs", version)
        out[version] = fatbin_libs.build(directory, "kernels", gencode)
    return out


@pytest.fixture(scope="module")
def pypi(scratch, libraries):
    specs = [spec_with_library("kernels", v, LIB, path) for v, path in libraries.items()]
    if os.path.isfile(CURAND):
        specs.append(spec_with_library("curand", "10.0", "curand/libcurand.so.10", CURAND))
    wheels = os.path.join(scratch, "wheels")
    os.makedirs(wheels)
    with index_server.IndexServer(index_of(specs, wheels), style="pypi") as server:
        yield server


def write_recipe(path, index_url, requires, gpus, base=None):
    base_path, base_sha = base or base_tarball()
    with open(path, "w") as f:
        f.write(f'[image]\nname = "gpus"\n\n[base]\ntarball = "{base_path}"\n'
                f'sha256 = "{base_sha}"\n\n[python]\nversion = "3.11"\n\n'
                f'[cuda]\ndriver = "580.65.06"\ngpus = {json.dumps(gpus)}\n\n'
                f'[[index]]\nname = "fixture"\nurl = "{index_url}"\n\n'
                f'[packages]\nrequires = {json.dumps(requires)}\n')
    return path


def lock(rootlock, scratch, pypi, name, requires, gpus, base=None):
    """(exit code, --json report, stderr, lock path) of `rootlock lock` of a fresh recipe."""
    recipe = write_recipe(os.path.join(scratch, f"{name}.toml"), pypi.simple_url, requires, gpus,
                          base)
    out = os.path.join(scratch, f"pylock.{name}.toml")
    proc = run([rootlock, "lock", recipe, "-o", out, "--cache-dir",
                os.path.join(scratch, "cache"), "--json"], timeout=600)
    return proc.returncode, json_or_none(proc.stdout), proc.stderr, out


def packages_of(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return data, {p["name"]: p for p in data["packages"]}


def read_by_check(rootlock, scratch, library, name):
    """What `check --json` reads from `library` on disk through its section table (checked
    against this machine's root, as `check DIR` does): its cubins and PTX, in one list."""
    directory = os.path.realpath(os.path.join(scratch, "check-" + name))
    os.makedirs(directory, exist_ok=True)
    shutil.copy(library, directory)
    proc = run([rootlock, "check", "--json", directory], timeout=300)
    report = json_or_none(proc.stdout)
    assert report is not None, proc.stderr
    code = report["device_code"].get(os.path.join(directory, os.path.basename(library)))
    assert code is not None, report["device_code"]
    return code["cubin"] + code["ptx"]


@pytest.fixture(scope="module")
def lock_v1(rootlock, scratch, pypi):
    return lock(rootlock, scratch, pypi, "v1", ["kernels==1.0"], ["7.5", "8.6"])


@pytest.fixture(scope="module")
def lock_v2(rootlock, scratch, pypi):
    return lock(rootlock, scratch, pypi, "v2", ["kernels==2.0"], ["12.0"])


def test_a_lock_records_gpus_and_architectures(rootlock, scratch, libraries, lock_v1):
    rc, report, err, out = lock_v1
    assert rc == 0, f"exit {rc}: {err} {report and report.get('problems')}"
    data, packages = packages_of(out)
    assert data["tool"]["rootlock"]["target"]["gpus"] == ["7.5", "8.6"]
    recorded = packages["kernels"]["tool"]["rootlock"]["architectures"]
    assert recorded == ["sm_75", "sm_86", "compute_86"], recorded
    assert set(recorded) == fatbin_libs.CASES["mixed"].architectures
    assert recorded == read_by_check(rootlock, scratch, libraries["1.0"], "v1")


def test_b_a_gpu_without_kernels_refuses_the_lock(rootlock, scratch, pypi):
    rc, report, err, out = lock(rootlock, scratch, pypi, "v2-old-gpu", ["kernels==2.0"], ["7.5"])
    problems = [p for p in (report or {}).get("problems", []) if p["kind"] == "gpu-arch-missing"]
    assert rc == 1 and not os.path.exists(out), f"exit {rc}: {err}"
    assert len(problems) == 1, report and report.get("problems")
    problem = problems[0]
    assert problem["gpu"] == "7.5" and problem["source"] == "the recipe's [cuda] gpus"
    assert problem["problem"] == "no kernel image is available for execution on the device"
    [obj] = problem["objects"]
    assert obj["path"].endswith("/site-packages/" + LIB), obj
    assert obj["cubin"] == ["sm_86", "sm_90"] and obj["ptx"] == ["compute_90"], obj


def test_c_ptx_only_is_a_warning(lock_v2):
    rc, report, err, out = lock_v2
    assert rc == 0 and os.path.exists(out), f"exit {rc}: {err}"
    warnings = [p for p in report["problems"] if p["kind"] == "gpu-arch-ptx-only"]
    assert len(warnings) == 1 and warnings[0]["gpu"] == "12.0", report["problems"]
    assert warnings[0]["objects"][0]["ptx"] == "compute_90"


def test_d_diff_names_the_dropped_architectures(rootlock, lock_v1, lock_v2):
    assert lock_v1[0] == 0 and lock_v2[0] == 0
    proc = run([rootlock, "diff", lock_v1[3], lock_v2[3]], timeout=60)
    assert "gpu architectures" in proc.stdout, proc.stdout
    assert "kernels 1.0 -> 2.0 drops sm_75, compute_86; adds sm_90, compute_90" in proc.stdout, \
        proc.stdout
    proc = run([rootlock, "diff", lock_v1[3], lock_v2[3], "--json"], timeout=60)
    out = json.loads(proc.stdout)
    assert out["gpu_architectures"] == [{"name": "kernels", "before": "1.0", "after": "2.0",
                                         "added": ["sm_90", "compute_90"],
                                         "removed": ["sm_75", "compute_86"]}]
    assert {"field": "gpus", "before": "7.5, 8.6", "after": "12.0"} in out["target"], \
        out["target"]


def test_e_real_curand_read_streaming_equals_read_from_the_file(rootlock, scratch, pypi):
    if not os.path.isfile(CURAND):
        pytest.skip(f"{CURAND} is absent: the real CUDA 13 libraries are not on this machine")
    rc, report, err, out = lock(rootlock, scratch, pypi, "curand", ["curand==10.0"], ["9.0"])
    assert rc == 0, f"exit {rc}: {err} {report and report.get('problems')}"
    _, packages = packages_of(out)
    recorded = packages["curand"]["tool"]["rootlock"]["architectures"]
    print(f"(e) libcurand.so.10 holds {', '.join(recorded)}")
    assert "sm_90" in recorded
    assert recorded == read_by_check(rootlock, scratch, CURAND, "curand")


def test_f_the_bases_device_code_is_judged_too(rootlock, scratch, pypi, libraries):
    root = copy_root(scratch)
    shutil.copy(libraries["2.0"], os.path.join(root, "usr/local/lib/libbasekernels.so"))
    tarball = os.path.join(scratch, "gpu-base.tar")
    subprocess.run(["tar", "--sort=name", "--numeric-owner", "-C", root, "-cf", tarball, "."],
                   check=True)
    with open(tarball, "rb") as f:
        sha = hashlib.file_digest(f, "sha256").hexdigest()
    rc, report, err, out = lock(rootlock, scratch, pypi, "gpu-base", ["kernels==1.0"], ["7.5"],
                                base=(tarball, sha))
    problems = [p for p in (report or {}).get("problems", []) if p["kind"] == "gpu-arch-missing"]
    assert rc == 1 and not os.path.exists(out), f"exit {rc}: {err}"
    paths = [o["path"] for p in problems for o in p["objects"]]
    assert paths == ["/usr/local/lib/libbasekernels.so"], report and report.get("problems")
