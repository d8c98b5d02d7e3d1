"""End-to-end: bounded time on the wire (issue 32), with faults injected by the index fixture on
127.0.0.1 into the one wheel a recipe needs, over the real Debian base:
  a. a server that sends one byte every half second (never silent, never done) fails the
     transfer once the --timeout window passes below --min-rate; every retry too; then exit 3
     with one line naming the URL and the rate, within the bound the options give;
  b. the same fault on the first request only: retried, and the lock is written;
  c. a response that looks complete but holds half the file (its Content-Length lies): resumed
     with a Range request as a cut connection is, not reported as a digest mismatch;
  d. --deadline: a trickle that the rate check would wait out is cut when the run's deadline
     passes: exit 3 within a second or two of it, naming the URL.
"""
import os
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
    graph = package_graph.Graph(root=wheels, stacks=(), files=files, rebuilt={})
    with index_server.IndexServer(graph, style="pypi") as srv:
        srv.wheel_path = srv.file_path(built.filename)
        yield srv


def lock(rootlock, scratch, server, name, *extra):
    """(exit code, stderr, seconds, lock path) of a cold `rootlock lock` of the one-wheel recipe."""
    base_path, base_sha = base_tarball()
    recipe = os.path.join(scratch, f"{name}.toml")
    with open(recipe, "w") as f:
        f.write(f'[image]\nname = "wire"\n\n[base]\ntarball = "{base_path}"\n'
                f'sha256 = "{base_sha}"\n\n[python]\nversion = "3.11"\n\n'
                f'[[index]]\nname = "fixture"\nurl = "{server.simple_url}"\n\n'
                f'[packages]\nrequires = ["app"]\n')
    out = os.path.join(scratch, f"pylock.{name}.toml")
    started = time.monotonic()
    proc = run([rootlock, "lock", recipe, "-o", out, "--cache-dir",
                os.path.join(scratch, f"cache-{name}"), "--timeout", str(WINDOW), *extra],
               timeout=300)
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
