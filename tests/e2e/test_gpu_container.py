"""End-to-end: a GPU container checked as it will run, configured by `pct-config`, and run in real
LXC over an image rootlock built, on hosts made of NVIDIA's real driver files (issue 31).

The image: the fixture torch 2.8.0+cu128 stack locked and built by rootlock over the cached
Debian base, unpacked, plus one library that needs libcuda.so.1 directly (as vLLM's _C does).
Hosts: fixtures/nvidia_host.py (real 535 and 470 drivers from Debian, a stub 580 host).
  a. `check --host-root` with the 535 host: libcuda.so.1 found at the host's file, the CUDA 12.8
     runtime on 535.261.03 a minor-version-compatibility warning naming both; the 470 host:
     driver-too-old; the 580 host: nothing; a host without libcuda: the needed libcuda.so.1 is
     missing and said to be the host's; the same checks of the image archive agree;
  b. an image that bakes libnvidia-ml.so.550.163.01 beside the 535 host: driver-library-in-image
     naming the baked version, and the container's libnvidia-ml.so.1 is the baked one (ldconfig
     keeps the newer name), as the real ldconfig run on the same tree shows;
     A forward-compatibility libcuda (cuda-compat, with its .note.cuda.fwd_compatibility) is
     accepted on the 535 host its note lists and refused on 470;
  c. `pct-config` refuses a host without a driver, a GPU that does not exist, a missing uvm node
     (one report, exit 1, nothing written), and writes with --allow-broken; --host-unit;
  d. real LXC from `--format lxc` (this machine runs cgroup v1: `--cgroup v1`; the fake host's
     paths are mapped under its directory): /dev/nvidia0 is 195:0 and the devices cgroup lets it
     open (ENXIO: no kernel module, not EPERM), `ldconfig -p` lists libcuda.so.1 as the host's
     file, ctypes loads the real libcuda and cuInit returns a driver error (100), not the stub's
     34, the library needing libcuda.so.1 loads, and `rootlock check` of the live container
     root agrees with `check --host-root`;
  e. the `pct` form translated as pve-container does (nodes made under a passthrough folder
     with the devN: mode, cgroup rules from their majors, bind mounts) runs the same way.
"""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from fixtures import nvidia_host
from fixtures.cli import run, run_rootlock
from fixtures.debian_root import base_tarball
from fixtures.elf_stub import StubSpec, build_stubs

VENV = "/opt/venv"
NEEDS_CUDA = VENV + "/lib/python3.11/site-packages/needs_cuda/libneeds_cuda.so"
LIBDIR = "/usr/lib/x86_64-linux-gnu"


def need_branch(name):
    if not nvidia_host.is_cached(name) and not nvidia_host.archive_reachable():
        pytest.skip(f"driver branch {name}: not cached and Debian's archive is unreachable")


def in_root(root, path):
    return os.path.join(root, path.lstrip("/"))


@pytest.fixture(scope="module")
def image(rootlock, scratch, fixture_index):
    base_path, base_sha = base_tarball()
    recipe = os.path.join(scratch, "gpu.toml")
    with open(recipe, "w") as f:
        f.write(f'[image]\nname = "gputest"\n\n'
                f'[base]\ntarball = "{base_path}"\nsha256 = "{base_sha}"\n\n'
                '[python]\nversion = "3.11"\n\n'
                '[torch]\nversion = "2.8.0"\ncuda = "12.8"\n\n[cuda]\ndriver = "570.133.07"\n\n'
                f'[[index]]\nname = "fixture"\nurl = "{fixture_index.simple_url}"\n\n'
                '[packages]\nrequires = ["app-cli"]\n')
    lock = os.path.join(scratch, "pylock.gputest.toml")
    cache = os.path.join(scratch, "cache")
    proc = run_rootlock(rootlock, "lock", recipe, "-o", lock, "--cache-dir", cache)
    assert proc.returncode == 0, f"lock: exit {proc.returncode}: {proc.stderr}"
    path = os.path.join(scratch, "out", "gputest.tar.zst")
    proc = run_rootlock(rootlock, "build", lock, "-o", path, "--cache-dir", cache)
    assert proc.returncode == 0, f"build: exit {proc.returncode}: {proc.stderr}"
    return path


@pytest.fixture(scope="module")
def rootfs(scratch, image):
    """The image unpacked, plus a library that needs libcuda.so.1 (cuInit) directly."""
    dest = os.path.join(scratch, "rootfs")
    os.makedirs(dest)
    proc = run(["tar", "--zstd", "--numeric-owner", "-xpf", image, "-C", dest])
    assert proc.returncode == 0, f"tar: {proc.stderr}"
    build_stubs([StubSpec(out=in_root(dest, NEEDS_CUDA), soname="libneeds_cuda.so",
                          needed=("libcuda.so.1",), imports=("cuInit",), tag="needs cuda")])
    return dest


@pytest.fixture(scope="module")
def hosts(scratch):
    made = {}
    for name, branch, layout, extra in [("535", "535", "debian", {}),
                                        ("470", "470", "run", {}),
                                        ("580", "580", "run", {}),
                                        ("reboot", "535", "debian", {"with_uvm_nodes": False})]:
        if branch in nvidia_host.BRANCHES:
            need_branch(branch)
        dest = os.path.join(scratch, "host-" + name)
        nvidia_host.make_host(dest, branch=branch, layout=layout,
                              gpus=["NVIDIA GeForce RTX 3090"], **extra)
        made[name] = dest
    empty = os.path.join(scratch, "host-empty")
    os.makedirs(in_root(empty, LIBDIR))
    made["empty"] = empty
    return made


def check(rootlock, root, host=None, extra=(), expect=None):
    argv = ["check", "--root", root, "--json", *extra]
    if host:
        argv += ["--host-root", host]
    proc = run_rootlock(rootlock, *argv, timeout=300)
    report = json.loads(proc.stdout)
    if expect is not None:
        assert proc.returncode == expect, \
            f"check exit {proc.returncode}, expected {expect}: {proc.stdout[-3000:]}{proc.stderr}"
    return report


def kinds(report):
    return sorted({(p["kind"], p["severity"]) for p in report["problems"]})


def problem(report, kind):
    found = [p for p in report["problems"] if p["kind"] == kind]
    assert found, f"no {kind} in {kinds(report)}"
    return found[0]


def test_a_check_as_the_container_will_run(rootlock, rootfs, hosts):
    alone = check(rootlock, rootfs, extra=["--no-default-host-provides"])
    missing = [p["soname"] for p in alone["problems"] if p["kind"] == "missing-soname"]
    assert "libcuda.so.1" in missing, f"without a host libcuda.so.1 is missing: {kinds(alone)}"

    on_535 = check(rootlock, rootfs, hosts["535"], expect=0)
    print(f"(a) 535: {kinds(on_535)}")
    assert not [p for p in on_535["problems"] if p["kind"] == "missing-soname"]
    compat = problem(on_535, "driver-minor-version-compat")
    assert compat["cuda"] == "12.8" and compat["driver"] == "535.261.03"
    assert "570.26" in compat["problem"] and "535.261.03" in compat["problem"]
    assert on_535["host"]["driver"]["version"] == "535.261.03"

    on_470 = check(rootlock, rootfs, hosts["470"], expect=1)
    print(f"(a) 470: {kinds(on_470)}")
    assert problem(on_470, "driver-too-old")["driver"] == "470.256.02"

    on_580 = check(rootlock, rootfs, hosts["580"], expect=0)
    print(f"(a) 580: {kinds(on_580)}")
    assert not [p for p in on_580["problems"] if p["kind"].startswith("driver")]

    on_empty = check(rootlock, rootfs, hosts["empty"], expect=1)
    print(f"(a) no driver: {kinds(on_empty)}")
    problem(on_empty, "host-without-driver")
    cuda = [p for p in on_empty["problems"] if p["kind"] == "missing-soname"
            and p["soname"] == "libcuda.so.1"]
    assert cuda and cuda[0]["host"] == "the host has no driver to give it"
    assert NEEDS_CUDA in cuda[0]["needed_by"]


def test_a_the_image_archive_is_judged_the_same(rootlock, image, hosts):
    on_535 = check(rootlock, image, hosts["535"], expect=0)
    on_470 = check(rootlock, image, hosts["470"], expect=1)
    assert ("driver-minor-version-compat", "warning") in kinds(on_535)
    assert ("driver-too-old", "error") in kinds(on_470)


def test_b_baked_driver_library_shadows_the_hosts(rootlock, scratch, rootfs, hosts):
    need_branch("550")
    baked = os.path.join(scratch, "baked")
    subprocess.run(["cp", "-al", rootfs, baked], check=True)
    host550 = os.path.join(scratch, "host-550-src")
    nvidia_host.make_host(host550, branch="550", layout="run")
    name = "libnvidia-ml.so.550.163.01"
    shutil.copy(in_root(host550, f"{LIBDIR}/{name}"), in_root(baked, f"{LIBDIR}/{name}"))
    report = check(rootlock, baked, hosts["535"], expect=1)
    found = [p for p in report["problems"] if p["kind"] == "driver-library-in-image"]
    print(f"(b) {found}")
    assert found and found[0]["path"] == f"{LIBDIR}/{name}"
    assert "550.163.01" in json.dumps(found[0]) and "535.261.03" in json.dumps(found[0])


COMPAT_NOTE = ('{"format":1,"CUDA version":"12.9","driver":[535,550,560,565,570,575],'
               '"device":[1,2,7,8,9,10,11,12,13,14]}')


def compat_libcuda(path):
    """A forward-compatibility libcuda as cuda-compat-12-9 ships it: soname libcuda.so.1 and the
    .note.cuda.fwd_compatibility note (owner "NVIDIA Corporation", a JSON descriptor) listing
    the driver branches it runs on (575.57.08's, gpu-containers.md 4.4)."""
    owner = b"NVIDIA Corporation\0"
    desc = COMPAT_NOTE.encode()
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    note = (len(owner).to_bytes(4, "little") + len(desc).to_bytes(4, "little") +
            (1).to_bytes(4, "little") + pad(owner) + pad(desc))
    c_bytes = ",".join(str(b) for b in note)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    source = path + ".c"
    with open(source, "w") as f:
        f.write("__attribute__((section(\".note.cuda.fwd_compatibility\"), used, aligned(4)))\n"
                f"static const unsigned char note[{len(note)}] = {{{c_bytes}}};\n"
                "int cuInit(unsigned flags) { return (int)flags + 999; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", path, source],
                   check=True)
    os.unlink(source)


def test_b_forward_compat_libcuda_is_judged_by_its_note(rootlock, scratch, rootfs, hosts):
    compat = os.path.join(scratch, "compat")
    subprocess.run(["cp", "-al", rootfs, compat], check=True)
    path = "/usr/local/cuda-12.9/compat/libcuda.so.575.57.08"
    compat_libcuda(in_root(compat, path))
    on_535 = check(rootlock, compat, hosts["535"], expect=0)
    assert not [p for p in on_535["problems"] if p["kind"] in
                ("cuda-compat-refused", "driver-library-in-image")], kinds(on_535)
    on_470 = check(rootlock, compat, hosts["470"], expect=1)
    refused = problem(on_470, "cuda-compat-refused")
    print(f"(b) compat on 470: {refused['problem']}")
    assert refused["path"] == path and refused["cuda"] == "12.9"
    assert refused["driver_branches"] == [535, 550, 560, 565, 570, 575]
    assert "not the host's 470" in refused["problem"]


def pct_config(rootlock, image, host, *extra):
    return run_rootlock(rootlock, "pct-config", image, "--host-root", host, *extra, timeout=300)


def test_c_pct_config_refusals(rootlock, scratch, rootfs, hosts):
    out = os.path.join(scratch, "refused.conf")
    proc = pct_config(rootlock, rootfs, hosts["reboot"], "--gpus", "0,7", "-o", out)
    print(f"(c) {proc.stderr}")
    assert proc.returncode == 1 and not os.path.exists(out)
    assert '--gpus: no GPU "7" on this host (it has GPU 0)' in proc.stderr
    assert "/dev/nvidia-uvm does not exist on the host now" in proc.stderr
    proc = pct_config(rootlock, rootfs, hosts["empty"], "-o", out)
    assert proc.returncode == 1 and not os.path.exists(out)
    assert "the host has no NVIDIA driver" in proc.stderr
    unit = os.path.join(scratch, "nvidia-nodes.service")
    proc = pct_config(rootlock, rootfs, hosts["reboot"], "--allow-broken", "-o", out,
                      "--host-unit", unit)
    assert proc.returncode == 1 and os.path.isfile(out) and os.path.isfile(unit)
    with open(unit) as f:
        text = f.read()
    assert "Before=pve-guests.service lxc.service" in text
    # The unit's shell line, as systemd hands it to sh ($$ is a literal $), makes the uvm nodes
    # with the major /proc/devices gives: run against a fake /proc/devices and /dev.
    line = re.search(r"^ExecStart=/bin/sh -c '(.*)'$", text, re.M).group(1).replace("$$", "$")
    fake = os.path.join(scratch, "unit")
    os.makedirs(os.path.join(fake, "dev"))
    with open(os.path.join(fake, "devices"), "w") as f:
        f.write("Character devices:\n  1 mem\n195 nvidia-frontend\n509 nvidia-uvm\n")
    line = line.replace("/proc/devices", os.path.join(fake, "devices")) \
        .replace("/dev/", os.path.join(fake, "dev") + "/").replace("modprobe", "true")
    ran = subprocess.run(["/bin/sh", "-c", line], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    st = os.stat(os.path.join(fake, "dev", "nvidia-uvm-tools"))
    assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == (509, 1)


def mapped(line, host):
    """An lxc.* line with its absolute mount source moved under the fake host's directory: the
    path resolved as the host resolves it (its absolute links, Debian's alternatives, point
    into the host, not into this machine's /)."""
    key, _, value = re.split(r"\s*([:=])\s*", line, maxsplit=1)
    if key == "lxc.mount.entry" and value.startswith("/"):
        source, rest = value.split(" ", 1)
        fake = nvidia_host.HostRoot(host)
        value = fake.on_disk(fake.realpath(source)) + " " + rest
    return f"{key} = {value}"


def lxc_config_from_lxc_format(text, host):
    return [mapped(line, host) for line in text.splitlines()
            if line.startswith("lxc.")]


def lxc_config_from_pct_format(text, host, passthrough):
    """What pve-container makes of devN: lines (src/PVE/LXC.pm): the node copied under a
    passthrough folder with the devN: mode and owner, a cgroup rule from its live major and
    minor (v1 keys here), and a bind mount onto /dev/PATH."""
    lines = []
    for line in text.splitlines():
        dev = re.match(r"^dev\d+: (/dev/[^,]+)(.*)$", line)
        if dev:
            path, options = dev.group(1), dict(o.split("=") for o in dev.group(2).split(",")
                                               if o)
            st = os.stat(nvidia_host.HostRoot(host).on_disk(path))
            node = passthrough + path
            os.makedirs(os.path.dirname(node), exist_ok=True)
            os.mknod(node, 0o020000 | int(options.get("mode", "0660"), 8), st.st_rdev)
            os.chmod(node, int(options.get("mode", "0660"), 8))
            os.chown(node, 0, int(options.get("gid", "0")))
            lines.append(f"lxc.cgroup.devices.allow = c {os.major(st.st_rdev)}:"
                         f"{os.minor(st.st_rdev)} rw")
            lines.append(f"lxc.mount.entry = {node} {path[1:]} none bind,create=file 0 0")
        elif line.startswith("lxc."):
            lines.append(mapped(line, host))
    return lines


INSIDE = r"""
import ctypes, errno, os, stat, subprocess, sys
st = os.stat("/dev/nvidia0")
print("node", stat.S_ISCHR(st.st_mode), os.major(st.st_rdev), os.minor(st.st_rdev))
try:
    os.close(os.open("/dev/nvidia0", os.O_RDWR))
    print("open ok")
except OSError as e:
    print("open", errno.errorcode[e.errno])
out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
line = [l for l in out.splitlines() if l.strip().startswith("libcuda.so.1 ")]
print("ldconfig", line[0].split("=> ")[1] if line else None)
print("libcuda", os.path.realpath(line[0].split("=> ")[1]) if line else None)
cuda = ctypes.CDLL("libcuda.so.1")
print("cuInit", cuda.cuInit(0))
ctypes.CDLL(sys.argv[1])
print("needs_cuda loaded")
"""


def run_container(scratch, rootfs, name, lines, rootlock, host):
    """Start a privileged container over a hard-linked copy of rootfs with `lines`, run INSIDE
    in it, and check the live root from the host; returns (inside output, live check)."""
    if shutil.which("lxc-start") is None:
        pytest.skip("lxc is not installed")
    copy = os.path.join(scratch, name + "-rootfs")
    subprocess.run(["cp", "-al", rootfs, copy], check=True)
    lxcpath = os.path.join(scratch, "lxc")
    os.makedirs(os.path.join(lxcpath, name), exist_ok=True)
    config = os.path.join(lxcpath, name, "config")
    with open(config, "w") as f:
        f.write("lxc.include = /usr/share/lxc/config/common.conf\n"
                f"lxc.uts.name = {name}\nlxc.rootfs.path = dir:{copy}\n"
                "lxc.net.0.type = empty\nlxc.apparmor.profile = unconfined\n"
                "lxc.init.cmd = /bin/sleep infinity\n" + "\n".join(lines) + "\n")
    log = os.path.join(lxcpath, name + ".log")
    started = run(["lxc-start", "-P", lxcpath, "-n", name, "--logfile", log,
                   "--logpriority", "ERROR"])
    try:
        if started.returncode != 0:
            with open(log) as f:
                pytest.fail(f"lxc-start: {started.stderr}\n{f.read()[-3000:]}\n"
                            f"{open(config).read()}")
        inside = run(["lxc-attach", "-P", lxcpath, "-n", name, "--clear-env", "--",
                      VENV + "/bin/python", "-c", INSIDE, NEEDS_CUDA])
        pid = run(["lxc-info", "-P", lxcpath, "-n", name, "-p", "-H"]).stdout.strip()
        live = json.loads(run_rootlock(rootlock, "check", "--root", f"/proc/{pid}/root",
                                       "--json", "--no-default-host-provides", "--driver",
                                       "535.261.03", timeout=300).stdout)
    finally:
        run(["lxc-stop", "-k", "-P", lxcpath, "-n", name])
        shutil.rmtree(os.path.join(lxcpath, name), ignore_errors=True)  # never lxc-destroy
    print(f"({name}) inside:\n{inside.stdout}{inside.stderr}")
    return inside, live


def assert_runs(inside, live, outside, host):
    out = inside.stdout
    assert inside.returncode == 0, f"python in the container: {inside.stdout}{inside.stderr}"
    assert "node True 195 0" in out
    assert "open ENXIO" in out, "the devices cgroup should let /dev/nvidia0 open (ENXIO: no module)"
    libcuda = "/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03"
    assert f"libcuda {libcuda}" in out
    assert "cuInit 100" in out, "the real libcuda answers CUDA_ERROR_NO_DEVICE, a stub 34"
    assert "needs_cuda loaded" in out
    assert live["ok"] == outside["ok"] and kinds(live) == kinds(outside), \
        f"inside {kinds(live)} vs outside {kinds(outside)}"


def test_d_lxc_format_runs_in_real_lxc(rootlock, scratch, rootfs, hosts):
    host = hosts["535"]
    proc = pct_config(rootlock, rootfs, host, "--format", "lxc", "--cgroup", "v1")
    assert proc.returncode == 0, f"pct-config: {proc.stderr}"
    outside = check(rootlock, rootfs, host, expect=0)
    inside, live = run_container(scratch, rootfs, "gpu-lxc",
                                 lxc_config_from_lxc_format(proc.stdout, host), rootlock, host)
    assert_runs(inside, live, outside, host)


def test_e_pct_format_translated_as_pve_does(rootlock, scratch, rootfs, hosts):
    host = hosts["535"]
    proc = pct_config(rootlock, rootfs, host)
    assert proc.returncode == 0, f"pct-config: {proc.stderr}"
    assert re.search(r"^arch: amd64$", proc.stdout, re.M)
    assert re.search(r"^ostype: debian$", proc.stdout, re.M)
    assert re.search(r"^dev\d+: /dev/nvidia0,mode=0666$", proc.stdout, re.M)
    passthrough = os.path.join(scratch, "passthrough")
    lines = lxc_config_from_pct_format(proc.stdout, host, passthrough)
    outside = check(rootlock, rootfs, host, expect=0)
    inside, live = run_container(scratch, rootfs, "gpu-pct", lines, rootlock, host)
    assert_runs(inside, live, outside, host)
