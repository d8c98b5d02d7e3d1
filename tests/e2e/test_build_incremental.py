"""End-to-end: a rebuild after a one-package lock change copies every unchanged frame from the
frame cache, and its bytes are exactly a clean build's.

The fixture index serves the torch 2.8.0+cu128 stack, app-cli and web-router 1.0.0 and 1.2.0;
the base is the cached Debian root as a pinned tarball. Two locks differ in web-router alone.
For .tar.zst and .tar.gz:
  - the first lock built with an empty cache compresses every frame; the second built to the
    same path with that cache (warm) reuses most of them, and its bytes equal the second lock
    built with an empty cache (cold) and with no frames left of anything else;
  - the first lock built again after the second gives the first build's bytes;
  - after a build the cache holds that image's frames and no others (the old lock's frames are
    pruned once no image lists them);
  - a torn frame in the cache is refused by --offline, naming it, and otherwise compressed
    again with one warning each: the same bytes;
  - a build of the same frames over the untouched image it wrote keeps that file (same inode and
    mtime, `unchanged` in --json); one byte changed in place, size and mtime restored, and the
    image is written again;
  - the images read back whole: zstd -t and gzip -t, GNU tar, Python's tarfile, and the member
    list is the same in each;
  - every frame is padded to a 4 KiB boundary; on an XFS that shares blocks (a loop file made
    by fixtures/reflink_fs), the warm rebuild clones every cached frame into the image (the
    kernel reports those extents shared), has the cold build's bytes, and keeps them when the
    cache is deleted.
"""
import hashlib
import json
import os
import shutil
import subprocess
import tarfile

import pytest

from fixtures import index_server, package_graph, reflink_fs
from fixtures.cli import run, run_rootlock
from fixtures.debian_root import base_tarball
from fixtures.recipes import tarball_recipe

SUFFIXES = [".tar.zst", ".tar.gz"]


def write_recipe(path, index_url, base, requires):
    return tarball_recipe(path, "incremental", index_url, base, requires)


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def build(rootlock, lock, output, cache, offline=True, proc_out=None):
    """(sha256 of the image, the build's JSON); the build must succeed."""
    proc = run_rootlock(rootlock, "build", lock, "-o", output, "--cache-dir", cache,
                        *(["--offline"] if offline else []), "--json")
    assert proc.returncode == 0, f"build {os.path.basename(lock)} -> {output}: {proc.stderr}"
    if proc_out is not None:
        proc_out.append(proc)
    built = json.loads(proc.stdout)
    assert built["sha256"] == sha256_of(output), "the reported sha256 is the file's"
    return built["sha256"], built


def frames_in(cache, codec):
    folder = os.path.join(cache, "frames", codec)
    return sorted(name for _, _, files in os.walk(folder) for name in files
                  if not name.startswith("."))


def seeded_cache(scratch, name, warm_from):
    """A copy of the cache `warm_from` (wheels and base already in it) under a new name."""
    path = os.path.join(scratch, name)
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run(["cp", "-a", warm_from, path], check=True)
    return path


@pytest.fixture(scope="module")
def locks(rootlock, scratch):
    """{"1.0.0": path, "1.2.0": path} and the download cache both were locked and fetched with."""
    graph = package_graph.build_graph(os.path.join(scratch, "graph"))
    cache = os.path.join(scratch, "cache")
    base = base_tarball()
    out = {}
    with index_server.IndexServer(graph, style="pypi") as server:
        for version in ("1.0.0", "1.2.0"):
            recipe = write_recipe(os.path.join(scratch, f"inc-{version}.toml"),
                                  server.simple_url, base, ["app-cli", f"web-router=={version}"])
            out[version] = os.path.join(scratch, f"pylock.inc-{version}.toml")
            proc = run_rootlock(rootlock, "lock", recipe, "-o", out[version], "--cache-dir",
                                cache)
            assert proc.returncode == 0, f"lock {version}: {proc.stderr}"
            # Every wheel and the base into the cache while the index is up; the builds below
            # run --offline from copies of it.
            warm = run_rootlock(rootlock, "build", out[version], "-o",
                                os.path.join(scratch, f"fetch-{version}.tar"), "--cache-dir",
                                cache)
            assert warm.returncode == 0, f"fetching {version}: {warm.stderr}"
    shutil.rmtree(os.path.join(cache, "frames"), ignore_errors=True)
    return out, cache


@pytest.fixture(scope="module", params=SUFFIXES, ids=["zstd", "gzip"])
def builds(request, rootlock, scratch, locks):
    """The builds every case below reads, for one compression."""
    suffix = request.param
    codec = "zstd" if suffix == ".tar.zst" else "gzip"
    paths, fetched = locks
    out = {"suffix": suffix, "codec": codec}
    work = os.path.join(scratch, codec)
    os.makedirs(work, exist_ok=True)
    image = os.path.join(work, "image" + suffix)
    warm_cache = seeded_cache(work, "warm-cache", fetched)
    out["first"] = build(rootlock, paths["1.0.0"], image, warm_cache)
    out["first_frames"] = frames_in(warm_cache, codec)
    out["warm"] = build(rootlock, paths["1.2.0"], image, warm_cache)
    shutil.copy(image, os.path.join(work, "warm" + suffix))
    out["warm_image"] = os.path.join(work, "warm" + suffix)
    out["after_warm_frames"] = frames_in(warm_cache, codec)
    cold_cache = seeded_cache(work, "cold-cache", fetched)
    out["cold_image"] = os.path.join(work, "cold" + suffix)
    out["cold"] = build(rootlock, paths["1.2.0"], out["cold_image"], cold_cache)
    out["again"] = build(rootlock, paths["1.0.0"], image, warm_cache)
    out["image"], out["cache"], out["lock"] = image, warm_cache, paths["1.0.0"]
    return out


def test_warm_rebuild_has_the_clean_builds_bytes(builds):
    warm_sha, warm = builds["warm"]
    cold_sha, cold = builds["cold"]
    assert warm_sha == cold_sha, "a warm rebuild must give a clean build's bytes"
    with open(builds["warm_image"], "rb") as a, open(builds["cold_image"], "rb") as b:
        assert a.read() == b.read()
    assert cold["frames"]["reused"] == 0, f"an empty cache reuses nothing: {cold['frames']}"


def test_warm_rebuild_compresses_only_the_changed_frames(builds):
    _, warm = builds["warm"]
    frames = warm["frames"]
    assert frames["written"] >= 8, f"the image is cut into frames: {frames}"
    assert frames["reused"] >= frames["written"] * 3 // 4, \
        f"one package changed: most frames come from the cache: {frames}"
    assert frames["reused"] < frames["written"] - 1, \
        f"web-router's frames and the end are compressed again: {frames}"


def test_building_the_first_lock_again_gives_its_bytes(builds):
    first_sha, _ = builds["first"]
    again_sha, again = builds["again"]
    assert again_sha == first_sha, "the first lock rebuilt after the second: its own bytes"
    assert again["frames"]["reused"] > 0


def test_the_cache_holds_the_last_builds_frames_only(builds):
    _, warm = builds["warm"]
    after = builds["after_warm_frames"]
    # Every frame but the end of the archive is stored, and nothing of the first lock's that
    # the second does not use.
    assert len(after) == warm["frames"]["written"] - 1, \
        f"{len(after)} frames cached for an image of {warm['frames']['written']}"
    dropped = set(builds["first_frames"]) - set(after)
    assert dropped, "the first lock's web-router frames are pruned"


def test_a_torn_frame_is_compressed_again(rootlock, builds):
    cache, codec = builds["cache"], builds["codec"]
    folder = os.path.join(cache, "frames", codec)
    torn = 0
    for dirpath, _, files in os.walk(folder):
        for name in sorted(files)[:3]:
            path = os.path.join(dirpath, name)
            size = os.path.getsize(path)
            # By rename: a hard-linked copy of the cache must not see the change.
            with open(path, "rb") as f:
                head = f.read(size // 2)
            with open(path + ".new", "wb") as f:
                f.write(head)
            os.rename(path + ".new", path)
            torn += 1
    assert torn > 0
    image = os.path.join(os.path.dirname(builds["image"]), "torn" + builds["suffix"])
    # --offline refuses a damaged cache entry, naming it; a normal run compresses it again.
    refused = run_rootlock(rootlock, "build", builds["lock"], "-o", image, "--cache-dir", cache,
                           "--offline")
    assert refused.returncode == 3 and folder in refused.stderr and "damaged" in refused.stderr, \
        refused.stderr
    assert not os.path.exists(image)
    procs = []
    sha, built = build(rootlock, builds["lock"], image, cache, offline=False, proc_out=procs)
    assert sha == builds["first"][0], "torn cache files change nothing in the image"
    assert built["frames"]["reused"] <= built["frames"]["written"] - 1 - torn
    warned = [line for line in procs[0].stderr.splitlines() if "warning:" in line]
    assert len(warned) == torn and all(folder in w and "damaged" in w for w in warned), warned


def members_by_gnu_tar(path, suffix):
    flag = "--zstd" if suffix == ".tar.zst" else "-z"
    proc = run(["tar", flag, "-tf", path])
    assert proc.returncode == 0, f"GNU tar: {proc.stderr}"
    return proc.stdout.splitlines()


def members_by_tarfile(path, suffix, scratch):
    if suffix == ".tar.gz":
        with tarfile.open(path, "r:gz") as archive:  # every gzip member, one stream
            return [m.name + ("/" if m.isdir() and m.name != "." else "") for m in archive]
    plain = os.path.join(scratch, "plain.tar")
    subprocess.run(["zstd", "-d", "-q", "-f", path, "-o", plain], check=True)
    try:
        with tarfile.open(plain, "r:") as archive:
            return [m.name + ("/" if m.isdir() and m.name != "." else "") for m in archive]
    finally:
        os.unlink(plain)


def test_the_framed_image_reads_back_whole(builds, scratch):
    path, suffix = builds["warm_image"], builds["suffix"]
    tester = ["zstd", "-q", "-t", path] if suffix == ".tar.zst" else ["gzip", "-t", path]
    proc = run(tester)
    assert proc.returncode == 0, f"{tester[0]} -t: {proc.stderr}"
    by_tar = members_by_gnu_tar(path, suffix)
    assert "./opt/venv/bin/python" in by_tar and "./etc/passwd" in by_tar
    by_python = ["./" if name == "." else name for name in members_by_tarfile(path, suffix,
                                                                              scratch)]
    assert by_python == by_tar, "Python's tarfile and GNU tar read the same members"


def test_frames_are_reported_in_text(rootlock, builds):
    image = os.path.join(os.path.dirname(builds["image"]), "text" + builds["suffix"])
    for expected in (" copied from the cache", "unchanged: the image there was built from the same"):
        proc = run_rootlock(rootlock, "build", builds["lock"], "-o", image, "--cache-dir",
                            builds["cache"], "--offline", env=dict(os.environ, NO_COLOR="1"))
        assert proc.returncode == 0, proc.stderr
        assert expected in proc.stdout, proc.stdout


def test_an_unchanged_rebuild_keeps_the_image_file(rootlock, builds):
    image = builds["image"]  # the first lock's, built again there last
    before = os.stat(image)
    sha, built = build(rootlock, builds["lock"], image, builds["cache"])
    after = os.stat(image)
    assert built["unchanged"] is True, f"the same frames over an untouched image: {built}"
    assert sha == builds["first"][0]
    assert built["frames"]["written"] == builds["again"][1]["frames"]["written"] == \
        built["frames"]["reused"], f"every frame of the image kept: {built['frames']}"
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns), \
        "kept as it was, not written again"
    with open(image + ".sha256") as f:
        assert f.read() == f"{sha}  {os.path.basename(image)}\n"
    assert not [n for n in os.listdir(os.path.dirname(image)) if ".partial-" in n]


def test_an_image_changed_in_place_is_written_again(rootlock, builds):
    image = builds["image"]
    stat = os.stat(image)
    with open(image, "r+b") as f:  # one byte flipped, size and mtime kept: only ctime tells
        f.seek(stat.st_size // 2)
        byte = f.read(1)
        f.seek(stat.st_size // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    os.utime(image, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    sha, built = build(rootlock, builds["lock"], image, builds["cache"])
    assert built["unchanged"] is False, "a changed file is never trusted"
    assert sha == builds["first"][0], "written again: the lock's bytes"


@pytest.fixture(scope="module")
def oci_builds(rootlock, scratch, locks):
    """An OCI archive of the first lock, then of the second over it (warm), and cold."""
    paths, fetched = locks
    work = os.path.join(scratch, "oci")
    os.makedirs(work, exist_ok=True)
    image = os.path.join(work, "image.oci.tar")
    warm_cache = seeded_cache(work, "warm-cache", fetched)
    out = {"first": build(rootlock, paths["1.0.0"], image, warm_cache),
           "warm": build(rootlock, paths["1.2.0"], image, warm_cache)}
    out["cold"] = build(rootlock, paths["1.2.0"], os.path.join(work, "cold.oci.tar"),
                        seeded_cache(work, "cold-cache", fetched))
    return out


def test_oci_rebuild_copies_every_layer_but_the_changed_one(oci_builds):
    warm_sha, warm = oci_builds["warm"]
    cold_sha, cold = oci_builds["cold"]
    assert warm_sha == cold_sha, "a warm OCI rebuild must give a clean build's bytes"
    assert warm["manifest"] == cold["manifest"]
    assert cold["layers_reused"] == 0
    _, first = oci_builds["first"]
    changed = [layer for layer in warm["layers"] if layer not in first["layers"]]
    assert [layer.split(" sha256:")[0] for layer in changed] == ["rootlock: the rest of the venv"], \
        f"web-router lives in the venv layer alone: {changed}"
    assert warm["layers_reused"] == len(warm["layers"]) - 1, \
        f"every other layer copied: {warm['layers_reused']} of {len(warm['layers'])}"


@pytest.fixture(scope="module", params=SUFFIXES, ids=["zstd", "gzip"])
def reflink_builds(request, rootlock, locks):
    """The two locks built on an XFS that shares blocks (reflink=1): the first with an empty
    frame cache, the second over it (warm), the second again with an empty cache (cold)."""
    suffix = request.param
    paths, fetched = locks
    with reflink_fs.xfs_scratch() as mount:
        cache = seeded_cache(mount, "warm-cache", fetched)
        image = os.path.join(mount, "image" + suffix)
        out = {"first": build(rootlock, paths["1.0.0"], image, cache),
               "warm": build(rootlock, paths["1.2.0"], image, cache),
               "shared": reflink_fs.shared_bytes(image), "size": os.path.getsize(image)}
        cold_image = os.path.join(mount, "cold" + suffix)
        out["cold"] = build(rootlock, paths["1.2.0"], cold_image,
                            seeded_cache(mount, "cold-cache", fetched))
        # The image owns its bytes: the cache it shares blocks with may go.
        shutil.rmtree(cache)
        out["after_cache_removed"] = sha256_of(image)
        yield out


def test_reflink_rebuild_shares_the_cached_frames_blocks(reflink_builds):
    _, warm = reflink_builds["warm"]
    frames = warm["frames"]
    assert frames["reused"] >= frames["written"] * 3 // 4, f"most frames from the cache: {frames}"
    assert frames["cloned"] == frames["reused"], \
        f"every cached frame is cloned on a filesystem that shares blocks: {frames}"
    # The frames cloned hold most of the image; the kernel sees their extents as shared.
    assert reflink_builds["shared"] >= reflink_builds["size"] // 2, \
        f"{reflink_builds['shared']} of {reflink_builds['size']} bytes shared with the cache"


def test_reflink_rebuild_has_the_clean_builds_bytes(reflink_builds):
    warm_sha, _ = reflink_builds["warm"]
    cold_sha, cold = reflink_builds["cold"]
    assert cold["frames"]["reused"] == cold["frames"]["cloned"] == 0
    assert warm_sha == cold_sha, "cloned frames give a clean build's bytes"
    assert reflink_builds["after_cache_removed"] == warm_sha, \
        "the image keeps its bytes when the cache it shared blocks with is deleted"


def test_framed_images_are_block_aligned(builds):
    """Each frame is padded to 4 KiB (what lets a filesystem share its blocks): every cached
    frame's size is a multiple of it, and so is the image's."""
    cache, codec = builds["cache"], builds["codec"]
    folder = os.path.join(cache, "frames", codec)
    sizes = [os.path.getsize(os.path.join(d, n)) for d, _, files in os.walk(folder)
             for n in files if not n.startswith(".")]
    assert sizes and all(size % 4096 == 0 for size in sizes), sorted(s % 4096 for s in sizes)[-3:]
    assert os.path.getsize(builds["cold_image"]) % 4096 == 0
