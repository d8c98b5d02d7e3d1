"""End-to-end: bounded time on the wire and the exit code of every local failure (issue 32), with
faults injected by the index fixture on 127.0.0.1 into the one wheel a recipe needs, over the
real Debian base:
  a. a server that sends one byte every half second (never silent, never done) fails the
     transfer once the --timeout window passes below --min-rate; every retry too; then exit 3
     with one line naming the URL and the rate, within the bound the options give;
  b. the same fault on the first request only: retried, and the lock is written;
  c. a response that looks complete but holds half the file (no Content-Length, the connection
     closed): resumed with a Range request as a cut connection is, not reported as a mismatch;
  d. --deadline: a trickle that the rate check would wait out is cut when the run's deadline
     passes: exit 3 within a second or two of it, naming the URL;
  e. local failures are exit 3 with one line naming the path and the errno text: a cache
     directory that cannot be made, an output directory on a read-only filesystem, and a full
     disk under the lock being written, where the older lock at that path stays intact and no
     temporary is left;
  f. the cache temporaries of a killed run are removed by the next run once their process is
     gone, and a live run's are left alone.
"""
import hashlib
import os
import subprocess
import tempfile
import time

import pytest

from fixtures import index_server, package_graph, pip_like, wheel_builder
from fixtures.cli import run
from fixtures.debian_root import base_tarball

WINDOW = 2  # --timeout: the rate window, in seconds
RETRIES = 4  # the client's default extra attempts
# Every attempt's window, plus the backoff between attempts (250 ms doubling), plus slack for
# the lock's own work (reading the base, checking the closure).
BOUND = (RETRIES + 1) * WINDOW + 0.25 * (2 ** RETRIES - 1) + 15


@pytest.fixture(scope="module")
def server(scratch):
    wheels = os.path.join(scratch, "wheels")
    os.makedirs(wheels)
    # Enough bytes that a trickle can never finish inside a window.
    spec = package_graph.pure("app", "1.0.0", [],
                              files={"app/payload.txt": os.urandom(6000).hex().encode()})
    built = wheel_builder.build_wheel(spec, wheels)
    files = [package_graph.IndexFile(
        project=pip_like.canonical_name("app"), name="app", version="1.0.0",
        filename=built.filename, path=built.path, sha256=built.sha256, size=built.size,
        metadata=built.metadata, requires_python=None, yanked=False, hash_listed=True,
        upload_time="2025-03-01T12:00:00.000000Z")]
    # The base too, compressed, served as a file of the index (never listed for the recipe):
    # the wire faults on a base download (test_i).
    plain, _ = base_tarball()
    base = os.path.join(wheels, "base.tar.zst")
    subprocess.run(["zstd", "-q", "-3", "-f", plain, "-o", base], check=True)
    with open(base, "rb") as f:
        base_sha = hashlib.sha256(f.read()).hexdigest()
    files.append(package_graph.IndexFile(
        project="rootlock-base", name="rootlock-base", version="1.0", filename="base.tar.zst",
        path=base, sha256=base_sha, size=os.path.getsize(base), metadata=b"",
        requires_python=None, yanked=False, hash_listed=True,
        upload_time="2025-03-01T12:00:00.000000Z"))
    graph = package_graph.Graph(root=wheels, stacks=(), files=files, rebuilt={})
    with index_server.IndexServer(graph, style="pypi") as srv:
        srv.wheel_path = srv.file_path(built.filename)
        srv.base_path, srv.base_sha = srv.file_path("base.tar.zst"), base_sha
        yield srv


def lock(rootlock, scratch, server, name, *extra, out=None, cache=None, served_base=False):
    """(exit code, stderr, seconds, lock path) of a cold `rootlock lock` of the one-wheel recipe
    (over the base served by the index fixture when `served_base`)."""
    base_path, base_sha = base_tarball()
    if served_base:
        base_path, base_sha = server.url + server.base_path, server.base_sha
    recipe = os.path.join(scratch, f"{name}.toml")
    with open(recipe, "w") as f:
        f.write(f'[image]\nname = "wire"\n\n[base]\ntarball = "{base_path}"\n'
                f'sha256 = "{base_sha}"\n\n[python]\nversion = "3.11"\n\n'
                f'[[index]]\nname = "fixture"\nurl = "{server.simple_url}"\n\n'
                f'[packages]\nrequires = ["app"]\n')
    out = out or os.path.join(scratch, f"pylock.{name}.toml")
    cache = cache or os.path.join(scratch, f"cache-{name}")
    started = time.monotonic()
    proc = run([rootlock, "lock", recipe, "-o", out, "--cache-dir", cache, "--timeout",
                str(WINDOW), *extra], timeout=300)
    return proc.returncode, proc.stderr, time.monotonic() - started, out


def file_requests(server):
    return [r for r in server.requests if r.path == server.wheel_path]


def test_a_a_trickle_fails_within_the_bound_with_exit_3(rootlock, scratch, server):
    server.clear_faults()
    server.clear_log()
    server.trickle(server.wheel_path, seconds=0.5, times=None)
    rc, err, took, out = lock(rootlock, scratch, server, "trickle")
    server.clear_faults()
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 3 and not os.path.exists(out), f"exit {rc}: {err}"
    assert took < BOUND, f"took {took:.1f} s, beyond the bound {BOUND:.1f} s"
    assert len(lines) == 1 and server.wheel_path.split("/")[-1] in lines[0] and \
        "below the minimum rate of 1024 bytes/s" in lines[0], lines
    assert len(file_requests(server)) == RETRIES + 1, [r.path for r in server.requests]


def test_b_one_trickle_is_retried(rootlock, scratch, server):
    server.clear_faults()
    server.clear_log()
    server.trickle(server.wheel_path, seconds=0.5, times=1)
    rc, err, _, out = lock(rootlock, scratch, server, "trickle-once")
    server.clear_faults()
    assert rc == 0 and os.path.exists(out), f"exit {rc}: {err}"
    assert len(file_requests(server)) == 2


def test_c_a_short_response_is_resumed_not_a_mismatch(rootlock, scratch, server):
    server.clear_faults()
    server.clear_log()
    server.short(server.wheel_path, times=1)
    rc, err, _, out = lock(rootlock, scratch, server, "short")
    server.clear_faults()
    assert rc == 0 and os.path.exists(out), f"exit {rc}: {err}"
    requests = file_requests(server)
    assert len(requests) == 2, [r.path for r in requests]
    ranges = [dict(r.headers).get("Range") for r in requests]
    assert ranges[0] is None and ranges[1] and ranges[1].startswith("bytes="), ranges


def test_d_the_deadline_cuts_the_run(rootlock, scratch, server):
    server.clear_faults()
    server.trickle(server.wheel_path, seconds=0.5, times=None)
    # No minimum rate: the trickle is never silent for a window, so only the deadline ends it.
    rc, err, took, out = lock(rootlock, scratch, server, "deadline", "--min-rate", "0",
                              "--deadline", "6")
    server.clear_faults()
    assert rc == 3 and not os.path.exists(out), f"exit {rc}: {err}"
    assert took < 6 + 5, f"the 6 s deadline took {took:.1f} s"
    assert "the run's deadline passed" in err and server.wheel_path.split("/")[-1] in err, err


def one_line(err):
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture
def tmpfs(scratch):
    """mount(options) -> a fresh tmpfs directory mounted with `options`; unmounted after."""
    mounted = []

    def mount(options):
        path = tempfile.mkdtemp(prefix="tmpfs-", dir=scratch)
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
        mounted.append(path)
        return path
    yield mount
    for path in mounted:
        subprocess.run(["umount", "-l", path])


def test_e_an_impossible_cache_directory_is_exit_3(rootlock, scratch, server):
    server.clear_faults()
    cache = "/proc/rootlock-no-such-cache"
    rc, err, _, out = lock(rootlock, scratch, server, "bad-cache", cache=cache)
    line = one_line(err)
    assert rc == 3 and not os.path.exists(out), f"exit {rc}: {err}"
    assert cache in line and "No such file or directory" in line, line


def test_e_a_read_only_output_directory_is_exit_3(rootlock, scratch, server, tmpfs):
    server.clear_faults()
    directory = tmpfs("ro,size=1m")
    out = os.path.join(directory, "pylock.toml")
    rc, err, _, _ = lock(rootlock, scratch, server, "read-only", out=out)
    line = one_line(err)
    assert rc == 3 and not os.path.exists(out), f"exit {rc}: {err}"
    assert directory in line and "Read-only file system" in line, line


def test_e_a_full_disk_is_exit_3_and_keeps_the_older_lock(rootlock, scratch, server, tmpfs):
    server.clear_faults()
    directory = tmpfs("size=8k")
    out = os.path.join(directory, "pylock.toml")
    older = b"# the older lock\n"
    with open(out, "wb") as f:
        f.write(older)
    # The rest of the filesystem taken: no room for another page.
    fd = os.open(os.path.join(directory, "filler"), os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass
    os.close(fd)
    rc, err, _, _ = lock(rootlock, scratch, server, "full", out=out)
    # (The older file is no lock rootlock can reuse, which it says in a warning first.)
    line = one_line("\n".join(l for l in err.splitlines() if "warning: ignoring" not in l))
    assert rc == 3, f"exit {rc}: {err}"
    assert directory in line and "No space left on device" in line, line
    with open(out, "rb") as f:
        assert f.read() == older
    assert sorted(os.listdir(directory)) == ["filler", "pylock.toml"], os.listdir(directory)


def test_f_a_dead_runs_temporaries_are_removed_a_live_ones_kept(rootlock, scratch, server):
    server.clear_faults()
    cache = os.path.join(scratch, "cache-leftovers")
    tmp = os.path.join(cache, "tmp")
    os.makedirs(tmp)
    dead = subprocess.Popen(["true"])
    dead.wait()
    live = subprocess.Popen(["sleep", "60"])
    try:
        names = {"dead": f"part-{dead.pid}-Ab12Cd", "live": f"part-{live.pid}-Ef34Gh"}
        for name in names.values():
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(b"half a wheel")
        rc, err, _, _ = lock(rootlock, scratch, server, "leftovers", cache=cache)
        left = set(os.listdir(tmp))
    finally:
        live.kill()
        live.wait()
    assert rc == 0, f"exit {rc}: {err}"
    assert names["dead"] not in left and names["live"] in left, left


def fill_to(directory, free_bytes):
    """A filler file in `directory` that leaves about `free_bytes` free (whole pages)."""
    stat = os.statvfs(directory)
    free = stat.f_bavail * stat.f_frsize
    with open(os.path.join(directory, "filler"), "wb") as f:
        f.write(b"\0" * max(0, free - free_bytes))


def test_g_a_disk_full_at_the_side_files_keeps_the_older_image_whole(rootlock, scratch, server,
                                                                     tmpfs):
    """The image and its side files are published together: a disk that fills while the side
    files are written (after the new image is complete under its temporary name) leaves the
    older image and its side files as they were, and no temporary."""
    server.clear_faults()
    rc, err, _, lock_path = lock(rootlock, scratch, server, "side-files")
    assert rc == 0, err
    cache = os.path.join(scratch, "cache-side-files")
    # A plain .tar: no frame cache, so the second build writes the image again.
    probe = os.path.join(scratch, "side-probe.tar")
    built = run([rootlock, "build", lock_path, "-o", probe, "--cache-dir", cache], timeout=600)
    assert built.returncode == 0, built.stderr
    image_size = os.path.getsize(probe)
    directory = tmpfs(f"size={image_size * 2 + (8 << 20)}")
    image = os.path.join(directory, "image.tar")
    built = run([rootlock, "build", lock_path, "-o", image, "--cache-dir", cache], timeout=600)
    assert built.returncode == 0, built.stderr
    sides = [image + suffix for suffix in (".sha256", ".cdx.json", ".check.json")]
    before = {path: (os.stat(path).st_ino, open(path, "rb").read()) for path in [image] + sides}
    # Room for the new image's temporary and the small .sha256, not for the SBOM after it.
    fill_to(directory, ((image_size + 4095) // 4096) * 4096 + 4096)
    again = run([rootlock, "build", lock_path, "-o", image, "--cache-dir", cache], timeout=600)
    line = one_line(again.stderr)
    assert again.returncode == 3, f"exit {again.returncode}: {again.stderr}"
    assert directory in line and "No space left on device" in line, line
    for path, (inode, content) in before.items():
        assert os.stat(path).st_ino == inode, f"{path} was replaced"
        with open(path, "rb") as f:
            assert f.read() == content, f"{path} changed"
    expected = sorted([os.path.basename(p) for p in [image] + sides] + ["filler"])
    assert sorted(os.listdir(directory)) == expected, os.listdir(directory)


# The wire faults on an index page, not only on a wheel (each lock is cold: a cache of its own).

PAGE = "/simple/app/"


def page_requests(server):
    return [r for r in server.requests if r.path == PAGE]


def test_h_a_page_that_trickles_once_is_retried(rootlock, scratch, server):
    server.clear_faults()
    server.clear_log()
    server.trickle(PAGE, seconds=0.5, times=1)
    rc, err, _, out = lock(rootlock, scratch, server, "page-trickle-once")
    server.clear_faults()
    assert rc == 0 and os.path.exists(out), f"exit {rc}: {err}"
    assert len(page_requests(server)) == 2, [r.path for r in server.requests]


def test_h_a_page_that_always_trickles_is_exit_3_within_the_bound(rootlock, scratch, server):
    server.clear_faults()
    server.trickle(PAGE, seconds=0.5, times=None)
    rc, err, took, out = lock(rootlock, scratch, server, "page-trickle")
    server.clear_faults()
    assert rc == 3 and not os.path.exists(out), f"exit {rc}: {err}"
    assert took < BOUND, f"took {took:.1f} s, beyond the bound {BOUND:.1f} s"
    line = one_line(err)
    assert PAGE in line and "below the minimum rate" in line, line


def test_h_a_page_that_fails_is_retried_then_exit_3(rootlock, scratch, server):
    server.clear_faults()
    server.clear_log()
    server.fail(PAGE, status=503, times=2)
    rc, err, _, out = lock(rootlock, scratch, server, "page-503-twice")
    assert rc == 0 and os.path.exists(out), f"exit {rc}: {err}"
    server.fail(PAGE, status=503, times=None)
    rc, err, _, out = lock(rootlock, scratch, server, "page-503")
    server.clear_faults()
    line = one_line(err)
    assert rc == 3 and PAGE in line and "503" in line, f"exit {rc}: {err}"


def test_h_a_page_cut_mid_body_is_retried(rootlock, scratch, server):
    server.clear_faults()
    server.clear_log()
    server.drop(PAGE, times=1)
    rc, err, _, out = lock(rootlock, scratch, server, "page-drop")
    server.clear_faults()
    assert rc == 0 and os.path.exists(out), f"exit {rc}: {err}"
    assert len(page_requests(server)) >= 2


# The wire faults on a tarball base fetched over HTTP.

def base_requests(server):
    return [r for r in server.requests if r.path == server.base_path]


def test_i_a_base_cut_or_trickling_once_is_fetched_again(rootlock, scratch, server):
    for fault in ("drop", "short", "trickle"):
        server.clear_faults()
        server.clear_log()
        if fault == "trickle":
            server.trickle(server.base_path, seconds=0.5, times=1)
        else:
            getattr(server, fault)(server.base_path, times=1)
        rc, err, _, out = lock(rootlock, scratch, server, f"base-{fault}", served_base=True)
        server.clear_faults()
        assert rc == 0 and os.path.exists(out), f"{fault}: exit {rc}: {err}"
        assert len(base_requests(server)) >= 2, f"{fault}: {len(base_requests(server))} requests"


def test_i_a_base_with_other_bytes_is_an_integrity_failure(rootlock, scratch, server):
    server.clear_faults()
    server.corrupt(server.base_path, times=None)
    rc, err, _, out = lock(rootlock, scratch, server, "base-corrupt", served_base=True)
    server.clear_faults()
    line = one_line(err)
    assert rc == 3 and not os.path.exists(out), f"exit {rc}: {err}"
    assert "base.tar.zst" in line and "sha256 mismatch" in line, line


def test_e_a_full_cache_disk_is_exit_3_naming_the_cache(rootlock, scratch, server, tmpfs):
    """The wheel (12 KB) cannot be written into a cache on a 4 KiB tmpfs: one line naming a
    path in the cache and the errno text, exit 3, no lock, and no temporary left in it."""
    server.clear_faults()
    cache = tmpfs("size=4k")
    rc, err, _, out = lock(rootlock, scratch, server, "full-cache", cache=cache)
    line = one_line(err)
    assert rc == 3 and not os.path.exists(out), f"exit {rc}: {err}"
    assert cache in line and "No space left on device" in line, line
    left = [os.path.join(d, f) for d, _, files in os.walk(cache) for f in files
            if "part-" in f or ".tmp-" in f]
    assert not left, left
