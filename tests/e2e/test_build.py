"""End-to-end: `rootlock build` turns a lock into a rootfs image that GNU tar, zstd, a chroot and
a real LXC container accept, with the same bytes whatever the environment of the build.

Usage: test_build.py ROOTLOCK

The fixture index (fixtures/index_server.py) serves the torch 2.8.0+cu128 stack and app-cli (a
console script); the base is the cached Debian root as a pinned tarball. Then:
  a. lock, build: the image, IMAGE.sha256 (matching), IMAGE.cdx.json (CycloneDX, one component
     per locked package with its sha256) and IMAGE.check.json are written;
  b. a second build with another TZ, umask, locale, working directory, cache directory, thread
     count and clock date (faketime) gives the same bytes;
  c. `zstd -t` and GNU tar accept it; unpacked, the venv's python imports torch (the fixture)
     in a chroot, bin/activate works, and the console script runs; /dev holds no device node;
     owners are numeric;
  d. a privileged LXC container boots from a throwaway copy and runs the venv's python;
  e. a lock whose closure fails builds nothing (exit 1, no file under the image's name);
  h. a base listing the later name of a hard link group first builds, the links kept;
  g. an ordinary user (nobody) builds the same bytes with a cache of its own;
  f. a build interrupted by SIGINT leaves nothing under either name; one killed with SIGKILL
     leaves nothing under the image's name, and the next build succeeds;
  i. the venv's four activation scripts are byte for byte what the base's own `python3 -m venv`
     writes in the chroot;
  j. a build onto a full disk (a 4 MiB tmpfs) fails with one line naming the reason and leaves
     nothing behind; the same build elsewhere succeeds;
  k. a lock whose wheel (in the cache under its own sha256) holds a "../" path, an absolute path
     or a symlink is refused with the scanner's message, and no image is written;
  l. the recipe's [files] entry is in the image (0644), its [loader] library path is in
     /etc/ld.so.conf.d/rootlock.conf, `ldconfig -p` in the chroot finds libcudnn.so.9 there, and
     /etc/ld.so.cache is byte for byte what glibc's ldconfig writes for the unpacked image;
  m. with python.compile-bytecode, app_cli's .pyc is byte for byte what the base's py_compile
     writes (unchecked-hash, the installed path), RECORD lists every .pyc with its digest, and
     the import loads it; (b) and (g) show the bytes do not depend on the building environment;
  n. `rootlock freeze` of the unpacked image's venv gives the lock's packages, versions and
     soname tables and the base's target, and `check --lock` finds the venv exactly as locked; a
     deleted and a modified file are then reported by both (exit 1, no lock written);
  o. before that damage, `freeze --index` matches every distribution to the very wheel the lock
     holds, and the frozen lock (base taken with --base-from) builds an image whose venv is
     member for member, byte for byte the first image's.
"""
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile

from fixtures import index_server, package_graph
from fixtures.debian_root import base_tarball, run_in_chroot
from fixtures.failures import Failures

VENV = "/opt/venv"


CUDNN_LIB = VENV + "/lib/python3.11/site-packages/nvidia/cudnn/lib"
EXTRA_FILE = ("/etc/rootlock-test/motd", "built by rootlock\nsecond line\n")


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


def run(argv, env=None, cwd=None, timeout=900):
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


def unpack(image, dest):
    os.makedirs(dest)
    return run(["tar", "--zstd", "--numeric-owner", "-xpf", image, "-C", dest])


def boot_lxc(fail, rootfs, work):
    """(d): start a privileged container on a copy of the unpacked image, run python, stop."""
    if shutil.which("lxc-start") is None:
        print("(d) skipped: lxc is not installed")
        return
    lxcpath = os.path.join(work, "lxc")
    name = "rootlock-build-test"
    os.makedirs(os.path.join(lxcpath, name))
    with open(os.path.join(lxcpath, name, "config"), "w") as f:
        f.write("lxc.include = /usr/share/lxc/config/common.conf\n"
                f"lxc.uts.name = {name}\nlxc.rootfs.path = dir:{rootfs}\n"
                "lxc.net.0.type = empty\nlxc.apparmor.profile = unconfined\n"
                "lxc.init.cmd = /bin/sleep infinity\n")
    started = run(["lxc-start", "-P", lxcpath, "-n", name])
    try:
        if not fail.expect(started.returncode == 0, f"(d) lxc-start: {started.stderr}"):
            return
        attached = run(["lxc-attach", "-P", lxcpath, "-n", name, "--clear-env", "--",
                        VENV + "/bin/python", "-c",
                        "import torch, sys; print('torch', torch.__name__); sys.exit(7)"])
        fail.expect(attached.returncode == 7 and "torch torch" in attached.stdout,
                    f"(d) python in the container: exit {attached.returncode}: "
                    f"{attached.stdout}{attached.stderr}")
    finally:
        run(["lxc-stop", "-k", "-P", lxcpath, "-n", name])
        shutil.rmtree(os.path.join(lxcpath, name), ignore_errors=True)  # never lxc-destroy


def reversed_links_base(work):
    """The cached base re-packed so that each hard link group lists its later name first
    (/usr/bin/perl5.36.0 as the file, perl linking to it), as an unsorted base may."""
    import tarfile
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


def build_as_nobody(fail, rootlock, lock, digest):
    """(g): the same lock built by `nobody`, with a cache and an output folder of its own."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        print("(g) skipped: needs root to switch to nobody")
        return
    import pwd
    nobody = pwd.getpwnam("nobody")
    shared = tempfile.mkdtemp(prefix="rootlock-nobody-")
    try:
        os.chmod(shared, 0o755)
        shutil.copy(lock, os.path.join(shared, os.path.basename(lock)))
        own = os.path.join(shared, "own")
        os.makedirs(own)
        os.chown(own, nobody.pw_uid, nobody.pw_gid)
        image = os.path.join(own, "out", "buildtest.tar.zst")
        proc = run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                    "--clear-groups", rootlock, "build", os.path.join(shared, os.path.basename(lock)),
                    "-o", image, "--cache-dir", os.path.join(own, "cache")],
                   env={"PATH": os.environ["PATH"], "HOME": "/nonexistent", "LANG": "C.UTF-8"})
        fail.expect(proc.returncode == 0 and os.path.isfile(image) and sha256_of(image) == digest,
                    f"(g) build as nobody: exit {proc.returncode}: {proc.stderr}")
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def activation_scripts_match(fail, rootfs):
    """(i) the base's venv writes the same four scripts for a venv of the same name."""
    reference = "/ref/" + os.path.basename(VENV)
    proc = run_in_chroot(rootfs, ["/usr/bin/python3", "-m", "venv", "--without-pip", reference])
    if not fail.expect(proc.returncode == 0, f"(i) python3 -m venv in the chroot: {proc.stderr}"):
        return
    for name in ("activate", "activate.csh", "activate.fish", "Activate.ps1"):
        with open(os.path.join(rootfs, reference.lstrip("/"), "bin", name), "rb") as f:
            expected = f.read().replace(reference.encode(), VENV.encode())
        with open(os.path.join(rootfs, VENV.lstrip("/"), "bin", name), "rb") as f:
            ours = f.read()
        fail.expect(ours == expected, f"(i) bin/{name} differs from what venv writes")
    print("(i) the four activation scripts compared with the base's venv")


def loader_and_files(fail, rootfs):
    """(l) the recipe's file, its ld.so.conf.d entry, and the cache glibc's ldconfig would write."""
    path = os.path.join(rootfs, EXTRA_FILE[0].lstrip("/"))
    with open(path) as f:
        content = f.read()
    fail.expect(content == EXTRA_FILE[1] and (os.stat(path).st_mode & 0o7777) == 0o644,
                f"(l) {EXTRA_FILE[0]}: {content!r} mode {oct(os.stat(path).st_mode)}")
    with open(os.path.join(rootfs, "etc/ld.so.conf.d/rootlock.conf")) as f:
        fail.expect(CUDNN_LIB + "\n" in f.read(), "(l) rootlock.conf lacks the library path")
    proc = run_in_chroot(rootfs, ["/sbin/ldconfig", "-p"])
    fail.expect(proc.returncode == 0 and f"=> {CUDNN_LIB}/libcudnn.so.9" in proc.stdout,
                f"(l) ldconfig -p does not list libcudnn.so.9: {proc.stdout[-800:]}{proc.stderr}")
    # glibc's ldconfig, run on the unpacked image without touching links, is the referee.
    proc = run_in_chroot(rootfs, ["/sbin/ldconfig", "-X", "-C", "/tmp/referee.cache"])
    with open(os.path.join(rootfs, "etc/ld.so.cache"), "rb") as f:
        ours = f.read()
    with open(os.path.join(rootfs, "tmp/referee.cache"), "rb") as f:
        referee = f.read()
    fail.expect(proc.returncode == 0 and ours == referee,
                f"(l) /etc/ld.so.cache ({len(ours)} bytes) differs from ldconfig's "
                f"({len(referee)} bytes): {proc.stderr}")
    print(f"(l) /etc/ld.so.cache: {len(ours)} bytes, identical to ldconfig's")


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


def bytecode_checks(fail, rootfs):
    """(m) compile-bytecode: the .pyc is what the base's own py_compile writes (unchecked-hash,
    same path), RECORD lists it with the right digest, and the import uses it."""
    site = VENV + "/lib/python3.11/site-packages"
    proc = run_in_chroot(rootfs, [VENV + "/bin/python", "-c", BYTECODE_REFEREE, site])
    print(f"(m) {proc.stdout.strip()}")
    fail.expect(proc.returncode == 0 and "same-as-py_compile True" in proc.stdout and
                "bad []" in proc.stdout and "record-pycs 0 " not in proc.stdout,
                f"(m) bytecode: {proc.returncode} {proc.stdout}{proc.stderr}")


def venv_members(image):
    """{member: (type, mode, sha256 of content or link target)} under the venv of an image."""
    import tarfile
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


def frozen_rebuild(fail, rootlock, rootfs, lock, image, cache, work, index_url):
    """(o) freeze --index matches every distribution to the wheel the lock holds; the frozen
    lock, with the base taken from the build's lock, builds an image with the same venv."""
    frozen = os.path.join(work, "pylock.frozen-index.toml")
    proc = run([rootlock, "freeze", "--root", rootfs, VENV, "--index", index_url, "--cache-dir",
                cache, "--base-from", lock, "-o", frozen])
    if not fail.expect(proc.returncode == 0, f"(o) freeze --index: {proc.stderr}"):
        return
    print("(o) " + [line for line in proc.stderr.splitlines() if "matched" in line][-1])
    with open(lock, "rb") as f:
        locked = {p["name"]: p["wheels"][0]["hashes"]["sha256"] for p in tomllib.load(f)["packages"]}
    with open(frozen, "rb") as f:
        data = tomllib.load(f)
    got = {p["name"]: (p.get("wheels") or [{}])[0].get("hashes", {}).get("sha256")
           for p in data["packages"]}
    fail.expect(got == locked, f"(o) matched wheels differ: "
                f"{sorted(n for n in locked if got.get(n) != locked[n])}")
    rebuilt = os.path.join(work, "out-frozen", "frozen.tar.zst")
    proc = run([rootlock, "build", frozen, "-o", rebuilt, "--cache-dir", cache])
    if not fail.expect(proc.returncode == 0, f"(o) build from the frozen lock: {proc.stderr}"):
        return
    ours, theirs = venv_members(image), venv_members(rebuilt)
    differ = sorted(n for n in set(ours) | set(theirs) if ours.get(n) != theirs.get(n))
    fail.expect(not differ and len(ours) > 100,
                f"(o) venv content differs in {len(differ)} members: {differ[:5]}")
    print(f"(o) rebuilt from the frozen lock: {len(ours)} venv members, identical")


def freeze_checks(fail, rootlock, rootfs, lock, work):
    """(n) freeze of the image's venv gives the lock's packages, versions and soname tables; a
    deleted and a modified file are both reported and no lock is written."""
    frozen = os.path.join(work, "frozen.toml")  # a lock by content, not by name
    proc = run([rootlock, "freeze", "--root", rootfs, VENV, "--no-debian", "-o", frozen])
    print(f"(n) {proc.stderr.strip().splitlines()[-2] if proc.stderr else ''}")
    if not fail.expect(proc.returncode == 0 and os.path.isfile(frozen),
                       f"(n) freeze: exit {proc.returncode}: {proc.stderr}"):
        return
    with open(lock, "rb") as f:
        locked = {p["name"]: p for p in tomllib.load(f)["packages"]}
    with open(frozen, "rb") as f:
        data = tomllib.load(f)
    got = {p["name"]: p for p in data["packages"]}
    fail.expect({n: p["version"] for n, p in got.items()} ==
                {n: p["version"] for n, p in locked.items()},
                f"(n) frozen package set: {sorted(set(got) ^ set(locked))}")
    tables = [n for n in locked if n in got and
              locked[n]["tool"]["rootlock"]["provides"] != got[n]["tool"]["rootlock"]["provides"]]
    fail.expect(not tables, f"(n) soname tables differ for {tables}")
    target = data["tool"]["rootlock"]["target"]
    fail.expect(target["python-full"] == "3.11.2" and target["glibc"] == "2.36" and
                data["tool"]["rootlock"]["frozen-from"] == VENV, f"(n) target {target}")
    proc = run([rootlock, "build", frozen, "-o", os.path.join(work, "nobase.tar.zst")])
    fail.expect(proc.returncode == 2 and "a frozen lock names no base: freeze again with "
                "--base-from" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1,
                f"(n) build of a frozen lock without a base: {proc.returncode} {proc.stderr}")
    proc = run([rootlock, "check", "--root", rootfs, "--lock", lock, VENV])
    fail.expect(proc.returncode == 0 and "exactly what the lock says" in proc.stdout,
                f"(n) check --lock on the intact venv: {proc.returncode} {proc.stdout}{proc.stderr}")
    # Damage one file of app-cli and delete another, in place (the LXC test ran on a copy).
    site = os.path.join(rootfs, VENV.lstrip("/"), "lib/python3.11/site-packages")
    with open(os.path.join(site, "app_cli/main.py"), "a") as f:
        f.write("# changed\n")
    os.remove(os.path.join(site, "app_cli/__init__.py"))
    damaged = os.path.join(work, "pylock.damaged.toml")
    proc = frozen_damaged = run([rootlock, "freeze", "--root", rootfs, VENV, "--no-debian", "-o",
                                 damaged])
    fail.expect(proc.returncode == 1 and not os.path.exists(damaged) and
                f"app-cli: {VENV}/lib/python3.11/site-packages/app_cli/__init__.py: missing"
                in proc.stderr and
                f"app-cli: {VENV}/lib/python3.11/site-packages/app_cli/main.py: size" in proc.stderr,
                f"(n) damaged venv: exit {proc.returncode}: {proc.stderr}")
    proc = run([rootlock, "check", "--root", rootfs, "--lock", lock, VENV, "--json"])
    report = json.loads(proc.stdout) if proc.stdout.startswith("{") else {}
    kinds = sorted((m["distribution"], m["kind"]) for m in report.get("mismatches", []))
    fail.expect(proc.returncode == 1 and kinds == [("app-cli", "damaged")] * 2,
                f"(n) check --lock on the damaged venv: {proc.returncode} {kinds} {proc.stderr}")
    print("(n) damage reported: " + "; ".join(
        line for line in frozen_damaged.stderr.splitlines() if "damaged:" in line))


def full_disk(fail, rootlock, lock, cache, work):
    """(j) ENOSPC half-way: one line, exit non-zero, nothing left; then a roomy build works."""
    mount_point = os.path.join(work, "full")
    os.makedirs(mount_point)
    if run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount_point]).returncode != 0:
        print("(j) cannot mount a tmpfs (not root?): the full-disk case is not run")
        return
    try:
        target = os.path.join(mount_point, "buildtest.tar.zst")
        proc = run([rootlock, "build", lock, "-o", target, "--cache-dir", cache])
        lines = proc.stderr.strip().splitlines()
        fail.expect(proc.returncode != 0 and
                    lines == [f"rootlock: {target}: no space left on device"],
                    f"(j) full disk: exit {proc.returncode}: {proc.stderr}")
        left = os.listdir(mount_point)
        fail.expect(not left, f"(j) a full disk left {left}")
        print(f"(j) full disk: exit {proc.returncode}: {proc.stderr.strip()}")
    finally:
        run(["umount", mount_point])


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


def hostile_wheels(fail, rootlock, lock, cache, work):
    """(k) the same lock with app-cli's wheel swapped for a hostile one, already in the cache."""
    with open(lock, "rb") as f:
        locked = tomllib.load(f)
    wheel = next(p for p in locked["packages"] if p["name"] == "app-cli")["wheels"][0]
    old_sha = wheel["hashes"]["sha256"]
    original = os.path.join(cache, "blobs", "sha256", old_sha[:2], old_sha[2:])
    expected = {"climbing": "entry path climbs out with '..': app_cli/../../../etc/evil",
                "absolute": "entry path is absolute: /etc/evil",
                "symlink": "symlink entry: app_cli/evil-link"}
    with open(lock) as f:
        text = f.read()
    for kind, message in expected.items():
        made = os.path.join(work, f"hostile-{kind}.whl")
        hostile_wheel(made, original, kind)
        new_sha = sha256_of(made)
        blob = os.path.join(cache, "blobs", "sha256", new_sha[:2], new_sha[2:])
        os.makedirs(os.path.dirname(blob), exist_ok=True)
        shutil.copy(made, blob)
        lines = []
        for line in text.splitlines(keepends=True):
            if old_sha in line:
                line = line.replace(old_sha, new_sha).replace(
                    f"size = {wheel['size']}", f"size = {os.path.getsize(made)}")
            lines.append(line)
        bad_lock = os.path.join(work, f"pylock.hostile-{kind}.toml")
        with open(bad_lock, "w") as f:
            f.write("".join(lines))
        target = os.path.join(work, f"out-{kind}", "hostile.tar.zst")
        proc = run([rootlock, "build", bad_lock, "-o", target, "--cache-dir", cache,
                    "--offline"])
        fail.expect(proc.returncode != 0 and message in proc.stderr and
                    len(proc.stderr.strip().splitlines()) == 1 and not os.path.exists(target),
                    f"(k) {kind}: exit {proc.returncode}: {proc.stderr}")
        print(f"(k) {kind}: exit {proc.returncode}: {proc.stderr.strip()}")


def main(argv):
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    work = tempfile.mkdtemp(prefix="rootlock-build-")
    try:
        graph = package_graph.build_graph(os.path.join(work, "graph"))
        base = base_tarball()
        with index_server.IndexServer(graph, style="pypi") as server:
            recipe = write_recipe(os.path.join(work, "build.toml"), server.simple_url, base,
                                  ["app-cli"], extras=True)
            lock = os.path.join(work, "pylock.buildtest.toml")
            cache = os.path.join(work, "cache-1")
            proc = run([rootlock, "lock", recipe, "-o", lock, "--cache-dir", cache])
            if not fail.expect(proc.returncode == 0, f"lock: {proc.stderr}"):
                return 1
            image = os.path.join(work, "out", "buildtest.tar.zst")
            started = time.monotonic()
            proc = run([rootlock, "build", lock, "-o", image, "--cache-dir", cache])
            took = time.monotonic() - started
            print(proc.stdout)
            if not fail.expect(proc.returncode == 0 and os.path.isfile(image),
                               f"(a) build: exit {proc.returncode}: {proc.stderr}"):
                return 1
            digest = sha256_of(image)
            print(f"(a) built {os.path.getsize(image)} bytes in {took:.2f} s, sha256 {digest}")
            with open(image + ".sha256") as f:
                fail.expect(f.read() == f"{digest}  buildtest.tar.zst\n", "(a) IMAGE.sha256")
            with open(image + ".cdx.json") as f:
                sbom = json.load(f)
            with open(lock, "rb") as f:
                locked = tomllib.load(f)
            names = {c.get("name") for c in sbom.get("components", [])}
            fail.expect(sbom.get("bomFormat") == "CycloneDX" and
                        all(p["name"] in names for p in locked["packages"]),
                        f"(a) SBOM components {sorted(names)}")
            with open(image + ".check.json") as f:
                fail.expect(json.load(f)["ok"] is True, "(a) IMAGE.check.json says not ok")

            # (b) another environment, the same bytes.
            other_dir = os.path.join(work, "elsewhere")
            os.makedirs(other_dir)
            env = dict(os.environ, TZ="Pacific/Kiritimati", LC_ALL="C", LANG="C")
            second = os.path.join(work, "out2", "buildtest.tar.zst")
            # Another clock date too, where libfaketime is installed (make deps installs it).
            clock = ["faketime", "2031-05-05 12:00:00"] if shutil.which("faketime") else []
            if not clock:
                print("(b) faketime is not installed: the clock date is not varied")
            command = clock + [rootlock, "build", lock, "-o", second, "--cache-dir",
                               os.path.join(work, "cache-2"), "-j", "1"]
            proc = run(["sh", "-c", "umask 077 && exec " + shlex.join(command)], env=env,
                       cwd=other_dir)
            fail.expect(proc.returncode == 0 and os.path.isfile(second) and
                        sha256_of(second) == digest,
                        f"(b) second build: exit {proc.returncode}, "
                        f"{sha256_of(second) if os.path.isfile(second) else None} != {digest}: "
                        f"{proc.stderr}")

            # (c) the tools accept it, and it works.
            if shutil.which("zstd"):
                fail.expect(run(["zstd", "-tq", image]).returncode == 0, "(c) zstd -t")
            listing = run(["tar", "--zstd", "--numeric-owner", "-tvf", image])
            fail.expect(listing.returncode == 0 and
                        all(line.split()[5].startswith("./") for line in listing.stdout.splitlines()),
                        f"(c) GNU tar listing: {listing.stderr}")
            devices = [line for line in listing.stdout.splitlines() if line[:1] in "cbp"]
            fail.expect(not devices, f"(c) device nodes in the image: {devices[:3]}")
            rootfs = os.path.join(work, "rootfs")
            proc = unpack(image, rootfs)
            if fail.expect(proc.returncode == 0, f"(c) unpack: {proc.stderr}"):
                proc = run_in_chroot(rootfs, [VENV + "/bin/python", "-c", "import torch"])
                fail.expect(proc.returncode == 0, f"(c) import torch in a chroot: {proc.stderr}")
                proc = run_in_chroot(rootfs, ["/bin/bash", "-c",
                                              f". {VENV}/bin/activate && python -c "
                                              "'import sys; print(sys.prefix)'"])
                fail.expect(proc.returncode == 0 and proc.stdout.strip() == VENV,
                            f"(c) activate: {proc.returncode} {proc.stdout}{proc.stderr}")
                proc = run_in_chroot(rootfs, [VENV + "/bin/app-cli"])
                fail.expect(proc.returncode == 0 and "app-cli 1.0.0" in proc.stdout,
                            f"(c) console script: {proc.returncode} {proc.stdout}{proc.stderr}")
                activation_scripts_match(fail, rootfs)
                loader_and_files(fail, rootfs)
                bytecode_checks(fail, rootfs)
                frozen_rebuild(fail, rootlock, rootfs, lock, image, cache, work,
                               server.simple_url)
                freeze_checks(fail, rootlock, rootfs, lock, work)  # damages the venv: last
                boot_lxc(fail, rootfs, work)

            # (e) a failing closure builds nothing.
            broken = write_recipe(os.path.join(work, "broken.toml"), server.simple_url, base,
                                  ["broken-ext"], torch=False)
            broken_lock = os.path.join(work, "pylock.broken.toml")
            run([rootlock, "lock", broken, "-o", broken_lock, "--cache-dir", cache,
                 "--allow-broken"])
            broken_image = os.path.join(work, "out", "broken.tar.zst")
            proc = run([rootlock, "build", broken_lock, "-o", broken_image, "--cache-dir", cache])
            fail.expect(proc.returncode == 1 and not os.path.exists(broken_image) and
                        "libnotthere.so.1" in proc.stdout,
                        f"(e) broken closure: exit {proc.returncode}: {proc.stdout[-1000:]}")

            # (h) a base whose hard links name the later path first still builds, links intact.
            base_h = reversed_links_base(work)
            recipe_h = write_recipe(os.path.join(work, "links.toml"), server.simple_url,
                                    base_h[:2], [], torch=False)
            lock_h = os.path.join(work, "pylock.links.toml")
            image_h = os.path.join(work, "out-h", "links.tar")
            proc = run([rootlock, "lock", recipe_h, "-o", lock_h, "--cache-dir", cache])
            if fail.expect(proc.returncode == 0, f"(h) lock: {proc.stderr}"):
                proc = run([rootlock, "build", lock_h, "-o", image_h, "--cache-dir", cache])
                listing = run(["tar", "-tvf", image_h]).stdout if proc.returncode == 0 else ""
                links = [line for line in listing.splitlines() if line.startswith("h")]
                fail.expect(proc.returncode == 0 and len(links) == len(base_h[2]),
                            f"(h) reversed hard links: exit {proc.returncode}, links {links}: "
                            f"{proc.stderr}")

            # (g) an ordinary user builds it too: nothing in a build needs root.
            build_as_nobody(fail, rootlock, lock, digest)

            full_disk(fail, rootlock, lock, cache, work)
            hostile_wheels(fail, rootlock, lock, cache, work)

            # (f) interrupted builds.
            for sig in (signal.SIGINT, signal.SIGKILL):
                target = os.path.join(work, f"out-{sig.name}", "buildtest.tar.xz")
                child = subprocess.Popen([rootlock, "build", lock, "-o", target, "--cache-dir",
                                          cache], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
                folder = os.path.dirname(target)
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and child.poll() is None:
                    if os.path.isdir(folder) and any(".partial-" in n for n in os.listdir(folder)):
                        break  # writing has begun: interrupt it half-way
                    time.sleep(0.01)
                child.send_signal(sig)
                child.wait(timeout=120)
                left = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
                fail.expect(not os.path.exists(target), f"(f) {sig.name}: the image exists")
                if sig == signal.SIGINT:
                    fail.expect(not left, f"(f) SIGINT left {left}")
                proc = run([rootlock, "build", lock, "-o", target, "--cache-dir", cache])
                fail.expect(proc.returncode == 0 and os.path.isfile(target),
                            f"(f) rebuild after {sig.name}: {proc.stderr}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fail.items:
        print(f"{len(fail.items)} expectation(s) failed")
        return 1
    print("all expectations met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
