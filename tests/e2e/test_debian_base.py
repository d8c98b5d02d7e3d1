"""End-to-end: a Debian base is locked per package and rebuilt bit-identically anywhere.

Usage: test_debian_base.py ROOTLOCK

fixtures/debian_archive.py's signed archive (the demo set: mmdebstrap minbase with python3,
python3-venv and ca-certificates, real bookworm .debs) is served on 127.0.0.1 and a recipe with
no Python package locks a base against it:
  a. `lock` with a fresh cache: exit 0; the lock's debs are the fixture's package set, each with
     the sha256, size and Filename of the served Packages; the archives entry names the mirror,
     the Release date, the snapshot and the keyring's sha256;
  b. `build` with an empty cache: exit 0; IMAGE.sha256 is the image's; the SBOM lists exactly
     the image's installed dpkg packages as pkg:deb/debian/NAME@VERSION?arch=A&distro=debian-12;
  c. "another machine": the same lock built in `unshare --uts --mount` with another hostname,
     /etc/hostname and /etc/resolv.conf bind-mounted over, another cache, cwd, TMPDIR and
     TZ=Asia/Tokyo gives the same sha256; the image's /etc/hostname and /etc/resolv.conf hold
     nothing of either machine; /etc/apt/sources.list names the lock's mirror and no local path;
     the keyring its signed-by= names is in the image; no cache path of either build appears in
     the image's names or in its /etc and /var;
  d. point_release(media-types): (d1) the old lock, empty cache, builds the same image, the old
     .deb fetched from the snapshot of the locked date after the pool answered 404; (d2) `lock
     --upgrade` picks the new version and the new Release date, nothing else changes; (d3)
     `diff old new` exits 1 naming media-types and its new version; (d4) a relock without
     --upgrade, on an empty cache, keeps every version and the locked date (and every locked
     .deb is still to be had), also after an unrelated recipe change;
  e. integrity, each exit 3 with one stderr line naming the problem and no file under the
     output's name: (e1) a tampered .deb (sha256), (e2) a broken InRelease signature, (e3) a
     Packages.xz Release does not list (sha256 mismatch); each change undone;
  f. a .deb to be had nowhere: (f1) no snapshot in the lock and the pool lacks it, (f2) the
     snapshot answers 404 too: exit 3, the package and every URL tried named;
  g. --offline: the warm cache of (b) builds the same sha256; an empty cache exits 3 naming
     every missing .deb;
  h. relative paths: `lock recipe.toml` from the recipe's directory (keyring relative to the
     recipe), and `build --cache-dir RELATIVE`, work as with absolute paths;
  j. a further archive (bookworm-updates, its own keyring entry): the package only it has newer
     is pinned from it, the image lists both archives, diff names the move;
  i. apt inside the image (chroot): `apt-get update` against the lock's archive with the key the
     image carries, and `apt-get download` of a package;
  k. the same archive by another URL (localhost) on the warm cache of (b): the image's
     /etc/apt/sources.list names that URL, not the one a cached base was assembled for.

The binary is copied into the scratch directory first, so that a rebuild of ROOTLOCK during the
run cannot mix two binaries. mmdebstrap's chroot goes under $ROOTLOCK_TEST_TMPDIR or /dev/shm
(TMPDIR for rootlock): dpkg's fsyncs on a disk make each assembly ~4x slower.
"""
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.parse

from fixtures import debian_archive as da
from fixtures.failures import Failures

DATE1 = "Mon, 02 Nov 2026 10:00:00 UTC"
DATE2 = "Tue, 03 Nov 2026 10:00:00 UTC"
DATE3 = "Wed, 04 Nov 2026 10:00:00 UTC"
TS1 = da.snapshot_timestamp(DATE1)
POINT = "media-types"       # small, arch all, in the set, not in bookworm-updates
TAMPER = "hostname"         # small, in the set, untouched by the point release
OTHER_HOST = "other"
OTHER_RESOLV = "nameserver 192.0.2.53\nsearch other.invalid\n"

RECIPE = """\
[image]
name = "{name}"
output = "osbase.tar.zst"

[base]
debian = {{ suite = "bookworm", mirror = "{mirror}", variant = "minbase", include = ["python3", "python3-venv", "ca-certificates"], keyring = "keyring.gpg", snapshot = "{snapshot}" }}

[python]
version = "3.11"

[[index]]
name = "none"
url = "http://127.0.0.1:9/simple"

[packages]
requires = []
"""

# Run inside `unshare --uts --mount`: another hostname, /etc/hostname and /etc/resolv.conf
# replaced (private mounts), another cwd and TZ; then the command.
OTHER_MACHINE = """\
set -e
hostname "$1"
mount --bind "$2" /etc/hostname
mount --bind "$3" /etc/resolv.conf
cd "$4"
shift 4
exec env TZ=Asia/Tokyo "$@"
"""


class Run:
    """rootlock (the scratch copy) with TMPDIR on a fast filesystem."""

    def __init__(self, binary, tmpdir):
        self.binary = binary
        self.tmpdir = tmpdir

    def env(self, tmpdir=None, **extra):
        env = dict(os.environ, TMPDIR=tmpdir or self.tmpdir, LC_ALL="C.UTF-8")
        env.pop("SOURCE_DATE_EPOCH", None)
        env.update(extra)
        return env

    def __call__(self, *args, cwd=None, tmpdir=None, prefix=(), timeout=900):
        t = time.monotonic()
        argv = list(prefix) + [self.binary] + [str(a) for a in args]
        proc = subprocess.run(argv, cwd=cwd, env=self.env(tmpdir), capture_output=True,
                              text=True, timeout=timeout)
        proc.seconds = time.monotonic() - t
        return proc


def copy_binary(path):
    """A private copy of ROOTLOCK; waits up to 5 minutes while another engineer rebuilds it."""
    deadline = time.monotonic() + 300
    while True:
        try:
            st = os.stat(path)
            if st.st_mode & stat.S_IXUSR and st.st_size > 0:
                target = tempfile.mkdtemp(prefix="rootlock-bin-") + "/rootlock"
                shutil.copy2(path, target)
                if subprocess.run([target, "--help"], capture_output=True).returncode == 0:
                    return target
                shutil.rmtree(os.path.dirname(target), ignore_errors=True)
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{path}: no runnable rootlock binary after 5 minutes")
        time.sleep(5)


def fast_tmpdir():
    """A directory on tmpfs for mmdebstrap's chroot, or None to use the default."""
    base = os.environ.get("ROOTLOCK_TEST_TMPDIR")
    if not base and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        vfs = os.statvfs("/dev/shm")
        if vfs.f_bavail * vfs.f_frsize > (3 << 30):
            base = "/dev/shm"
    return tempfile.mkdtemp(prefix="rootlock-debian-base-tmp-", dir=base) if base else None


def sha256(path):
    return da.sha256_file(path)


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def load_lock(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def base_of(lock):
    return lock.get("tool", {}).get("rootlock", {}).get("base", {})


def deb_keys(base):
    return sorted((d["name"], d["version"], d["architecture"]) for d in base.get("debs", []))


def debs_by_name(base):
    return {d["name"]: d for d in base.get("debs", [])}


def stderr_of(proc):
    return proc.stderr.strip()


def show(proc, limit=600):
    """stdout+stderr, shortened, indented, for a failure message."""
    text = (proc.stdout + proc.stderr).strip()
    if len(text) > limit:
        text = text[:limit // 2] + "\n...\n" + text[-limit // 2:]
    return "\n    " + text.replace("\n", "\n    ")


def one_line(proc):
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    return lines[0] if len(lines) == 1 else None


def tar_names(image):
    out = subprocess.run(["tar", "--zstd", "-tf", image], capture_output=True, text=True)
    return out.stdout.splitlines() if out.returncode == 0 else []


def tar_cat(image, member):
    out = subprocess.run(["tar", "--zstd", "-xOf", image, member], capture_output=True)
    return out.stdout if out.returncode == 0 else None


def dpkg_installed(text):
    """{(name, version, architecture)} the dpkg status lists as installed."""
    out = set()
    for st in da.parse_deb822(text):
        if st.get("Status", "").split()[-1:] == ["installed"]:
            out.add((st["Package"], st["Version"], st["Architecture"]))
    return out


def sbom_debs(cdx):
    """(set of (name, version, arch) of the pkg:deb components, [bad purls])."""
    found, bad = set(), []
    for comp in cdx.get("components", []):
        purl = comp.get("purl", "")
        if not purl.startswith("pkg:deb/"):
            continue
        m = re.fullmatch(r"pkg:deb/debian/([^@?#/]+)@([^?#]+)\?(.+)", purl)
        if not m:
            bad.append(purl)
            continue
        quals = dict(urllib.parse.parse_qsl(m.group(3)))
        name, version = urllib.parse.unquote(m.group(1)), urllib.parse.unquote(m.group(2))
        if quals.get("distro") != "debian-12" or "arch" not in quals or \
                comp.get("name") != name or comp.get("version") != version:
            bad.append(purl)
        found.add((name, version, quals.get("arch")))
    return found, bad


def packages_listed(tree, suite="bookworm"):
    text = read(os.path.join(tree, "dists", suite, "main", "binary-amd64", "Packages"))
    return {st["Package"]: st for st in da.parse_deb822(text)}


def no_file(path):
    return not os.path.lexists(path)


def leftovers(path):
    """Files beside `path` whose names start with its name (temporaries left behind)."""
    d = os.path.dirname(path)
    base = os.path.basename(path)
    return sorted(n for n in os.listdir(d) if n.startswith(base)) if os.path.isdir(d) else []


class Ctx:
    pass


# -- cases ------------------------------------------------------------------------------------

def case_a(fail, c):
    t = time.monotonic()
    proc = c.rl("lock", c.recipe, "-o", c.lock, "--cache-dir", c.cache("a"))
    print(f"(a) lock, fresh cache: exit {proc.returncode} ({proc.seconds:.1f}s)")
    if not fail.expect(proc.returncode == 0 and os.path.isfile(c.lock),
                       "(a) lock against the served archive exits 0:" + show(proc)):
        return False
    base = base_of(load_lock(c.lock))
    want = sorted(tuple(p) for p in da.demo_package_set())
    got = deb_keys(base)
    listed = packages_listed(c.archive.live)
    # The fixture's set is what minbase installs from Debian, where apt is Priority "required"
    # by the archive's override (its DEBIAN/control says "important").
    apt_priority = listed.get("apt", {}).get("Priority")
    fail.expect(got == want, f"(a) the lock's debs are the fixture's package set: "
                f"extra {sorted(set(got) - set(want))[:5]}, missing "
                f"{sorted(set(want) - set(got))[:5]} (the served Packages give apt Priority "
                f"{apt_priority})")
    bad = []
    for d in base.get("debs", []):
        st = listed.get(d["name"])
        if st is None or (st["SHA256"], int(st["Size"]), st["Filename"], st["Version"]) != \
                (d.get("sha256"), d.get("size"), d.get("filename"), d["version"]):
            bad.append(d["name"])
    fail.expect(not bad and got, f"(a) each deb's sha256, size and filename are the served "
                f"Packages': {bad[:5]}")
    archives = base.get("archives", [])
    fail.expect(len(archives) == 1, f"(a) one archive in the lock: {len(archives)}")
    if archives:
        ar = archives[0]
        date = str(ar.get("date", ""))
        seconds = int(date) if date.isdigit() else da.release_date(date)[1]
        fail.expect(ar.get("name") == "debian" and ar.get("url") == c.srv.mirror_url and
                    ar.get("suite") == "bookworm" and ar.get("components") == ["main"],
                    f"(a) the archive entry names the mirror: {ar}")
        fail.expect(seconds == da.release_date(DATE1)[1],
                    f"(a) the archive's date is the Release Date {DATE1}: {date}")
        fail.expect(ar.get("snapshot") == c.snapshot_base,
                    f"(a) the archive's snapshot base is the recipe's: {ar.get('snapshot')}")
        fail.expect(ar.get("keyring-sha256") == sha256(c.archive.keyring),
                    f"(a) keyring-sha256 is the keyring's: {ar.get('keyring-sha256')}")
    print(f"(a) {len(got)} debs = the fixture's set, hashes/sizes/filenames = Packages, "
          f"archive {archives[0].get('url') if archives else None} date "
          f"{archives[0].get('date') if archives else None} ({time.monotonic() - t:.1f}s)")
    return True


def check_image_files(fail, label, image):
    """IMAGE.sha256, .cdx.json, .check.json written; the sha256 file agrees. The sha256."""
    digest = sha256(image)
    side = image + ".sha256"
    ok = all(os.path.isfile(image + s) for s in (".sha256", ".cdx.json", ".check.json"))
    fail.expect(ok, f"{label} the build writes IMAGE.sha256, IMAGE.cdx.json, IMAGE.check.json")
    if os.path.isfile(side):
        fail.expect(read(side).split()[:1] == [digest],
                    f"{label} IMAGE.sha256 holds the image's sha256: {read(side).strip()}")
    return digest


def case_b(fail, c):
    image = os.path.join(c.scratch, "out-b", "osbase.tar.zst")
    proc = c.rl("build", c.lock, "-o", image, "--cache-dir", c.cache("b"))
    print(f"(b) build, empty cache: exit {proc.returncode} ({proc.seconds:.1f}s)")
    if not fail.expect(proc.returncode == 0 and os.path.isfile(image),
                       "(b) build with an empty cache exits 0:" + show(proc)):
        return None
    digest = check_image_files(fail, "(b)", image)
    status = tar_cat(image, "./var/lib/dpkg/status")
    fail.expect(status is not None, "(b) the image has ./var/lib/dpkg/status")
    installed = dpkg_installed((status or b"").decode(errors="replace"))
    locked = set(deb_keys(base_of(load_lock(c.lock))))
    fail.expect(installed == locked, f"(b) the image's dpkg status is the lock's set: extra "
                f"{sorted(installed - locked)[:5]}, missing {sorted(locked - installed)[:5]}")
    try:
        cdx = json.loads(read(image + ".cdx.json"))
    except (OSError, ValueError) as e:
        fail.expect(False, f"(b) the SBOM reads as JSON: {e}")
        cdx = {}
    in_sbom, bad = sbom_debs(cdx)
    fail.expect(not bad, f"(b) SBOM deb purls are pkg:deb/debian/NAME@VERSION?arch=A&"
                f"distro=debian-12 with the component's name and version: {bad[:3]}")
    fail.expect(in_sbom == installed and installed,
                f"(b) the SBOM's deb components are exactly the image's installed packages: "
                f"not installed {sorted(in_sbom - installed)[:5]}, not in the SBOM "
                f"{sorted(installed - in_sbom)[:5]}")
    print(f"(b) image sha256 {digest[:16]}..., {len(installed)} installed packages = lock = "
          f"SBOM pkg:deb components")
    c.image_b = image
    return digest


def host_facts():
    hostname = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
    try:
        etc_hostname = read("/etc/hostname").strip()
    except OSError:
        etc_hostname = ""
    try:
        resolv = read("/etc/resolv.conf")
    except OSError:
        resolv = ""
    nameservers = re.findall(r"^\s*nameserver\s+(\S+)", resolv, re.M)
    return hostname, etc_hostname, resolv, nameservers


def scan_tree(root, needles):
    """{needle: [paths under root whose bytes contain it]} over regular files < 8 MiB."""
    hits = {n: [] for n in needles}
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            try:
                if not os.path.isfile(path) or os.path.islink(path) or \
                        os.path.getsize(path) > (8 << 20):
                    continue
                data = read(path, "rb")
            except OSError:
                continue
            for n in needles:
                if n.encode() in data:
                    hits[n].append(os.path.relpath(path, root))
    return {n: p for n, p in hits.items() if p}


def case_c(fail, c, digest_b):
    other = os.path.join(c.scratch, "other-machine")
    os.makedirs(os.path.join(other, "cwd"))
    host_file = os.path.join(other, "hostname")
    resolv_file = os.path.join(other, "resolv.conf")
    with open(host_file, "w") as f:
        f.write(OTHER_HOST + "\n")
    with open(resolv_file, "w") as f:
        f.write(OTHER_RESOLV)
    script = os.path.join(other, "machine.sh")
    with open(script, "w") as f:
        f.write(OTHER_MACHINE)
    prefix = ["unshare", "--uts", "--mount", "sh", script, OTHER_HOST, host_file, resolv_file,
              os.path.join(other, "cwd")]
    # The other machine is what it claims to be.
    probe = subprocess.run(prefix + ["sh", "-c", "hostname; cat /etc/hostname /etc/resolv.conf; "
                                     "pwd; date +%Z"], capture_output=True, text=True)
    fail.expect(probe.returncode == 0 and probe.stdout == (
        f"{OTHER_HOST}\n{OTHER_HOST}\n{OTHER_RESOLV}{os.path.join(other, 'cwd')}\nJST\n"),
        f"(c) unshare gives another hostname, /etc/hostname, resolv.conf, cwd and TZ: "
        f"{probe.stdout!r} {probe.stderr.strip()[-300:]!r}")
    other_tmp = tempfile.mkdtemp(prefix="other-", dir=c.tmpdir)
    image = os.path.join(c.scratch, "out-c", "osbase.tar.zst")
    cache_c = c.cache("c")
    proc = c.rl("build", c.lock, "-o", image, "--cache-dir", cache_c, prefix=prefix,
                tmpdir=other_tmp)
    print(f"(c) build on the other machine: exit {proc.returncode} ({proc.seconds:.1f}s)")
    if not fail.expect(proc.returncode == 0 and os.path.isfile(image),
                       "(c) the build in unshare exits 0:" + show(proc)):
        return
    digest = check_image_files(fail, "(c)", image)
    fail.expect(digest == digest_b, f"(c) same image sha256 on the other machine: {digest} vs "
                f"{digest_b}")

    hostname, etc_hostname, resolv, nameservers = host_facts()
    for img, which in ((c.image_b, "(b)"), (image, "(c)")):
        names = tar_names(img)
        for member in ("./etc/hostname", "./etc/resolv.conf"):
            if member not in names:
                continue
            data = (tar_cat(img, member) or b"").decode(errors="replace")
            forbidden = [s for s in {hostname, etc_hostname, OTHER_HOST, *nameservers,
                                     "192.0.2.53", "other.invalid"}
                         if s and s != "localhost" and s in data]
            copied = data.strip() != "" and data.strip() in (
                resolv.strip(), OTHER_RESOLV.strip(), etc_hostname, OTHER_HOST)
            fail.expect(not forbidden and not copied,
                        f"(c) {which} image's {member} holds nothing of either machine: "
                        f"{data!r} (contains {forbidden})")
    names = tar_names(image)
    sources = (tar_cat(image, "./etc/apt/sources.list") or b"").decode(errors="replace")
    mirror = base_of(load_lock(c.lock))["archives"][0]["url"]
    fail.expect(re.search(r"^deb (\[[^\]]*\] )?" + re.escape(mirror) + r" bookworm main$",
                          sources, re.M) is not None,
                f"(c) /etc/apt/sources.list names the lock's mirror {mirror}: {sources!r}")
    fail.expect(not re.search(r"file:|copy:|cdrom:", sources) and c.scratch not in sources
                and c.tmpdir not in sources,
                f"(c) /etc/apt/sources.list names no local path: {sources!r}")
    # apt in the image must be able to verify the archive: the keyring signed-by= names is there.
    lock_archive = base_of(load_lock(c.lock))["archives"][0]
    signed_by = re.findall(r"signed-by=([^\] ]+)", sources)
    fail.expect(signed_by or not lock_archive.get("keyring-sha256"),
                f"(c) sources.list names the archive's own keyring (signed-by=): {sources!r}")
    for keyring in signed_by:
        member = "." + keyring
        data = tar_cat(image, member) if member in names else None
        fail.expect(data is not None and hashlib.sha256(data).hexdigest() ==
                    lock_archive.get("keyring-sha256"),
                    f"(c) the keyring sources.list's signed-by= names, {keyring}, "
                    f"is in the image with the lock's keyring-sha256: "
                    f"{'absent' if data is None else hashlib.sha256(data).hexdigest()}")
    caches = [c.cache_path("b"), cache_c, c.tmpdir]
    bad = [n for n in names for p in caches + [c.scratch] if p.strip("/") in n]
    fail.expect(not bad, f"(c) no path of the build machines' cache dirs in the image's file "
                f"list: {bad[:5]}")
    unpacked = tempfile.mkdtemp(prefix="unpacked-", dir=c.tmpdir)
    subprocess.run(["tar", "--zstd", "-xf", image, "-C", unpacked, "./etc", "./var"],
                   capture_output=True)
    hits = scan_tree(unpacked, [p for p in caches] + [c.scratch])
    fail.expect(not hits, f"(c) no cache, scratch or TMPDIR path in the image's /etc and /var: "
                f"{ {k: v[:3] for k, v in hits.items()} }")
    shutil.rmtree(unpacked, ignore_errors=True)
    print(f"(c) other hostname/resolv.conf/cwd/cache/TMPDIR/TZ: same sha256 {digest[:16]}...; "
          f"/etc/hostname {(tar_cat(image, './etc/hostname') or b'(absent)')!r}, resolv.conf "
          f"{(tar_cat(image, './etc/resolv.conf') or b'(absent)')!r}; sources.list "
          f"{sources.strip().splitlines()[-1:]}")


def case_d(fail, c, digest_b):
    before = packages_listed(c.archive.live)[POINT]
    old_path = "/debian/" + before["Filename"]
    snap_path = f"/snapshot/archive/debian/{TS1}/{before['Filename']}"
    t = time.monotonic()
    old, new = c.archive.point_release(POINT, date=DATE2)
    print(f"(d) point_release({POINT}): {old} -> {new} ({time.monotonic() - t:.1f}s)")
    c.point = (old, new)
    fail.expect(c.srv.file_for(old_path) is None and c.srv.file_for(snap_path) is not None,
                "(d) the old .deb is gone from the live pool and kept in the first snapshot")

    # d1: the old lock, empty cache, same image; the old .deb from the snapshot.
    c.srv.clear_log()
    image = os.path.join(c.scratch, "out-d1", "osbase.tar.zst")
    proc = c.rl("build", c.lock, "-o", image, "--cache-dir", c.cache("d1"))
    print(f"(d1) old lock, empty cache: exit {proc.returncode} ({proc.seconds:.1f}s)")
    paths = c.srv.paths
    if fail.expect(proc.returncode == 0 and os.path.isfile(image),
                   "(d1) the old lock builds after the point release:" + show(proc)):
        digest = sha256(image)
        fail.expect(digest == digest_b, f"(d1) the same image sha256 as (b): {digest}")
    # The server answers 404 for what file_for() does not find (no fault is set).
    fail.expect(old_path in paths and c.srv.file_for(old_path) is None,
                f"(d1) the pool URL {old_path} was asked and answered 404")
    fail.expect(snap_path in paths and (old_path not in paths or
                                        paths.index(old_path) < paths.index(snap_path)),
                f"(d1) then the snapshot URL of the locked date {snap_path} was asked: "
                f"{[p for p in paths if POINT in p]}")
    print(f"(d1) {POINT} {old}: {old_path} 404, then {snap_path}")

    # d2: --upgrade picks the new version.
    up = os.path.join(c.scratch, "upgraded.lock")
    shutil.copy(c.lock, up)
    proc = c.rl("lock", c.recipe, "-o", up, "--upgrade", "--cache-dir", c.cache("a"))
    print(f"(d2) lock --upgrade: exit {proc.returncode} ({proc.seconds:.1f}s)")
    if fail.expect(proc.returncode == 0, "(d2) lock --upgrade exits 0:" + show(proc)):
        old_base, new_base = base_of(load_lock(c.lock)), base_of(load_lock(up))
        o, n = debs_by_name(old_base), debs_by_name(new_base)
        fail.expect(n.get(POINT, {}).get("version") == new,
                    f"(d2) --upgrade picks {POINT} {new}: {n.get(POINT, {}).get('version')}")
        listed = packages_listed(c.archive.live)[POINT]
        fail.expect(n.get(POINT, {}).get("sha256") == listed["SHA256"] and
                    n.get(POINT, {}).get("filename") == listed["Filename"],
                    f"(d2) with the new .deb's sha256 and filename")
        changed = sorted(k for k in set(o) | set(n) if o.get(k) != n.get(k))
        fail.expect(changed == [POINT], f"(d2) nothing else changes: {changed}")
        date = str(new_base.get("archives", [{}])[0].get("date", ""))
        fail.expect(date == str(da.release_date(DATE2)[1]),
                    f"(d2) the archive's date is the point release's: {date}")

        # d3: diff
        proc = c.rl("diff", c.lock, up, "--json")
        print(f"(d3) diff --json old new: exit {proc.returncode}\n    "
              + proc.stdout.strip().replace("\n", "\n    ")[:1500])
        fail.expect(proc.returncode == 1, f"(d3) diff exits 1: {proc.returncode}")
        fail.expect(POINT in proc.stdout and new in proc.stdout,
                    f"(d3) diff names {POINT} and {new}")
        text = c.rl("diff", c.lock, up)
        print("(d3) diff (text):\n    " + text.stdout.strip().replace("\n", "\n    ")[:600])
        fail.expect(text.returncode == 1 and POINT in text.stdout and new in text.stdout,
                    f"(d3) the text diff names {POINT} and {new} too: exit {text.returncode}")

    # d4: relock without --upgrade on an empty cache: nothing moves, and it still builds.
    keep = os.path.join(c.scratch, "kept.lock")
    shutil.copy(c.lock, keep)
    proc = c.rl("lock", c.recipe, "-o", keep, "--cache-dir", c.cache("d4"))
    print(f"(d4) relock without --upgrade, empty cache: exit {proc.returncode} "
          f"({proc.seconds:.1f}s)")
    if fail.expect(proc.returncode == 0, "(d4) relock without --upgrade exits 0:" + show(proc)):
        old_base, kept = base_of(load_lock(c.lock)), base_of(load_lock(keep))
        fail.expect(kept.get("debs") == old_base.get("debs"),
                    f"(d4) the lock's debs are unchanged ({POINT} "
                    f"{debs_by_name(kept).get(POINT, {}).get('version')})")
        fail.expect(kept.get("archives") == old_base.get("archives"),
                    f"(d4) the archives (and the locked date) are unchanged: "
                    f"{kept.get('archives')}")
        check_obtainable(fail, c, "(d4)", kept)
    # d4b: the same after a recipe change that does not touch the base.
    recipe2 = os.path.join(os.path.dirname(c.recipe), "renamed.toml")
    with open(recipe2, "w") as f:
        f.write(c.recipe_text.replace('name = "osbase"', 'name = "osbase-renamed"'))
    keep2 = os.path.join(c.scratch, "kept-renamed.lock")
    shutil.copy(c.lock, keep2)
    proc = c.rl("lock", recipe2, "-o", keep2, "--cache-dir", c.cache("d4"))
    if fail.expect(proc.returncode == 0, "(d4) relock of a renamed recipe exits 0:" + show(proc)):
        kept = base_of(load_lock(keep2))
        fail.expect(kept.get("debs") == base_of(load_lock(c.lock)).get("debs") and
                    kept.get("archives") == base_of(load_lock(c.lock)).get("archives"),
                    "(d4) an unrelated recipe change keeps the debs and the date too")
    print(f"(d4) relocks without --upgrade keep {POINT} {old} and date "
          f"{base_of(load_lock(keep)).get('archives', [{}])[0].get('date')}")
    return up


def check_obtainable(fail, c, label, base):
    """Every locked .deb is in the live pool or in the snapshot of the locked date, with the
    locked sha256."""
    ar = base["archives"][0]
    ts = da.snapshot_timestamp(int(ar["date"]))
    missing = []
    for d in base["debs"]:
        live = c.srv.file_for("/debian/" + d["filename"])
        snap = c.srv.file_for(f"/snapshot/archive/debian/{ts}/{d['filename']}")
        if not any(p and sha256(p) == d["sha256"] for p in (live, snap)):
            missing.append(d["name"])
    fail.expect(not missing, f"{label} every locked .deb is in the pool or the snapshot {ts}: "
                f"missing {missing}")


def refused(fail, label, proc, output, words):
    """exit 3, one stderr line naming the problem, nothing under the output's name."""
    line = one_line(proc)
    print(f"{label} exit {proc.returncode}: {stderr_of(proc)[:400]}")
    fail.expect(proc.returncode == 3, f"{label} exit 3: {proc.returncode}" + show(proc))
    fail.expect(line is not None and any(w in line.lower() for w in words),
                f"{label} one stderr line naming the problem ({' or '.join(words)}): "
                f"{stderr_of(proc)[:400]!r}")
    fail.expect(no_file(output) and not leftovers(output),
                f"{label} nothing written under {output}: {leftovers(output)}")


def case_e(fail, c):
    # e1: a tampered .deb, the old lock, an empty cache.
    out = os.path.join(c.scratch, "out-e1", "osbase.tar.zst")
    os.makedirs(os.path.dirname(out))
    with c.archive.tamper_deb(TAMPER):
        proc = c.rl("build", c.lock, "-o", out, "--cache-dir", c.cache("e1"))
    refused(fail, "(e1) tampered .deb:", proc, out, ["sha256"])
    fail.expect(TAMPER in stderr_of(proc), f"(e1) the message names {TAMPER}")
    fail.expect(not os.listdir(os.path.dirname(out)),
                f"(e1) nothing beside the image: {os.listdir(os.path.dirname(out))}")

    # e2: a broken InRelease signature.
    out = os.path.join(c.scratch, "e2.lock")
    with c.archive.break_signature():
        proc = c.rl("lock", c.recipe, "-o", out, "--cache-dir", c.cache("e2"))
    refused(fail, "(e2) broken InRelease signature:", proc, out, ["signature"])
    fail.expect("InRelease" in stderr_of(proc), "(e2) the message names InRelease")

    # e3: Packages.xz not the one Release lists.
    out = os.path.join(c.scratch, "e3.lock")
    with c.archive.mismatch_packages():
        proc = c.rl("lock", c.recipe, "-o", out, "--cache-dir", c.cache("e3"))
    refused(fail, "(e3) Packages.xz not matching Release:", proc, out, ["sha256", "mismatch"])
    fail.expect("Packages" in stderr_of(proc), "(e3) the message names the Packages index")

    # Undone: the archive verifies again (cheap: the Packages/InRelease as published).
    dist = os.path.join(c.archive.live, "dists", "bookworm")
    ok = subprocess.run(["gpgv", "--keyring", c.archive.keyring, os.path.join(dist, "InRelease")],
                        capture_output=True).returncode == 0
    d = packages_listed(c.archive.live)[TAMPER]
    fail.expect(ok and sha256(os.path.join(c.archive.live, d["Filename"])) == d["SHA256"],
                "(e) each change undone: InRelease verifies, the .deb has its sha256")
    print("(e) tampered .deb, broken signature, mismatched Packages.xz: each exit 3, one line")


def without_snapshot(src, dst):
    """A copy of the lock whose archives carry no snapshot key."""
    text = read(src)
    text2, n = re.subn(r'snapshot = "[^"]*", ', "", text)
    with open(dst, "w") as f:
        f.write(text2)
    return n


def case_f(fail, c):
    old, _ = c.point
    d = debs_by_name(base_of(load_lock(c.lock)))[POINT]
    pool_url = c.srv.mirror_url + "/" + d["filename"]
    snap_url = f"{c.snapshot_base}/{TS1}/{d['filename']}"

    nosnap = os.path.join(c.scratch, "nosnapshot.lock")
    n = without_snapshot(c.lock, nosnap)
    fail.expect(n == 1 and "snapshot" not in json.dumps(base_of(load_lock(nosnap))["archives"]),
                f"(f1) the copy's archive has no snapshot key ({n} removed)")
    out = os.path.join(c.scratch, "out-f1", "osbase.tar.zst")
    proc = c.rl("build", nosnap, "-o", out, "--cache-dir", c.cache("f1"))
    err = stderr_of(proc)
    print(f"(f1) no snapshot, pool lacks {POINT} {old}: exit {proc.returncode}: {err[:500]}")
    fail.expect(proc.returncode == 3, f"(f1) exit 3: {proc.returncode}" + show(proc))
    fail.expect(POINT in err and old in err and pool_url in err,
                f"(f1) the message names {POINT} {old} and the URL tried {pool_url}")
    fail.expect(no_file(out), f"(f1) no image written: {leftovers(out)}")

    # f2: the snapshot lacks it too: both URLs named.
    c.srv.fail(f"/snapshot/archive/debian/{TS1}/{d['filename']}", 404)
    out = os.path.join(c.scratch, "out-f2", "osbase.tar.zst")
    try:
        proc = c.rl("build", c.lock, "-o", out, "--cache-dir", c.cache("f2"))
    finally:
        c.srv.clear_faults()
    err = stderr_of(proc)
    print(f"(f2) pool and snapshot lack {POINT} {old}: exit {proc.returncode}: {err[:600]}")
    fail.expect(proc.returncode == 3, f"(f2) exit 3: {proc.returncode}" + show(proc))
    fail.expect(POINT in err and pool_url in err and snap_url in err,
                f"(f2) the message names {POINT} and both URLs tried: {pool_url}, {snap_url}")
    others = [k for k in debs_by_name(base_of(load_lock(c.lock))) if k != POINT and
              re.search(r"^\s*" + re.escape(k) + r" ", err, re.M)]
    fail.expect(not others, f"(f2) only {POINT} is named missing: {others[:5]}")
    fail.expect(no_file(out), f"(f2) no image written: {leftovers(out)}")


def case_g(fail, c, digest_b):
    c.srv.clear_log()
    out = os.path.join(c.scratch, "out-g1", "osbase.tar.zst")
    proc = c.rl("build", c.lock, "-o", out, "--cache-dir", c.cache_path("b"), "--offline")
    print(f"(g1) build --offline, warm cache: exit {proc.returncode} ({proc.seconds:.1f}s)")
    if fail.expect(proc.returncode == 0 and os.path.isfile(out),
                   "(g1) build --offline with the warm cache of (b) exits 0:" + show(proc)):
        fail.expect(sha256(out) == digest_b, f"(g1) the same sha256: {sha256(out)}")
    fail.expect(not c.srv.paths, f"(g1) --offline asked the server nothing: {c.srv.paths[:3]}")

    out = os.path.join(c.scratch, "out-g2", "osbase.tar.zst")
    proc = c.rl("build", c.lock, "-o", out, "--cache-dir", c.cache("g2"), "--offline")
    err = stderr_of(proc)
    print(f"(g2) build --offline, empty cache: exit {proc.returncode}: "
          f"{err.splitlines()[0][:200] if err else ''} ... ({len(err.splitlines())} lines)")
    fail.expect(proc.returncode == 3, f"(g2) exit 3: {proc.returncode}" + show(proc))
    names = sorted(debs_by_name(base_of(load_lock(c.lock))))
    unnamed = [n for n in names if not re.search(r"^\s*" + re.escape(n) + r" ", err, re.M)]
    fail.expect(not unnamed and "offline" in err,
                f"(g2) the message names every missing .deb and --offline: unnamed {unnamed[:5]}")
    fail.expect(no_file(out), f"(g2) no image written: {leftovers(out)}")
    fail.expect(not c.srv.paths, f"(g2) --offline asked the server nothing: {c.srv.paths[:3]}")


def case_i(fail, c):
    """(i) apt inside the image works against the lock's archives: its sources.list and the
    archive's key in /etc/apt/keyrings are enough for a real `apt-get update` and download."""
    root = os.path.join(c.scratch, "rootfs-i")
    os.makedirs(root)
    subprocess.run(["tar", "--zstd", "-xf", c.image_b, "-C", root], check=True)
    try:
        # As a container has it: /dev from the host (apt-key writes to /dev/null), in a mount
        # namespace of its own so nothing stays mounted.
        def in_image(command):
            return subprocess.run(["unshare", "--mount", "sh", "-c",
                                   'mount --bind /dev "$1/dev" && chroot "$1" sh -c "$2"', "sh",
                                   root, command], capture_output=True, text=True, timeout=120)

        update = in_image("apt-get update")
        fail.expect(update.returncode == 0 and "Err:" not in update.stdout,
                    f"(i) apt-get update in the image: exit {update.returncode}:"
                    f"{update.stdout[-600:]}{update.stderr[-600:]}")
        download = in_image("cd /tmp && apt-get download media-types && ls /tmp")
        fail.expect(download.returncode == 0 and "media-types_" in download.stdout,
                    f"(i) apt-get download in the image: exit {download.returncode}:"
                    f"{download.stdout[-400:]}{download.stderr[-400:]}")
        print(f"(i) apt-get update and download inside the image: exit {update.returncode}, "
              f"{download.returncode}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def case_j(fail, c):
    """(j) a further archive: tzdata gets a newer version in bookworm-updates only; a recipe
    naming that archive (with its keyring) pins tzdata from it and everything else from the
    mirror, the image's apt sources list both, and diff names the move."""
    old, new = c.archive.point_release("tzdata", date=DATE3, suites=["bookworm-updates"])
    recipe = os.path.join(os.path.dirname(c.recipe), "updates.toml")
    text = c.recipe_text.replace(
        'snapshot = "' + c.snapshot_base + '" }',
        'snapshot = "' + c.snapshot_base + '", archives = [{ name = "updates", url = "' +
        c.srv.mirror_url + '", suite = "bookworm-updates", keyring = "keyring.gpg" }] }')
    fail.expect(text != c.recipe_text, "(j) the recipe names the updates archive")
    with open(recipe, "w") as f:
        f.write(text)
    lock = os.path.join(c.scratch, "updates.lock")
    proc = c.rl("lock", recipe, "-o", lock, "--cache-dir", c.cache("j"))
    if not fail.expect(proc.returncode == 0, "(j) lock with a further archive:" + show(proc)):
        return
    base = base_of(load_lock(lock))
    archives = [a["name"] for a in base.get("archives", [])]
    by_name = debs_by_name(base)
    tz = by_name.get("tzdata", {})
    others = {d["archive"] for n, d in by_name.items() if n != "tzdata"}
    fail.expect(archives == ["debian", "updates"] and tz.get("version") == new and
                tz.get("archive") == "updates" and others == {"debian"},
                f"(j) tzdata {tz.get('version')} from {tz.get('archive')}, others from "
                f"{others}, archives {archives}")
    image = os.path.join(c.scratch, "out-j", "updates.tar.zst")
    proc = c.rl("build", lock, "-o", image, "--cache-dir", c.cache("j"))
    if fail.expect(proc.returncode == 0, "(j) build with a further archive:" + show(proc)):
        sources = (tar_cat(image, "./etc/apt/sources.list") or b"").decode()
        fail.expect("bookworm-updates" in sources and
                    "rootlock-updates.gpg" in sources and
                    tar_cat(image, "./etc/apt/keyrings/rootlock-updates.gpg") is not None,
                    f"(j) the image's apt sources name both archives: {sources}")
    proc = c.rl("diff", c.lock, lock)
    fail.expect(proc.returncode == 1 and "tzdata" in proc.stdout and new in proc.stdout and
                "bookworm-updates" in proc.stdout,
                f"(j) diff names tzdata's move: {proc.returncode} {proc.stdout[-800:]}")
    print(f"(j) tzdata {old} -> {new} from bookworm-updates; diff:\n" +
          "\n".join("    " + line for line in proc.stdout.splitlines()[:8]))


def case_h(fail, c, digest_b):
    # h1: the recipe by a relative path: the keyring is relative to the recipe's directory.
    # KNOWN BUG (reported): exit 3, mmdebstrap gets signed-by=keyring.gpg (not absolute) and apt
    # reads it as a fingerprint ("Invalid value set for option Signed-By").
    out = os.path.join(c.scratch, "relative.lock")
    proc = c.rl("lock", os.path.basename(c.recipe), "-o", out, "--cache-dir", c.cache_path("a"),
                cwd=os.path.dirname(c.recipe))
    print(f"(h1) lock recipe.toml from its directory: exit {proc.returncode} "
          f"({proc.seconds:.1f}s) {stderr_of(proc)[:300]}")
    if fail.expect(proc.returncode == 0, "(h1) [rootlock bug] `lock recipe.toml` (a relative "
                   "recipe path, keyring relative to it) exits 0:" + show(proc)) and c.up:
        # No previous lock: resolved afresh, after the point release, as --upgrade did.
        fail.expect(base_of(load_lock(out)).get("debs") == base_of(load_lock(c.up)).get("debs"),
                    "(h1) the same debs as the --upgrade lock of (d2)")
    # h2: a relative --cache-dir.
    # KNOWN BUG (reported): exit 3, mmdebstrap is given copy://RELATIVE/debian-repos/... and apt
    # fails to read it.
    rel_parent = os.path.join(c.scratch, "relative")
    os.makedirs(rel_parent)
    image = os.path.join(c.scratch, "out-h2", "osbase.tar.zst")
    proc = c.rl("build", c.lock, "-o", image, "--cache-dir", "cache-h2", cwd=rel_parent)
    print(f"(h2) build --cache-dir cache-h2 (relative): exit {proc.returncode} "
          f"({proc.seconds:.1f}s) {stderr_of(proc)[:300]}")
    if fail.expect(proc.returncode == 0 and os.path.isfile(image),
                   "(h2) [rootlock bug] build with a relative --cache-dir exits 0:" + show(proc)):
        fail.expect(sha256(image) == digest_b, f"(h2) the same sha256: {sha256(image)}")


def case_k(fail, c):
    """The same archive by another URL, on the warm cache of (b): the image's sources.list must
    name the URL of its own lock, not the one a cached base was first assembled for."""
    other = c.srv.mirror_url.replace("127.0.0.1", "localhost")
    recipe = os.path.join(os.path.dirname(c.recipe), "recipe-k.toml")
    with open(recipe, "w") as f:
        f.write(RECIPE.format(name="osbase", mirror=other,
                              snapshot=c.snapshot_base.replace("127.0.0.1", "localhost")))
    lock = os.path.join(c.scratch, "other-url.lock")
    proc = c.rl("lock", recipe, "-o", lock, "--cache-dir", c.cache_path("b"))
    if not fail.expect(proc.returncode == 0, "(k) lock by another URL exits 0:" + show(proc)):
        return
    image = os.path.join(c.scratch, "out-k", "osbase.tar.zst")
    proc = c.rl("build", lock, "-o", image, "--cache-dir", c.cache_path("b"))
    if not fail.expect(proc.returncode == 0, "(k) build exits 0:" + show(proc)):
        return
    sources = (tar_cat(image, "./etc/apt/sources.list") or b"").decode(errors="replace")
    fail.expect(other in sources and "127.0.0.1" not in sources,
                f"(k) sources.list names {other}, not the first URL: {sources!r}")
    print(f"(k) the same .debs by another URL, warm cache: sources.list names {other}")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    fail = Failures()
    start = time.monotonic()
    binary = copy_binary(os.path.abspath(argv[1]))
    scratch = tempfile.mkdtemp(prefix="rootlock-debian-base-")
    tmpdir = fast_tmpdir() or tempfile.mkdtemp(prefix="tmp-", dir=scratch)
    archive = None
    timings = {}
    c = Ctx()
    c.scratch, c.tmpdir = scratch, tmpdir
    c.rl = Run(binary, tmpdir)
    counter = {}

    def cache_path(name):
        return os.path.join(scratch, "cache-" + name)

    def cache(name):
        """A cache dir; a fresh one the first time it is named."""
        if name not in counter:
            counter[name] = True
            shutil.rmtree(cache_path(name), ignore_errors=True)
        return cache_path(name)

    c.cache, c.cache_path = cache, cache_path

    def timed(label, fn, *args):
        t = time.monotonic()
        before = len(fail.items)
        try:
            return fn(*args)
        except Exception as e:  # a broken case must not hide the others
            fail.expect(False, f"{label} raised {type(e).__name__}: {e}")
            return None
        finally:
            timings[label] = (time.monotonic() - t, len(fail.items) - before)

    try:
        t = time.monotonic()
        archive = da.demo_archive(os.path.join(scratch, "archive"), date=DATE1,
                                  updates=("tzdata",))
        print(f"archive published as {archive.publications[-1].timestamp} "
              f"({time.monotonic() - t:.1f}s); TMPDIR {tmpdir}")
        with da.ArchiveServer(archive) as srv:
            c.archive, c.srv = archive, srv
            c.snapshot_base = srv.url + "/snapshot/archive/debian"
            recipe_dir = os.path.join(scratch, "recipe")
            os.makedirs(recipe_dir)
            shutil.copy(archive.keyring, os.path.join(recipe_dir, "keyring.gpg"))
            c.recipe = os.path.join(recipe_dir, "recipe.toml")
            c.recipe_text = RECIPE.format(name="osbase", mirror=srv.mirror_url,
                                          snapshot=c.snapshot_base)
            with open(c.recipe, "w") as f:
                f.write(c.recipe_text)
            c.lock = os.path.join(scratch, "osbase.lock")
            print(f"serving {srv.mirror_url}, snapshots {c.snapshot_base}")

            if timed("(a)", case_a, fail, c):
                digest_b = timed("(b)", case_b, fail, c)
                if digest_b:
                    timed("(c)", case_c, fail, c, digest_b)
                    timed("(g)", case_g, fail, c, digest_b)
                    timed("(i)", case_i, fail, c)
                timed("(e)", case_e, fail, c)
                c.up = timed("(d)", case_d, fail, c, digest_b or "")
                if hasattr(c, "point"):
                    timed("(f)", case_f, fail, c)
                if digest_b:
                    timed("(h)", case_h, fail, c, digest_b)
                timed("(j)", case_j, fail, c)
                if digest_b:
                    timed("(k)", case_k, fail, c)
    finally:
        if archive is not None:
            archive.close()
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(tmpdir, ignore_errors=True)
        shutil.rmtree(os.path.dirname(binary), ignore_errors=True)
    print("timings: " + ", ".join(f"{k} {v[0]:.0f}s{' FAIL' if v[1] else ''}"
                                  for k, v in timings.items()))
    print(f"{len(fail.items)} failures" if fail.items else "all expectations met",
          f"({time.monotonic() - start:.1f}s)")
    return 1 if fail.items else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
