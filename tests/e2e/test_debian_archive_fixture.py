"""End-to-end self-test of the fixture Debian archive, without rootlock: the real apt uses it.

Usage: test_debian_archive_fixture.py ROOTLOCK   (the argument is ignored: nothing here runs
rootlock)

Builds fixtures/debian_archive.py's archive from the demo package set (mmdebstrap minbase with
python3, python3-venv and ca-certificates: real bookworm .debs, cached in
$ROOTLOCK_TEST_CACHE/debian-debs), as "bookworm" plus a "bookworm-updates" holding tzdata,
serves it on 127.0.0.1 and checks:
  a. the package set and the downloads: each package once, the .debs' SHA256 and pool paths
     those of deb.debian.org's Packages, a second download_debs() fetching nothing;
  b. the archive's files: pool layout, Packages.xz = Packages, Release fields and the date
     asked for, its SHA256 lines, InRelease and Release.gpg verified by gpgv against
     keyring.gpg, the signed text = Release, the snapshot directory;
  c. apt with a private state (own sources.list, lists, cache, empty apt.conf.d and
     trusted.gpg.d; signed-by= the fixture keyring): update succeeds without a warning, sees
     only the fixture's sources, and `apt-get download` gives the bytes Packages lists; the
     snapshot URL works the same way;
  d. point_release("ca-certificates"): apt sees the new version and downloads it (dpkg-deb says
     the new version, same contents), the old file is gone from the live pool but served from
     the first snapshot, whose apt view is unchanged;
  e. apt fails on a broken InRelease signature (BADSIG), on a Packages.xz that does not match
     Release (Hash Sum mismatch), on a tampered .deb, on a 404 and a dropped connection; each
     change undone, apt succeeds again.
"""
import hashlib
import http.client
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from fixtures import debian_archive as da
from fixtures.failures import Failures

DATE1 = "Mon, 02 Nov 2026 10:00:00 UTC"
DATE2 = "Sat, 14 Nov 2026 10:00:00 UTC"
TS1, TS2 = "20261102T100000Z", "20261114T100000Z"
POINT = "ca-certificates"
UPDATES = ("tzdata",)


def sha256(path):
    return da.sha256_file(path)


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def packages_of(tree, suite):
    text = read(os.path.join(tree, "dists", suite, "main", "binary-amd64", "Packages"))
    return {st["Package"]: st for st in da.parse_deb822(text)}


def signed_text(inrelease):
    """The text a clear-signed InRelease signs (RFC 4880 dash-escaping undone)."""
    m = re.search(r"-----BEGIN PGP SIGNED MESSAGE-----\n(?:[^\n]+\n)*\n(.*?)\n"
                  r"-----BEGIN PGP SIGNATURE-----", inrelease, re.S)
    if not m:
        return None
    return "".join(line[2:] if line.startswith("- ") else line
                   for line in m.group(1).splitlines(True)) + "\n"


def gpgv(keyring, *files):
    return subprocess.run(["gpgv", "--keyring", keyring] + list(files), capture_output=True,
                          text=True)


def http_get(url_base, path, method="GET"):
    host, port = url_base.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, resp.read(), resp.getheader("Content-Length")
    finally:
        conn.close()


class Apt:
    """A fresh private apt state for the fixture's suites at one base URL."""

    def __init__(self, scratch, name, base_url, keyring, suites=(da.SUITE, da.SUITE + "-updates")):
        base = os.path.join(scratch, "apt-" + name)
        shutil.rmtree(base, ignore_errors=True)
        self.apt = da.PrivateApt(base, [f"deb [signed-by={keyring}] {base_url} {s} main"
                                        for s in suites])
        self.base = base

    def run(self, *args, cwd=None):
        return self.apt.run(list(args), cwd=cwd)

    def update(self):
        return self.run("apt-get", "update")

    def candidate(self, package):
        proc = self.run("apt-cache", "policy", package)
        m = re.search(r"Candidate: (\S+)", proc.stdout)
        return m.group(1) if m else None

    def download(self, package):
        """(CompletedProcess, path of the .deb or None) of `apt-get download package`."""
        out = os.path.join(self.base, "download")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        proc = self.run("apt-get", "download", package, cwd=out)
        debs = [n for n in os.listdir(out) if n.endswith(".deb")]
        return proc, (os.path.join(out, debs[0]) if len(debs) == 1 else None)


def output(proc):
    return (proc.stdout + proc.stderr).strip().replace("\n", "\n    ")


def clean(proc):
    """apt ran without an error or a warning."""
    text = proc.stdout + proc.stderr
    return proc.returncode == 0 and not re.search(r"^(W|E|Err):", text, re.M)


def step_a(fail, scratch):
    t = time.monotonic()
    pkgs = da.demo_package_set()
    names = [p[0] for p in pkgs]
    print(f"demo set: {len(pkgs)} packages ({time.monotonic() - t:.1f}s)")
    fail.expect(len(names) == len(set(names)), "each package once in the demo set")
    fail.expect(len(pkgs) > 100, f"the demo set is a whole minbase: {len(pkgs)} packages")
    for need in ("python3", "python3-venv", "ca-certificates", "libc6", "apt", "dpkg", POINT,
                 *UPDATES):
        fail.expect(need in names, f"the demo set holds {need}")
    t = time.monotonic()
    debs = da.download_debs(pkgs, os.path.join(scratch, "debs"))
    print(f"download_debs: {len(debs)} files, {sum(d.size for d in debs)} bytes "
          f"({time.monotonic() - t:.1f}s)")
    fail.expect([d.key for d in debs] == [tuple(p) for p in pkgs],
                "one DebFile per package, in order")
    bad = [d.filename for d in debs if sha256(d.path) != d.sha256 or
           os.path.getsize(d.path) != d.size]
    fail.expect(not bad, f"every .deb has the SHA256 and size of Debian's Packages: {bad[:5]}")
    bad = [d.filename for d in debs if os.path.basename(d.pool) != d.filename]
    fail.expect(not bad, f"file names are Debian's pool names: {bad[:5]}")
    # A second call finds everything in the cache: no apt-get runs, so no lists change.
    lists = os.path.join(da.DEBS_DIR, "apt", "state", "lists")
    before = {n: os.stat(os.path.join(lists, n)).st_mtime_ns for n in os.listdir(lists)}
    t = time.monotonic()
    again = da.download_debs(pkgs)
    took = time.monotonic() - t
    after = {n: os.stat(os.path.join(lists, n)).st_mtime_ns for n in os.listdir(lists)}
    fail.expect(before == after and [d.sha256 for d in again] == [d.sha256 for d in debs],
                f"a second download_debs() downloads nothing ({took:.2f}s)")
    print(f"(a) {len(debs)} .debs with Debian's SHA256 and pool names; a second call took "
          f"{took:.2f}s and ran no apt")
    return debs


def step_b(fail, archive, debs):
    live = archive.live
    by_name = {d.package: d for d in debs}
    main = packages_of(live, "bookworm")
    fail.expect(sorted(main) == sorted(by_name), f"bookworm lists the demo set: {len(main)}")
    bad = [n for n, st in main.items() if st["Filename"] != by_name[n].pool]
    fail.expect(not bad, f"every Filename is Debian's own pool path: {bad[:5]}")
    bad = [n for n, st in main.items() if st["SHA256"] != by_name[n].sha256
           or not os.path.isfile(os.path.join(live, st["Filename"]))]
    fail.expect(not bad, f"every entry's SHA256 is the file's and the file is there: {bad[:5]}")
    for name, want in (("libc6", "pool/main/g/glibc/"), ("libzstd1", "pool/main/libz/libzstd/"),
                       ("libaudit1", "pool/main/a/audit/libaudit1_3.0.9-1_amd64.deb")):
        got = main[name]["Filename"] if name in main else None
        fail.expect(got is not None and got.startswith(want), f"{name} at {got}")
    upd = packages_of(live, "bookworm-updates")
    fail.expect(sorted(upd) == sorted(UPDATES) and all(
        upd[n]["Filename"] == main[n]["Filename"] for n in upd),
        f"bookworm-updates lists {sorted(upd)} from the shared pool")
    for suite in ("bookworm", "bookworm-updates"):
        dist = os.path.join(live, "dists", suite)
        binary = os.path.join(dist, "main", "binary-amd64")
        fail.expect(lzma.decompress(read(os.path.join(binary, "Packages.xz"), "rb")) ==
                    read(os.path.join(binary, "Packages"), "rb"),
                    f"{suite}: Packages.xz holds Packages")
        release = read(os.path.join(dist, "Release"))
        fields = da.parse_deb822(release)[0]
        want = {"Origin": "Debian", "Label": "Debian", "Suite": suite, "Codename": suite,
                "Architectures": "amd64", "Components": "main", "Date": DATE1}
        got = {k: fields.get(k) for k in want}
        fail.expect(got == want, f"{suite} Release fields: {got}")
        listed = {}
        for line in fields.get("SHA256", "").strip().splitlines():
            digest, size, path = line.split()
            listed[path] = (digest, int(size))
        files = {p: (sha256(os.path.join(dist, p)), os.path.getsize(os.path.join(dist, p)))
                 for p in ("main/binary-amd64/Packages", "main/binary-amd64/Packages.xz")}
        fail.expect(listed == files, f"{suite} Release's SHA256 lines are the indexes': "
                    f"{sorted(listed)}")
        inrelease = os.path.join(dist, "InRelease")
        proc = gpgv(archive.keyring, inrelease)
        fail.expect(proc.returncode == 0, f"{suite}: gpgv --keyring keyring.gpg InRelease: "
                    f"{proc.stderr.strip().splitlines()[-1:]}")
        proc = gpgv(archive.keyring, os.path.join(dist, "Release.gpg"),
                    os.path.join(dist, "Release"))
        fail.expect(proc.returncode == 0, f"{suite}: gpgv Release.gpg Release")
        fail.expect(signed_text(read(inrelease)) == release, f"{suite}: InRelease signs Release")
    snap = archive.tree(TS1)
    fail.expect([p.timestamp for p in archive.publications] == [TS1],
                f"one publication: {archive.publications}")
    fail.expect(read(os.path.join(snap, "dists", "bookworm", "InRelease")) ==
                read(os.path.join(live, "dists", "bookworm", "InRelease")) and
                sorted(packages_of(snap, "bookworm")) == sorted(main),
                f"snapshot {TS1} holds the publication")
    st = main[POINT]
    fail.expect(os.path.samefile(os.path.join(snap, st["Filename"]),
                                 os.path.join(live, st["Filename"])),
                "the snapshot's pool files are the live ones (hard links)")
    fail.expect(read(archive.keyring, "rb")[:1] != b"-", "keyring.gpg is binary")
    print(f"(b) pool paths (libc6 {main['libc6']['Filename']}), Packages.xz, Release fields and "
          f"hashes, gpgv of InRelease and Release.gpg, snapshot {TS1}")


def step_c(fail, archive, srv, scratch):
    apt = Apt(scratch, "mirror", srv.mirror_url, archive.keyring)
    srv.clear_log()
    proc = apt.update()
    fail.expect(clean(proc), "apt-get update against the fixture mirror succeeds cleanly:\n    "
                + output(proc))
    paths = srv.paths
    fail.expect("/debian/dists/bookworm/InRelease" in paths and
                "/debian/dists/bookworm/main/binary-amd64/Packages.xz" in paths and
                "/debian/dists/bookworm-updates/InRelease" in paths,
                f"apt fetched InRelease and Packages.xz: {paths}")
    policy = apt.run("apt-cache", "policy").stdout
    urls = set(re.findall(r"https?://[^ /]+", policy))
    fail.expect(urls == {srv.url}, f"apt sees only the fixture's sources: {sorted(urls)}")
    fail.expect("o=Debian" in policy and "n=bookworm" in policy,
                "apt reads Origin Debian, Codename bookworm")
    main = packages_of(archive.live, "bookworm")
    want = main[POINT]
    fail.expect(apt.candidate(POINT) == want["Version"],
                f"apt's candidate for {POINT}: {apt.candidate(POINT)}")
    fail.expect(apt.candidate("tzdata") == main["tzdata"]["Version"],
                "tzdata from both suites, one version")
    srv.clear_log()
    proc, deb = apt.download(POINT)
    fail.expect(proc.returncode == 0 and deb is not None and sha256(deb) == want["SHA256"],
                f"apt-get download {POINT} gives the SHA256 of Packages:\n    " + output(proc))
    fail.expect(srv.paths == ["/" + "debian/" + want["Filename"]],
                f"apt asked the pool path: {srv.paths}")
    status, body, length = http_get(srv.url, "/debian/" + want["Filename"], "HEAD")
    fail.expect(status == 200 and body == b"" and length == want["Size"],
                f"HEAD: 200 and Content-Length {want['Size']}: {status} {length}")
    for path in ("/debian/dists/nosuch/InRelease", "/debian/pool/", "/../private/state.json",
                 "/debian/../../private/state.json", "/private/state.json"):
        status, _, _ = http_get(srv.url, path)
        fail.expect(status == 404, f"GET {path}: 404 ({status})")
    snap = Apt(scratch, "snap1", srv.snapshot(TS1), archive.keyring)
    proc = snap.update()
    fail.expect(clean(proc), "apt-get update against the snapshot URL succeeds:\n    " +
                output(proc))
    fail.expect(snap.candidate(POINT) == want["Version"], "the snapshot offers the same version")
    print(f"(c) apt update from {srv.mirror_url} and {srv.snapshot(TS1)}; apt-get download "
          f"{POINT} {want['Version']} sha256 {want['SHA256'][:16]}...")
    return apt, snap


def step_d(fail, archive, srv, scratch, apt, snap1):
    before_all = packages_of(archive.live, "bookworm")
    before = before_all[POINT]
    old_path = os.path.join(archive.live, before["Filename"])
    t = time.monotonic()
    old, new = archive.point_release(POINT, date=DATE2)
    print(f"point_release({POINT}): {old} -> {new} ({time.monotonic() - t:.1f}s)")
    fail.expect(old == before["Version"] and new == old + "+rootlock1",
                f"point_release returns the old and new versions: {old} {new}")
    fail.expect([p.timestamp for p in archive.publications] == [TS1, TS2],
                f"a second publication: {[p.timestamp for p in archive.publications]}")
    after = packages_of(archive.live, "bookworm")
    entry = after[POINT]
    fail.expect(entry["Version"] == new and entry["Filename"] ==
                os.path.dirname(before["Filename"]) + "/" + da.deb_file_name(POINT, new, "all"),
                f"bookworm lists {entry['Filename']}")
    fail.expect(not os.path.exists(old_path), "the old .deb is gone from the live pool")
    fail.expect(os.path.isfile(os.path.join(archive.tree(TS1), before["Filename"])) and
                sha256(os.path.join(archive.tree(TS1), before["Filename"])) == before["SHA256"],
                "the first snapshot keeps the old .deb")
    fail.expect(os.path.isfile(os.path.join(archive.tree(TS2), entry["Filename"])) and
                not os.path.exists(os.path.join(archive.tree(TS2), before["Filename"])),
                "the second snapshot has the new .deb only")
    others = {n: st["SHA256"] for n, st in after.items() if n != POINT}
    fail.expect(others == {n: st["SHA256"] for n, st in before_all.items() if n != POINT},
                "every other package is unchanged")
    rel = da.parse_deb822(read(os.path.join(archive.live, "dists", "bookworm", "Release")))[0]
    fail.expect(rel.get("Date") == DATE2, f"Release Date is the point release's: {rel.get('Date')}")
    fail.expect(gpgv(archive.keyring, os.path.join(archive.live, "dists", "bookworm",
                                                    "InRelease")).returncode == 0,
                "the new InRelease verifies")

    proc = apt.update()
    fail.expect(clean(proc), "apt-get update after the point release:\n    " + output(proc))
    fail.expect(apt.candidate(POINT) == new, f"apt sees {new}: {apt.candidate(POINT)}")
    proc, deb = apt.download(POINT)
    fail.expect(proc.returncode == 0 and deb is not None and sha256(deb) == entry["SHA256"],
                f"apt-get download gives the new .deb:\n    " + output(proc))
    if deb:
        version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], capture_output=True,
                                 text=True).stdout.strip()
        fail.expect(version == new, f"dpkg-deb -f Version: {version}")
        listing = [subprocess.run(["dpkg-deb", "-c", p], capture_output=True, text=True).stdout
                   for p in (deb, os.path.join(archive.tree(TS1), before["Filename"]))]
        strip = [[re.sub(r"^\S+ \S+ +\d+ \S+ \S+ ", "", line) for line in text.splitlines()]
                 for text in listing]
        fail.expect(strip[0] == strip[1] and strip[0], "the rebuilt .deb has the same contents")
        owners = {line.split()[1] for line in listing[0].splitlines()}
        fail.expect(owners == {"root/root"}, f"owned by root/root: {owners}")
    status, _, _ = http_get(srv.url, "/debian/" + before["Filename"])
    fail.expect(status == 404, f"the old .deb: 404 from the mirror ({status})")
    status, body, _ = http_get(srv.url, f"/snapshot/archive/debian/{TS1}/{before['Filename']}")
    fail.expect(status == 200 and hashlib.sha256(body).hexdigest() == before["SHA256"],
                f"the old .deb from the first snapshot: {status}")
    proc = snap1.update()
    fail.expect(clean(proc) and snap1.candidate(POINT) == old,
                f"the first snapshot still offers {old}: {snap1.candidate(POINT)}")
    proc, deb = snap1.download(POINT)
    fail.expect(proc.returncode == 0 and deb and sha256(deb) == before["SHA256"],
                "apt-get download from the first snapshot gives the old .deb")
    snap2 = Apt(scratch, "snap2", srv.snapshot(TS2), archive.keyring)
    proc = snap2.update()
    fail.expect(clean(proc) and snap2.candidate(POINT) == new,
                f"the second snapshot offers {new}")
    print(f"(d) after the point release apt sees {new}; the old .deb is 404 on the mirror and "
          f"served from snapshot {TS1}, which still offers {old}")


def step_e(fail, archive, srv, scratch):
    dist = os.path.join(archive.live, "dists", "bookworm")
    inrelease = read(os.path.join(dist, "InRelease"))
    with archive.break_signature():
        proc = gpgv(archive.keyring, os.path.join(dist, "InRelease"))
        fail.expect(proc.returncode != 0 and "BAD signature" in proc.stderr,
                    f"gpgv refuses the broken InRelease: {proc.stderr.strip()[-200:]}")
        fail.expect(gpgv(archive.keyring, os.path.join(dist, "Release.gpg"),
                         os.path.join(dist, "Release")).returncode != 0,
                    "gpgv refuses Release.gpg too")
        proc = Apt(scratch, "badsig", srv.mirror_url, archive.keyring).update()
        fail.expect(proc.returncode != 0 and "BADSIG" in proc.stdout + proc.stderr,
                    "apt-get update fails on the broken signature (BADSIG):\n    " + output(proc))
    fail.expect(read(os.path.join(dist, "InRelease")) == inrelease, "break_signature undone")

    binary = os.path.join(dist, "main", "binary-amd64", "Packages.xz")
    size = os.path.getsize(binary)
    with archive.mismatch_packages(package=POINT):
        fail.expect(os.path.getsize(binary) == size, "mismatch_packages keeps Packages.xz's size")
        proc = Apt(scratch, "mismatch", srv.mirror_url, archive.keyring).update()
        fail.expect(proc.returncode != 0 and "Hash Sum mismatch" in proc.stdout + proc.stderr,
                    "apt-get update fails on a Packages.xz Release does not list:\n    "
                    + output(proc))

    apt = Apt(scratch, "faults", srv.mirror_url, archive.keyring)
    proc = apt.update()
    fail.expect(clean(proc), "after undoing both, apt-get update succeeds:\n    " + output(proc))
    entry = packages_of(archive.live, "bookworm")[POINT]
    with archive.tamper_deb(POINT):
        proc, deb = apt.download(POINT)
        fail.expect(proc.returncode != 0 and deb is None and
                    "Hash Sum mismatch" in proc.stdout + proc.stderr,
                    "apt-get download fails on a tampered .deb:\n    " + output(proc))
    proc, deb = apt.download(POINT)
    fail.expect(proc.returncode == 0 and deb and sha256(deb) == entry["SHA256"],
                "tamper_deb undone: the download works again")
    # The demo .debs are hard links to the cache: tampering must not have reached it.
    tz = packages_of(archive.live, "bookworm")["tzdata"]
    with archive.tamper_deb("tzdata"):
        pass
    cache_file = os.path.join(da.DEBS_DIR, "files", os.path.basename(tz["Filename"]))
    fail.expect(sha256(cache_file) == tz["SHA256"], "tampering leaves the download cache intact")

    path = "/debian/" + entry["Filename"]
    srv.fail(path, 404)
    proc, deb = apt.download(POINT)
    fail.expect(proc.returncode != 0 and deb is None and "404" in proc.stdout + proc.stderr,
                "apt-get download fails on a 404:\n    " + output(proc))
    srv.clear_faults()
    srv.drop(path)
    proc, deb = apt.download(POINT)
    # apt-get download writes into the target name as it goes and leaves the half it got.
    fail.expect(proc.returncode != 0 and (deb is None or os.path.getsize(deb) < int(entry["Size"]))
                and "closed connection" in proc.stdout + proc.stderr,
                "apt-get download fails on a dropped connection:\n    " + output(proc))
    srv.clear_faults()
    srv.clear_log()
    proc, deb = apt.download(POINT)
    fail.expect(proc.returncode == 0 and deb is not None and srv.paths == [path],
                f"faults cleared: the download works: {srv.paths}")
    print("(e) apt fails on BADSIG, on a Packages.xz Hash Sum mismatch, on a tampered .deb, "
          "a 404 and a dropped connection; each undone, apt works again")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    fail = Failures()
    start = time.monotonic()
    scratch = tempfile.mkdtemp(prefix="rootlock-debian-archive-")
    archive = None
    try:
        debs = step_a(fail, scratch)
        t = time.monotonic()
        archive = da.Archive(os.path.join(scratch, "archive"))
        archive.add_suite("bookworm", debs)
        archive.add_suite("bookworm-updates", [d for d in debs if d.package in UPDATES])
        pub = archive.publish(DATE1)
        print(f"archive built and published as {pub.timestamp} ({time.monotonic() - t:.1f}s)")
        fail.expect(pub.timestamp == TS1 and pub.date == DATE1, f"publication {pub}")
        step_b(fail, archive, debs)
        with da.ArchiveServer(archive) as srv:
            print(f"serving {srv.mirror_url} and {srv.snapshot_url}")
            apt, snap1 = step_c(fail, archive, srv, scratch)
            step_d(fail, archive, srv, scratch, apt, snap1)
            step_e(fail, archive, srv, scratch)
    finally:
        if archive is not None:
            archive.close()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(fail.items)} failures" if fail.items else "all expectations met",
          f"({time.monotonic() - start:.1f}s)")
    return 1 if fail.items else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
