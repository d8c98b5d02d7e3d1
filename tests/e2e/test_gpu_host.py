"""End-to-end: `rootlock host` over hosts made of NVIDIA's real driver files (issue 31).

Hosts are laid out under a directory by fixtures/nvidia_host.py from Debian's real non-free
packages (fetched by the signed index's sha256, cached), in Debian's layout and in the .run
installer's, with device nodes made by mknod and /sys and /proc files in every format:
  a. each real branch (535, 535-tesla, 470, 550) and layout: `host --host-root --json` reports
     exactly what was laid out: driver, module flavour, GPUs with their compute capability,
     device nodes (type, major, minor, mode, owner), the uvm major, every driver file;
  b. the same host described by a CDI spec written as nvidia-ctk 1.20 writes it (YAML and JSON)
     gives the same driver, nodes, files and loader folders (caps nodes aside: nvidia-ctk passes
     them only for MIG devices);
  c. the open kernel module's /proc format; a host after a reboot (the uvm nodes named from
     /proc/devices' major, missing); a GPU the
     table does not know ("unknown" said plainly); a host without a driver (exit 1);
  d. malformed /proc and CDI files: one line, exit 2.
"""
import json
import os
import shutil

import pytest

from fixtures import nvidia_host
from fixtures.cli import run_rootlock

BRANCHES = [("535", "debian"), ("535-tesla", "debian"), ("470", "run"), ("550", "debian"),
            ("535", "run")]


def need_branch(name):
    if not nvidia_host.is_cached(name) and not nvidia_host.archive_reachable():
        pytest.skip(f"driver branch {name}: not cached and Debian's archive is unreachable")


def host_json(rootlock, host_root, *extra, expect=0):
    proc = run_rootlock(rootlock, "host", "--host-root", host_root, "--json", *extra)
    assert proc.returncode == expect, \
        f"host exit {proc.returncode} (expected {expect}):\n{proc.stdout}{proc.stderr}"
    return json.loads(proc.stdout)


def make(scratch, label, **kw):
    dest = os.path.join(scratch, label)
    shutil.rmtree(dest, ignore_errors=True)
    nvidia_host.make_host(dest, **kw)
    return dest, nvidia_host.host_description(dest)


def files_of(report):
    return sorted((f["container_path"], f["kind"]) for f in report["files"])


def nodes_of(report, caps=True):
    return sorted((n["path"], n["type"], n["major"], n["minor"], n["mode"], n["uid"], n["gid"])
                  for n in report["device_nodes"]
                  if caps or not n["path"].startswith("/dev/nvidia-caps/"))


def expected_files(desc):
    """What nvidia-ctk mounts of the laid-out host, with the kind rootlock gives each."""
    out = [(f["container_path"], "library") for f in desc["libraries"] if f.get("versioned")]
    out += [(f["container_path"], "binary") for f in desc["binaries"]]
    out += [(f["container_path"], "firmware") for f in desc["firmware"]]
    out += [(f["container_path"], "socket") for f in desc["ipc"] if f.get("kind") == "socket"]
    return sorted(out)


# The compute capabilities of the models the hosts are made with (NVIDIA's CUDA GPUs list).
CAPABILITIES = {"NVIDIA GeForce RTX 3090": "8.6", "Tesla T4": "7.5"}


@pytest.mark.parametrize("branch,layout", BRANCHES)
def test_a_host_reports_what_was_laid_out(rootlock, scratch, branch, layout):
    need_branch(branch)
    dest, desc = make(scratch, f"a-{branch}-{layout}", branch=branch, layout=layout,
                      gpus=["NVIDIA GeForce RTX 3090", "Tesla T4"])
    report = host_json(rootlock, dest)
    print(f"(a) {branch} {layout}: driver {report['driver']}, {len(report['gpus'])} GPUs, "
          f"{len(report['device_nodes'])} nodes, {len(report['files'])} files")
    assert report["driver"]["version"] == desc["driver_version"]
    assert report["driver"]["module"] == desc["kernel_module"]
    assert [(g["model"], g["uuid"], g["bus"], g["minor"], g["compute_capability"])
            for g in report["gpus"]] == \
        [(g["model"], g["uuid"], g["bus"], g["minor"], CAPABILITIES[g["model"]])
         for g in desc["gpus"]]
    assert all(g["compute_capability_from"] == "gpu table" for g in report["gpus"])
    assert nodes_of(report) == sorted(
        (n["path"], n["type"], n["major"], n["minor"], f"{n['mode']:04o}", n["uid"], n["gid"])
        for n in desc["device_nodes"])
    assert report["uvm_major"] == desc["majors"]["nvidia-uvm"]
    assert files_of(report) == expected_files(desc)
    libcuda = [f for f in report["files"] if os.path.basename(f["container_path"]) ==
               "libcuda.so." + desc["driver_version"]]
    assert len(libcuda) == 1, f"libcuda not among the files: {files_of(report)}"
    assert report["library_dirs"] == desc["driver_lib_dirs"]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_b_cdi_spec_gives_the_same_answer(rootlock, scratch, fmt):
    need_branch("535")
    dest, _ = make(scratch, f"b-{fmt}", branch="535", layout="debian",
                   gpus=["NVIDIA GeForce RTX 3090"])
    by_files = host_json(rootlock, dest)
    spec = os.path.join(scratch, f"b-nvidia.{fmt}")
    nvidia_host.write_cdi_spec(dest, spec, fmt)
    by_cdi = host_json(rootlock, dest, "--cdi", spec)
    assert by_cdi["source"] == "cdi" and by_files["source"] == "files"
    for key in ("driver", "gpus", "uvm_major", "library_dirs"):
        assert by_cdi[key] == by_files[key], f"{key}: {by_cdi[key]} != {by_files[key]}"
    assert files_of(by_cdi) == files_of(by_files)
    assert nodes_of(by_cdi) == nodes_of(by_files, caps=False)
    assert "NVIDIA_VISIBLE_DEVICES=void" in by_cdi["environment"]
    assert {"path": "/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so",
            "target": "libcuda.so.1"} in by_cdi["links"]
    # The host's own /etc/cdi is read without --cdi.
    os.makedirs(os.path.join(dest, "etc/cdi"), exist_ok=True)
    shutil.copy(spec, os.path.join(dest, "etc/cdi", "nvidia." + fmt))
    own = host_json(rootlock, dest)
    assert own["source"] == "cdi" and files_of(own) == files_of(by_files)
    print(f"(b) {fmt}: {len(by_cdi['files'])} files and {len(by_cdi['device_nodes'])} nodes, "
          f"as the files say")


def test_c_open_module_reboot_and_unknown_gpu(rootlock, scratch):
    need_branch("550")
    dest, desc = make(scratch, "c-open", branch="550", layout="run", open_module=True,
                      with_uvm_nodes=False, gpus=["NVIDIA Imaginary X9000"])
    report = host_json(rootlock, dest)
    assert report["driver"]["module"] == "open"
    uvm = {n["path"]: (n["major"], n["minor"], n["present"]) for n in report["device_nodes"]
           if n["path"].startswith("/dev/nvidia-uvm")}
    major = desc["majors"]["nvidia-uvm"]
    assert uvm == {"/dev/nvidia-uvm": (major, 0, False),
                   "/dev/nvidia-uvm-tools": (major, 1, False)}, uvm
    assert report["uvm_major"] == desc["majors"]["nvidia-uvm"]
    assert report["gpus"][0]["compute_capability"] is None
    assert report["gpus"][0]["compute_capability_from"] == "unknown"
    text = run_rootlock(rootlock, "host", "--host-root", dest)
    assert "compute capability unknown (not in rootlock's GPU table; pass --gpu)" in text.stdout
    assert "/dev/nvidia-uvm c 511:0 mode 0666 owner 0:0 (missing now)" in text.stdout
    print(f"(c) open module, no uvm nodes, unknown GPU:\n{text.stdout}")


def test_c_host_without_driver(rootlock, scratch):
    dest = os.path.join(scratch, "c-empty")
    os.makedirs(os.path.join(dest, "usr/lib/x86_64-linux-gnu"), exist_ok=True)
    report = host_json(rootlock, dest, expect=1)
    assert report["driver"]["version"] is None and report["files"] == []
    assert "no NVIDIA driver found: no kernel module and no libcuda.so.*" in report["notes"]


@pytest.mark.parametrize("path,text,error", [
    ("proc/driver/nvidia/version", "NVRM version: something else\n",
     "/proc/driver/nvidia/version:1: "),
    ("sys/module/nvidia/version", "5x5.1\n", "/sys/module/nvidia/version:1: "),
    ("etc/cdi/nvidia.yaml", "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices: [\n",
     "/etc/cdi/nvidia.yaml:"),
    ("etc/cdi/nvidia.yaml", "cdiVersion: 0.1.0\nkind: nvidia.com/gpu\ndevices: []\n",
     "/etc/cdi/nvidia.yaml:"),
])
def test_d_malformed_host_files(rootlock, scratch, path, text, error):
    dest = os.path.join(scratch, "d-" + path.replace("/", "_"))
    full = os.path.join(dest, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)
    proc = run_rootlock(rootlock, "host", "--host-root", dest)
    lines = proc.stderr.strip().splitlines()
    print(f"(d) {path}: exit {proc.returncode}: {proc.stderr.strip()}")
    assert proc.returncode == 2 and len(lines) == 1 and error in lines[0], proc.stderr
