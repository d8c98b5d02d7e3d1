"""Self-test of fixtures/nvidia_host.py, without rootlock: the GPU host made of NVIDIA's real
driver files from Debian's archive.

Nothing here runs rootlock (--rootlock is not needed). Checks:
  a. the packages of each branch (535, 535-tesla, 470 from bookworm's non-free and
     non-free-firmware, 550 from trixie's) as the signed archive lists them, cached with their
     sha256; a warm cache answers with the network cut off;
  b. the real libcuda of each branch: an ELF object with SONAME libcuda.so.1 and the version in
     its file name;
  c. a host of each branch in each layout ("debian", "run") and the stub branches: the soname
     links reach the versioned files (through /etc/alternatives on the Debian layout), the real
     `ldconfig -r DEST -p` lists them and agrees with the fixture's reader, device nodes with
     the right majors and minors, the /proc and /sys texts, firmware, binaries, the socket;
  d. cuInit of each real libcuda, loaded from a laid-out host in a subprocess (a crash cannot
     take pytest down) with CAP_MKNOD dropped (as root the real library mknods /dev/nvidiactl
     on this machine otherwise): a driver error that is not CUDA_ERROR_STUB_LIBRARY (34), there
     being no kernel module here; cuDriverGetVersion as the description says; the stubs' cuInit
     returns 999;
  e. the CDI spec as nvidia-ctk v1.20.0 writes it: YAML layout, JSON = YAML, devices, control
     nodes, hooks, and mounts that are exactly the host's versioned libraries, firmware,
     binaries and socket;
  f. the "after a reboot" host without uvm nodes, the open kernel module's texts, the CLI.

Skips (with the reason) when not root, or when deb.debian.org is unreachable and the branch is
not in $ROOTLOCK_TEST_CACHE/nvidia-debs.
"""
import json
import os
import re
import shutil
import stat
import sys

import pytest

from fixtures import nvidia_host as nh
from fixtures.cli import run

REAL = ("535", "535-tesla", "470", "550")
STUBS = ("570", "580", "590")
LAYOUTS = ("debian", "run")
REPO_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="nvidia_host lays out device nodes (mknod): needs root")

_REACHABLE = {}


def branch_or_skip(name):
    """The resolved record of a real branch, or a skip when it cannot be had."""
    if name in STUBS:
        if shutil.which("gcc") is None:
            pytest.skip("gcc is missing: stub branches are compiled")
        return None
    if not nh.is_cached(name):
        if "ok" not in _REACHABLE:
            _REACHABLE["ok"] = nh.archive_reachable()
        if not _REACHABLE["ok"]:
            pytest.skip(f"deb.debian.org is unreachable and branch {name} is not cached in "
                        f"{nh.NV_DIR}")
    return nh.fetch_branch(name, quiet=True)


@pytest.fixture(scope="module")
def hosts(scratch):
    """host(branch, layout, **options) -> (dest, description), each made once per module."""
    made = {}

    def host(branch, layout="debian", **options):
        key = (branch, layout, json.dumps(options, sort_keys=True))
        if key not in made:
            branch_or_skip(branch)
            dest = os.path.join(scratch, f"host-{len(made)}-{branch}-{layout}")
            made[key] = (dest, nh.make_host(dest, branch=branch, layout=layout, **options))
        return made[key]
    return host


def version_of(branch):
    return nh.BRANCHES[branch].version if branch in nh.BRANCHES else nh.STUB_BRANCHES[branch][0]


# -- a. packages ------------------------------------------------------------------------------

@pytest.mark.parametrize("branch", REAL)
def test_packages_resolved(branch):
    record = branch_or_skip(branch)
    b = nh.BRANCHES[branch]
    assert record["suite"] == b.suite and record["source"] == b.source
    if record["version"] != b.version:
        pytest.fail(f"{b.suite} now carries {b.source} {record['version']}, the fixture expects "
                    f"{b.version}: update BRANCHES (its nvrm_id and cuda_version too)")
    pkgs = record["packages"]
    for role, _pattern, required in nh.ROLES:
        if required:
            assert role in pkgs, f"{branch}: no {role} package"
    for role, e in pkgs.items():
        assert nh._upstream(e["version"]) == b.version, (role, e)
        assert re.fullmatch(rf"pool/{e['component']}/n/{re.escape(b.source)}/"
                            rf"{re.escape(e['filename'])}", e["pool"]), e
        path = nh._deb_path(e)
        assert os.path.getsize(path) == e["size"]
        assert nh.sha256_file(path) == e["sha256"]
    # Debian's names for the pieces the host needs
    assert pkgs["cuda"]["package"] == {"535": "libcuda1", "550": "libcuda1",
                                       "470": "libnvidia-tesla-470-cuda1",
                                       "535-tesla": "libnvidia-tesla-535-cuda1"}[branch]
    assert "gsp" in pkgs, f"{branch}: no GSP firmware"
    if branch == "470":
        assert pkgs["gsp"]["package"] == "nvidia-tesla-470-kernel-support"
    else:
        assert pkgs["gsp"]["component"] == "non-free-firmware"


def test_warm_cache_needs_no_network(monkeypatch):
    branch_or_skip("535")

    def no_network(url, *a, **k):
        raise AssertionError(f"network used on a warm cache: {url}")
    monkeypatch.setattr(nh, "_download", no_network)
    monkeypatch.delenv("ROOTLOCK_TEST_NVIDIA_REFRESH", raising=False)
    record = nh.fetch_branch("535", quiet=True)
    assert os.path.isfile(nh.real_libcuda("535"))
    assert record["version"] == nh.BRANCHES["535"].version


# -- b. the real libcuda ----------------------------------------------------------------------

@pytest.mark.parametrize("branch", REAL)
def test_real_libcuda_is_elf(branch):
    record = branch_or_skip(branch)
    path = nh.real_libcuda(branch)
    with open(path, "rb") as f:
        assert f.read(4) == b"\x7fELF"
    assert os.path.basename(path) == "libcuda.so." + record["version"]
    assert f"/nvidia/{nh.BRANCHES[branch].flavor}/" in path
    assert nh.elf_soname(path) == "libcuda.so.1"
    assert os.path.getsize(path) > 10_000_000   # the real library, not a stub
    readelf = shutil.which("readelf")
    if readelf:
        out = run([readelf, "-d", path]).stdout
        assert "Library soname: [libcuda.so.1]" in out


# -- c. hosts ---------------------------------------------------------------------------------

def ldconfig_p(dest):
    """{name: path} of `ldconfig -r DEST -p` (64-bit entries)."""
    proc = run(["ldconfig", "-r", dest, "-p"])
    assert proc.returncode == 0, proc.stderr
    out = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"\s+(\S+) \(libc6,x86-64[^)]*\) => (\S+)$", line)
        if m:
            out.setdefault(m.group(1), m.group(2))
    return out


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("branch", REAL + ("570",))
def test_host_layout(hosts, branch, layout):
    dest, desc = hosts(branch, layout)
    root = nh.HostRoot(dest)
    version = version_of(branch)
    assert desc == nh.host_description(dest)
    assert desc["driver_version"] == version and desc["layout"] == layout
    libcuda = desc["libcuda"]
    assert libcuda and os.path.isfile(dest + libcuda)
    assert nh.elf_soname(dest + libcuda) == "libcuda.so.1"
    libdir = os.path.dirname(libcuda)
    if layout == "run":
        assert libdir == "/usr/lib/x86_64-linux-gnu"
        assert os.readlink(dest + libdir + "/libcuda.so.1") == "libcuda.so." + version
        assert os.readlink(dest + libdir + "/libcuda.so") == "libcuda.so.1"
        assert os.readlink(dest + "/usr/lib/x86_64-linux-gnu/gbm/nvidia-drm_gbm.so") == \
            "../libnvidia-allocator.so.1"
        assert os.path.isfile(dest + "/usr/bin/nvidia-smi")
        assert not os.path.islink(dest + "/usr/bin/nvidia-smi")
    else:
        flavor = nh.BRANCHES[branch].flavor if branch in nh.BRANCHES else "current"
        assert libdir == f"/usr/lib/x86_64-linux-gnu/nvidia/{flavor}"
        # the package's own links, and the alternatives chain into the multiarch directory
        assert os.readlink(dest + libdir + "/libcuda.so.1") == "libcuda.so." + version
        link = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
        alt = "/etc/alternatives/nvidia--libcuda.so.1-x86_64-linux-gnu"
        assert os.readlink(dest + link) == alt
        assert os.readlink(dest + alt) == libdir + "/libcuda.so.1"
        assert root.realpath("/usr/bin/nvidia-smi") == f"/usr/lib/nvidia/{flavor}/nvidia-smi"
        assert os.readlink(dest + "/usr/lib/nvidia/nvidia") == "/etc/alternatives/nvidia"
        assert sorted(os.listdir(dest + "/etc/ld.so.conf.d")) == ["libc.conf",
                                                                 "x86_64-linux-gnu.conf"]
    assert root.realpath("/usr/lib/x86_64-linux-gnu/libcuda.so.1") == libcuda

    # every library: an ELF object; its soname link (when it has one) reaches it
    versioned = [lib for lib in desc["libraries"] if lib["versioned"]]
    assert {os.path.basename(lib["path"]).split(".so.")[0] for lib in versioned} >= {
        "libcuda", "libnvidia-ml", "libnvidia-ptxjitcompiler"}
    for lib in desc["libraries"]:
        name = os.path.basename(lib["path"])
        assert nh.elf_soname(dest + lib["path"]) == lib["soname"]
        if lib["soname"] != name:
            soname_link = os.path.join(os.path.dirname(lib["path"]), lib["soname"])
            assert root.realpath(soname_link) == lib["path"], soname_link

    # the loader cache: the real ldconfig and the fixture's reader agree
    cache = ldconfig_p(dest)
    ours = {n: p for n, flags, p in nh.read_ld_so_cache(dest + "/etc/ld.so.cache")
            if flags == 0x0303}
    assert cache == ours == desc["ld_cache"]
    for soname, stem in (("libcuda.so.1", "libcuda"), ("libnvidia-ml.so.1", "libnvidia-ml"),
                         ("libnvidia-ptxjitcompiler.so.1", "libnvidia-ptxjitcompiler")):
        assert soname in cache, (soname, sorted(cache))
        assert root.realpath(cache[soname]).endswith(f"/{stem}.so.{version}")

    # device nodes
    expect = {"/dev/nvidia0": (195, 0, 0o666), "/dev/nvidiactl": (195, 255, 0o666),
              "/dev/nvidia-modeset": (195, 254, 0o666), "/dev/nvidia-uvm": (511, 0, 0o666),
              "/dev/nvidia-uvm-tools": (511, 1, 0o666),
              "/dev/nvidia-caps/nvidia-cap1": (desc["majors"]["nvidia-caps"], 1, 0o400),
              "/dev/nvidia-caps/nvidia-cap2": (desc["majors"]["nvidia-caps"], 2, 0o444)}
    for path, (major, minor, mode) in expect.items():
        st = os.lstat(dest + path)
        assert stat.S_ISCHR(st.st_mode), path
        assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == (major, minor), path
        assert stat.S_IMODE(st.st_mode) == mode and st.st_uid == 0 and st.st_gid == 0, path
    assert {n["path"] for n in desc["device_nodes"]} == set(expect)

    # kernel-side texts
    with open(dest + "/sys/module/nvidia/version") as f:
        assert f.read() == version + "\n"
    with open(dest + "/proc/driver/nvidia/version") as f:
        text = f.read()
    assert text == desc["proc_version"]
    assert re.fullmatch(rf"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {re.escape(version)}"
                        r"  \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d UTC \d{4}\n"
                        r"GCC version:  gcc version \S+ \(Debian [^)]+\) \n", text), text
    with open(dest + "/proc/devices") as f:
        devices = f.read()
    assert devices.startswith("Character devices:\n  1 mem\n")
    assert "\n511 nvidia-uvm\n" in devices and "\n\nBlock devices:\n" in devices
    if int(version.split(".")[0]) >= 550:
        assert "\n195 nvidia\n195 nvidia-modeset\n195 nvidiactl\n" in devices
    else:
        assert "\n195 nvidia-frontend\n" in devices and "\n195 nvidia\n" not in devices
    gpu = desc["gpus"][0]
    with open(f"{dest}/proc/driver/nvidia/gpus/{gpu['bus']}/information") as f:
        assert f.read() == (
            "Model: \t\t NVIDIA GeForce RTX 3090\nIRQ:   \t\t 156\n"
            f"GPU UUID: \t {gpu['uuid']}\nVideo BIOS: \t 94.02.42.00.a9\nBus Type: \t PCIe\n"
            "DMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\n"
            "Bus Location: \t 0000:01:00.0\nDevice Minor: \t 0\nGPU Excluded:\t No\n")
    assert re.fullmatch(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                        gpu["uuid"])
    with open(dest + "/proc/driver/nvidia/params") as f:
        assert "ModifyDeviceFiles: 1\n" in f.read()

    # firmware, binaries, socket
    assert desc["firmware"], "no GSP firmware"
    for fw in desc["firmware"]:
        assert re.fullmatch(rf"/lib/firmware/nvidia/{re.escape(version)}/gsp[^/]*\.bin",
                            fw["path"])
        assert root.is_file(fw["path"])
    assert [b["path"] for b in desc["binaries"]] == ["/usr/bin/nvidia-smi"]
    sock = desc["ipc"][0]
    st = os.lstat(dest + sock["path"])
    assert (stat.S_ISSOCK(st.st_mode) if sock["kind"] == "socket" else stat.S_ISREG(st.st_mode))


def test_alternative_links_of_the_real_postinst():
    """The Debian layout's alternatives come from the real postinst of nvidia-alternative."""
    record = branch_or_skip("535")
    tree = nh.unpacked(record["packages"]["alternative"])
    with open(tree + ".control/postinst") as f:
        master, slaves = nh.alternative_links(f.read())
    assert master == ("/usr/lib/nvidia/nvidia", "nvidia", "/usr/lib/nvidia/current")
    assert ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "nvidia--libcuda.so.1-x86_64-linux-gnu",
            "/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1") in slaves
    assert ("/usr/bin/nvidia-smi", "nvidia--nvidia-smi",
            "/usr/lib/nvidia/current/nvidia-smi") in slaves
    # no package of the compute set ships an ld.so.conf.d file: the alternatives do the work
    for role, e in record["packages"].items():
        assert not os.path.exists(os.path.join(nh.unpacked(e), "etc/ld.so.conf.d")), role


# -- d. cuInit --------------------------------------------------------------------------------

CUINIT = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int(0)
r = lib.cuDriverGetVersion(ctypes.byref(v))
print(json.dumps({"cuInit": lib.cuInit(0), "cuDriverGetVersion": [r, v.value]}))
"""


def cuinit(path):
    """{"cuInit": rc, "cuDriverGetVersion": [rc, version]} of the library at path, in a child
    without CAP_MKNOD: the real libcuda mknods /dev/nvidiactl (195:255) when it can."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is missing: without it the real libcuda would create "
                    "/dev/nvidiactl on this machine")
    existed = os.path.lexists("/dev/nvidiactl")
    proc = run([setpriv, "--bounding-set", "-mknod", sys.executable, "-c", CUINIT, path],
               timeout=120)
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-2000:]}"
    if not existed:
        assert not os.path.lexists("/dev/nvidiactl"), "libcuda created /dev/nvidiactl"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("branch", REAL)
def test_cuinit_of_the_real_libcuda(hosts, branch):
    dest, desc = hosts(branch, "debian")
    root = nh.HostRoot(dest)
    # through the host's own links: libcuda.so.1 -> /etc/alternatives/... -> the real file
    path = root.on_disk(root.realpath("/usr/lib/x86_64-linux-gnu/libcuda.so.1"))
    got = cuinit(path)
    print(f"{branch}: {got}")
    assert got["cuInit"] not in (0, 34), got      # 34: CUDA_ERROR_STUB_LIBRARY
    assert got["cuDriverGetVersion"] == [0, desc["cuda_driver_version"]]


@pytest.mark.parametrize("branch", STUBS)
def test_cuinit_of_a_stub(hosts, branch):
    import ctypes
    dest, desc = hosts(branch, "run")
    got = cuinit(dest + desc["libcuda"])
    assert got == {"cuInit": 999, "cuDriverGetVersion": [0, nh.STUB_BRANCHES[branch][1]]}
    ml = ctypes.CDLL(dest + f"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.{version_of(branch)}")
    assert ml.nvmlInit_v2() == 9
    buf = ctypes.create_string_buffer(32)
    assert ml.nvmlSystemGetDriverVersion(buf, 32) == 0
    assert buf.value.decode() == version_of(branch)


# -- e. CDI -----------------------------------------------------------------------------------

YAML_HEAD = """---
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
    - name: "0"
      containerEdits:
        deviceNodes:
            - path: /dev/nvidia0
              major: 195
              fileMode: 438
              permissions: rwm
"""


def test_yaml_layout():
    """The emitter's layout on a spec of our own: yaml.v3's indentation and quoting."""
    spec = {"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu",
            "devices": [{"name": "0", "containerEdits": {"deviceNodes": [
                {"path": "/dev/nvidia0", "major": 195, "fileMode": 438,
                 "permissions": "rwm"}]}}],
            "containerEdits": {"env": ["A=b"], "hooks": [
                {"hookName": "createContainer", "path": "/usr/bin/nvidia-cdi-hook",
                 "args": ["nvidia-cdi-hook", "create-symlinks", "--link",
                          "libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so"],
                 "env": ["NVIDIA_CTK_DEBUG=false"]}],
                "mounts": [{"hostPath": "/a", "containerPath": "/a", "options": ["ro"]}]}}
    assert nh.spec_yaml(spec) == YAML_HEAD + """containerEdits:
    env:
        - A=b
    hooks:
        - hookName: createContainer
          path: /usr/bin/nvidia-cdi-hook
          args:
            - nvidia-cdi-hook
            - create-symlinks
            - --link
            - libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so
          env:
            - NVIDIA_CTK_DEBUG=false
    mounts:
        - hostPath: /a
          containerPath: /a
          options:
            - ro
"""
    for s, quoted in (("0", True), ("12", True), ("yes", True), ("true", True), ("", True),
                      ("1.5", True), ("0.5.0", False), ("rwm", False), ("--folder", False),
                      ("- x", True), ("a: b", True), ("GPU-1a2b", False)):
        assert (nh._yaml_str(s) != s) == quoted, s


@pytest.mark.parametrize("branch,layout,gpus", [
    ("535", "debian", ("NVIDIA GeForce RTX 3090", "Tesla T4")),
    ("535", "run", None), ("470", "debian", None), ("550", "debian", None),
    ("535-tesla", "debian", None), ("580", "run", None)])
def test_cdi_spec(hosts, scratch, branch, layout, gpus):
    dest, desc = hosts(branch, layout, gpus=list(gpus)) if gpus else hosts(branch, layout)
    root = nh.HostRoot(dest)
    version = desc["driver_version"]
    base = os.path.join(scratch, f"cdi-{branch}-{layout}")
    nh.write_cdi_spec(dest, base + ".yaml")
    spec = nh.write_cdi_spec(dest, base + ".json", "json")
    with open(base + ".json") as f:
        assert json.load(f) == spec
    with open(base + ".yaml") as f:
        text = f.read()
    assert text == nh.spec_yaml(spec)
    assert text.startswith(YAML_HEAD)
    assert oct(os.stat(base + ".yaml").st_mode & 0o777) == "0o644"
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        assert yaml.safe_load(text) == spec

    assert spec["cdiVersion"] == "0.5.0" and spec["kind"] == "nvidia.com/gpu"
    names = [d["name"] for d in spec["devices"]]
    gpu_list = desc["gpus"]
    assert names == sorted([str(g["index"]) for g in gpu_list]
                           + [g["uuid"] for g in gpu_list]) + ["all"]
    by_name = {d["name"]: d["containerEdits"] for d in spec["devices"]}
    for g in gpu_list:
        node = {"path": g["device_node"], "major": 195, "fileMode": 438, "permissions": "rwm"}
        if g["minor"]:
            node["minor"] = g["minor"]
        assert by_name[str(g["index"])] == by_name[g["uuid"]] == {"deviceNodes": [node]}
    assert [n["path"] for n in by_name["all"]["deviceNodes"]] == [g["device_node"]
                                                                  for g in gpu_list]

    edits = spec["containerEdits"]
    assert list(edits) == ["env", "deviceNodes", "hooks", "mounts"]
    assert edits["env"][-1] == "NVIDIA_VISIBLE_DEVICES=void"
    libcuda_dirs = edits["env"][0].split("=", 1)[1].split(":")
    assert os.path.dirname(desc["libcuda"]) in libcuda_dirs
    assert set(libcuda_dirs) == set(desc["driver_lib_dirs"])
    assert [(n["path"], n["major"], n.get("minor", 0)) for n in edits["deviceNodes"]] == [
        ("/dev/nvidia-modeset", 195, 254), ("/dev/nvidia-uvm", 511, 0),
        ("/dev/nvidia-uvm-tools", 511, 1), ("/dev/nvidiactl", 195, 255)]
    assert all("hostPath" not in n for e in by_name.values() for n in e["deviceNodes"])

    hooks = edits["hooks"]
    assert all(h["path"] == "/usr/bin/nvidia-cdi-hook" and h["args"][0] == "nvidia-cdi-hook"
               and h["hookName"] == "createContainer" for h in hooks)
    assert [h["args"][1] for h in hooks] == [
        "create-symlinks", "create-symlinks", "enable-cuda-compat", "update-ldcache",
        "disable-device-node-modification", "update-application-profile"]
    libdir = os.path.dirname(desc["libcuda"])
    assert hooks[0]["args"][2:] == [
        "--link", f"../libnvidia-allocator.so.1::{libdir}/gbm/nvidia-drm_gbm.so"]
    assert f"libcuda.so.1::{libdir}/libcuda.so" in hooks[1]["args"]
    assert f"libcuda.so.{version}::{libdir}/libcuda.so.1" in hooks[1]["args"]
    assert hooks[2]["args"][2:] == ["--host-driver-version=" + version]

    mounts = edits["mounts"]
    assert all(m["hostPath"] == m["containerPath"] and root.exists(m["hostPath"])
               for m in mounts)
    want_libs = {lib["path"] for lib in desc["libraries"] if lib["versioned"]}
    want = (want_libs | {f["path"] for f in desc["firmware"]}
            | {b["path"] for b in desc["binaries"]} | {i["path"] for i in desc["ipc"]})
    assert {m["containerPath"] for m in mounts} == want
    for m in mounts:
        if m["containerPath"] in {i["path"] for i in desc["ipc"]}:
            assert m["options"] == ["nosuid", "nodev", "rbind", "rprivate", "noexec"]
        else:
            assert m["options"] == ["ro", "nosuid", "nodev", "rbind", "rprivate"]
    keys = [(m["containerPath"].count("/"), m["containerPath"]) for m in mounts]
    assert keys == sorted(keys)
    folders = hooks[3]["args"][2:]
    assert folders[::2] == ["--folder"] * (len(folders) // 2)
    assert set(folders[1::2]) == {os.path.dirname(p) for p in want_libs}


# -- f. variants and the CLI ------------------------------------------------------------------

def test_host_after_reboot_has_no_uvm_nodes(hosts):
    dest, desc = hosts("535", "debian", with_uvm_nodes=False)
    assert not os.path.lexists(dest + "/dev/nvidia-uvm")
    assert not os.path.lexists(dest + "/dev/nvidia-uvm-tools")
    with open(dest + "/proc/devices") as f:
        assert "\n511 nvidia-uvm\n" in f.read()
    assert "/dev/nvidia-uvm" not in {n["path"] for n in desc["device_nodes"]}
    spec = nh.cdi_spec(dest)
    assert [n["path"] for n in spec["containerEdits"]["deviceNodes"]] == [
        "/dev/nvidia-modeset", "/dev/nvidiactl"]


def test_open_module_texts(hosts):
    dest, desc = hosts("570", "debian", open_module=True, uvm_major=509)
    with open(dest + "/proc/driver/nvidia/version") as f:
        assert f.read() == (
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build  "
            "(dvs-builder@U16-I3-B03-4-3)  Tue Mar 11 19:18:36 UTC 2025\n"
            "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n")
    with open(dest + "/proc/driver/nvidia/gpus/0000:01:00.0/information") as f:
        assert "\nGPU Firmware: \t 570.133.20\nGPU Excluded:\t No\n" in f.read()
    st = os.lstat(dest + "/dev/nvidia-uvm")
    assert os.major(st.st_rdev) == 509 and desc["majors"]["nvidia-uvm"] == 509


def test_real_535_proc_version(hosts):
    dest, desc = hosts("535", "debian")
    assert desc["proc_version"] == (
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.261.03  Sat Jun 14 16:05:50 UTC "
        "2025\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1) \n")


def test_cli_make(scratch):
    branch_or_skip("535")
    d = os.path.join(scratch, "cli-host")
    proc = run([sys.executable, os.path.join(REPO_TESTS, "fixtures", "nvidia_host.py"), "make",
                "--dir", d, "--branch", "535", "--layout", "run",
                "--gpus", "NVIDIA GeForce RTX 3090,Tesla T4", "--cdi",
                d + "/etc/cdi/nvidia.yaml", "--json"])
    assert proc.returncode == 0, proc.stderr
    desc = json.loads(proc.stdout)
    assert [g["model"] for g in desc["gpus"]] == ["NVIDIA GeForce RTX 3090", "Tesla T4"]
    with open(d + "/etc/cdi/nvidia.yaml") as f:
        assert f.read().startswith(YAML_HEAD)
    assert os.lstat(d + "/dev/nvidia1").st_rdev == os.makedev(195, 1)
