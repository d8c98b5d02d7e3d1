"""End-to-end self-test of the fixture Debian archive, without rootlock: the real apt uses it.

Nothing here runs rootlock (--rootlock is not needed). Builds fixtures/debian_archive.py's
archive from the demo package set (mmdebstrap minbase with python3, python3-venv and
ca-certificates: real bookworm .debs, cached in $ROOTLOCK_TEST_CACHE/debian-debs), as "bookworm"
plus a "bookworm-updates" holding tzdata, serves it on 127.0.0.1 and checks:
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

(a)-(c) and (e) share one archive as published, never left changed ((e)'s changes are `with`
blocks, its server faults cleared in `finally`); (d) point-releases an archive of its own (the
same .debs, published the same day, seen by apt before the release), so every case runs alone
and in any selection.
"""
import hashlib
import http.client
import lzma
import os
import re
import shutil
import time
import types

import pytest

from fixtures import debian_archive as da
from fixtures.cli import run

DATE1 = "Mon, 02 Nov 2026 10:00:00 UTC"
DATE2 = "Sat, 14 Nov 2026 10:00:00 UTC"
TS1, TS2 = "20261102T100000Z", "20261114T100000Z"
POINT = "ca-certificates"
UPDATES = ("tzdata",)
SUITES = ("bookworm", "bookworm-updates")


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
    return run(["gpgv", "--keyring", keyring] + list(files))


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

    def __init__(self, scratch, name, base_url, keyring, suites=SUITES):
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
    return "\n    " + (proc.stdout + proc.stderr).strip().replace("\n", "\n    ")


def clean(proc):
    """apt ran without an error or a warning."""
    text = proc.stdout + proc.stderr
    return proc.returncode == 0 and not re.search(r"^(W|E|Err):", text, re.M)


def make_archive(root, debs):
    """The fixture archive of `debs`: bookworm, bookworm-updates with UPDATES, published at
    DATE1. (archive, publication)."""
    t = time.monotonic()
    archive = da.Archive(root)
    archive.add_suite("bookworm", debs)
    archive.add_suite("bookworm-updates", [d for d in debs if d.package in UPDATES])
    pub = archive.publish(DATE1)
    print(f"archive {root} published as {pub.timestamp} ({time.monotonic() - t:.1f}s)")
    return archive, pub


# -- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pkgs():
    t = time.monotonic()
    out = da.demo_package_set()
    print(f"demo set: {len(out)} packages ({time.monotonic() - t:.1f}s)")
    return out


@pytest.fixture(scope="module")
def debs(pkgs, scratch):
    t = time.monotonic()
    out = da.download_debs(pkgs, os.path.join(scratch, "debs"))
    print(f"download_debs: {len(out)} files, {sum(d.size for d in out)} bytes "
          f"({time.monotonic() - t:.1f}s)")
    return out


@pytest.fixture(scope="module")
def published(scratch, debs):
    """(archive, publication): the archive (a)-(c) and (e) read, as published."""
    archive, pub = make_archive(os.path.join(scratch, "archive"), debs)
    yield archive, pub
    archive.close()


@pytest.fixture(scope="module")
def archive(published):
    return published[0]


@pytest.fixture(scope="module")
def srv(archive):
    with da.ArchiveServer(archive) as server:
        print(f"serving {server.mirror_url} and {server.snapshot_url}")
        yield server


# -- a. the package set and the downloads --------------------------------------------------------

def test_a_each_package_once(pkgs):
    names = [p[0] for p in pkgs]
    twice = sorted(n for n in set(names) if names.count(n) > 1)
    assert not twice, f"each package once in the demo set: twice {twice}"


def test_a_demo_set_is_a_whole_minbase(pkgs):
    assert len(pkgs) > 100, f"the demo set is a whole minbase: {len(pkgs)} packages"


@pytest.mark.parametrize("need", ["python3", "python3-venv", "ca-certificates", "libc6", "apt",
                                  "dpkg", POINT, *UPDATES])
def test_a_demo_set_holds(pkgs, need):
    assert need in [p[0] for p in pkgs], f"the demo set should hold {need}"


def test_a_one_debfile_per_package_in_order(pkgs, debs):
    assert [d.key for d in debs] == [tuple(p) for p in pkgs], \
        "download_debs: one DebFile per package, in the order asked"


def test_a_debs_have_debians_sha256_and_size(debs):
    bad = [d.filename for d in debs if sha256(d.path) != d.sha256 or
           os.path.getsize(d.path) != d.size]
    assert not bad, f"every .deb has the SHA256 and size of Debian's Packages: {bad[:5]}"


def test_a_file_names_are_debians_pool_names(debs):
    bad = [d.filename for d in debs if os.path.basename(d.pool) != d.filename]
    assert not bad, f"file names are Debian's pool names: {bad[:5]}"


def test_a_second_download_downloads_nothing(pkgs, debs):
    # A second call finds everything in the cache: no apt-get runs, so no lists change.
    lists = os.path.join(da.DEBS_DIR, "apt", "state", "lists")
    before = {n: os.stat(os.path.join(lists, n)).st_mtime_ns for n in os.listdir(lists)}
    t = time.monotonic()
    again = da.download_debs(pkgs)
    took = time.monotonic() - t
    after = {n: os.stat(os.path.join(lists, n)).st_mtime_ns for n in os.listdir(lists)}
    print(f"(a) a second download_debs() took {took:.2f}s")
    assert before == after and [d.sha256 for d in again] == [d.sha256 for d in debs], \
        f"a second download_debs() should download nothing ({took:.2f}s, apt lists " \
        f"{'unchanged' if before == after else 'changed'})"


# -- b. the archive's files ----------------------------------------------------------------------

def test_b_publication(published):
    pub = published[1]
    assert pub.timestamp == TS1 and pub.date == DATE1, \
        f"publication {pub}, expected {TS1} dated {DATE1}"


def test_b_bookworm_lists_the_demo_set(archive, debs):
    main = packages_of(archive.live, "bookworm")
    assert sorted(main) == sorted(d.package for d in debs), \
        f"bookworm lists the demo set: {len(main)} vs {len(debs)}"


def test_b_filenames_are_debians_pool_paths(archive, debs):
    by_name = {d.package: d for d in debs}
    main = packages_of(archive.live, "bookworm")
    bad = [n for n, st in main.items() if n not in by_name or st["Filename"] != by_name[n].pool]
    assert not bad, f"every Filename is Debian's own pool path: {bad[:5]}"


def test_b_sha256_is_the_files_and_the_file_is_there(archive, debs):
    by_name = {d.package: d for d in debs}
    main = packages_of(archive.live, "bookworm")
    bad = [n for n, st in main.items() if n not in by_name or st["SHA256"] != by_name[n].sha256
           or not os.path.isfile(os.path.join(archive.live, st["Filename"]))]
    assert not bad, f"every entry's SHA256 is the file's and the file is there: {bad[:5]}"


@pytest.mark.parametrize("name,want", [
    ("libc6", "pool/main/g/glibc/"), ("libzstd1", "pool/main/libz/libzstd/"),
    ("libaudit1", "pool/main/a/audit/libaudit1_3.0.9-1_amd64.deb")])
def test_b_pool_layout(archive, name, want):
    main = packages_of(archive.live, "bookworm")
    got = main[name]["Filename"] if name in main else None
    assert got is not None and got.startswith(want), f"{name} at {got}, expected {want}"


def test_b_updates_lists_tzdata_from_the_shared_pool(archive):
    main = packages_of(archive.live, "bookworm")
    upd = packages_of(archive.live, "bookworm-updates")
    assert sorted(upd) == sorted(UPDATES) and all(
        upd[n]["Filename"] == main[n]["Filename"] for n in upd), \
        f"bookworm-updates lists {sorted(upd)}, expected {sorted(UPDATES)} from the shared pool"


def dist_of(archive, suite):
    return os.path.join(archive.live, "dists", suite)


@pytest.mark.parametrize("suite", SUITES)
def test_b_packages_xz_holds_packages(archive, suite):
    binary = os.path.join(dist_of(archive, suite), "main", "binary-amd64")
    assert lzma.decompress(read(os.path.join(binary, "Packages.xz"), "rb")) == \
        read(os.path.join(binary, "Packages"), "rb"), f"{suite}: Packages.xz holds Packages"


@pytest.mark.parametrize("suite", SUITES)
def test_b_release_fields(archive, suite):
    fields = da.parse_deb822(read(os.path.join(dist_of(archive, suite), "Release")))[0]
    want = {"Origin": "Debian", "Label": "Debian", "Suite": suite, "Codename": suite,
            "Architectures": "amd64", "Components": "main", "Date": DATE1}
    got = {k: fields.get(k) for k in want}
    assert got == want, f"{suite} Release fields: {got}, expected {want}"


@pytest.mark.parametrize("suite", SUITES)
def test_b_release_sha256_lines_are_the_indexes(archive, suite):
    dist = dist_of(archive, suite)
    fields = da.parse_deb822(read(os.path.join(dist, "Release")))[0]
    listed = {}
    for line in fields.get("SHA256", "").strip().splitlines():
        digest, size, path = line.split()
        listed[path] = (digest, int(size))
    files = {p: (sha256(os.path.join(dist, p)), os.path.getsize(os.path.join(dist, p)))
             for p in ("main/binary-amd64/Packages", "main/binary-amd64/Packages.xz")}
    assert listed == files, f"{suite} Release's SHA256 lines are the indexes': {sorted(listed)}"


@pytest.mark.parametrize("suite", SUITES)
def test_b_gpgv_verifies_inrelease(archive, suite):
    proc = gpgv(archive.keyring, os.path.join(dist_of(archive, suite), "InRelease"))
    assert proc.returncode == 0, \
        f"{suite}: gpgv --keyring keyring.gpg InRelease: {proc.stderr.strip().splitlines()[-1:]}"


@pytest.mark.parametrize("suite", SUITES)
def test_b_gpgv_verifies_release_gpg(archive, suite):
    dist = dist_of(archive, suite)
    proc = gpgv(archive.keyring, os.path.join(dist, "Release.gpg"),
                os.path.join(dist, "Release"))
    assert proc.returncode == 0, \
        f"{suite}: gpgv Release.gpg Release: {proc.stderr.strip().splitlines()[-1:]}"


@pytest.mark.parametrize("suite", SUITES)
def test_b_inrelease_signs_release(archive, suite):
    dist = dist_of(archive, suite)
    assert signed_text(read(os.path.join(dist, "InRelease"))) == \
        read(os.path.join(dist, "Release")), f"{suite}: InRelease should sign Release's text"


def test_b_one_publication(archive):
    assert [p.timestamp for p in archive.publications] == [TS1], \
        f"one publication, {TS1}: {archive.publications}"


def test_b_snapshot_holds_the_publication(archive):
    snap = archive.tree(TS1)
    live = archive.live
    assert read(os.path.join(snap, "dists", "bookworm", "InRelease")) == \
        read(os.path.join(live, "dists", "bookworm", "InRelease")) and \
        sorted(packages_of(snap, "bookworm")) == sorted(packages_of(live, "bookworm")), \
        f"snapshot {TS1} should hold the publication"


def test_b_snapshot_pool_files_are_the_live_ones(archive):
    st = packages_of(archive.live, "bookworm")[POINT]
    assert os.path.samefile(os.path.join(archive.tree(TS1), st["Filename"]),
                            os.path.join(archive.live, st["Filename"])), \
        "the snapshot's pool files should be the live ones (hard links)"


def test_b_keyring_is_binary(archive):
    assert read(archive.keyring, "rb")[:1] != b"-", "keyring.gpg should be binary, not armored"


# -- c. apt against the mirror and the snapshot --------------------------------------------------

@pytest.fixture(scope="module")
def mirror_apt(scratch, archive, srv):
    """(Apt, its `apt-get update`, the URL paths that update asked)."""
    apt = Apt(scratch, "mirror", srv.mirror_url, archive.keyring)
    srv.clear_log()
    proc = apt.update()
    return types.SimpleNamespace(apt=apt, update=proc, paths=srv.paths)


def test_c_apt_update_is_clean(mirror_apt):
    assert clean(mirror_apt.update), \
        "apt-get update against the fixture mirror should succeed cleanly:" + \
        output(mirror_apt.update)


def test_c_apt_fetched_inrelease_and_packages_xz(mirror_apt):
    paths = mirror_apt.paths
    assert "/debian/dists/bookworm/InRelease" in paths and \
        "/debian/dists/bookworm/main/binary-amd64/Packages.xz" in paths and \
        "/debian/dists/bookworm-updates/InRelease" in paths, \
        f"apt should fetch both InRelease files and Packages.xz: {paths}"


def test_c_apt_sees_only_the_fixtures_sources(mirror_apt, srv):
    policy = mirror_apt.apt.run("apt-cache", "policy").stdout
    urls = set(re.findall(r"https?://[^ /]+", policy))
    assert urls == {srv.url}, f"apt should see only the fixture's sources: {sorted(urls)}"


def test_c_apt_reads_origin_and_codename(mirror_apt):
    policy = mirror_apt.apt.run("apt-cache", "policy").stdout
    assert "o=Debian" in policy and "n=bookworm" in policy, \
        f"apt should read Origin Debian, Codename bookworm:\n{policy}"


def test_c_apt_candidate_is_the_listed_version(mirror_apt, archive):
    want = packages_of(archive.live, "bookworm")[POINT]["Version"]
    got = mirror_apt.apt.candidate(POINT)
    assert got == want, f"apt's candidate for {POINT}: {got}, expected {want}"


def test_c_apt_tzdata_from_both_suites_one_version(mirror_apt, archive):
    want = packages_of(archive.live, "bookworm")["tzdata"]["Version"]
    got = mirror_apt.apt.candidate("tzdata")
    assert got == want, f"tzdata from both suites, one version: {got}, expected {want}"


def test_c_apt_download_gives_listed_bytes_from_pool_path(mirror_apt, archive, srv):
    want = packages_of(archive.live, "bookworm")[POINT]
    srv.clear_log()
    proc, deb = mirror_apt.apt.download(POINT)
    paths = srv.paths
    print(f"(c) apt-get download {POINT} {want['Version']} sha256 {want['SHA256'][:16]}...")
    assert proc.returncode == 0 and deb is not None and sha256(deb) == want["SHA256"], \
        f"apt-get download {POINT} should give the SHA256 of Packages:" + output(proc)
    assert paths == ["/debian/" + want["Filename"]], \
        f"apt should ask the pool path /debian/{want['Filename']} only: {paths}"


def test_c_head_gives_content_length(archive, srv):
    want = packages_of(archive.live, "bookworm")[POINT]
    status, body, length = http_get(srv.url, "/debian/" + want["Filename"], "HEAD")
    assert status == 200 and body == b"" and length == want["Size"], \
        f"HEAD: expected 200 and Content-Length {want['Size']}: {status} {length}"


@pytest.mark.parametrize("path", [
    "/debian/dists/nosuch/InRelease", "/debian/pool/", "/../private/state.json",
    "/debian/../../private/state.json", "/private/state.json"],
    ids=["unknown-suite", "directory", "dotdot-root", "dotdot-debian", "private"])
def test_c_not_served_404(srv, path):
    status, _, _ = http_get(srv.url, path)
    assert status == 404, f"GET {path}: expected 404, got {status}"


@pytest.fixture(scope="module")
def snapshot_apt(scratch, archive, srv):
    apt = Apt(scratch, "snap1", srv.snapshot(TS1), archive.keyring)
    return apt, apt.update()


def test_c_apt_update_from_snapshot_is_clean(snapshot_apt):
    assert clean(snapshot_apt[1]), \
        "apt-get update against the snapshot URL should succeed:" + output(snapshot_apt[1])


def test_c_snapshot_offers_the_same_version(snapshot_apt, archive):
    want = packages_of(archive.live, "bookworm")[POINT]["Version"]
    got = snapshot_apt[0].candidate(POINT)
    assert got == want, f"the snapshot should offer {POINT} {want}: {got}"


# -- d. a point release, on an archive of its own ------------------------------------------------

@pytest.fixture(scope="module")
def released(scratch, debs):
    """An archive like the shared one, seen by apt (mirror and first snapshot), then
    point_release(POINT) at DATE2."""
    archive, _ = make_archive(os.path.join(scratch, "archive-d"), debs)
    with da.ArchiveServer(archive) as srv:
        apt = Apt(scratch, "d-mirror", srv.mirror_url, archive.keyring)
        snap1 = Apt(scratch, "d-snap1", srv.snapshot(TS1), archive.keyring)
        for a in (apt, snap1):
            proc = a.update()
            assert clean(proc), "apt-get update before the point release:" + output(proc)
        before_all = packages_of(archive.live, "bookworm")
        t = time.monotonic()
        old, new = archive.point_release(POINT, date=DATE2)
        print(f"point_release({POINT}): {old} -> {new} ({time.monotonic() - t:.1f}s)")
        yield types.SimpleNamespace(archive=archive, srv=srv, apt=apt, snap1=snap1,
                                    before_all=before_all, before=before_all[POINT],
                                    old=old, new=new,
                                    after=packages_of(archive.live, "bookworm"))
    archive.close()


def test_d_point_release_returns_old_and_new(released):
    r = released
    assert r.old == r.before["Version"] and r.new == r.old + "+rootlock1", \
        f"point_release returns the old and new versions: {r.old} {r.new}, expected " \
        f"{r.before['Version']} and {r.before['Version']}+rootlock1"


def test_d_second_publication(released):
    got = [p.timestamp for p in released.archive.publications]
    assert got == [TS1, TS2], f"a second publication: {got}, expected {[TS1, TS2]}"


def test_d_bookworm_lists_the_new_deb(released):
    r = released
    entry = r.after[POINT]
    want = os.path.dirname(r.before["Filename"]) + "/" + da.deb_file_name(POINT, r.new, "all")
    assert entry["Version"] == r.new and entry["Filename"] == want, \
        f"bookworm lists {entry['Filename']} {entry['Version']}, expected {want} {r.new}"


def test_d_old_deb_gone_from_live_pool(released):
    path = os.path.join(released.archive.live, released.before["Filename"])
    assert not os.path.exists(path), f"the old .deb should be gone from the live pool: {path}"


def test_d_first_snapshot_keeps_old_deb(released):
    r = released
    path = os.path.join(r.archive.tree(TS1), r.before["Filename"])
    assert os.path.isfile(path) and sha256(path) == r.before["SHA256"], \
        f"the first snapshot should keep the old .deb: {path}"


def test_d_second_snapshot_has_new_deb_only(released):
    r = released
    snap2 = r.archive.tree(TS2)
    assert os.path.isfile(os.path.join(snap2, r.after[POINT]["Filename"])) and \
        not os.path.exists(os.path.join(snap2, r.before["Filename"])), \
        "the second snapshot should have the new .deb only"


def test_d_every_other_package_unchanged(released):
    r = released
    others = {n: st["SHA256"] for n, st in r.after.items() if n != POINT}
    want = {n: st["SHA256"] for n, st in r.before_all.items() if n != POINT}
    assert others == want, \
        f"every other package is unchanged: {sorted(set(others.items()) ^ set(want.items()))[:5]}"


def test_d_release_date_is_the_point_releases(released):
    rel = da.parse_deb822(read(os.path.join(released.archive.live, "dists", "bookworm",
                                            "Release")))[0]
    assert rel.get("Date") == DATE2, \
        f"Release Date should be the point release's {DATE2}: {rel.get('Date')}"


def test_d_new_inrelease_verifies(released):
    proc = gpgv(released.archive.keyring,
                os.path.join(released.archive.live, "dists", "bookworm", "InRelease"))
    assert proc.returncode == 0, f"the new InRelease should verify: {proc.stderr.strip()}"


@pytest.fixture(scope="module")
def released_update(released):
    """apt-get update of the state that saw the archive before the point release."""
    return released.apt.update()


def test_d_apt_update_after_point_release_is_clean(released_update):
    assert clean(released_update), \
        "apt-get update after the point release:" + output(released_update)


def test_d_apt_sees_new_version(released, released_update):
    got = released.apt.candidate(POINT)
    assert got == released.new, f"apt should see {released.new}: {got}"


@pytest.fixture(scope="module")
def released_download(released, released_update):
    """(process, .deb) of `apt-get download POINT` after the point release."""
    return released.apt.download(POINT)


def test_d_apt_download_gives_new_deb(released, released_download):
    proc, deb = released_download
    assert proc.returncode == 0 and deb is not None and \
        sha256(deb) == released.after[POINT]["SHA256"], \
        "apt-get download should give the new .deb:" + output(proc)


def test_d_dpkg_deb_says_new_version(released, released_download):
    deb = released_download[1]
    assert deb, "apt-get download gave no .deb"
    version = run(["dpkg-deb", "-f", deb, "Version"]).stdout.strip()
    assert version == released.new, f"dpkg-deb -f Version: {version}, expected {released.new}"


def contents(deb):
    return run(["dpkg-deb", "-c", deb]).stdout


def test_d_rebuilt_deb_has_same_contents(released, released_download):
    deb = released_download[1]
    assert deb, "apt-get download gave no .deb"
    listing = [contents(p) for p in
               (deb, os.path.join(released.archive.tree(TS1), released.before["Filename"]))]
    strip = [[re.sub(r"^\S+ \S+ +\d+ \S+ \S+ ", "", line) for line in text.splitlines()]
             for text in listing]
    assert strip[0] == strip[1] and strip[0], \
        f"the rebuilt .deb should have the same contents: " \
        f"{sorted(set(strip[0]) ^ set(strip[1]))[:5]}"


def test_d_rebuilt_deb_owned_by_root(released_download):
    deb = released_download[1]
    assert deb, "apt-get download gave no .deb"
    owners = {line.split()[1] for line in contents(deb).splitlines()}
    assert owners == {"root/root"}, f"the rebuilt .deb should be owned by root/root: {owners}"


def test_d_old_deb_404_from_mirror(released):
    status, _, _ = http_get(released.srv.url, "/debian/" + released.before["Filename"])
    assert status == 404, f"the old .deb: expected 404 from the mirror, got {status}"


def test_d_old_deb_served_from_first_snapshot(released):
    r = released
    status, body, _ = http_get(r.srv.url,
                               f"/snapshot/archive/debian/{TS1}/{r.before['Filename']}")
    assert status == 200 and hashlib.sha256(body).hexdigest() == r.before["SHA256"], \
        f"the old .deb from the first snapshot: {status}, expected 200 with its sha256"


@pytest.fixture(scope="module")
def snapshot1_after(released):
    """The first snapshot's apt state updated after the point release."""
    return released.snap1.update()


def test_d_first_snapshot_still_offers_old(released, snapshot1_after):
    got = released.snap1.candidate(POINT)
    assert clean(snapshot1_after) and got == released.old, \
        f"the first snapshot should still offer {released.old}: {got}" + output(snapshot1_after)


def test_d_first_snapshot_download_gives_old_deb(released, snapshot1_after):
    proc, deb = released.snap1.download(POINT)
    assert proc.returncode == 0 and deb and sha256(deb) == released.before["SHA256"], \
        "apt-get download from the first snapshot should give the old .deb:" + output(proc)


def test_d_second_snapshot_offers_new(scratch, released):
    snap2 = Apt(scratch, "d-snap2", released.srv.snapshot(TS2), released.archive.keyring)
    proc = snap2.update()
    got = snap2.candidate(POINT)
    print(f"(d) after the point release apt sees {released.new}; the old .deb is 404 on the "
          f"mirror and served from snapshot {TS1}, which still offers {released.old}")
    assert clean(proc) and got == released.new, \
        f"the second snapshot should offer {released.new}: {got}" + output(proc)


# -- e. apt refuses each fault, and works again once it is undone ---------------------------------

def test_e_broken_signature_gpgv_refuses_inrelease(archive):
    dist = dist_of(archive, "bookworm")
    with archive.break_signature():
        proc = gpgv(archive.keyring, os.path.join(dist, "InRelease"))
    assert proc.returncode != 0 and "BAD signature" in proc.stderr, \
        f"gpgv should refuse the broken InRelease (BAD signature): {proc.stderr.strip()[-200:]}"


def test_e_broken_signature_gpgv_refuses_release_gpg(archive):
    dist = dist_of(archive, "bookworm")
    with archive.break_signature():
        proc = gpgv(archive.keyring, os.path.join(dist, "Release.gpg"),
                    os.path.join(dist, "Release"))
    assert proc.returncode != 0, "gpgv should refuse Release.gpg too"


def test_e_broken_signature_apt_badsig(scratch, archive, srv):
    with archive.break_signature():
        proc = Apt(scratch, "badsig", srv.mirror_url, archive.keyring).update()
    assert proc.returncode != 0 and "BADSIG" in proc.stdout + proc.stderr, \
        "apt-get update should fail on the broken signature (BADSIG):" + output(proc)


def test_e_break_signature_undone(archive):
    path = os.path.join(dist_of(archive, "bookworm"), "InRelease")
    inrelease = read(path)
    with archive.break_signature():
        assert read(path) != inrelease, "break_signature should change InRelease"
    assert read(path) == inrelease, "break_signature should be undone on leaving the block"


def test_e_mismatch_packages_keeps_size(archive):
    binary = os.path.join(dist_of(archive, "bookworm"), "main", "binary-amd64", "Packages.xz")
    size = os.path.getsize(binary)
    with archive.mismatch_packages(package=POINT):
        got = os.path.getsize(binary)
    assert got == size, f"mismatch_packages should keep Packages.xz's size {size}: {got}"


def test_e_mismatch_packages_apt_hash_sum_mismatch(scratch, archive, srv):
    with archive.mismatch_packages(package=POINT):
        proc = Apt(scratch, "mismatch", srv.mirror_url, archive.keyring).update()
    assert proc.returncode != 0 and "Hash Sum mismatch" in proc.stdout + proc.stderr, \
        "apt-get update should fail on a Packages.xz Release does not list:" + output(proc)


@pytest.fixture(scope="module")
def faults_apt(scratch, archive, srv):
    """(Apt, its update) after both index changes were made and undone."""
    with archive.break_signature():
        pass
    with archive.mismatch_packages(package=POINT):
        pass
    apt = Apt(scratch, "faults", srv.mirror_url, archive.keyring)
    return apt, apt.update()


def test_e_apt_update_clean_after_undoing_both(faults_apt):
    assert clean(faults_apt[1]), \
        "after undoing both, apt-get update should succeed:" + output(faults_apt[1])


def test_e_tampered_deb_download_fails(archive, faults_apt):
    with archive.tamper_deb(POINT):
        proc, deb = faults_apt[0].download(POINT)
    assert proc.returncode != 0 and deb is None and \
        "Hash Sum mismatch" in proc.stdout + proc.stderr, \
        "apt-get download should fail on a tampered .deb (Hash Sum mismatch):" + output(proc)


def test_e_tamper_deb_undone_download_works(archive, faults_apt):
    entry = packages_of(archive.live, "bookworm")[POINT]
    with archive.tamper_deb(POINT):
        pass
    proc, deb = faults_apt[0].download(POINT)
    assert proc.returncode == 0 and deb and sha256(deb) == entry["SHA256"], \
        "tamper_deb undone: the download should work again:" + output(proc)


def test_e_tampering_leaves_download_cache_intact(archive):
    # The demo .debs are hard links to the cache: tampering must not have reached it.
    tz = packages_of(archive.live, "bookworm")["tzdata"]
    with archive.tamper_deb("tzdata"):
        pass
    cache_file = os.path.join(da.DEBS_DIR, "files", os.path.basename(tz["Filename"]))
    assert sha256(cache_file) == tz["SHA256"], \
        f"tampering should leave the download cache intact: {cache_file}"


def pool_url_path(archive):
    return "/debian/" + packages_of(archive.live, "bookworm")[POINT]["Filename"]


def test_e_404_download_fails(archive, srv, faults_apt):
    srv.fail(pool_url_path(archive), 404)
    try:
        proc, deb = faults_apt[0].download(POINT)
    finally:
        srv.clear_faults()
    assert proc.returncode != 0 and deb is None and "404" in proc.stdout + proc.stderr, \
        "apt-get download should fail on a 404:" + output(proc)


def test_e_dropped_connection_download_fails(archive, srv, faults_apt):
    entry = packages_of(archive.live, "bookworm")[POINT]
    srv.drop(pool_url_path(archive))
    try:
        proc, deb = faults_apt[0].download(POINT)
    finally:
        srv.clear_faults()
    # apt-get download writes into the target name as it goes and leaves the half it got.
    assert proc.returncode != 0 and \
        (deb is None or os.path.getsize(deb) < int(entry["Size"])) and \
        "closed connection" in proc.stdout + proc.stderr, \
        "apt-get download should fail on a dropped connection:" + output(proc)


def test_e_faults_cleared_download_works(archive, srv, faults_apt):
    path = pool_url_path(archive)
    srv.fail(path, 404)
    srv.drop(path)
    srv.clear_faults()
    srv.clear_log()
    proc, deb = faults_apt[0].download(POINT)
    print("(e) apt fails on BADSIG, on a Packages.xz Hash Sum mismatch, on a tampered .deb, "
          "a 404 and a dropped connection; each undone, apt works again")
    assert proc.returncode == 0 and deb is not None and srv.paths == [path], \
        f"faults cleared: the download should work, asking {path} once: {srv.paths}" + \
        output(proc)
