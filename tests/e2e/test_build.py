"""End-to-end: `rootlock build` turns a lock into a rootfs image that GNU tar, zstd, a chroot and
a real LXC container accept, with the same bytes whatever the environment of the build.

The fixture index (fixtures/index_server.py) serves the torch 2.8.0+cu128 stack and app-cli (a
console script); the base is the cached Debian root as a pinned tarball. One lock (with a
[files] entry, a [loader] path and python.compile-bytecode) is built once and unpacked once, as
module fixtures; a case that writes into the unpacked tree does so in a copy of its own. Then:
  a. lock, build: the image, IMAGE.sha256 (matching), IMAGE.cdx.json (CycloneDX, one component
     per locked package with its wheel's sha256) and IMAGE.check.json are written;
  b. a second build with another TZ, umask, locale, working directory, cache directory, thread
     count and clock date (faketime) gives the same bytes;
  c. `zstd -t` and GNU tar accept it; unpacked, the venv's python imports torch (the fixture)
     in a chroot, bin/activate works, and the console script runs; /dev holds no device node;
     every member name starts with "./"; owners are numeric (no user or group names);
  d. a privileged LXC container boots from a throwaway copy and runs the venv's python;
  e. a lock whose closure fails builds nothing (exit 1, no file under the image's name);
  h. a base listing the later name of a hard link group first builds, the links kept;
  g. an ordinary user (nobody) builds the same bytes with a cache of its own;
  f. a build interrupted by SIGINT leaves nothing under either name; one killed with SIGKILL
     leaves nothing under the image's name, and the next build into that folder succeeds;
  i. the venv's four activation scripts are byte for byte what the base's own `python3 -m venv`
     writes in the chroot;
  j. a build onto a full disk (a 4 MiB tmpfs) fails with one line naming the reason and leaves
     nothing behind; the same build elsewhere then succeeds;
  k. a lock whose wheel (in the cache under its own sha256) holds a "../" path, an absolute path
     or a symlink is refused with the scanner's message, and no image is written;
  l. the recipe's [files] entry is in the image (0644), its [loader] library path is in
     /etc/ld.so.conf.d/rootlock.conf, `ldconfig -p` in the chroot finds libcudnn.so.9 there, and
     /etc/ld.so.cache is byte for byte what glibc's ldconfig writes for the unpacked image;
  m. with python.compile-bytecode, app_cli's .pyc is byte for byte what the base's py_compile
     writes (unchecked-hash, the installed path), RECORD lists every .pyc with its digest, and
     the import loads it (a source changed under it is not read); (b) and (g) show the bytes do
     not depend on the building environment;
  n. `rootlock freeze` of the unpacked image's venv gives the lock's packages, versions and
     soname tables and the base's target, a build of that frozen lock (no base) is refused, and
     `check --lock` finds the venv exactly as locked; in a copy with a deleted and a modified
     file, both are reported by freeze and by check (exit 1, no lock written);
  o. `freeze --index` matches every distribution to the very wheel the lock holds, and the
     frozen lock (base taken with --base-from) builds an image whose venv is member for member,
     byte for byte the first image's.
"""
import hashlib
import json
import os
import pwd
import shlex
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import tomllib
import zipfile

import pytest

from fixtures.cli import run, run_rootlock
from fixtures.debian_root import base_tarball, run_in_chroot

VENV = "/opt/venv"
SITE = VENV + "/lib/python3.11/site-packages"
CUDNN_LIB = SITE + "/nvidia/cudnn/lib"
EXTRA_FILE = ("/etc/rootlock-test/motd", "built by rootlock\nsecond line\n")
ACTIVATION_SCRIPTS = ("activate", "activate.csh", "activate.fish", "Activate.ps1")


def write_recipe(path, index_url, base, requires, torch=True, extras=False):
    base_path, base_sha = base
    bytecode = "compile-bytecode = true\n" if extras else ""
    torch_tables = ('[torch]\nversion = "2.8.0"\ncuda = "12.8"\n\n'
                    '[cuda]\ndriver = "570.133.07"\n\n') if torch else ""
    with open(path, "w") as f:
        f.write(f'[image]\nname = "buildtest"\n\n'
                f'[base]\ntarball = "{base_path}"\nsha256 = "{base_sha}"\n\n'
                f'[python]\nversion = "3.11"\n{bytecode}\n{torch_tables}'
                f'[[index]]\nname = "fixture"\nurl = "{index_url}"\n\n'
                f'[packages]\nrequires = {json.dumps(requires)}\n\n'
                '[environment]\nPYTHONUNBUFFERED = "1"\n')
        if extras:
            f.write(f'\n[loader]\nlibrary-paths = ["{CUDNN_LIB}"]\n\n'
                    f'[files]\n"{EXTRA_FILE[0]}" = {json.dumps(EXTRA_FILE[1])}\n')
    return path


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def in_root(rootfs, path):
    return os.path.join(rootfs, path.lstrip("/"))


def linked_copy(rootfs, dest):
    """A hard-linked copy of the unpacked image: new files and renames stay in the copy (never
    rewrite a file of it in place)."""
    subprocess.run(["cp", "-al", rootfs, dest], check=True)
    return dest


def replace_file(path, data):
    """Rewrite `path` by rename, so that a hard-linked twin keeps the old bytes."""
    tmp = path + ".rootlock-test"
    with open(tmp, "wb") as f:
        f.write(data)
    shutil.copymode(path, tmp)
    os.replace(tmp, path)


# The lock and the image every case starts from.

@pytest.fixture(scope="module")
def base():
    return base_tarball()


@pytest.fixture(scope="module")
def cache(scratch):
    return os.path.join(scratch, "cache-1")


@pytest.fixture(scope="module")
def lock(rootlock, scratch, fixture_index, base, cache):
    recipe = write_recipe(os.path.join(scratch, "build.toml"), fixture_index.simple_url, base,
                          ["app-cli"], extras=True)
    path = os.path.join(scratch, "pylock.buildtest.toml")
    proc = run_rootlock(rootlock, "lock", recipe, "-o", path, "--cache-dir", cache)
    assert proc.returncode == 0, f"lock: exit {proc.returncode}: {proc.stderr}"
    return path


@pytest.fixture(scope="module")
def image(rootlock, scratch, lock, cache):
    """(path, sha256) of the image built from the lock."""
    path = os.path.join(scratch, "out", "buildtest.tar.zst")
    started = time.monotonic()
    proc = run_rootlock(rootlock, "build", lock, "-o", path, "--cache-dir", cache)
    took = time.monotonic() - started
    print(proc.stdout)
    assert proc.returncode == 0 and os.path.isfile(path), \
        f"(a) build: exit {proc.returncode}: {proc.stderr}"
    digest = sha256_of(path)
    print(f"(a) built {os.path.getsize(path)} bytes in {took:.2f} s, sha256 {digest}")
    return path, digest


@pytest.fixture(scope="module")
def rootfs(scratch, image):
    """The image unpacked with GNU tar (numeric owners, modes kept). Cases only read it."""
    dest = os.path.join(scratch, "rootfs")
    os.makedirs(dest)
    proc = run(["tar", "--zstd", "--numeric-owner", "-xpf", image[0], "-C", dest])
    assert proc.returncode == 0, f"(c) GNU tar does not unpack the image: {proc.stderr}"
    return dest


# (a) the image and the files beside it.

def test_a_sha256_file_matches_the_image(image):
    path, digest = image
    text = read(path + ".sha256")
    assert text == f"{digest}  buildtest.tar.zst\n", \
        f"IMAGE.sha256 should be '{digest}  buildtest.tar.zst\\n', is {text!r}"


def test_a_sbom_is_cyclonedx_with_every_locked_package(image, lock):
    with open(image[0] + ".cdx.json") as f:
        sbom = json.load(f)
    names = {c.get("name") for c in sbom.get("components", [])}
    missing = sorted(p["name"] for p in load(lock)["packages"] if p["name"] not in names)
    assert sbom.get("bomFormat") == "CycloneDX" and not missing, \
        f"SBOM: format {sbom.get('bomFormat')}, locked packages without a component {missing}"


def test_a_sbom_component_holds_each_wheels_sha256(image, lock):
    with open(image[0] + ".cdx.json") as f:
        sbom = json.load(f)
    hashes = {c.get("name"): {h.get("content") for h in c.get("hashes", [])
                              if h.get("alg") == "SHA-256"}
              for c in sbom.get("components", [])}
    wrong = sorted(p["name"] for p in load(lock)["packages"]
                   if p["wheels"][0]["hashes"]["sha256"] not in hashes.get(p["name"], set()))
    assert not wrong, f"SBOM components without their locked wheel's SHA-256: {wrong}"


def test_a_check_json_says_ok(image):
    with open(image[0] + ".check.json") as f:
        report = json.load(f)
    assert report["ok"] is True, f"IMAGE.check.json says not ok: {report.get('problems', [])[:3]}"


# (b) another environment, the same bytes.

def test_b_other_tz_umask_locale_cwd_cache_threads_clock_same_bytes(rootlock, scratch, lock,
                                                                    image):
    other_dir = os.path.join(scratch, "elsewhere")
    os.makedirs(other_dir)
    env = dict(os.environ, TZ="Pacific/Kiritimati", LC_ALL="C", LANG="C")
    second = os.path.join(scratch, "out2", "buildtest.tar.zst")
    # Another clock date too, where libfaketime is installed (make deps installs it).
    clock = ["faketime", "2031-05-05 12:00:00"] if shutil.which("faketime") else []
    if not clock:
        print("(b) faketime is not installed: the clock date is not varied")
    command = clock + [rootlock, "build", lock, "-o", second, "--cache-dir",
                       os.path.join(scratch, "cache-2"), "-j", "1"]
    proc = run(["sh", "-c", "umask 077 && exec " + shlex.join(command)], env=env, cwd=other_dir)
    got = sha256_of(second) if os.path.isfile(second) else None
    assert proc.returncode == 0 and got == image[1], \
        f"second build: exit {proc.returncode}, sha256 {got}, expected {image[1]}: {proc.stderr}"


# (c) the tools accept it, and it works.

@pytest.fixture(scope="module")
def listing(image):
    proc = run(["tar", "--zstd", "--numeric-owner", "-tvf", image[0]])
    assert proc.returncode == 0, f"GNU tar does not list the image: {proc.stderr}"
    return proc.stdout.splitlines()


def test_c_zstd_test_accepts_it(image):
    if not shutil.which("zstd"):
        pytest.skip("zstd is not installed")
    proc = run(["zstd", "-tq", image[0]])
    assert proc.returncode == 0, f"zstd -t refuses the image: {proc.stderr}"


def test_c_gnu_tar_member_names_start_with_dot_slash(listing):
    bad = [line for line in listing if not line.split()[5].startswith("./")]
    assert listing and not bad, f"members not under ./: {bad[:5]}"


def test_c_no_device_nodes(listing):
    devices = [line for line in listing if line[:1] in "cbp"]
    assert not devices, f"device nodes in the image: {devices[:3]}"


def test_c_owners_are_numeric(image):
    zstd = subprocess.Popen(["zstd", "-dcq", image[0]], stdout=subprocess.PIPE)
    named, members = [], 0
    with tarfile.open(fileobj=zstd.stdout, mode="r|") as tar:
        for member in tar:
            members += 1
            if member.uname or member.gname:
                named.append((member.name, member.uname, member.gname))
    zstd.wait()
    assert members > 0 and not named, \
        f"members with user or group names (owners should be numeric only): {named[:5]}"


def test_c_import_torch_in_a_chroot(rootfs):
    proc = run_in_chroot(rootfs, [VENV + "/bin/python", "-c", "import torch"])
    assert proc.returncode == 0, f"import torch in a chroot: exit {proc.returncode}: {proc.stderr}"


def test_c_bin_activate_sets_the_prefix(rootfs):
    proc = run_in_chroot(rootfs, ["/bin/bash", "-c", f". {VENV}/bin/activate && python -c "
                                  "'import sys; print(sys.prefix)'"])
    assert proc.returncode == 0 and proc.stdout.strip() == VENV, \
        f"activate then python: expected {VENV}, got exit {proc.returncode}: " \
        f"{proc.stdout}{proc.stderr}"


def test_c_console_script_runs(rootfs):
    proc = run_in_chroot(rootfs, [VENV + "/bin/app-cli"])
    assert proc.returncode == 0 and "app-cli 1.0.0" in proc.stdout, \
        f"console script: expected 'app-cli 1.0.0', got exit {proc.returncode}: " \
        f"{proc.stdout}{proc.stderr}"


# (d) a real container.

def test_d_lxc_container_runs_the_venvs_python(scratch, rootfs):
    """A privileged container on a copy of the unpacked image (a real one: the container may
    write files in place), python run in it with lxc-attach, then stopped."""
    if shutil.which("lxc-start") is None:
        pytest.skip("lxc is not installed")
    copy = os.path.join(scratch, "lxc-rootfs")
    subprocess.run(["cp", "-a", rootfs, copy], check=True)
    lxcpath = os.path.join(scratch, "lxc")
    name = "rootlock-build-test"
    os.makedirs(os.path.join(lxcpath, name))
    with open(os.path.join(lxcpath, name, "config"), "w") as f:
        f.write("lxc.include = /usr/share/lxc/config/common.conf\n"
                f"lxc.uts.name = {name}\nlxc.rootfs.path = dir:{copy}\n"
                "lxc.net.0.type = empty\nlxc.apparmor.profile = unconfined\n"
                "lxc.init.cmd = /bin/sleep infinity\n")
    started = run(["lxc-start", "-P", lxcpath, "-n", name])
    try:
        assert started.returncode == 0, f"lxc-start: exit {started.returncode}: {started.stderr}"
        attached = run(["lxc-attach", "-P", lxcpath, "-n", name, "--clear-env", "--",
                        VENV + "/bin/python", "-c",
                        "import torch, sys; print('torch', torch.__name__); sys.exit(7)"])
        assert attached.returncode == 7 and "torch torch" in attached.stdout, \
            f"python in the container: expected exit 7 and 'torch torch', got exit " \
            f"{attached.returncode}: {attached.stdout}{attached.stderr}"
    finally:
        run(["lxc-stop", "-k", "-P", lxcpath, "-n", name])
        shutil.rmtree(os.path.join(lxcpath, name), ignore_errors=True)  # never lxc-destroy


# (e) a failing closure builds nothing.

def test_e_failing_closure_builds_nothing(rootlock, scratch, fixture_index, base, cache):
    broken = write_recipe(os.path.join(scratch, "broken.toml"), fixture_index.simple_url, base,
                          ["broken-ext"], torch=False)
    broken_lock = os.path.join(scratch, "pylock.broken.toml")
    locked = run_rootlock(rootlock, "lock", broken, "-o", broken_lock, "--cache-dir", cache,
                          "--allow-broken")
    assert os.path.isfile(broken_lock), \
        f"lock --allow-broken wrote no lock: exit {locked.returncode}: {locked.stderr}"
    broken_image = os.path.join(scratch, "out-e", "broken.tar.zst")
    proc = run_rootlock(rootlock, "build", broken_lock, "-o", broken_image, "--cache-dir", cache)
    assert proc.returncode == 1 and not os.path.exists(broken_image) and \
        "libnotthere.so.1" in proc.stdout, \
        f"broken closure: expected exit 1, libnotthere.so.1 named and no image; exit " \
        f"{proc.returncode}, image {os.path.exists(broken_image)}: {proc.stdout[-1000:]}"


# (h) a base whose hard links name the later path first.

def reversed_links_base(work):
    """The cached base re-packed so that each hard link group lists its later name first
    (/usr/bin/perl5.36.0 as the file, perl linking to it), as an unsorted base may."""
    source, _ = base_tarball()
    out = os.path.join(work, "reversed-links.tar")
    with tarfile.open(source) as src:
        members = src.getmembers()
        groups = {}
        for m in members:
            if m.islnk():
                groups.setdefault(m.linkname, []).append(m)
        swap = {}
        for target, links in groups.items():
            last = max([target] + [m.name for m in links])
            swap[target] = last
        with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as dst:
            by_name = {m.name: m for m in members}
            for m in members:
                if m.name in swap:          # the old file: now a link to the last name
                    continue
                if m.islnk() and m.linkname in swap:
                    if m.name == swap[m.linkname]:
                        data = by_name[m.linkname]
                        first = tarfile.TarInfo(m.name)
                        first.size, first.mode, first.mtime = data.size, data.mode, data.mtime
                        first.uid, first.gid = data.uid, data.gid
                        dst.addfile(first, src.extractfile(data))
                        link = tarfile.TarInfo(m.linkname)
                        link.type, link.linkname = tarfile.LNKTYPE, m.name
                        dst.addfile(link)
                    else:
                        m.linkname = swap[m.linkname]
                        dst.addfile(m)
                    continue
                dst.addfile(m, src.extractfile(m) if m.isfile() else None)
    with open(out, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    return out, digest, sorted(swap.values())


def test_h_reversed_hard_links_build_with_links_kept(rootlock, scratch, fixture_index, cache):
    base_path, base_sha, names = reversed_links_base(scratch)
    recipe = write_recipe(os.path.join(scratch, "links.toml"), fixture_index.simple_url,
                          (base_path, base_sha), [], torch=False)
    lock_h = os.path.join(scratch, "pylock.links.toml")
    proc = run_rootlock(rootlock, "lock", recipe, "-o", lock_h, "--cache-dir", cache)
    assert proc.returncode == 0, f"lock of the reversed-links base: {proc.stderr}"
    image_h = os.path.join(scratch, "out-h", "links.tar")
    proc = run_rootlock(rootlock, "build", lock_h, "-o", image_h, "--cache-dir", cache)
    listing = run(["tar", "-tvf", image_h]).stdout if proc.returncode == 0 else ""
    links = [line for line in listing.splitlines() if line.startswith("h")]
    assert proc.returncode == 0 and len(links) == len(names), \
        f"reversed hard links: exit {proc.returncode}, {len(links)} links in the image, " \
        f"{len(names)} in the base: {links} {proc.stderr}"


# (g) an ordinary user builds it too: nothing in a build needs root.

def test_g_nobody_builds_the_same_bytes(rootlock, lock, image):
    """The same lock built by `nobody`, with a cache and an output folder of its own."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to switch to nobody")
    nobody = pwd.getpwnam("nobody")
    shared = tempfile.mkdtemp(prefix="rootlock-nobody-")
    try:
        os.chmod(shared, 0o755)
        theirs = os.path.join(shared, os.path.basename(lock))
        shutil.copy(lock, theirs)
        own = os.path.join(shared, "own")
        os.makedirs(own)
        os.chown(own, nobody.pw_uid, nobody.pw_gid)
        target = os.path.join(own, "out", "buildtest.tar.zst")
        proc = run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                    "--clear-groups", rootlock, "build", theirs, "-o", target,
                    "--cache-dir", os.path.join(own, "cache")],
                   env={"PATH": os.environ["PATH"], "HOME": "/nonexistent", "LANG": "C.UTF-8"})
        got = sha256_of(target) if os.path.isfile(target) else None
        assert proc.returncode == 0 and got == image[1], \
            f"build as nobody: exit {proc.returncode}, sha256 {got}, expected {image[1]}: " \
            f"{proc.stderr}"
    finally:
        shutil.rmtree(shared, ignore_errors=True)


# (f) interrupted builds.

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_f_interrupted_build_leaves_no_image_then_rebuilds(rootlock, scratch, lock, cache, sig):
    target = os.path.join(scratch, f"out-{sig.name}", "buildtest.tar.xz")
    folder = os.path.dirname(target)
    child = subprocess.Popen([rootlock, "build", lock, "-o", target, "--cache-dir", cache],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        if os.path.isdir(folder) and any(".partial-" in n for n in os.listdir(folder)):
            break  # writing has begun: interrupt it half-way
        time.sleep(0.01)
    child.send_signal(sig)
    child.wait(timeout=120)
    left = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    assert not os.path.exists(target), f"{sig.name}: the image exists: {left}"
    if sig == signal.SIGINT:
        assert not left, f"SIGINT should leave nothing in {folder}, left {left}"
    # The next build into the same folder (over what SIGKILL left) succeeds. As .tar.zst: an
    # xz build is slow enough to interrupt, and as slow again to finish (minutes under load).
    rebuilt = os.path.join(folder, "buildtest.tar.zst")
    proc = run_rootlock(rootlock, "build", lock, "-o", rebuilt, "--cache-dir", cache)
    assert proc.returncode == 0 and os.path.isfile(rebuilt), \
        f"rebuild after {sig.name}: exit {proc.returncode}: {proc.stderr}"


# (i) the activation scripts are the base's venv's.

@pytest.fixture(scope="module")
def reference_venv(scratch, rootfs):
    """A copy of the unpacked image with a venv of the same name made by the base's python."""
    copy = linked_copy(rootfs, os.path.join(scratch, "rootfs-venv"))
    reference = "/ref/" + os.path.basename(VENV)
    proc = run_in_chroot(copy, ["/usr/bin/python3", "-m", "venv", "--without-pip", reference])
    assert proc.returncode == 0, f"python3 -m venv in the chroot: {proc.stderr}"
    return copy, reference


@pytest.mark.parametrize("name", ACTIVATION_SCRIPTS)
def test_i_activation_script_is_what_venv_writes(reference_venv, name):
    copy, reference = reference_venv
    expected = read(os.path.join(in_root(copy, reference), "bin", name), "rb").replace(
        reference.encode(), VENV.encode())
    ours = read(os.path.join(in_root(copy, VENV), "bin", name), "rb")
    assert ours == expected, f"bin/{name} ({len(ours)} bytes) differs from what the base's " \
        f"venv writes ({len(expected)} bytes)"


# (j) a full disk.

def test_j_full_disk_one_line_nothing_left_then_a_roomy_build(rootlock, scratch, lock, cache):
    """ENOSPC half-way: one line, exit non-zero, nothing left; then the build elsewhere works."""
    mount_point = os.path.join(scratch, "full")
    os.makedirs(mount_point)
    if run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount_point]).returncode != 0:
        pytest.skip("cannot mount a tmpfs")
    try:
        target = os.path.join(mount_point, "buildtest.tar.zst")
        proc = run_rootlock(rootlock, "build", lock, "-o", target, "--cache-dir", cache)
        lines = proc.stderr.strip().splitlines()
        print(f"(j) full disk: exit {proc.returncode}: {proc.stderr.strip()}")
        assert proc.returncode != 0 and lines == [f"rootlock: {target}: no space left on device"], \
            f"full disk: expected a non-zero exit and the one line 'rootlock: {target}: no " \
            f"space left on device', got exit {proc.returncode}: {proc.stderr}"
        left = os.listdir(mount_point)
        assert not left, f"a full disk left {left}"
    finally:
        run(["umount", mount_point])
    roomy = os.path.join(scratch, "out-j", "buildtest.tar.zst")
    proc = run_rootlock(rootlock, "build", lock, "-o", roomy, "--cache-dir", cache)
    assert proc.returncode == 0 and os.path.isfile(roomy), \
        f"the same build elsewhere after the full disk: exit {proc.returncode}: {proc.stderr}"


# (k) hostile wheels.

def hostile_wheel(path, original, kind):
    """A copy of `original` with one member no installer may write."""
    shutil.copy(original, path)
    with zipfile.ZipFile(path, "a") as z:
        if kind == "climbing":
            z.writestr("app_cli/../../../etc/evil", b"x")
        elif kind == "absolute":
            z.writestr("/etc/evil", b"x")
        else:
            info = zipfile.ZipInfo("app_cli/evil-link")
            info.create_system = 3
            info.external_attr = 0o120777 << 16
            z.writestr(info, b"../../../../../etc/passwd")


HOSTILE = {"climbing": "entry path climbs out with '..': app_cli/../../../etc/evil",
           "absolute": "entry path is absolute: /etc/evil",
           "symlink": "symlink entry: app_cli/evil-link"}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_k_hostile_wheel_refused_no_image(rootlock, scratch, lock, cache, kind):
    """The lock with app-cli's wheel swapped for a hostile one, already in the cache."""
    wheel = next(p for p in load(lock)["packages"] if p["name"] == "app-cli")["wheels"][0]
    old_sha = wheel["hashes"]["sha256"]
    original = os.path.join(cache, "blobs", "sha256", old_sha[:2], old_sha[2:])
    assert os.path.isfile(original), f"locking left app-cli's wheel out of the cache: {original}"
    made = os.path.join(scratch, f"hostile-{kind}.whl")
    hostile_wheel(made, original, kind)
    new_sha = sha256_of(made)
    blob = os.path.join(cache, "blobs", "sha256", new_sha[:2], new_sha[2:])
    os.makedirs(os.path.dirname(blob), exist_ok=True)
    shutil.copy(made, blob)
    lines = []
    for line in read(lock).splitlines(keepends=True):
        if old_sha in line:
            line = line.replace(old_sha, new_sha).replace(
                f"size = {wheel['size']}", f"size = {os.path.getsize(made)}")
        lines.append(line)
    bad_lock = os.path.join(scratch, f"pylock.hostile-{kind}.toml")
    with open(bad_lock, "w") as f:
        f.write("".join(lines))
    target = os.path.join(scratch, f"out-{kind}", "hostile.tar.zst")
    proc = run_rootlock(rootlock, "build", bad_lock, "-o", target, "--cache-dir", cache,
                        "--offline")
    print(f"(k) {kind}: exit {proc.returncode}: {proc.stderr.strip()}")
    assert proc.returncode != 0 and HOSTILE[kind] in proc.stderr and \
        len(proc.stderr.strip().splitlines()) == 1 and not os.path.exists(target), \
        f"{kind}: expected a non-zero exit, the one line {HOSTILE[kind]!r} and no image; got " \
        f"exit {proc.returncode}, image {os.path.exists(target)}: {proc.stderr}"


# (l) the recipe's file, the loader path and the ld.so cache.

def test_l_recipe_file_in_the_image_0644(rootfs):
    path = in_root(rootfs, EXTRA_FILE[0])
    content, mode = read(path), os.stat(path).st_mode & 0o7777
    assert content == EXTRA_FILE[1] and mode == 0o644, \
        f"{EXTRA_FILE[0]}: expected {EXTRA_FILE[1]!r} mode 0o644, got {content!r} {oct(mode)}"


def test_l_loader_path_in_rootlock_conf(rootfs):
    conf = read(in_root(rootfs, "/etc/ld.so.conf.d/rootlock.conf"))
    assert CUDNN_LIB + "\n" in conf, f"rootlock.conf lacks {CUDNN_LIB}: {conf!r}"


def test_l_ldconfig_p_finds_libcudnn_there(rootfs):
    proc = run_in_chroot(rootfs, ["/sbin/ldconfig", "-p"])
    assert proc.returncode == 0 and f"=> {CUDNN_LIB}/libcudnn.so.9" in proc.stdout, \
        f"ldconfig -p does not list {CUDNN_LIB}/libcudnn.so.9: {proc.stdout[-800:]}{proc.stderr}"


def test_l_ld_so_cache_is_what_ldconfig_writes(scratch, rootfs):
    # glibc's ldconfig, run on the unpacked image without touching links, is the referee.
    copy = linked_copy(rootfs, os.path.join(scratch, "rootfs-ldconfig"))
    proc = run_in_chroot(copy, ["/sbin/ldconfig", "-X", "-C", "/tmp/referee.cache"])
    assert proc.returncode == 0, f"ldconfig in the chroot: {proc.stderr}"
    ours = read(in_root(copy, "/etc/ld.so.cache"), "rb")
    referee = read(in_root(copy, "/tmp/referee.cache"), "rb")
    assert ours == referee, \
        f"/etc/ld.so.cache ({len(ours)} bytes) differs from ldconfig's ({len(referee)} bytes)"
    print(f"(l) /etc/ld.so.cache: {len(ours)} bytes, identical to ldconfig's")


# (m) compiled bytecode.

BYTECODE_REFEREE = r"""
import base64, csv, hashlib, importlib.util, os, py_compile, sys
site = sys.argv[1]
source = os.path.join(site, "app_cli/main.py")
ours = importlib.util.cache_from_source(source)
with open(ours, "rb") as f:
    ours_bytes = f.read()
referee = "/tmp/referee.pyc"
py_compile.compile(source, cfile=referee, dfile=source, doraise=True,
                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
with open(referee, "rb") as f:
    print("same-as-py_compile", ours_bytes == f.read())
record = next(os.path.join(site, d, "RECORD") for d in os.listdir(site)
              if d.startswith("app_cli-") and d.endswith(".dist-info"))
bad, pycs = [], 0
for row in csv.reader(open(record, newline="")):
    path, digest, size = row
    if not digest:
        continue
    with open(os.path.join(site, path), "rb") as f:
        data = f.read()
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if want != digest or str(len(data)) != size:
        bad.append(path)
    pycs += path.endswith(".pyc")
print("record-pycs", pycs, "bad", bad)
import app_cli.main
print("loaded-from", app_cli.main.__cached__)
"""


@pytest.fixture(scope="module")
def bytecode(scratch, rootfs):
    """BYTECODE_REFEREE's findings, run by the venv's python in a copy of the unpacked image:
    {"same-as-py_compile": ..., "record-pycs": ..., "bad": ...} and the process."""
    copy = linked_copy(rootfs, os.path.join(scratch, "rootfs-bytecode"))
    proc = run_in_chroot(copy, [VENV + "/bin/python", "-c", BYTECODE_REFEREE, SITE])
    print(f"(m) {proc.stdout.strip()}")
    assert proc.returncode == 0, f"the bytecode referee: exit {proc.returncode}: {proc.stderr}"
    found = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        found[key] = value
    return found, proc


def test_m_pyc_is_what_py_compile_writes(bytecode):
    found, proc = bytecode
    assert found.get("same-as-py_compile") == "True", \
        f"app_cli/main.py's .pyc differs from py_compile's (unchecked-hash): {proc.stdout}"


def test_m_record_lists_every_pyc_with_its_digest(bytecode):
    found, proc = bytecode
    pycs, _, bad = found.get("record-pycs", "").partition(" bad ")
    assert pycs.isdigit() and int(pycs) > 0 and bad == "[]", \
        f"RECORD: expected .pyc rows and no wrong digest or size: {proc.stdout}"


def test_m_import_loads_the_pyc_not_the_source(scratch, rootfs):
    """An unchecked-hash .pyc is used without reading the source: with main.py changed under it
    (by rename, in a copy), the import still gives the installed module."""
    copy = linked_copy(rootfs, os.path.join(scratch, "rootfs-pyc-used"))
    source = in_root(copy, SITE + "/app_cli/main.py")
    replace_file(source, b"raise SystemExit('the source was read, not the .pyc')\n")
    proc = run_in_chroot(copy, [VENV + "/bin/python", "-c",
                                "import app_cli.main; print('loaded', app_cli.main.__cached__)"])
    assert proc.returncode == 0 and "loaded " in proc.stdout, \
        f"import app_cli.main with its source changed: exit {proc.returncode}: " \
        f"{proc.stdout}{proc.stderr}"


# (n) freeze of the image's venv and check --lock.

@pytest.fixture(scope="module")
def frozen(rootlock, scratch, rootfs):
    """`freeze --no-debian` of the unpacked image's venv: a lock by content, not by name."""
    path = os.path.join(scratch, "frozen.toml")
    proc = run_rootlock(rootlock, "freeze", "--root", rootfs, VENV, "--no-debian", "-o", path)
    lines = proc.stderr.strip().splitlines()
    print(f"(n) {lines[-2] if len(lines) > 1 else proc.stderr.strip()}")
    assert proc.returncode == 0 and os.path.isfile(path), \
        f"freeze: exit {proc.returncode}: {proc.stderr}"
    return path


def test_n_frozen_versions_are_the_locked_ones(lock, frozen):
    locked = {p["name"]: p["version"] for p in load(lock)["packages"]}
    got = {p["name"]: p["version"] for p in load(frozen)["packages"]}
    assert got == locked, f"frozen package set differs: names {sorted(set(got) ^ set(locked))}, " \
        f"versions {sorted(n for n in got if n in locked and got[n] != locked[n])}"


def test_n_frozen_soname_tables_are_the_locked_ones(lock, frozen):
    locked = {p["name"]: p for p in load(lock)["packages"]}
    got = {p["name"]: p for p in load(frozen)["packages"]}
    tables = [n for n in locked if n in got and
              locked[n]["tool"]["rootlock"]["provides"] != got[n]["tool"]["rootlock"]["provides"]]
    assert not tables, f"soname tables differ for {tables}"


def test_n_frozen_target_is_the_bases(frozen):
    tool = load(frozen)["tool"]["rootlock"]
    target = tool["target"]
    assert target["python-full"] == "3.11.2" and target["glibc"] == "2.36" and \
        tool["frozen-from"] == VENV, \
        f"expected python 3.11.2, glibc 2.36, frozen-from {VENV}: target {target}, " \
        f"frozen-from {tool.get('frozen-from')}"


def test_n_build_of_a_frozen_lock_without_base_refused(rootlock, scratch, frozen):
    proc = run_rootlock(rootlock, "build", frozen, "-o", os.path.join(scratch, "nobase.tar.zst"))
    assert proc.returncode == 2 and "a frozen lock names no base: freeze again with " \
        "--base-from" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, \
        f"build of a frozen lock without a base: expected exit 2 and one line, got exit " \
        f"{proc.returncode}: {proc.stderr}"


def test_n_check_lock_intact_venv_exactly_as_locked(rootlock, rootfs, lock):
    proc = run_rootlock(rootlock, "check", "--root", rootfs, "--lock", lock, VENV)
    assert proc.returncode == 0 and "exactly what the lock says" in proc.stdout, \
        f"check --lock on the intact venv: exit {proc.returncode}: {proc.stdout}{proc.stderr}"


@pytest.fixture(scope="module")
def damaged(scratch, rootfs):
    """A copy of the unpacked image with app_cli/main.py modified and app_cli/__init__.py
    deleted."""
    copy = linked_copy(rootfs, os.path.join(scratch, "rootfs-damaged"))
    site = in_root(copy, SITE)
    main = os.path.join(site, "app_cli/main.py")
    replace_file(main, read(main, "rb") + b"# changed\n")
    os.remove(os.path.join(site, "app_cli/__init__.py"))
    return copy


def test_n_freeze_of_the_damaged_venv_reports_both_no_lock(rootlock, scratch, damaged):
    out = os.path.join(scratch, "pylock.damaged.toml")
    proc = run_rootlock(rootlock, "freeze", "--root", damaged, VENV, "--no-debian", "-o", out)
    print("(n) damage reported: " + "; ".join(
        line for line in proc.stderr.splitlines() if "damaged:" in line))
    assert proc.returncode == 1 and not os.path.exists(out) and \
        f"app-cli: {SITE}/app_cli/__init__.py: missing" in proc.stderr and \
        f"app-cli: {SITE}/app_cli/main.py: size" in proc.stderr, \
        f"freeze of the damaged venv: expected exit 1, both files named, no lock; got exit " \
        f"{proc.returncode}, lock {os.path.exists(out)}: {proc.stderr}"


def test_n_check_lock_of_the_damaged_venv_reports_both(rootlock, lock, damaged):
    proc = run_rootlock(rootlock, "check", "--root", damaged, "--lock", lock, VENV, "--json")
    report = json.loads(proc.stdout) if proc.stdout.startswith("{") else {}
    kinds = sorted((m["distribution"], m["kind"]) for m in report.get("mismatches", []))
    assert proc.returncode == 1 and kinds == [("app-cli", "damaged")] * 2, \
        f"check --lock on the damaged venv: expected exit 1 and two app-cli damaged, got exit " \
        f"{proc.returncode}: {kinds} {proc.stderr}"


# (o) freeze --index and a build of the frozen lock.

def venv_members(image):
    """{member: (type, mode, link target, sha256 of content)} under the venv of an image."""
    zstd = subprocess.Popen(["zstd", "-dcq", image], stdout=subprocess.PIPE)
    out = {}
    with tarfile.open(fileobj=zstd.stdout, mode="r|") as tar:
        for member in tar:
            if not member.name.startswith("." + VENV):
                continue
            data = tar.extractfile(member).read() if member.isfile() else b""
            out[member.name] = (member.type, member.mode, member.linkname,
                                hashlib.sha256(data).hexdigest())
    zstd.wait()
    return out


@pytest.fixture(scope="module")
def frozen_by_index(rootlock, scratch, fixture_index, rootfs, lock, cache):
    """`freeze --index --base-from LOCK` of the unpacked image's venv."""
    path = os.path.join(scratch, "pylock.frozen-index.toml")
    proc = run_rootlock(rootlock, "freeze", "--root", rootfs, VENV,
                        "--index", fixture_index.simple_url, "--cache-dir", cache,
                        "--base-from", lock, "-o", path)
    assert proc.returncode == 0, f"freeze --index: exit {proc.returncode}: {proc.stderr}"
    print("(o) " + " ".join(line for line in proc.stderr.splitlines() if "matched" in line)[-300:])
    return path


def test_o_freeze_index_matches_the_locked_wheels(lock, frozen_by_index):
    locked = {p["name"]: p["wheels"][0]["hashes"]["sha256"] for p in load(lock)["packages"]}
    got = {p["name"]: (p.get("wheels") or [{}])[0].get("hashes", {}).get("sha256")
           for p in load(frozen_by_index)["packages"]}
    assert got == locked, f"matched wheels differ from the locked ones: " \
        f"{sorted(n for n in set(locked) | set(got) if got.get(n) != locked.get(n))}"


def test_o_frozen_lock_builds_the_same_venv(rootlock, scratch, image, cache, frozen_by_index):
    rebuilt = os.path.join(scratch, "out-frozen", "frozen.tar.zst")
    proc = run_rootlock(rootlock, "build", frozen_by_index, "-o", rebuilt, "--cache-dir", cache)
    assert proc.returncode == 0, f"build from the frozen lock: exit {proc.returncode}: " \
        f"{proc.stderr}"
    ours, theirs = venv_members(image[0]), venv_members(rebuilt)
    differ = sorted(n for n in set(ours) | set(theirs) if ours.get(n) != theirs.get(n))
    assert not differ and len(ours) > 100, \
        f"venv content differs in {len(differ)} members (of {len(ours)}): {differ[:5]}"
    print(f"(o) rebuilt from the frozen lock: {len(ours)} venv members, identical")
