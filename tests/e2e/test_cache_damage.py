"""End-to-end: every kind of cache entry is checked before use (issue 32, part 1). For each kind,
one byte of a cached entry is flipped by hand in a copy of a warm cache; then
  - the next run discards it with one warning line naming it, makes or fetches it again, and its
    output equals a clean run's (the image's bytes, `zstd -t` passing; the lock's bytes);
  - the same run with --offline refuses instead: exit 3, one line naming the entry.
The kinds: a wheel in the blob store, an image frame (a .tar.zst build), the unpacked base
(bases/plain-SHA.tar of a compressed tarball base), an index page, a wheel's scan, and an OCI
layer. The recipe: one wheel from the index fixture on 127.0.0.1, over the real Debian base
as a zstd tarball.
"""
import glob
import json
import os
import shutil
import subprocess

import pytest

from fixtures import index_server, package_graph, pip_like, wheel_builder
from fixtures.cli import run_rootlock
from fixtures.debian_root import base_tarball


@pytest.fixture(scope="module")
def warm(rootlock, scratch):
    """The index server, the lock, its clean builds and the cache they left (the warm cache)."""
    wheels = os.path.join(scratch, "wheels")
    os.makedirs(wheels)
    spec = package_graph.pure("app", "1.0.0", [],
                              files={"app/payload.txt": os.urandom(300000).hex().encode()})
    built = wheel_builder.build_wheel(spec, wheels)
    files = [package_graph.IndexFile(
        project=pip_like.canonical_name("app"), name="app", version="1.0.0",
        filename=built.filename, path=built.path, sha256=built.sha256, size=built.size,
        metadata=built.metadata, requires_python=None, yanked=False, hash_listed=True,
        upload_time="2025-03-01T12:00:00.000000Z")]
    graph = package_graph.Graph(root=wheels, stacks=(), files=files, rebuilt={})
    plain_base, _ = base_tarball()
    base = os.path.join(scratch, "base.tar.zst")
    subprocess.run(["zstd", "-q", "-3", "-f", plain_base, "-o", base], check=True)
    base_sha = subprocess.run(["sha256sum", base], capture_output=True, text=True,
                              check=True).stdout.split()[0]
    with index_server.IndexServer(graph, style="pypi") as server:
        recipe = os.path.join(scratch, "damage.toml")
        with open(recipe, "w") as f:
            f.write(f'[image]\nname = "damage"\n\n[base]\ntarball = "{base}"\n'
                    f'sha256 = "{base_sha}"\n\n[python]\nversion = "3.11"\n\n'
                    f'[[index]]\nname = "fixture"\nurl = "{server.simple_url}"\n\n'
                    f'[packages]\nrequires = ["app"]\n')
        cache = os.path.join(scratch, "warm-cache")
        lock = os.path.join(scratch, "pylock.damage.toml")
        proc = run_rootlock(rootlock, "lock", recipe, "-o", lock, "--cache-dir", cache)
        assert proc.returncode == 0, proc.stderr
        clean = {}
        for suffix in (".tar.zst", ".oci.tar"):
            image = os.path.join(scratch, "clean" + suffix)
            clean[suffix] = build(rootlock, lock, image, cache, [])
        with open(lock, "rb") as f:
            lock_bytes = f.read()
        yield {"server": server, "recipe": recipe, "lock": lock, "lock_bytes": lock_bytes,
               "cache": cache, "clean": clean, "scratch": scratch, "wheel_sha": built.sha256}


def build(rootlock, lock, image, cache, extra):
    """The sha256 of a build that must succeed, and its stderr."""
    proc = run_rootlock(rootlock, "build", lock, "-o", image, "--cache-dir", cache, "--json",
                        *extra)
    assert proc.returncode == 0, f"build -> {image}: {proc.stderr}"
    return json.loads(proc.stdout)["sha256"]


def copy_cache(warm, name):
    path = os.path.join(warm["scratch"], name)
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run(["cp", "-a", warm["cache"], path], check=True)
    return path


def flip(path, at=None):
    """One bit of the byte at `at` (default: the middle) of the file, written in place."""
    size = os.path.getsize(path)
    offset = size // 2 if at is None else at % size
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x10]))


def warnings_of(stderr):
    return [line for line in stderr.splitlines() if line.startswith("rootlock: warning:")]


def only_error(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def largest(pattern):
    files = [p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)]
    assert files, f"nothing matches {pattern}"
    return max(files, key=os.path.getsize)


def check_build_kind(rootlock, warm, name, suffix, damaged_path_of):
    """The build half of every case: --offline refuses, then a normal run rebuilds."""
    cache = copy_cache(warm, f"cache-{name}")
    damaged = damaged_path_of(cache)
    flip(damaged)
    image = os.path.join(warm["scratch"], f"{name}-offline{suffix}")
    proc = run_rootlock(rootlock, "build", warm["lock"], "-o", image, "--cache-dir", cache,
                        "--offline")
    assert proc.returncode == 3, f"exit {proc.returncode}: {proc.stderr}"
    line = only_error(proc.stderr)
    assert damaged in line and "damaged" in line, line
    assert not os.path.exists(image)
    assert os.path.exists(damaged), "offline keeps the entry for the user to see"

    image = os.path.join(warm["scratch"], f"{name}-again{suffix}")
    proc = run_rootlock(rootlock, "build", warm["lock"], "-o", image, "--cache-dir", cache,
                        "--json")
    assert proc.returncode == 0, proc.stderr
    warned = warnings_of(proc.stderr)
    assert len(warned) == 1 and damaged in warned[0] and "damaged" in warned[0], proc.stderr
    assert json.loads(proc.stdout)["sha256"] == warm["clean"][suffix], \
        "the image after the damage is a clean build's"
    if suffix == ".tar.zst":
        subprocess.run(["zstd", "-q", "-t", image], check=True)
    # And the entry made again is whole: a third build warns of nothing.
    proc = run_rootlock(rootlock, "build", warm["lock"], "-o",
                        os.path.join(warm["scratch"], f"{name}-third{suffix}"), "--cache-dir",
                        cache, "--offline")
    assert proc.returncode == 0 and not warnings_of(proc.stderr), proc.stderr


def test_a_a_wheel_in_the_blob_store(rootlock, warm):
    check_build_kind(rootlock, warm, "blob", ".tar.zst",
                     lambda cache: os.path.join(cache, "blobs", "sha256", warm["wheel_sha"][:2],
                                                warm["wheel_sha"][2:]))


def test_b_an_image_frame(rootlock, warm):
    # The largest frame: the base's, deep inside compressed data, so only its checksum tells.
    check_build_kind(rootlock, warm, "frame", ".tar.zst",
                     lambda cache: largest(os.path.join(cache, "frames", "zstd", "**", "*")))


def test_c_the_unpacked_base(rootlock, warm):
    check_build_kind(rootlock, warm, "plain", ".tar.zst",
                     lambda cache: largest(os.path.join(cache, "bases", "plain-*.tar")))


def test_d_an_oci_layer(rootlock, warm):
    check_build_kind(rootlock, warm, "layer", ".oci.tar",
                     lambda cache: largest(os.path.join(cache, "layers", "blobs", "**", "*")))


def check_lock_kind(rootlock, warm, name, damaged_paths_of):
    """The lock half: a relock reads pages and scans; offline it refuses a damaged one."""
    cache = copy_cache(warm, f"cache-{name}")
    damaged = damaged_paths_of(cache)
    for path in damaged:
        flip(path, at=os.path.getsize(path) - 3)  # inside the content, past the seal's line
    lock = os.path.join(warm["scratch"], f"pylock.{name}-offline.toml")
    shutil.copy(warm["lock"], lock)
    proc = run_rootlock(rootlock, "lock", warm["recipe"], "-o", lock, "--cache-dir", cache,
                        "--offline")
    assert proc.returncode == 3, f"exit {proc.returncode}: {proc.stderr}"
    line = only_error(proc.stderr)
    assert any(path in line for path in damaged) and "damaged" in line, line

    lock = os.path.join(warm["scratch"], f"pylock.{name}-again.toml")
    shutil.copy(warm["lock"], lock)
    proc = run_rootlock(rootlock, "lock", warm["recipe"], "-o", lock, "--cache-dir", cache)
    assert proc.returncode == 0, proc.stderr
    warned = warnings_of(proc.stderr)
    assert warned and all("damaged" in w for w in warned), proc.stderr
    assert all(any(path in w for path in damaged) for w in warned), warned
    with open(lock, "rb") as f:
        assert f.read() == warm["lock_bytes"], "the lock after the damage is the clean one"


def test_e_index_pages(rootlock, warm):
    check_lock_kind(rootlock, warm, "pages",
                    lambda cache: sorted(glob.glob(os.path.join(cache, "pages", "*.json"))))


def test_f_a_wheel_scan(rootlock, warm):
    check_lock_kind(rootlock, warm, "scan",
                    lambda cache: glob.glob(os.path.join(cache, "scans", "v2", "*", "*.json")))


# `rootlock cache`: verify, du, prune over a copy of the same warm cache.

def test_g_cache_verify_names_and_removes_what_is_damaged(rootlock, warm):
    cache = copy_cache(warm, "cache-verify")
    proc = run_rootlock(rootlock, "cache", "verify", "--cache-dir", cache, "--json")
    assert proc.returncode == 0, proc.stderr
    clean = json.loads(proc.stdout)
    assert clean["ok"] and clean["damaged"] == [] and clean["bytes_read"] > 0, clean
    checked = {kind["kind"]: kind["entries"] for kind in clean["checked"]}
    assert all(checked[k] > 0 for k in ("blobs", "frames", "bases", "pages", "scans", "layers")), \
        checked
    damaged = [os.path.join(cache, "blobs", "sha256", warm["wheel_sha"][:2],
                            warm["wheel_sha"][2:]),
               largest(os.path.join(cache, "frames", "zstd", "**", "*")),
               largest(os.path.join(cache, "layers", "blobs", "**", "*")),
               sorted(glob.glob(os.path.join(cache, "pages", "*.json")))[0]]
    for path in damaged:
        flip(path, at=os.path.getsize(path) - 3)
    proc = run_rootlock(rootlock, "cache", "verify", "--cache-dir", cache)
    assert proc.returncode == 1, proc.stderr
    named = [line for line in proc.stdout.splitlines() if line.startswith("damaged, removed: ")]
    assert len(named) == len(damaged), proc.stdout
    for path in damaged:
        assert any(path in line for line in named), (path, named)
        assert not os.path.exists(path)
    assert "MB/s" in proc.stdout.splitlines()[-1], proc.stdout
    again = run_rootlock(rootlock, "cache", "verify", "--cache-dir", cache)
    assert again.returncode == 0, again.stdout


def test_h_cache_du_adds_up_to_the_directory(rootlock, warm):
    proc = run_rootlock(rootlock, "cache", "du", "--cache-dir", warm["cache"], "--json")
    assert proc.returncode == 0, proc.stderr
    kinds = json.loads(proc.stdout)
    total = sum(kind["bytes"] for kind in kinds)
    apparent = 0
    for dirpath, _, files in os.walk(warm["cache"]):
        apparent += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files
                        if os.path.isfile(os.path.join(dirpath, f)))
    assert total == apparent, (total, apparent, kinds)
    by_kind = {kind["kind"]: kind["bytes"] for kind in kinds}
    assert by_kind["blobs"] > 0 and by_kind["frames"] > 0, kinds
    missing = run_rootlock(rootlock, "cache", "du", "--cache-dir",
                           os.path.join(warm["scratch"], "no-cache"))
    assert missing.returncode == 2 and only_error(missing.stderr).endswith(
        "no such cache directory"), missing.stderr


def test_i_cache_prune_keeps_what_the_kept_lock_needs(rootlock, warm):
    cache = copy_cache(warm, "cache-prune")
    stray = os.path.join(cache, "blobs", "sha256", "00", "1" * 62)
    os.makedirs(os.path.dirname(stray), exist_ok=True)
    with open(stray, "wb") as f:
        f.write(b"a blob no lock names")
    refused = run_rootlock(rootlock, "cache", "prune", "--cache-dir", cache)
    assert refused.returncode == 2 and "--keep" in only_error(refused.stderr), refused.stderr
    # The clean images are gone from where they were built: their frames and layers go too.
    moved = {}
    for suffix in (".tar.zst", ".oci.tar"):
        image = os.path.join(warm["scratch"], "clean" + suffix)
        moved[image] = image + ".moved"
        os.rename(image, moved[image])
    try:
        proc = run_rootlock(rootlock, "cache", "prune", "--cache-dir", cache, "--keep",
                            warm["lock"], "--json")
    finally:
        for image, away in moved.items():
            os.rename(away, image)
    assert proc.returncode == 0, proc.stderr
    removed = json.loads(proc.stdout)
    assert removed["removed_entries"] >= 1 and removed["removed_bytes"] > 0, removed
    assert not os.path.exists(stray)
    assert not glob.glob(os.path.join(cache, "frames", "zstd", "*", "*")), "frames of gone images"
    assert os.path.exists(os.path.join(cache, "blobs", "sha256", warm["wheel_sha"][:2],
                                       warm["wheel_sha"][2:]))
    # What the kept lock needs is all there: an offline build gives the clean image.
    image = os.path.join(warm["scratch"], "after-prune.tar.zst")
    assert build(rootlock, warm["lock"], image, cache, ["--offline"]) == warm["clean"][".tar.zst"]


# kill -9 at points spread over a run, then a normal run: nothing of the dead process is left,
# the output is a clean run's, and the cache it shared verifies whole.

KILL_AFTER = [0.05, 0.15, 0.3, 0.5, 0.8, 1.2]  # seconds: spread over a build of this lock


def leftovers_of(pid, *folders):
    """Files in `folders` (recursively) whose name carries `pid`."""
    found = []
    for folder in folders:
        for dirpath, _, files in os.walk(folder):
            found += [os.path.join(dirpath, f) for f in files if f"-{pid}" in f]
    return found


def killed(argv, after):
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        child.wait(timeout=after)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    return child.pid


@pytest.mark.parametrize("after", KILL_AFTER)
def test_j_a_build_killed_anywhere_then_a_clean_one(rootlock, warm, after):
    cache = copy_cache(warm, f"cache-kill-build-{after}")
    shutil.rmtree(os.path.join(cache, "frames"))  # a cold build: every step takes its time
    out = os.path.join(warm["scratch"], f"killed-build-{after}")
    os.makedirs(out, exist_ok=True)
    image = os.path.join(out, "image.tar.zst")
    pid = killed([rootlock, "build", warm["lock"], "-o", image, "--cache-dir", cache], after)
    assert build(rootlock, warm["lock"], image, cache, []) == warm["clean"][".tar.zst"]
    assert not leftovers_of(pid, out, cache), leftovers_of(pid, out, cache)
    subprocess.run(["zstd", "-q", "-t", image], check=True)
    proc = run_rootlock(rootlock, "cache", "verify", "--cache-dir", cache)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("after", KILL_AFTER[:4])
def test_j_a_lock_killed_anywhere_then_a_clean_one(rootlock, warm, after):
    cache = os.path.join(warm["scratch"], f"cache-kill-lock-{after}")  # cold: it downloads
    lock = os.path.join(warm["scratch"], f"pylock.killed-{after}.toml")
    pid = killed([rootlock, "lock", warm["recipe"], "-o", lock, "--cache-dir", cache], after)
    proc = run_rootlock(rootlock, "lock", warm["recipe"], "-o", lock, "--cache-dir", cache)
    assert proc.returncode == 0, proc.stderr
    with open(lock, "rb") as f:
        assert f.read() == warm["lock_bytes"]
    assert not leftovers_of(pid, cache, os.path.dirname(lock)), leftovers_of(pid, cache)
    proc = run_rootlock(rootlock, "cache", "verify", "--cache-dir", cache)
    assert proc.returncode == 0, proc.stdout
