"""End-to-end: what `rootlock lock` asks the index, from the fixture server's request log.

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
The (a) and (b) cases run twice, once per kind of index A (ids `404-plain`, the (a, b) pair,
and `404-validators`, case c); each kind is a module fixture with its own servers, cache and
cold lock. A relock works on a copy of the cold lock and (e) has a cache of its own, so any
case runs alone. Prints the request counts of the lock and the relock.
"""
import json
import os
import shutil
import tomllib
from types import SimpleNamespace

import pytest

from fixtures import index_server, package_graph, wheel_builder
from fixtures.cli import json_or_none, run
from fixtures.debian_root import base_tarball

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
    """(exit code, the --json report or None, stderr) of `rootlock lock`."""
    argv = [rootlock, "lock", recipe, "-o", out, "--cache-dir", cache, "--json", *extra]
    proc = run(argv, timeout=600)
    return proc.returncode, json_or_none(proc.stdout), proc.stderr


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


@pytest.fixture(scope="module")
def graph(scratch):
    return build_graph(os.path.join(scratch, "wheels"))


@pytest.fixture(scope="module")
def base():
    return base_tarball()


def locked_scenario(rootlock, scratch, graph, base, absent_validators):
    """Indexes A (with or without validators on its 404) and B, and the cold lock of app[fast]
    with a cache of its own; yields what the cases need, the cold requests as logged."""
    tag = "c" if absent_validators else "ab"
    with index_server.IndexServer(graph, validators=True, absent_validators=absent_validators,
                                  unhashed_metadata=UNHASHED, hidden=("extra-lib",)) as a, \
            index_server.IndexServer(graph, validators=True) as b:
        recipe = write_recipe(os.path.join(scratch, f"{tag}.toml"), base, a.simple_url,
                              b.simple_url, ["app[fast]"])
        out = os.path.join(scratch, f"pylock.{tag}.toml")
        cache = os.path.join(scratch, f"cache-{tag}")
        rc, _, err = lock(rootlock, recipe, out, cache)
        cold = {"a": a.requests, "b": b.requests}
        assert rc == 0, f"cold lock of app[fast]: expected exit 0, got {rc}: {err[-3000:]}"
        yield SimpleNamespace(tag=tag, absent_validators=absent_validators, a=a, b=b,
                              recipe=recipe, out=out, cache=cache, cold=cold, bytes=read(out))


@pytest.fixture(scope="module")
def plain_404(rootlock, scratch, graph, base):
    """Index A answers its 404 without validators (cases a, b, d, e)."""
    yield from locked_scenario(rootlock, scratch, graph, base, absent_validators=False)


@pytest.fixture(scope="module")
def validated_404(rootlock, scratch, graph, base):
    """Index A gives its 404 validators and answers 304 to them (case c)."""
    yield from locked_scenario(rootlock, scratch, graph, base, absent_validators=True)


@pytest.fixture(scope="module", params=["plain_404", "validated_404"],
                ids=["404-plain", "404-validators"])
def scenario(request):
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="module")
def relock(rootlock, scratch, scenario):
    """A relock of the unchanged recipe on a copy of the cold lock, with the same cache:
    (exit code, stderr, the lock's bytes, {"a": requests, "b": requests})."""
    s = scenario
    out = os.path.join(scratch, f"pylock.{s.tag}-relock.toml")
    shutil.copyfile(s.out, out)
    s.a.clear_log()
    s.b.clear_log()
    rc, report, err = lock(rootlock, s.recipe, out, s.cache)
    requests = {"a": s.a.requests, "b": s.b.requests}
    counts = (sum(len(v) for v in s.cold.values()), sum(len(v) for v in requests.values()))
    print(f"({s.tag}) requests: lock {counts[0]} (a {len(s.cold['a'])}, b {len(s.cold['b'])}), "
          f"relock {counts[1]} ({sum(r.status == 304 for rs in requests.values() for r in rs)}"
          f" answered 304)")
    if report:
        print(f"({s.tag}) relock stats: {report['stats']}")
    return rc, err, read(out), requests


# ---------------------------------------------------------------------------------------------
# (a), and (c) for the other index A: the cold lock.

def test_cold_pins(scenario):
    pins = pins_of(scenario.out)
    a, b = scenario.a.simple_url, scenario.b.simple_url
    want = {"app": ("1.0.0", a), "dep": ("1.1.0", a), "extra-lib": ("1.0.0", b),
            "fast-codec": ("1.0.0", a)}
    assert pins == want, f"expected pins {want}, got {pins}"


@pytest.mark.parametrize("index", ["a", "b"])
def test_cold_no_request_names_an_inactive_dependency(scenario, index):
    asked = named_inactive(scenario.cold[index])
    assert not asked, f"expected no request for {', '.join(INACTIVE)} (inactive or extras " \
                      f"not asked for); index {index} was asked: {asked}"


def test_cold_index_b_asked_only_for_extra_lib(scenario):
    pages = sorted({r.path for r in scenario.cold["b"] if r.path.startswith("/simple/")})
    assert pages == ["/simple/extra-lib/"], \
        f"expected index b asked only for /simple/extra-lib/, got {pages}"


def test_cold_unhashed_metadata_fetched_once(scenario):
    unhashed = [r for r in scenario.cold["a"] if r.path.endswith(".metadata") and "/dep-" in r.path]
    assert len(unhashed) == 1 and unhashed[0].status == 200, \
        f"expected dep's unhashed metadata fetched once (200): " \
        f"{[describe(r) for r in unhashed]}"


# ---------------------------------------------------------------------------------------------
# (b), and (c) for the other index A: the relock.

def test_relock_same_bytes(scenario, relock):
    rc, err, written, _ = relock
    assert rc == 0 and written == scenario.bytes, \
        f"expected the relock to exit 0 with the same bytes: exit {rc}: {err}"


def test_relock_only_revalidations(scenario, relock):
    _, _, _, requests = relock
    unexpected = []
    for name, logged in requests.items():
        for r in logged:
            refetched_404 = (not scenario.absent_validators and name == "a" and
                             r.path == "/simple/extra-lib/" and not r.conditional and
                             r.status == 404)
            if not refetched_404 and not (r.conditional and r.status == 304):
                unexpected.append(f"{name}: {describe(r)}")
    assert not unexpected, \
        f"expected only conditional requests answered 304" \
        f"{'' if scenario.absent_validators else ' (and the plain 404 for extra-lib on a)'}; " \
        f"got {unexpected}"


def test_relock_metadata_one_304(relock):
    _, _, _, requests = relock
    metadata = [r for logged in requests.values() for r in logged if r.path.endswith(".metadata")]
    assert len(metadata) == 1 and metadata[0].status == 304, \
        f"expected one metadata request, answered 304: {[describe(r) for r in metadata]}"


def test_relock_no_request_names_an_inactive_dependency(relock):
    _, _, _, requests = relock
    asked = named_inactive(requests["a"] + requests["b"])
    assert not asked, f"expected no relock request for {', '.join(INACTIVE)}: {asked}"


# ---------------------------------------------------------------------------------------------
# (d) offline; (e) an extra no index has.

def test_d_offline_relock_same_bytes_no_request(rootlock, scratch, plain_404):
    # The cache answers everything, the 404 included.
    s = plain_404
    out = os.path.join(scratch, "pylock.ab-offline.toml")
    shutil.copyfile(s.out, out)
    s.a.clear_log()
    s.b.clear_log()
    rc, _, err = lock(rootlock, s.recipe, out, s.cache, "--offline")
    assert rc == 0 and read(out) == s.bytes, \
        f"expected an --offline relock to exit 0 with the same bytes: exit {rc} {err}"
    assert not s.a.requests and not s.b.requests, \
        f"expected no request from --offline, got {len(s.a.requests) + len(s.b.requests)}"


def test_e_requested_extra_no_index_has(rootlock, scratch, base, plain_404):
    s = plain_404
    broken = write_recipe(os.path.join(scratch, "broken.toml"), base, s.a.simple_url,
                          s.b.simple_url, ["app[broken]"])
    out = os.path.join(scratch, "pylock.broken.toml")
    rc, _, err = lock(rootlock, broken, out, os.path.join(scratch, "cache-broken"))
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and not os.path.exists(out) and \
        any("missing-lib" in line and "a, b" in line for line in lines), \
        f"expected exit 2, no lock, and a line naming missing-lib and indexes 'a, b': " \
        f"exit {rc}: {err}"
    print(f"(e) {lines[-1] if lines else ''}")
