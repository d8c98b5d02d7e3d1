"""End-to-end: a Debian base is locked per package and rebuilt bit-identically anywhere.

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
     --upgrade, on a cache with no index and no .deb (only (a)'s assembled base), keeps every
     version and the locked date (and every locked .deb is still to be had), also after an
     unrelated recipe change (on that relock's cache);
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

The binary under test (--rootlock) is copied into a folder of its own first, so that a rebuild
of it during the run cannot mix two binaries. mmdebstrap's chroot goes under
$ROOTLOCK_TEST_TMPDIR or /dev/shm (TMPDIR for rootlock): dpkg's fsyncs on a disk make each
assembly ~4x slower.

The archive, its server, the lock of (a), the image of (b) and every further lock and image are
module fixtures, and the archive changes in the order the cases run in the file (a b c g i e d
f h j k, as before): the point release of (d) comes after the lock of (a) and the image of (b)
(it depends on both), (j)'s release into bookworm-updates later still. A case selected alone
(`-k`) gets what it reads made first, by the fixtures it names, and sees the archive in the
state its checks are about.
"""
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
import tomllib
import types
import urllib.parse

import pytest

from fixtures import debian_archive as da
from fixtures.cli import run

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



def copy_binary(path):
    """A private copy of the binary; waits up to 5 minutes while another engineer rebuilds it."""
    deadline = time.monotonic() + 300
    while True:
        try:
            st = os.stat(path)
            if st.st_mode & stat.S_IXUSR and st.st_size > 0:
                target = tempfile.mkdtemp(prefix="rootlock-bin-") + "/rootlock"
                shutil.copy2(path, target)
                if run([target, "--help"]).returncode == 0:
                    return target
                shutil.rmtree(os.path.dirname(target), ignore_errors=True)
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{path}: no runnable rootlock binary after 5 minutes")
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


def lock_base(path):
    return base_of(load_lock(path))


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
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    return lines[0] if len(lines) == 1 else None


def tar_names(image):
    out = run(["tar", "--zstd", "-tf", image])
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


def named_missing(err, name):
    """Whether a build's stderr names `name` on a line of its own list of missing .debs."""
    return re.search(r"^\s*" + re.escape(name) + r" ", err, re.M) is not None


def check_image_files(label, image):
    """IMAGE.sha256, .cdx.json, .check.json written; the sha256 file agrees. The sha256."""
    digest = sha256(image)
    missing = [s for s in (".sha256", ".cdx.json", ".check.json")
               if not os.path.isfile(image + s)]
    assert not missing, f"{label} the build should write IMAGE.sha256, IMAGE.cdx.json, " \
        f"IMAGE.check.json: missing {missing}"
    side = read(image + ".sha256")
    assert side.split()[:1] == [digest], \
        f"{label} IMAGE.sha256 should hold the image's sha256 {digest}: {side.strip()}"
    return digest


# -- the archive, the recipe, rootlock -----------------------------------------------------------

@pytest.fixture(scope="module")
def binary(rootlock):
    path = copy_binary(rootlock)
    yield path
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)


@pytest.fixture(scope="module")
def fast_tmp(scratch):
    path = fast_tmpdir() or tempfile.mkdtemp(prefix="tmp-", dir=scratch)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def rl(binary, fast_tmp):
    """rl(ARGS..., cwd=, tmpdir=, prefix=): the binary's copy with TMPDIR on a fast
    filesystem, LC_ALL=C.UTF-8 and no SOURCE_DATE_EPOCH; the process has .seconds."""
    def call(*args, cwd=None, tmpdir=None, prefix=(), timeout=900):
        env = dict(os.environ, TMPDIR=tmpdir or fast_tmp, LC_ALL="C.UTF-8")
        env.pop("SOURCE_DATE_EPOCH", None)
        t = time.monotonic()
        proc = run(list(prefix) + [binary] + [str(a) for a in args], env=env, cwd=cwd,
                   timeout=timeout)
        proc.seconds = time.monotonic() - t
        return proc
    return call


class Caches:
    """Cache folders under the scratch folder: fresh(name) empties one the first time it is
    named in the module; path(name) is the folder as it is."""

    def __init__(self, scratch):
        self.scratch = scratch
        self.named = set()

    def path(self, name):
        return os.path.join(self.scratch, "cache-" + name)

    def fresh(self, name):
        if name not in self.named:
            self.named.add(name)
            shutil.rmtree(self.path(name), ignore_errors=True)
        return self.path(name)


@pytest.fixture(scope="module")
def caches(scratch):
    return Caches(scratch)


@pytest.fixture(scope="module")
def archive(scratch, fast_tmp):
    t = time.monotonic()
    a = da.demo_archive(os.path.join(scratch, "archive"), date=DATE1, updates=("tzdata",))
    print(f"archive published as {a.publications[-1].timestamp} "
          f"({time.monotonic() - t:.1f}s); TMPDIR {fast_tmp}")
    yield a
    a.close()


@pytest.fixture(scope="module")
def srv(archive):
    with da.ArchiveServer(archive) as server:
        print(f"serving {server.mirror_url}")
        yield server


@pytest.fixture(scope="module")
def snapshot_base(srv):
    return srv.url + "/snapshot/archive/debian"


@pytest.fixture(scope="module")
def recipe(scratch, archive, srv, snapshot_base):
    """(path, text) of recipe.toml, its keyring beside it."""
    recipe_dir = os.path.join(scratch, "recipe")
    os.makedirs(recipe_dir)
    shutil.copy(archive.keyring, os.path.join(recipe_dir, "keyring.gpg"))
    path = os.path.join(recipe_dir, "recipe.toml")
    text = RECIPE.format(name="osbase", mirror=srv.mirror_url, snapshot=snapshot_base)
    with open(path, "w") as f:
        f.write(text)
    return path, text


# -- a. the lock ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lock(rl, scratch, caches, archive, recipe):
    """The lock of (a), and the served Packages as they were when it was written."""
    path = os.path.join(scratch, "osbase.lock")
    listed = packages_listed(archive.live)
    proc = rl("lock", recipe[0], "-o", path, "--cache-dir", caches.fresh("a"))
    print(f"(a) lock, fresh cache: exit {proc.returncode} ({proc.seconds:.1f}s)")
    assert proc.returncode == 0 and os.path.isfile(path), \
        "(a) lock against the served archive should exit 0:" + show(proc)
    return types.SimpleNamespace(path=path, base=lock_base(path), listed=listed)


def test_a_debs_are_the_fixtures_package_set(lock):
    want = sorted(tuple(p) for p in da.demo_package_set())
    got = deb_keys(lock.base)
    # The fixture's set is what minbase installs from Debian, where apt is Priority "required"
    # by the archive's override (its DEBIAN/control says "important").
    apt_priority = lock.listed.get("apt", {}).get("Priority")
    print(f"(a) {len(got)} debs")
    assert got == want, f"(a) the lock's debs should be the fixture's package set: extra " \
        f"{sorted(set(got) - set(want))[:5]}, missing {sorted(set(want) - set(got))[:5]} " \
        f"(the served Packages give apt Priority {apt_priority})"


def test_a_debs_are_as_the_served_packages(lock):
    bad = []
    for d in lock.base.get("debs", []):
        st = lock.listed.get(d["name"])
        if st is None or (st["SHA256"], int(st["Size"]), st["Filename"], st["Version"]) != \
                (d.get("sha256"), d.get("size"), d.get("filename"), d["version"]):
            bad.append(d["name"])
    assert not bad and lock.base.get("debs"), \
        f"(a) each deb's sha256, size and filename should be the served Packages': {bad[:5]}"


def test_a_one_archive(lock):
    archives = lock.base.get("archives", [])
    assert len(archives) == 1, f"(a) one archive in the lock: {len(archives)}"


@pytest.fixture(scope="module")
def lock_archive(lock):
    archives = lock.base.get("archives", [])
    assert archives, "(a) the lock has no archive"
    return archives[0]


def test_a_archive_names_the_mirror(lock_archive, srv):
    ar = lock_archive
    assert ar.get("name") == "debian" and ar.get("url") == srv.mirror_url and \
        ar.get("suite") == "bookworm" and ar.get("components") == ["main"], \
        f"(a) the archive entry should name debian at {srv.mirror_url}, bookworm main: {ar}"


def test_a_archive_date_is_the_release_date(lock_archive):
    date = str(lock_archive.get("date", ""))
    seconds = int(date) if date.isdigit() else da.release_date(date)[1]
    assert seconds == da.release_date(DATE1)[1], \
        f"(a) the archive's date should be the Release Date {DATE1}: {date}"


def test_a_archive_snapshot_is_the_recipes(lock_archive, snapshot_base):
    assert lock_archive.get("snapshot") == snapshot_base, \
        f"(a) the archive's snapshot base should be the recipe's {snapshot_base}: " \
        f"{lock_archive.get('snapshot')}"


def test_a_archive_keyring_sha256(lock_archive, archive):
    want = sha256(archive.keyring)
    assert lock_archive.get("keyring-sha256") == want, \
        f"(a) keyring-sha256 should be the keyring's {want}: {lock_archive.get('keyring-sha256')}"


# -- b. the build --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def image_b(rl, scratch, caches, lock):
    """(path, sha256) of the image built from the lock with an empty cache."""
    image = os.path.join(scratch, "out-b", "osbase.tar.zst")
    proc = rl("build", lock.path, "-o", image, "--cache-dir", caches.fresh("b"))
    print(f"(b) build, empty cache: exit {proc.returncode} ({proc.seconds:.1f}s)")
    assert proc.returncode == 0 and os.path.isfile(image), \
        "(b) build with an empty cache should exit 0:" + show(proc)
    return types.SimpleNamespace(path=image, digest=sha256(image))


def test_b_build_writes_sha256_sbom_and_check(image_b):
    check_image_files("(b)", image_b.path)


@pytest.fixture(scope="module")
def installed_b(image_b):
    status = tar_cat(image_b.path, "./var/lib/dpkg/status")
    assert status is not None, "(b) the image should have ./var/lib/dpkg/status"
    return dpkg_installed(status.decode(errors="replace"))


def test_b_dpkg_status_is_the_locks_set(lock, installed_b):
    locked = set(deb_keys(lock.base))
    assert installed_b == locked, \
        f"(b) the image's dpkg status should be the lock's set: extra " \
        f"{sorted(installed_b - locked)[:5]}, missing {sorted(locked - installed_b)[:5]}"


@pytest.fixture(scope="module")
def sbom_b(image_b):
    try:
        return sbom_debs(json.loads(read(image_b.path + ".cdx.json")))
    except (OSError, ValueError) as e:
        pytest.fail(f"(b) the SBOM should read as JSON: {e}")


def test_b_sbom_deb_purls_well_formed(sbom_b):
    bad = sbom_b[1]
    assert not bad, f"(b) SBOM deb purls should be pkg:deb/debian/NAME@VERSION?arch=A&" \
        f"distro=debian-12 with the component's name and version: {bad[:3]}"


def test_b_sbom_debs_are_the_installed_packages(image_b, sbom_b, installed_b):
    in_sbom = sbom_b[0]
    print(f"(b) image sha256 {image_b.digest[:16]}..., {len(installed_b)} installed packages")
    assert in_sbom == installed_b and installed_b, \
        f"(b) the SBOM's deb components should be exactly the image's installed packages: " \
        f"not installed {sorted(in_sbom - installed_b)[:5]}, not in the SBOM " \
        f"{sorted(installed_b - in_sbom)[:5]}"


# -- c. another machine --------------------------------------------------------------------------

def host_facts():
    hostname = run(["hostname"]).stdout.strip()
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


@pytest.fixture(scope="module")
def other_machine(scratch):
    """The `unshare` prefix of another machine, and its cwd."""
    other = os.path.join(scratch, "other-machine")
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
    cwd = os.path.join(other, "cwd")
    prefix = ["unshare", "--uts", "--mount", "sh", script, OTHER_HOST, host_file, resolv_file,
              cwd]
    return types.SimpleNamespace(prefix=prefix, cwd=cwd)


def test_c_unshare_gives_another_machine(other_machine):
    probe = run(other_machine.prefix + ["sh", "-c", "hostname; cat /etc/hostname "
                                        "/etc/resolv.conf; pwd; date +%Z"])
    want = f"{OTHER_HOST}\n{OTHER_HOST}\n{OTHER_RESOLV}{other_machine.cwd}\nJST\n"
    assert probe.returncode == 0 and probe.stdout == want, \
        f"(c) unshare should give another hostname, /etc/hostname, resolv.conf, cwd and TZ: " \
        f"{probe.stdout!r}, expected {want!r} {probe.stderr.strip()[-300:]!r}"


@pytest.fixture(scope="module")
def image_c(rl, scratch, caches, fast_tmp, lock, other_machine):
    """(path, its cache folder, its TMPDIR) of the lock built on the other machine."""
    other_tmp = tempfile.mkdtemp(prefix="other-", dir=fast_tmp)
    image = os.path.join(scratch, "out-c", "osbase.tar.zst")
    cache_c = caches.fresh("c")
    proc = rl("build", lock.path, "-o", image, "--cache-dir", cache_c,
              prefix=other_machine.prefix, tmpdir=other_tmp)
    print(f"(c) build on the other machine: exit {proc.returncode} ({proc.seconds:.1f}s)")
    assert proc.returncode == 0 and os.path.isfile(image), \
        "(c) the build in unshare should exit 0:" + show(proc)
    return types.SimpleNamespace(path=image, cache=cache_c)


def test_c_same_sha256_on_the_other_machine(image_b, image_c):
    digest = check_image_files("(c)", image_c.path)
    assert digest == image_b.digest, \
        f"(c) same image sha256 on the other machine: {digest} vs {image_b.digest}"


@pytest.mark.parametrize("which,member", [("b", "./etc/hostname"), ("b", "./etc/resolv.conf"),
                                          ("c", "./etc/hostname"), ("c", "./etc/resolv.conf")],
                         ids=["b-hostname", "b-resolv.conf", "c-hostname", "c-resolv.conf"])
def test_c_image_holds_nothing_of_either_machine(image_b, image_c, which, member):
    img = image_b.path if which == "b" else image_c.path
    if member not in tar_names(img):
        return  # absent: nothing of either machine in it
    hostname, etc_hostname, resolv, nameservers = host_facts()
    data = (tar_cat(img, member) or b"").decode(errors="replace")
    forbidden = [s for s in {hostname, etc_hostname, OTHER_HOST, *nameservers,
                             "192.0.2.53", "other.invalid"}
                 if s and s != "localhost" and s in data]
    copied = data.strip() != "" and data.strip() in (
        resolv.strip(), OTHER_RESOLV.strip(), etc_hostname, OTHER_HOST)
    assert not forbidden and not copied, \
        f"(c) ({which}) image's {member} should hold nothing of either machine: {data!r} " \
        f"(contains {forbidden}{', a copy of a machine' if copied else ''})"


@pytest.fixture(scope="module")
def sources_c(image_c):
    return (tar_cat(image_c.path, "./etc/apt/sources.list") or b"").decode(errors="replace")


def test_c_sources_list_names_the_locks_mirror(lock_archive, sources_c):
    mirror = lock_archive["url"]
    assert re.search(r"^deb (\[[^\]]*\] )?" + re.escape(mirror) + r" bookworm main$",
                     sources_c, re.M) is not None, \
        f"(c) /etc/apt/sources.list should name the lock's mirror {mirror}: {sources_c!r}"


def test_c_sources_list_names_no_local_path(scratch, fast_tmp, sources_c):
    assert not re.search(r"file:|copy:|cdrom:", sources_c) and scratch not in sources_c \
        and fast_tmp not in sources_c, \
        f"(c) /etc/apt/sources.list should name no local path: {sources_c!r}"


def test_c_signed_by_keyring_is_in_the_image(lock_archive, image_c, sources_c):
    # apt in the image must be able to verify the archive: the keyring signed-by= names is there.
    signed_by = re.findall(r"signed-by=([^\] ]+)", sources_c)
    assert signed_by or not lock_archive.get("keyring-sha256"), \
        f"(c) sources.list should name the archive's own keyring (signed-by=): {sources_c!r}"
    names = tar_names(image_c.path)
    for keyring in signed_by:
        member = "." + keyring
        data = tar_cat(image_c.path, member) if member in names else None
        assert data is not None and hashlib.sha256(data).hexdigest() == \
            lock_archive.get("keyring-sha256"), \
            f"(c) the keyring sources.list's signed-by= names, {keyring}, should be in the " \
            f"image with the lock's keyring-sha256: " \
            f"{'absent' if data is None else hashlib.sha256(data).hexdigest()}"


@pytest.fixture(scope="module")
def build_paths(scratch, caches, fast_tmp, image_c):
    """The build machines' cache folders and TMPDIR (the scratch folder is checked too)."""
    return [caches.path("b"), image_c.cache, fast_tmp]


def test_c_no_build_path_in_the_image_names(scratch, image_c, build_paths):
    names = tar_names(image_c.path)
    bad = [n for n in names for p in build_paths + [scratch] if p.strip("/") in n]
    assert not bad, f"(c) no path of the build machines' cache dirs should be in the image's " \
        f"file list: {bad[:5]}"


def test_c_no_build_path_in_etc_and_var(scratch, fast_tmp, image_c, build_paths):
    unpacked = tempfile.mkdtemp(prefix="unpacked-", dir=fast_tmp)
    try:
        subprocess.run(["tar", "--zstd", "-xf", image_c.path, "-C", unpacked, "./etc", "./var"],
                       capture_output=True)
        hits = scan_tree(unpacked, build_paths + [scratch])
    finally:
        shutil.rmtree(unpacked, ignore_errors=True)
    assert not hits, f"(c) no cache, scratch or TMPDIR path should be in the image's /etc and " \
        f"/var: { {k: v[:3] for k, v in hits.items()} }"


# -- g. --offline --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def offline_warm(rl, scratch, caches, srv, lock, image_b):
    """(process, image, URL paths asked) of build --offline on the warm cache of (b)."""
    srv.clear_log()
    out = os.path.join(scratch, "out-g1", "osbase.tar.zst")
    proc = rl("build", lock.path, "-o", out, "--cache-dir", caches.path("b"), "--offline")
    print(f"(g1) build --offline, warm cache: exit {proc.returncode} ({proc.seconds:.1f}s)")
    return proc, out, srv.paths


def test_g1_offline_warm_cache_same_sha256(image_b, offline_warm):
    proc, out, _ = offline_warm
    assert proc.returncode == 0 and os.path.isfile(out), \
        "(g1) build --offline with the warm cache of (b) should exit 0:" + show(proc)
    assert sha256(out) == image_b.digest, \
        f"(g1) the same sha256 as (b) {image_b.digest}: {sha256(out)}"


def test_g1_offline_asks_nothing(offline_warm):
    paths = offline_warm[2]
    assert not paths, f"(g1) --offline should ask the server nothing: {paths[:3]}"


@pytest.fixture(scope="module")
def offline_empty(rl, scratch, caches, srv, lock):
    """(process, image, URL paths asked) of build --offline on an empty cache."""
    srv.clear_log()
    out = os.path.join(scratch, "out-g2", "osbase.tar.zst")
    proc = rl("build", lock.path, "-o", out, "--cache-dir", caches.fresh("g2"), "--offline")
    err = stderr_of(proc)
    print(f"(g2) build --offline, empty cache: exit {proc.returncode}: "
          f"{err.splitlines()[0][:200] if err else ''} ... ({len(err.splitlines())} lines)")
    return proc, out, srv.paths


def test_g2_offline_empty_cache_exits_3(offline_empty):
    proc = offline_empty[0]
    assert proc.returncode == 3, f"(g2) expected exit 3: {proc.returncode}" + show(proc)


def test_g2_offline_names_every_missing_deb(lock, offline_empty):
    err = stderr_of(offline_empty[0])
    unnamed = [n for n in sorted(debs_by_name(lock.base)) if not named_missing(err, n)]
    assert not unnamed and "offline" in err, \
        f"(g2) the message should name every missing .deb and --offline: unnamed " \
        f"{unnamed[:5]}" + show(offline_empty[0])


def test_g2_offline_writes_no_image(offline_empty):
    out = offline_empty[1]
    assert no_file(out), f"(g2) no image should be written: {leftovers(out)}"


def test_g2_offline_asks_nothing(offline_empty):
    paths = offline_empty[2]
    assert not paths, f"(g2) --offline should ask the server nothing: {paths[:3]}"


# -- i. apt inside the image ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def image_root(scratch, image_b):
    """The image of (b) unpacked, and `apt-get update` run in it: (in_image, the update)."""
    root = os.path.join(scratch, "rootfs-i")
    os.makedirs(root)
    subprocess.run(["tar", "--zstd", "-xf", image_b.path, "-C", root], check=True)

    # As a container has it: /dev from the host (apt-key writes to /dev/null), in a mount
    # namespace of its own so nothing stays mounted.
    def in_image(command):
        return run(["unshare", "--mount", "sh", "-c",
                    'mount --bind /dev "$1/dev" && chroot "$1" sh -c "$2"', "sh", root,
                    command], timeout=120)

    yield in_image, in_image("apt-get update")
    shutil.rmtree(root, ignore_errors=True)


def test_i_apt_get_update_in_the_image(image_root):
    update = image_root[1]
    assert update.returncode == 0 and "Err:" not in update.stdout, \
        f"(i) apt-get update in the image should work with the key it carries: exit " \
        f"{update.returncode}:{update.stdout[-600:]}{update.stderr[-600:]}"


def test_i_apt_get_download_in_the_image(image_root):
    download = image_root[0]("cd /tmp && apt-get download media-types && ls /tmp")
    assert download.returncode == 0 and "media-types_" in download.stdout, \
        f"(i) apt-get download in the image: exit {download.returncode}:" \
        f"{download.stdout[-400:]}{download.stderr[-400:]}"


# -- e. integrity --------------------------------------------------------------------------------

# name: (command, the change, words one of which the line names, what it must name too)
REFUSALS = {
    "e1-tampered-deb": ("build", lambda a: a.tamper_deb(TAMPER), ["sha256"], TAMPER),
    "e2-broken-signature": ("lock", lambda a: a.break_signature(), ["signature"], "InRelease"),
    "e3-packages-mismatch": ("lock", lambda a: a.mismatch_packages(), ["sha256", "mismatch"],
                             "Packages"),
}


@pytest.fixture(scope="module")
def refusal(rl, scratch, caches, archive, recipe, lock):
    """refusal(name): (process, output path) of REFUSALS[name] run once, the change undone."""
    done = {}

    def get(name):
        if name not in done:
            command, change, _, _ = REFUSALS[name]
            label = name.split("-")[0]
            if command == "build":
                out = os.path.join(scratch, f"out-{label}", "osbase.tar.zst")
                os.makedirs(os.path.dirname(out))
                argv = ["build", lock.path]
            else:
                out = os.path.join(scratch, f"{label}.lock")
                argv = ["lock", recipe[0]]
            with change(archive):
                proc = rl(*argv, "-o", out, "--cache-dir", caches.fresh(label))
            print(f"({label}) exit {proc.returncode}: {stderr_of(proc)[:400]}")
            done[name] = proc, out
        return done[name]
    return get


@pytest.mark.parametrize("name", list(REFUSALS))
def test_e_refused_exit_3(refusal, name):
    proc, _ = refusal(name)
    assert proc.returncode == 3, f"({name}) expected exit 3: {proc.returncode}" + show(proc)


@pytest.mark.parametrize("name", list(REFUSALS))
def test_e_refused_in_one_line_naming_the_problem(refusal, name):
    proc, _ = refusal(name)
    _, _, words, also = REFUSALS[name]
    line = one_line(proc)
    assert line is not None and any(w in line.lower() for w in words), \
        f"({name}) one stderr line naming the problem ({' or '.join(words)}): " \
        f"{stderr_of(proc)[:400]!r}"
    assert also in stderr_of(proc), f"({name}) the message should name {also}: {line!r}"


@pytest.mark.parametrize("name", list(REFUSALS))
def test_e_refused_writes_nothing(refusal, name):
    _, out = refusal(name)
    assert no_file(out) and not leftovers(out), \
        f"({name}) nothing should be written under {out}: {leftovers(out)}"
    if REFUSALS[name][0] == "build":
        beside = os.listdir(os.path.dirname(out))
        assert not beside, f"({name}) nothing should be written beside the image: {beside}"


@pytest.mark.parametrize("name", list(REFUSALS))
def test_e_change_undone(refusal, archive, name):
    refusal(name)
    # The archive verifies again (cheap: the Packages/InRelease as published).
    dist = os.path.join(archive.live, "dists", "bookworm")
    ok = run(["gpgv", "--keyring", archive.keyring,
              os.path.join(dist, "InRelease")]).returncode == 0
    d = packages_listed(archive.live)[TAMPER]
    assert ok and sha256(os.path.join(archive.live, d["Filename"])) == d["SHA256"], \
        f"({name}) the change should be undone: InRelease verifies, the .deb has its sha256"


# -- d. a point release --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def point(archive, srv, lock, image_b):
    """point_release(POINT) at DATE2, after the lock of (a) and the image of (b):
    (old, new, the old .deb's pool URL path, its URL path in the first snapshot)."""
    before = packages_listed(archive.live)[POINT]
    t = time.monotonic()
    old, new = archive.point_release(POINT, date=DATE2)
    print(f"(d) point_release({POINT}): {old} -> {new} ({time.monotonic() - t:.1f}s)")
    return types.SimpleNamespace(old=old, new=new, old_path="/debian/" + before["Filename"],
                                 snap_path=f"/snapshot/archive/debian/{TS1}/{before['Filename']}")


def test_d_old_deb_gone_from_pool_kept_in_snapshot(srv, point):
    assert srv.file_for(point.old_path) is None and srv.file_for(point.snap_path) is not None, \
        f"(d) the old .deb should be gone from the live pool ({point.old_path}) and kept in " \
        f"the first snapshot ({point.snap_path})"


@pytest.fixture(scope="module")
def d1(rl, scratch, caches, srv, lock, image_b, point):
    """(process, image, URL paths asked) of the old lock built on an empty cache."""
    srv.clear_log()
    image = os.path.join(scratch, "out-d1", "osbase.tar.zst")
    proc = rl("build", lock.path, "-o", image, "--cache-dir", caches.fresh("d1"))
    print(f"(d1) old lock, empty cache: exit {proc.returncode} ({proc.seconds:.1f}s)")
    return proc, image, srv.paths


def test_d1_old_lock_builds_the_same_image(image_b, d1):
    proc, image, _ = d1
    assert proc.returncode == 0 and os.path.isfile(image), \
        "(d1) the old lock should build after the point release:" + show(proc)
    assert sha256(image) == image_b.digest, \
        f"(d1) the same image sha256 as (b) {image_b.digest}: {sha256(image)}"


def test_d1_pool_url_asked_and_404(srv, point, d1):
    paths = d1[2]
    # The server answers 404 for what file_for() does not find (no fault is set).
    assert point.old_path in paths and srv.file_for(point.old_path) is None, \
        f"(d1) the pool URL {point.old_path} should be asked and answered 404: " \
        f"{[p for p in paths if POINT in p]}"


def test_d1_then_snapshot_url_of_the_locked_date(point, d1):
    paths = d1[2]
    print(f"(d1) {POINT} {point.old}: {point.old_path} 404, then {point.snap_path}")
    assert point.snap_path in paths and (
        point.old_path not in paths or
        paths.index(point.old_path) < paths.index(point.snap_path)), \
        f"(d1) then the snapshot URL of the locked date {point.snap_path} should be asked: " \
        f"{[p for p in paths if POINT in p]}"


@pytest.fixture(scope="module")
def upgraded(rl, scratch, caches, recipe, lock, point):
    """`lock --upgrade` of a copy of the lock after the point release."""
    up = os.path.join(scratch, "upgraded.lock")
    shutil.copy(lock.path, up)
    proc = rl("lock", recipe[0], "-o", up, "--upgrade", "--cache-dir", caches.path("a"))
    print(f"(d2) lock --upgrade: exit {proc.returncode} ({proc.seconds:.1f}s)")
    assert proc.returncode == 0, "(d2) lock --upgrade should exit 0:" + show(proc)
    return up


def test_d2_upgrade_picks_the_new_version(point, upgraded):
    got = debs_by_name(lock_base(upgraded)).get(POINT, {}).get("version")
    assert got == point.new, f"(d2) --upgrade should pick {POINT} {point.new}: {got}"


def test_d2_upgrade_pins_the_new_deb(archive, point, upgraded):
    n = debs_by_name(lock_base(upgraded)).get(POINT, {})
    listed = packages_listed(archive.live)[POINT]
    assert n.get("sha256") == listed["SHA256"] and n.get("filename") == listed["Filename"], \
        f"(d2) {POINT} should be pinned with the new .deb's sha256 and filename " \
        f"{listed['Filename']}: {n.get('sha256')} {n.get('filename')}"


def test_d2_nothing_else_changes(lock, upgraded):
    o, n = debs_by_name(lock.base), debs_by_name(lock_base(upgraded))
    changed = sorted(k for k in set(o) | set(n) if o.get(k) != n.get(k))
    assert changed == [POINT], f"(d2) only {POINT} should change: {changed}"


def test_d2_archive_date_is_the_point_releases(upgraded):
    date = str(lock_base(upgraded).get("archives", [{}])[0].get("date", ""))
    assert date == str(da.release_date(DATE2)[1]), \
        f"(d2) the archive's date should be the point release's {DATE2}: {date}"


def test_d3_diff_json_names_the_point_release(rl, lock, point, upgraded):
    proc = rl("diff", lock.path, upgraded, "--json")
    print(f"(d3) diff --json old new: exit {proc.returncode}\n    "
          + proc.stdout.strip().replace("\n", "\n    ")[:1500])
    assert proc.returncode == 1, f"(d3) diff should exit 1: {proc.returncode}" + show(proc)
    assert POINT in proc.stdout and point.new in proc.stdout, \
        f"(d3) diff should name {POINT} and {point.new}: {proc.stdout[:1500]}"


def test_d3_diff_text_names_the_point_release(rl, lock, point, upgraded):
    text = rl("diff", lock.path, upgraded)
    print("(d3) diff (text):\n    " + text.stdout.strip().replace("\n", "\n    ")[:600])
    assert text.returncode == 1 and POINT in text.stdout and point.new in text.stdout, \
        f"(d3) the text diff should name {POINT} and {point.new} too: exit " \
        f"{text.returncode}: {text.stdout[:600]}"


@pytest.fixture(scope="module")
def kept(rl, scratch, caches, recipe, lock, point):
    """A relock of a copy of the lock without --upgrade, on a cache with no index and no .deb:
    its base. The cache holds (a)'s assembled bases only, hard links: what is tested here is
    where the versions come from, not mmdebstrap again (a base is keyed by its .debs, so a
    relock that moved one would still assemble anew and fail below)."""
    keep = os.path.join(scratch, "kept.lock")
    shutil.copy(lock.path, keep)
    cache = caches.fresh("d4")
    os.makedirs(os.path.join(cache, "bases"))
    for name in os.listdir(os.path.join(caches.path("a"), "bases")):
        os.link(os.path.join(caches.path("a"), "bases", name), os.path.join(cache, "bases", name))
    proc = rl("lock", recipe[0], "-o", keep, "--cache-dir", cache)
    print(f"(d4) relock without --upgrade, no index cached: exit {proc.returncode} "
          f"({proc.seconds:.1f}s)")
    assert proc.returncode == 0, "(d4) relock without --upgrade should exit 0:" + show(proc)
    return lock_base(keep)


def test_d4_relock_keeps_the_debs(lock, kept):
    assert kept.get("debs") == lock.base.get("debs"), \
        f"(d4) the lock's debs should be unchanged ({POINT} " \
        f"{debs_by_name(kept).get(POINT, {}).get('version')})"


def test_d4_relock_keeps_the_archives_and_date(lock, kept):
    assert kept.get("archives") == lock.base.get("archives"), \
        f"(d4) the archives (and the locked date) should be unchanged: {kept.get('archives')}"


def test_d4_every_locked_deb_still_to_be_had(srv, kept):
    """Every locked .deb is in the live pool or in the snapshot of the locked date, with the
    locked sha256."""
    ar = kept["archives"][0]
    ts = da.snapshot_timestamp(int(ar["date"]))
    missing = []
    for d in kept["debs"]:
        live = srv.file_for("/debian/" + d["filename"])
        snap = srv.file_for(f"/snapshot/archive/debian/{ts}/{d['filename']}")
        if not any(p and sha256(p) == d["sha256"] for p in (live, snap)):
            missing.append(d["name"])
    assert not missing, \
        f"(d4) every locked .deb should be in the pool or the snapshot {ts}: missing {missing}"


def test_d4_unrelated_recipe_change_keeps_debs_and_date(rl, scratch, caches, recipe, lock,
                                                         point, kept):
    # On the cache of the relock above (the no-index case is that one's): its base is keyed by
    # the debs, so a relock that moved one would still assemble anew and differ.
    recipe2 = os.path.join(os.path.dirname(recipe[0]), "renamed.toml")
    with open(recipe2, "w") as f:
        f.write(recipe[1].replace('name = "osbase"', 'name = "osbase-renamed"'))
    keep2 = os.path.join(scratch, "kept-renamed.lock")
    shutil.copy(lock.path, keep2)
    proc = rl("lock", recipe2, "-o", keep2, "--cache-dir", caches.path("d4"))
    assert proc.returncode == 0, "(d4) relock of a renamed recipe should exit 0:" + show(proc)
    kept2 = lock_base(keep2)
    print(f"(d4) relocks without --upgrade keep {POINT} {point.old} and date "
          f"{kept2.get('archives', [{}])[0].get('date')}")
    assert kept2.get("debs") == lock.base.get("debs") and \
        kept2.get("archives") == lock.base.get("archives"), \
        "(d4) an unrelated recipe change should keep the debs and the date too"


# -- f. a .deb to be had nowhere -----------------------------------------------------------------

def without_snapshot(src, dst):
    """A copy of the lock whose archives carry no snapshot key."""
    text, n = re.subn(r'snapshot = "[^"]*", ', "", read(src))
    with open(dst, "w") as f:
        f.write(text)
    return n


@pytest.fixture(scope="module")
def urls(srv, snapshot_base, lock):
    """(pool URL, snapshot URL of the locked date) of the locked POINT .deb."""
    d = debs_by_name(lock.base)[POINT]
    return srv.mirror_url + "/" + d["filename"], f"{snapshot_base}/{TS1}/{d['filename']}"


@pytest.fixture(scope="module")
def nosnapshot(scratch, lock):
    """(path, number of snapshot keys removed) of the lock without its snapshot."""
    path = os.path.join(scratch, "nosnapshot.lock")
    return path, without_snapshot(lock.path, path)


def test_f1_copy_has_no_snapshot(nosnapshot):
    path, n = nosnapshot
    archives = lock_base(path)["archives"]
    assert n == 1 and "snapshot" not in json.dumps(archives), \
        f"(f1) the copy's archive should have no snapshot key ({n} removed): {archives}"


@pytest.fixture(scope="module")
def f1(rl, scratch, caches, point, nosnapshot):
    out = os.path.join(scratch, "out-f1", "osbase.tar.zst")
    proc = rl("build", nosnapshot[0], "-o", out, "--cache-dir", caches.fresh("f1"))
    print(f"(f1) no snapshot, pool lacks {POINT} {point.old}: exit {proc.returncode}: "
          f"{stderr_of(proc)[:500]}")
    return proc, out


def test_f1_no_snapshot_exit_3(f1):
    assert f1[0].returncode == 3, f"(f1) expected exit 3: {f1[0].returncode}" + show(f1[0])


def test_f1_names_the_deb_and_the_url_tried(point, urls, f1):
    err = stderr_of(f1[0])
    assert POINT in err and point.old in err and urls[0] in err, \
        f"(f1) the message should name {POINT} {point.old} and the URL tried {urls[0]}: {err}"


def test_f1_writes_no_image(f1):
    assert no_file(f1[1]), f"(f1) no image should be written: {leftovers(f1[1])}"


@pytest.fixture(scope="module")
def f2(rl, scratch, caches, srv, lock, point):
    """The lock built while the snapshot lacks the POINT .deb too."""
    d = debs_by_name(lock.base)[POINT]
    srv.fail(f"/snapshot/archive/debian/{TS1}/{d['filename']}", 404)
    out = os.path.join(scratch, "out-f2", "osbase.tar.zst")
    try:
        proc = rl("build", lock.path, "-o", out, "--cache-dir", caches.fresh("f2"))
    finally:
        srv.clear_faults()
    print(f"(f2) pool and snapshot lack {POINT} {point.old}: exit {proc.returncode}: "
          f"{stderr_of(proc)[:600]}")
    return proc, out


def test_f2_nowhere_exit_3(f2):
    assert f2[0].returncode == 3, f"(f2) expected exit 3: {f2[0].returncode}" + show(f2[0])


def test_f2_names_the_deb_and_both_urls(urls, f2):
    err = stderr_of(f2[0])
    assert POINT in err and urls[0] in err and urls[1] in err, \
        f"(f2) the message should name {POINT} and both URLs tried: {urls[0]}, {urls[1]}: {err}"


def test_f2_names_only_that_deb_missing(lock, f2):
    err = stderr_of(f2[0])
    others = [k for k in debs_by_name(lock.base) if k != POINT and named_missing(err, k)]
    assert not others, f"(f2) only {POINT} should be named missing: {others[:5]}"


def test_f2_writes_no_image(f2):
    assert no_file(f2[1]), f"(f2) no image should be written: {leftovers(f2[1])}"


# -- h. relative paths ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def h1(rl, scratch, caches, recipe, upgraded):
    """`lock recipe.toml` from the recipe's directory (after (d2), whose lock it should equal:
    with no previous lock it resolves afresh, after the point release, as --upgrade did)."""
    out = os.path.join(scratch, "relative.lock")
    proc = rl("lock", os.path.basename(recipe[0]), "-o", out, "--cache-dir", caches.path("a"),
              cwd=os.path.dirname(recipe[0]))
    print(f"(h1) lock recipe.toml from its directory: exit {proc.returncode} "
          f"({proc.seconds:.1f}s) {stderr_of(proc)[:300]}")
    return proc, out


def test_h1_relative_recipe_path_locks(h1):
    # Was a bug (reported; passes now): exit 3, mmdebstrap got signed-by=keyring.gpg (not
    # absolute) and apt read it as a fingerprint ("Invalid value set for option Signed-By").
    proc = h1[0]
    assert proc.returncode == 0, "(h1) [rootlock bug] `lock recipe.toml` (a relative recipe " \
        "path, keyring relative to it) should exit 0:" + show(proc)


def test_h1_same_debs_as_the_upgrade_lock(h1, upgraded):
    proc, out = h1
    assert proc.returncode == 0, "(h1) [rootlock bug] `lock recipe.toml` should exit 0:" + \
        show(proc)
    assert lock_base(out).get("debs") == lock_base(upgraded).get("debs"), \
        "(h1) the same debs as the --upgrade lock of (d2)"


def test_h2_relative_cache_dir_builds_the_same_image(rl, scratch, lock, image_b):
    # Was a bug (reported; passes now): exit 3, mmdebstrap was given
    # copy://RELATIVE/debian-repos/... and apt failed to read it.
    rel_parent = os.path.join(scratch, "relative")
    os.makedirs(rel_parent, exist_ok=True)
    image = os.path.join(scratch, "out-h2", "osbase.tar.zst")
    proc = rl("build", lock.path, "-o", image, "--cache-dir", "cache-h2", cwd=rel_parent)
    print(f"(h2) build --cache-dir cache-h2 (relative): exit {proc.returncode} "
          f"({proc.seconds:.1f}s) {stderr_of(proc)[:300]}")
    assert proc.returncode == 0 and os.path.isfile(image), \
        "(h2) [rootlock bug] build with a relative --cache-dir should exit 0:" + show(proc)
    assert sha256(image) == image_b.digest, \
        f"(h2) the same sha256 as (b) {image_b.digest}: {sha256(image)}"


# -- j. a further archive ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def updates(rl, scratch, caches, archive, srv, snapshot_base, recipe):
    """tzdata released newer in bookworm-updates only (DATE3), and a recipe naming that
    archive with its keyring: (old, new, recipe text, lock path, lock process)."""
    old, new = archive.point_release("tzdata", date=DATE3, suites=["bookworm-updates"])
    path = os.path.join(os.path.dirname(recipe[0]), "updates.toml")
    text = recipe[1].replace(
        'snapshot = "' + snapshot_base + '" }',
        'snapshot = "' + snapshot_base + '", archives = [{ name = "updates", url = "' +
        srv.mirror_url + '", suite = "bookworm-updates", keyring = "keyring.gpg" }] }')
    with open(path, "w") as f:
        f.write(text)
    lock_path = os.path.join(scratch, "updates.lock")
    proc = rl("lock", path, "-o", lock_path, "--cache-dir", caches.fresh("j"))
    return types.SimpleNamespace(old=old, new=new, text=text, lock=lock_path, proc=proc)


def test_j_recipe_names_the_updates_archive(recipe, updates):
    assert updates.text != recipe[1], "(j) the recipe should name the updates archive"


@pytest.fixture(scope="module")
def updates_lock(updates):
    assert updates.proc.returncode == 0, "(j) lock with a further archive:" + show(updates.proc)
    return updates.lock


def test_j_lock_with_a_further_archive(updates):
    assert updates.proc.returncode == 0, \
        "(j) lock with a further archive should exit 0:" + show(updates.proc)


def test_j_tzdata_pinned_from_updates_the_rest_from_debian(updates, updates_lock):
    base = lock_base(updates_lock)
    archives = [a["name"] for a in base.get("archives", [])]
    by_name = debs_by_name(base)
    tz = by_name.get("tzdata", {})
    others = {d["archive"] for n, d in by_name.items() if n != "tzdata"}
    assert archives == ["debian", "updates"] and tz.get("version") == updates.new and \
        tz.get("archive") == "updates" and others == {"debian"}, \
        f"(j) tzdata {tz.get('version')} from {tz.get('archive')} (expected {updates.new} " \
        f"from updates), others from {others}, archives {archives}"


def test_j_image_sources_name_both_archives(rl, scratch, caches, updates_lock):
    image = os.path.join(scratch, "out-j", "updates.tar.zst")
    proc = rl("build", updates_lock, "-o", image, "--cache-dir", caches.fresh("j"))
    assert proc.returncode == 0, "(j) build with a further archive should exit 0:" + show(proc)
    sources = (tar_cat(image, "./etc/apt/sources.list") or b"").decode()
    assert "bookworm-updates" in sources and "rootlock-updates.gpg" in sources and \
        tar_cat(image, "./etc/apt/keyrings/rootlock-updates.gpg") is not None, \
        f"(j) the image's apt sources should name both archives, with the updates keyring: " \
        f"{sources}"


def test_j_diff_names_the_move(rl, lock, updates, updates_lock):
    proc = rl("diff", lock.path, updates_lock)
    print(f"(j) tzdata {updates.old} -> {updates.new} from bookworm-updates; diff:\n" +
          "\n".join("    " + line for line in proc.stdout.splitlines()[:8]))
    assert proc.returncode == 1 and "tzdata" in proc.stdout and updates.new in proc.stdout \
        and "bookworm-updates" in proc.stdout, \
        f"(j) diff should exit 1 naming tzdata, {updates.new} and bookworm-updates: " \
        f"{proc.returncode} {proc.stdout[-800:]}"


# -- k. the same archive by another URL ----------------------------------------------------------

def test_k_sources_list_names_the_locks_own_url(rl, scratch, caches, srv, snapshot_base,
                                                 recipe, image_b):
    """The same archive by another URL, on the warm cache of (b): the image's sources.list must
    name the URL of its own lock, not the one a cached base was first assembled for."""
    other = srv.mirror_url.replace("127.0.0.1", "localhost")
    path = os.path.join(os.path.dirname(recipe[0]), "recipe-k.toml")
    with open(path, "w") as f:
        f.write(RECIPE.format(name="osbase", mirror=other,
                              snapshot=snapshot_base.replace("127.0.0.1", "localhost")))
    lock_path = os.path.join(scratch, "other-url.lock")
    proc = rl("lock", path, "-o", lock_path, "--cache-dir", caches.path("b"))
    assert proc.returncode == 0, "(k) lock by another URL should exit 0:" + show(proc)
    image = os.path.join(scratch, "out-k", "osbase.tar.zst")
    proc = rl("build", lock_path, "-o", image, "--cache-dir", caches.path("b"))
    assert proc.returncode == 0, "(k) build should exit 0:" + show(proc)
    sources = (tar_cat(image, "./etc/apt/sources.list") or b"").decode(errors="replace")
    print(f"(k) the same .debs by another URL, warm cache: sources.list {sources.strip()!r}")
    assert other in sources and "127.0.0.1" not in sources, \
        f"(k) sources.list should name {other}, not the first URL: {sources!r}"


# -- f. faults on the wire: a .deb cut mid-body, then a 503, then served whole ---------------------

def test_f_a_deb_cut_then_refused_once_is_fetched_again(rl, scratch, caches, archive, srv, lock,
                                                        image_b):
    rel = archive.suite_packages(da.SUITE)[TAMPER][2]
    path = "/debian/" + rel
    srv.clear_faults()
    srv.clear_log()
    srv.drop(path, times=1)
    srv.fail(path, status=503, times=1)
    image = os.path.join(scratch, "out-f", "osbase.tar.zst")
    try:
        proc = rl("build", lock.path, "-o", image, "--cache-dir", caches.fresh("f"))
    finally:
        srv.clear_faults()
    assert proc.returncode == 0, "(f) a cut and a 503 are retried:" + show(proc)
    assert srv.paths.count(path) >= 3, f"(f) {path} asked {srv.paths.count(path)} times"
    assert sha256(image) == image_b.digest, "(f) the image is the one built without faults"
