"""End-to-end self-test of the fixture package index, without rootlock: the real pip uses it.

Nothing here runs rootlock (--rootlock is not needed). Builds the package graph
(fixtures/package_graph.py), checks every wheel (RECORD hashes and sizes, METADATA), serves it
with fixtures/index_server.py on 127.0.0.1 and checks:
  a. pip (Debian's, offline: --index-url only) resolves ROOTS_BACKTRACK from the JSON index to
     exactly EXPECTED_PINS, the backtracking choices included, and fails on ROOTS_IMPOSSIBLE
     naming conflict-base;
  b. pip resolves torch==2.8.0 from the pytorch-style HTML index, reading PEP 658 .metadata;
  c. the HTTP contract: content negotiation, both page formats, Range (206, 416), HEAD,
     redirects, .metadata bytes, rebuilt-file modes, each fault, and the request log.

The graph is one module fixture; each pip resolution is a module fixture holding the server's
request log as it was right after pip ran, so any case runs alone. Each fault case gets a server
of its own, so that a fault one case leaves behind cannot reach another.
"""
import hashlib
import http.client
import json
import os
import re
import socket
import time

import pytest

from fixtures import index_server, package_graph, pip_referee, wheel_builder

PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_18_x86_64",
             "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_12_x86_64",
             "manylinux2010_x86_64"]
JSON_ACCEPT = index_server.JSON_V1


def pip_resolve(index_url, roots, scratch):
    """(exit code, {canonical name: version} or None, output) of a pip dry-run resolution for
    CPython 3.11 on manylinux x86_64; pip reaches nothing but index_url."""
    return pip_referee.resolve(index_url, roots, scratch, PLATFORMS)


def diff_pins(got, want):
    keys = sorted(set(got) | set(want))
    return [f"{k}: got {got.get(k)}, expected {want.get(k)}" for k in keys
            if got.get(k) != want.get(k)]


def request(srv, path, headers=None, method="GET", timeout=10):
    """(status, {header: value}, body) of one request on a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


class Resolution:
    """One pip run against a served index: its result and the server's log right after it."""

    def __init__(self, graph, style, roots, scratch):
        with index_server.IndexServer(graph, style=style) as srv:
            t = time.monotonic()
            self.rc, self.pins, self.out = pip_resolve(srv.simple_url, roots, scratch)
            self.seconds = time.monotonic() - t
            self.requests = list(srv.requests)
            self.url = srv.url


@pytest.fixture(scope="module")
def graph(scratch):
    t = time.monotonic()
    g = package_graph.build_graph(os.path.join(scratch, "wheels"))
    print(f"graph: {len(g.projects())} projects, {len(g.files)} wheels, "
          f"{g.total_bytes()} bytes, built in {time.monotonic() - t:.1f}s")
    return g


@pytest.fixture(scope="module")
def server(graph):
    """The pypi-style index, for the read-only HTTP contract cases."""
    with index_server.IndexServer(graph, style="pypi") as srv:
        yield srv


@pytest.fixture
def fresh_server(graph):
    """A pypi-style index of its own, for a case that sets faults or clears the log."""
    with index_server.IndexServer(graph, style="pypi") as srv:
        yield srv


# -- the wheels --------------------------------------------------------------------------------

def test_every_wheel_has_its_record_and_metadata(graph):
    bad = {}
    for f in graph.files + list(graph.rebuilt.values()):
        with open(f.path, "rb") as fh:
            data = fh.read()
        problems = wheel_builder.verify_record(f.path)
        if hashlib.sha256(data).hexdigest() != f.sha256 or len(data) != f.size:
            problems.append("sha256/size differ from the graph's")
        if wheel_builder.read_metadata(f.path) != f.metadata:
            problems.append("METADATA differs from the graph's")
        if problems:
            bad[f.filename] = problems
    print(f"wheels: {len(graph.files)} + {len(graph.rebuilt)} rebuilt, RECORD and METADATA "
          f"verified, {len(bad)} bad")
    assert not bad, f"wheels whose RECORD, METADATA, sha256 or size are wrong: {bad}"


def test_rebuilt_twin_has_another_hash(graph):
    twin = next(iter(graph.rebuilt.values()))
    assert twin.sha256 != graph.by_filename(twin.filename).sha256, \
        f"the rebuilt twin of {twin.filename} has the same hash as the original"


# -- a. pip resolves the backtracking roots from the JSON index ----------------------------------

@pytest.fixture(scope="module")
def backtrack(graph, scratch):
    r = Resolution(graph, "pypi", package_graph.ROOTS_BACKTRACK, scratch)
    print(f"(a) pip exit {r.rc} in {r.seconds:.1f}s, {len(r.requests)} requests")
    return r


def test_a_pip_resolves_backtrack_roots(backtrack):
    assert backtrack.rc == 0, \
        f"(a) pip failed on ROOTS_BACKTRACK (exit {backtrack.rc}):\n{backtrack.out[-3000:]}"


def test_a_pip_picks_expected_pins(backtrack):
    assert backtrack.rc == 0, f"(a) pip failed (exit {backtrack.rc}):\n{backtrack.out[-3000:]}"
    diffs = diff_pins(backtrack.pins, package_graph.EXPECTED_PINS)
    assert not diffs, "(a) pip's picks differ from EXPECTED_PINS:\n  " + "\n  ".join(diffs)


def test_a_pip_backtracking_picks(backtrack):
    assert backtrack.rc == 0, f"(a) pip failed (exit {backtrack.rc}):\n{backtrack.out[-3000:]}"
    bt = {k: backtrack.pins.get(k) for k in package_graph.EXPECTED_BACKTRACK_PINS}
    print(f"(a) pip resolved {len(backtrack.pins)} packages; backtracking picks {bt}")
    assert bt == package_graph.EXPECTED_BACKTRACK_PINS, \
        f"(a) backtracking picks {bt}, expected {package_graph.EXPECTED_BACKTRACK_PINS}"


def test_a_pip_asks_for_json(backtrack):
    accepts = {r.header("Accept") for r in backtrack.requests if r.path.startswith("/simple/")}
    assert accepts and all(a and JSON_ACCEPT in a for a in accepts), \
        f"(a) pip's index requests should ask for {JSON_ACCEPT}: {accepts}"


def downloaded(resolution):
    return {r.path.rsplit("/", 1)[-1] for r in resolution.requests
            if r.path.startswith("/files/")}


def test_a_pip_skips_yanked_release(backtrack):
    got = sorted(n for n in downloaded(backtrack) if n.startswith("yank_pkg-1.3.0"))
    assert not got, f"(a) pip fetched the yanked yank-pkg 1.3.0: {got}"


def test_a_pip_tries_newest_first(backtrack):
    tried = sorted(n for n in downloaded(backtrack) if re.match(r"(app_web|array_tools)-", n))
    print(f"(a) pip downloaded (newest first, then older): {tried}")
    assert "app_web-2.1.0-py3-none-any.whl" in tried and \
        "array_tools-3.0.0-py3-none-any.whl" in tried, \
        f"(a) pip should try the newest app-web and array-tools first: {tried}"


def test_a_pip_fails_on_impossible_roots_naming_conflict_base(graph, scratch):
    r = Resolution(graph, "pypi", package_graph.ROOTS_IMPOSSIBLE, scratch)
    line = [x for x in r.out.splitlines() if "conflict-right 1.0.0 depends" in x]
    print(f"(a) ROOTS_IMPOSSIBLE: exit {r.rc}; {line[0].strip() if line else r.out[-200:]}")
    assert r.rc != 0 and "ResolutionImpossible" in r.out and "conflict-base" in r.out, \
        f"(a) pip on ROOTS_IMPOSSIBLE: exit {r.rc}, expected ResolutionImpossible naming " \
        f"conflict-base:\n{r.out[-2000:]}"


# -- b. pip resolves torch from the pytorch-style HTML index -------------------------------------

@pytest.fixture(scope="module")
def torch_stack():
    stack = package_graph.expected_pins()
    return {k: v for k, v in stack.items() if k == "torch" or k == "triton" or
            k.startswith("nvidia-")}


@pytest.fixture(scope="module")
def pytorch(graph, scratch):
    r = Resolution(graph, "pytorch", ["torch==2.8.0"], scratch)
    print(f"(b) pytorch style: pip exit {r.rc}, {len(r.pins or {})} packages, "
          f"{len(r.requests)} requests")
    return r


def test_b_pip_resolves_torch_from_pytorch_style(pytorch, torch_stack):
    assert pytorch.rc == 0, \
        f"(b) pip failed on torch==2.8.0 (exit {pytorch.rc}):\n{pytorch.out[-3000:]}"
    diffs = diff_pins(pytorch.pins, torch_stack)
    assert not diffs, "(b) pip's picks differ:\n  " + "\n  ".join(diffs)


def test_b_pip_reads_pep658_metadata(pytorch, torch_stack):
    meta = [r.path for r in pytorch.requests if r.path.endswith(".metadata")]
    assert len(meta) >= len(torch_stack), \
        f"(b) pip fetched {len(meta)} .metadata files, expected at least {len(torch_stack)}"


def test_b_pip_requests_percent_encoded_file(pytorch):
    paths = [r.path for r in pytorch.requests]
    assert any("torch-2.8.0%2Bcu128-cp311" in p for p in paths), \
        f"(b) expected a percent-encoded torch file request in {paths}"


# -- c. content negotiation ----------------------------------------------------------------------

NEGOTIATION = [
    ("none", None, "text/html"),
    ("html", "text/html", "text/html"),
    ("json", JSON_ACCEPT, JSON_ACCEPT),
    ("any", "*/*", "text/html"),
    ("json-latest", "application/vnd.pypi.simple.latest+json", JSON_ACCEPT),
    ("json-preferred-by-q", f"{JSON_ACCEPT}, {index_server.HTML_V1}; q=0.1, text/html; q=0.01",
     JSON_ACCEPT),
    ("json-q0", f"{JSON_ACCEPT}; q=0, text/html", "text/html"),
    ("json-higher-q", f"text/html; q=0.5, {JSON_ACCEPT}; q=0.9", JSON_ACCEPT),
    ("application-wildcard", "application/*", JSON_ACCEPT),
    ("html-v1", index_server.HTML_V1, index_server.HTML_V1),
    ("unacceptable-406", "image/png", 406),
]


@pytest.mark.parametrize("accept,want", [(a, w) for _, a, w in NEGOTIATION],
                         ids=[i for i, _, _ in NEGOTIATION])
def test_c_negotiation(server, accept, want):
    status, headers, _ = request(server, "/simple/numpy/", {"Accept": accept} if accept else {})
    got = status if status != 200 else headers.get("content-type")
    assert got == want, f"(c) Accept {accept!r}: got {got}, expected {want}"


def test_c_pytorch_style_ignores_accept(server):
    status, headers, _ = request(server, "/pytorch/simple/numpy/", {"Accept": JSON_ACCEPT})
    assert status == 200 and headers.get("content-type") == "text/html", \
        f"(c) pytorch style should answer text/html to JSON: {status} " \
        f"{headers.get('content-type')}"


# -- c. the pages --------------------------------------------------------------------------------

def json_page(server, path):
    status, _, body = request(server, path, {"Accept": JSON_ACCEPT})
    assert status == 200, f"(c) GET {path} as JSON: {status}"
    return json.loads(body)


def test_c_json_project_list_is_the_graph(server, graph):
    names = [p["name"] for p in json_page(server, "/simple/")["projects"]]
    assert names == graph.projects(), \
        f"(c) JSON project list differs from the graph: " \
        f"{sorted(set(names) ^ set(graph.projects()))}"


def test_c_json_yanked_entry(server):
    files = {f["filename"]: f for f in json_page(server, "/simple/yank-pkg/")["files"]}
    yanked = files.get("yank_pkg-1.3.0-py3-none-any.whl", {})
    assert yanked.get("yanked") == "broken build: use 1.2.0", f"(c) yanked entry {yanked}"


def test_c_json_file_entry_fields(server, graph):
    doc = json_page(server, "/simple/yank-pkg/")
    files = {f["filename"]: f for f in doc["files"]}
    f = graph.by_filename("yank_pkg-1.2.0-py3-none-any.whl")
    entry = files.get(f.filename, {})
    meta = {"sha256": f.metadata_sha256}
    assert entry.get("hashes") == {"sha256": f.sha256} and entry.get("size") == f.size and \
        entry.get("core-metadata") == meta and \
        entry.get("data-dist-info-metadata") == meta and entry.get("yanked") is False and \
        "dist-info-metadata" not in entry and doc["versions"] == ["1.2.0", "1.3.0"] and \
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", entry.get("upload-time", "")), \
        f"(c) JSON file entry {entry}, versions {doc.get('versions')}"


def test_c_json_nohash_pkg_lists_no_hash(server):
    hashes = json_page(server, "/simple/nohash-pkg/")["files"][0]["hashes"]
    assert hashes == {}, f"(c) nohash-pkg should list no hash: {hashes}"


def test_c_json_requires_python(server):
    rps = sorted(x.get("requires-python")
                 for x in json_page(server, "/simple/modern-lib/")["files"])
    assert rps == [">=3.12", ">=3.9"], f"(c) modern-lib requires-python {rps}"


def test_c_pytorch_torch_page(server, graph):
    _, _, page = request(server, "/pytorch/simple/torch/")
    page = page.decode()
    torch = graph.files_for("torch")[0]
    anchor = (f'href="../../files/torch-2.8.0%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl'
              f'#sha256={torch.sha256}"')
    assert anchor in page and 'data-requires-python="&gt;=3.9.0"' in page and \
        f'data-dist-info-metadata="sha256={torch.metadata_sha256}"' in page and \
        f'data-core-metadata="sha256={torch.metadata_sha256}"' in page and \
        ">torch-2.8.0+cu128-cp311" in page, \
        f"(c) pytorch torch page should hold {anchor}, the escaped requires-python and both " \
        f"metadata attributes:\n{page}"


def test_c_pytorch_triton_link_has_no_hash(server):
    _, _, page = request(server, "/pytorch/simple/triton/")
    page = page.decode()
    assert '.whl" data-' in page and "#sha256" not in page, \
        f"(c) the triton link should have no hash:\n{page}"


def test_c_pypi_html_page(server):
    _, _, page = request(server, "/simple/yank-pkg/", {"Accept": "text/html"})
    assert b'data-yanked="broken build: use 1.2.0"' in page and \
        f"{server.url}/files/".encode() in page, \
        f"(c) pypi HTML page should hold data-yanked and absolute file URLs:\n{page.decode()}"


def test_c_non_normalized_name_redirects(server):
    status, headers, _ = request(server, "/simple/Syn_Lib.10/")
    assert status == 301 and headers.get("location") == "/simple/syn-lib-10/", \
        f"(c) non-normalized name: {status} {headers.get('location')}, expected 301 to " \
        f"/simple/syn-lib-10/"


def test_c_unknown_project_404(server):
    status, _, _ = request(server, "/simple/no-such-project/")
    assert status == 404, f"(c) unknown project answered {status}, expected 404"


# -- c. the files --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch_file(server, graph):
    """(URL path, bytes, the graph's file) of the first torch wheel."""
    torch = graph.files_for("torch")[0]
    with open(torch.path, "rb") as fh:
        return server.file_path(torch.filename), fh.read(), torch


def test_c_range(server, torch_file):
    path, data, _ = torch_file
    status, headers, body = request(server, path, {"Range": "bytes=100-1099"})
    assert status == 206 and body == data[100:1100] and \
        headers.get("content-range") == f"bytes 100-1099/{len(data)}", \
        f"(c) Range 100-1099: {status} {headers.get('content-range')} {len(body)} bytes"


def test_c_suffix_range(server, torch_file):
    path, data, _ = torch_file
    status, _, body = request(server, path, {"Range": "bytes=-10"})
    assert status == 206 and body == data[-10:], f"(c) suffix Range: {status}, {body!r}"


def test_c_range_past_the_end_416(server, torch_file):
    path, data, _ = torch_file
    status, headers, _ = request(server, path, {"Range": f"bytes={len(data)}-"})
    assert status == 416 and headers.get("content-range") == f"bytes */{len(data)}", \
        f"(c) Range past the end: {status} {headers.get('content-range')}, expected 416"


def test_c_head(server, torch_file):
    path, data, _ = torch_file
    status, headers, body = request(server, path, method="HEAD")
    assert status == 200 and body == b"" and headers.get("content-length") == str(len(data)), \
        f"(c) HEAD: {status} {headers.get('content-length')}, expected 200 and {len(data)}"


def test_c_metadata_is_the_wheels(server, torch_file):
    path, _, torch = torch_file
    status, _, body = request(server, path + ".metadata")
    print(f"(c) .metadata: {len(body)} bytes")
    assert status == 200 and body == wheel_builder.read_metadata(torch.path) and \
        hashlib.sha256(body).hexdigest() == torch.metadata_sha256, \
        f"(c) torch .metadata ({status}) should be the wheel's METADATA"


# -- c. the faults -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def numpy_file(graph):
    """(the graph's file, its bytes) of numpy 2.2.6."""
    f = graph.by_filename("numpy-2.2.6-py3-none-any.whl")
    with open(f.path, "rb") as fh:
        return f, fh.read()


def test_c_fault_fail_twice_then_200(fresh_server, numpy_file):
    path = fresh_server.file_path(numpy_file[0].filename)
    fresh_server.fail(path, status=500, times=2)
    statuses = [request(fresh_server, path)[0] for _ in range(3)]
    assert statuses == [500, 500, 200], f"(c) fail x2: {statuses}, expected [500, 500, 200]"


def test_c_fault_drop_then_range_resume(fresh_server, numpy_file):
    f, data = numpy_file
    path = fresh_server.file_path(f.filename)
    fresh_server.drop(path)
    conn = http.client.HTTPConnection("127.0.0.1", fresh_server.port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        with pytest.raises(http.client.IncompleteRead) as dropped:
            resp.read()
    finally:
        conn.close()
    part = dropped.value.partial
    status, _, rest = request(fresh_server, path, {"Range": f"bytes={len(part)}-"})
    assert 0 < len(part) < len(data) and status == 206 and part + rest == data, \
        f"(c) drop then Range: {len(part)} + {len(rest)} bytes of {len(data)}, status {status}"


def test_c_fault_corrupt_once(fresh_server, numpy_file):
    f, data = numpy_file
    path = fresh_server.file_path(f.filename)
    fresh_server.corrupt(path, times=1)
    _, _, bad = request(fresh_server, path)
    _, _, good = request(fresh_server, path)
    assert len(bad) == len(data) and hashlib.sha256(bad).hexdigest() != f.sha256 and \
        good == data, "(c) corrupt: expected the same size, another hash, once"


def test_c_fault_stall_past_client_timeout(fresh_server, numpy_file):
    path = fresh_server.file_path(numpy_file[0].filename)
    fresh_server.stall(path, seconds=5)
    t = time.monotonic()
    with pytest.raises((socket.timeout, TimeoutError)):
        request(fresh_server, path, timeout=0.5)
    took = time.monotonic() - t
    assert took < 3, f"(c) stall: the 0.5 s client timeout did not fire ({took:.1f}s)"


def test_c_clear_faults_serves_intact(fresh_server, numpy_file):
    _, data = numpy_file
    path = fresh_server.file_path(numpy_file[0].filename)
    fresh_server.stall(path, seconds=5)
    fresh_server.clear_faults()
    assert request(fresh_server, path)[2] == data, "(c) clear_faults: file not served intact"


def test_c_request_log_and_counter(fresh_server):
    request(fresh_server, "/simple/")
    fresh_server.clear_log()
    assert fresh_server.request_count == 0 and fresh_server.requests == [], \
        f"(c) clear_log left entries: {fresh_server.requests}"
    request(fresh_server, "/simple/", {"Accept": "text/html", "X-Probe": "1"})
    log = fresh_server.requests
    assert len(log) == 1 and log[0].method == "GET" and log[0].path == "/simple/" and \
        log[0].header("x-probe") == "1", f"(c) request log {log}, expected one GET /simple/"


# -- c. the rebuilt file -------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["mismatch", "swap", None], ids=["mismatch", "swap", "none"])
def test_c_rebuilt_file(graph, mode):
    # mismatch lists the rebuilt twin and serves the original; swap lists and serves the twin.
    twin = next(iter(graph.rebuilt.values()))
    orig = graph.by_filename(twin.filename)
    listed, served = {"mismatch": (twin, orig), "swap": (twin, twin), None: (orig, orig)}[mode]
    with index_server.IndexServer(graph, rebuilt=mode) as srv:
        _, _, body = request(srv, "/simple/rebuilt-pkg/", {"Accept": JSON_ACCEPT})
        entry = json.loads(body)["files"][0]
        _, _, data = request(srv, srv.file_path(twin.filename))
    assert entry["hashes"]["sha256"] == listed.sha256 and \
        hashlib.sha256(data).hexdigest() == served.sha256, \
        f"(c) rebuilt={mode}: listed {entry['hashes']} (expected {listed.sha256}), served " \
        f"{hashlib.sha256(data).hexdigest()} (expected {served.sha256})"
