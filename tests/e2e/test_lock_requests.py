"""End-to-end: what `rootlock lock` asks the index, from the fixture server's request log.

Usage: test_lock_requests.py ROOTLOCK

A small graph of real wheels on two fixture indexes on 127.0.0.1 (fixtures/index_server.py with
validators: ETag, Last-Modified, 304), over the real Debian base (CPython 3.11, linux x86_64):
  app 1.0.0 requires dep, extra-lib, pywin32 (sys_platform == "win32"), tomli
  (python_version < "3.11"), pytest (extra "test") and fast-codec (extra "fast"); the recipe
  asks for app[fast]. dep's metadata is advertised without a hash (PEP 714 `true`). Index A
  answers 404 for extra-lib, which index B serves. pywin32, tomli and pytest exist on both.
Then:
  a. the cold lock pins app, dep, extra-lib (from B) and fast-codec, and neither index saw a
     single request naming pywin32, tomli or pytest (pages, files or metadata); B saw only
     extra-lib;
  b. a relock of the unchanged recipe writes the same bytes and makes only conditional requests
     (If-None-Match / If-Modified-Since) answered 304, except A's 404 for extra-lib: a 404
     without validators is asked again (RFC 9110 13.2.1: an origin ignores the condition on a
     missing resource, so a conditional GET could not help); no metadata file is downloaded;
  c. the same with an index that gives its 404 validators and answers 304 to them (as a cache
     in front of it may): then every relock request is a 304;
  d. --offline relock: the same bytes and no request at all;
  e. a requested extra whose project no index has: exit 2 and one line naming it and the
     indexes asked.
Prints the request counts of the lock and the relock.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

from fixtures import index_server, package_graph, wheel_builder
from fixtures.debian_root import base_tarball
from fixtures.failures import Failures

INACTIVE = ("pywin32", "tomli", "pytest")
UNHASHED = ("dep",)


def build_graph(out):
    """The graph of the docstring as real wheels (a Graph, as package_graph builds it)."""
    pure = package_graph.pure
    specs = [
        pure("app", "1.0.0", ("dep>=1.0", "extra-lib>=1.0",
                              'pywin32>=300; sys_platform == "win32"',
                              'tomli>=2.0; python_version < "3.11"',
                              'pytest>=8.0; extra == "test"',
                              'fast-codec>=1.0; extra == "fast"',
                              'missing-lib>=1.0; extra == "broken"'),
             extras=("test", "fast", "broken")),
        pure("dep", "1.0.0"), pure("dep", "1.1.0"),
        pure("extra-lib", "1.0.0"),
        pure("fast-codec", "1.0.0"),
        pure("pywin32", "306.0.0"), pure("tomli", "2.0.1"), pure("pytest", "8.3.0"),
    ]
    files = []
    for rank, spec in enumerate(specs):
        built = wheel_builder.build_wheel(spec, out)
        files.append(package_graph.IndexFile(
            project=spec.name, name=spec.name, version=spec.version, filename=built.filename,
            path=built.path, sha256=built.sha256, size=built.size, metadata=built.metadata,
            requires_python=spec.requires_python, yanked=False, hash_listed=True,
            upload_time=package_graph._upload_time(rank)))
    return package_graph.Graph(root=out, stacks=(), files=files, rebuilt={})


def write_recipe(path, base, a_url, b_url, requires):
    base_path, base_sha = base
    with open(path, "w") as f:
        f.write(f'[image]\nname = "requests"\n\n'
                f'[base]\ntarball = "{base_path}"\nsha256 = "{base_sha}"\n\n'
                f'[python]\nversion = "3.11"\n\n'
                f'[[index]]\nname = "a"\nurl = "{a_url}"\n\n'
                f'[[index]]\nname = "b"\nurl = "{b_url}"\n\n'
                f'[packages]\nrequires = {json.dumps(requires)}\n')
    return path


def lock(rootlock, recipe, out, cache, *extra):
    argv = [rootlock, "lock", recipe, "-o", out, "--cache-dir", cache, "--json", *extra]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = None
    return proc.returncode, report, proc.stderr


def read(path):
    with open(path, "rb") as f:
        return f.read()


def pins_of(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return {p["name"]: (p["version"], p.get("index")) for p in data["packages"]}


def describe(request):
    cond = "conditional" if request.conditional else "plain"
    return f"{request.method} {request.path} ({cond}) -> {request.status}"


def named_inactive(requests):
    return [describe(r) for r in requests
            if any(f"/{n}" in r.path.lower() for n in INACTIVE)]


def scenario(fail, rootlock, graph, base, work, absent_validators):
    label = "(c)" if absent_validators else "(a,b)"
    with index_server.IndexServer(graph, validators=True, absent_validators=absent_validators,
                                  unhashed_metadata=UNHASHED, hidden=("extra-lib",)) as a, \
            index_server.IndexServer(graph, validators=True) as b:
        tag = "c" if absent_validators else "ab"
        recipe = write_recipe(os.path.join(work, f"{tag}.toml"), base, a.simple_url,
                              b.simple_url, ["app[fast]"])
        out = os.path.join(work, f"pylock.{tag}.toml")
        cache = os.path.join(work, f"cache-{tag}")
        rc, report, err = lock(rootlock, recipe, out, cache)
        if not fail.expect(rc == 0, f"{label} lock failed (exit {rc}): {err[-3000:]}"):
            return None
        pins = pins_of(out)
        want = {"app": ("1.0.0", a.simple_url), "dep": ("1.1.0", a.simple_url),
                "extra-lib": ("1.0.0", b.simple_url), "fast-codec": ("1.0.0", a.simple_url)}
        fail.expect(pins == want, f"{label} pins {pins}, want {want}")
        cold = {"a": a.requests, "b": b.requests}
        for name, requests in cold.items():
            asked = named_inactive(requests)
            fail.expect(not asked, f"{label} index {name} was asked for inactive or unrequested "
                                   f"names: {asked}")
        b_pages = sorted({r.path for r in cold["b"] if r.path.startswith("/simple/")})
        fail.expect(b_pages == ["/simple/extra-lib/"], f"{label} index b was asked {b_pages}")
        unhashed = [r for r in cold["a"] if r.path.endswith(".metadata") and "/dep-" in r.path]
        fail.expect(len(unhashed) == 1 and unhashed[0].status == 200,
                    f"{label} dep's unhashed metadata: {[describe(r) for r in unhashed]}")
        first = read(out)

        a.clear_log()
        b.clear_log()
        rc, report, err = lock(rootlock, recipe, out, cache)
        fail.expect(rc == 0 and read(out) == first, f"{label} relock changed the lock: {err}")
        relock = {"a": a.requests, "b": b.requests}
        unexpected = []
        for name, requests in relock.items():
            for r in requests:
                refetched_404 = (not absent_validators and name == "a" and
                                 r.path == "/simple/extra-lib/" and not r.conditional and
                                 r.status == 404)
                if not refetched_404 and not (r.conditional and r.status == 304):
                    unexpected.append(f"{name}: {describe(r)}")
        fail.expect(not unexpected, f"{label} relock made requests that are not revalidations: "
                                    f"{unexpected}")
        metadata = [r for rs in relock.values() for r in rs if r.path.endswith(".metadata")]
        fail.expect(len(metadata) == 1 and metadata[0].status == 304,
                    f"{label} relock metadata requests: {[describe(r) for r in metadata]}")
        fail.expect(not named_inactive(relock["a"] + relock["b"]),
                    f"{label} relock asked for inactive names")
        counts = (sum(len(v) for v in cold.values()), sum(len(v) for v in relock.values()))
        print(f"{label} requests: lock {counts[0]} (a {len(cold['a'])}, b {len(cold['b'])}), "
              f"relock {counts[1]} ({sum(r.status == 304 for rs in relock.values() for r in rs)}"
              f" answered 304)")
        if report:
            print(f"{label} relock stats: {report['stats']}")

        if not absent_validators:
            # (d) offline: the cache answers everything, the 404 included.
            a.clear_log()
            b.clear_log()
            rc, _, err = lock(rootlock, recipe, out, cache, "--offline")
            fail.expect(rc == 0 and read(out) == first, f"(d) --offline relock: exit {rc} {err}")
            fail.expect(not a.requests and not b.requests,
                        f"(d) --offline made {len(a.requests) + len(b.requests)} requests")

            # (e) an extra that is asked for and whose project no index has.
            broken = write_recipe(os.path.join(work, "broken.toml"), base, a.simple_url,
                                  b.simple_url, ["app[broken]"])
            out_broken = os.path.join(work, "pylock.broken.toml")
            rc, _, err = lock(rootlock, broken, out_broken, cache)
            lines = [line for line in err.splitlines() if line.strip()]
            fail.expect(rc == 2 and not os.path.exists(out_broken) and
                        any("missing-lib" in line and "a, b" in line for line in lines),
                        f"(e) a requested extra no index has: exit {rc}: {err}")
            print(f"(e) {lines[-1] if lines else ''}")
        return counts


def main(argv):
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    work = tempfile.mkdtemp(prefix="rootlock-requests-")
    try:
        graph = build_graph(os.path.join(work, "wheels"))
        base = base_tarball()
        scenario(fail, rootlock, graph, base, work, absent_validators=False)
        scenario(fail, rootlock, graph, base, work, absent_validators=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fail.items:
        print(f"{len(fail.items)} expectation(s) failed")
        return 1
    print("all expectations met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
