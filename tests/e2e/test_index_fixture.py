"""End-to-end self-test of the fixture package index, without rootlock: the real pip uses it.

Usage: test_index_fixture.py ROOTLOCK   (the argument is ignored: nothing here runs rootlock)

Builds the package graph (fixtures/package_graph.py), checks every wheel (RECORD hashes and
sizes, METADATA), serves it with fixtures/index_server.py on 127.0.0.1 and checks:
  a. pip (Debian's, offline: --index-url only) resolves ROOTS_BACKTRACK from the JSON index to
     exactly EXPECTED_PINS, the backtracking choices included, and fails on ROOTS_IMPOSSIBLE
     naming conflict-base;
  b. pip resolves torch==2.8.0 from the pytorch-style HTML index, reading PEP 658 .metadata;
  c. the HTTP contract: content negotiation, both page formats, Range (206, 416), HEAD,
     redirects, .metadata bytes, rebuilt-file modes, each fault, and the request log.
"""
import hashlib
import http.client
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time

from fixtures import index_server, package_graph, pip_referee, wheel_builder
from fixtures.failures import Failures

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


# ---------------------------------------------------------------------------------------------

def check_wheels(fail, graph):
    bad = 0
    for f in graph.files + list(graph.rebuilt.values()):
        with open(f.path, "rb") as fh:
            data = fh.read()
        problems = wheel_builder.verify_record(f.path)
        if hashlib.sha256(data).hexdigest() != f.sha256 or len(data) != f.size:
            problems.append("sha256/size differ from the graph's")
        if wheel_builder.read_metadata(f.path) != f.metadata:
            problems.append("METADATA differs from the graph's")
        bad += bool(problems)
        fail.expect(not problems, f"{f.filename}: {problems}")
    twin = next(iter(graph.rebuilt.values()))
    fail.expect(twin.sha256 != graph.by_filename(twin.filename).sha256,
                "the rebuilt twin has the same hash as the original")
    print(f"wheels: {len(graph.files)} + {len(graph.rebuilt)} rebuilt, RECORD and METADATA "
          f"verified, {bad} bad")


def step_a(fail, graph, scratch):
    with index_server.IndexServer(graph, style="pypi") as srv:
        t = time.monotonic()
        rc, pins, out = pip_resolve(srv.simple_url, package_graph.ROOTS_BACKTRACK, scratch)
        took = time.monotonic() - t
        if fail.expect(rc == 0, f"(a) pip failed on ROOTS_BACKTRACK (exit {rc}):\n{out[-3000:]}"):
            diffs = diff_pins(pins, package_graph.EXPECTED_PINS)
            fail.expect(not diffs, "(a) pip's picks differ from EXPECTED_PINS:\n  " +
                        "\n  ".join(diffs))
            bt = {k: pins.get(k) for k in package_graph.EXPECTED_BACKTRACK_PINS}
            fail.expect(bt == package_graph.EXPECTED_BACKTRACK_PINS,
                        f"(a) backtracking picks {bt}")
            print(f"(a) pip resolved {len(pins)} packages in {took:.1f}s, "
                  f"{srv.request_count} requests; backtracking picks {bt}")
        accepts = {r.header("Accept") for r in srv.requests if r.path.startswith("/simple/")}
        fail.expect(all(a and JSON_ACCEPT in a for a in accepts),
                    f"(a) pip's index requests did not ask for JSON: {accepts}")
        downloaded = {r.path.rsplit("/", 1)[-1] for r in srv.requests
                      if r.path.startswith("/files/")}
        fail.expect(not any(n.startswith("yank_pkg-1.3.0") for n in downloaded),
                    "(a) pip fetched the yanked yank-pkg 1.3.0")
        tried = sorted(n for n in downloaded if re.match(r"(app_web|array_tools)-", n))
        fail.expect("app_web-2.1.0-py3-none-any.whl" in tried and
                    "array_tools-3.0.0-py3-none-any.whl" in tried,
                    f"(a) pip did not try the newest app-web and array-tools first: {tried}")
        print(f"(a) pip downloaded (newest first, then older): {tried}")
        srv.clear_log()
        rc, _, out = pip_resolve(srv.simple_url, package_graph.ROOTS_IMPOSSIBLE, scratch)
        fail.expect(rc != 0 and "ResolutionImpossible" in out and "conflict-base" in out,
                    f"(a) pip on ROOTS_IMPOSSIBLE: exit {rc}, expected ResolutionImpossible "
                    f"naming conflict-base:\n{out[-2000:]}")
        line = [x for x in out.splitlines() if "conflict-right 1.0.0 depends" in x]
        print(f"(a) ROOTS_IMPOSSIBLE: exit {rc}; {line[0].strip() if line else out[-200:]}")


def step_b(fail, graph, scratch):
    stack = package_graph.expected_pins()
    want = {k: v for k, v in stack.items() if k == "torch" or k == "triton" or
            k.startswith("nvidia-")}
    with index_server.IndexServer(graph, style="pytorch") as srv:
        rc, pins, out = pip_resolve(srv.simple_url, ["torch==2.8.0"], scratch)
        if fail.expect(rc == 0, f"(b) pip failed on torch==2.8.0 (exit {rc}):\n{out[-3000:]}"):
            diffs = diff_pins(pins, want)
            fail.expect(not diffs, "(b) pip's picks differ:\n  " + "\n  ".join(diffs))
        paths = [r.path for r in srv.requests]
        meta = [p for p in paths if p.endswith(".metadata")]
        fail.expect(len(meta) >= len(want), f"(b) pip fetched {len(meta)} .metadata files, "
                                            f"expected at least {len(want)}")
        fail.expect(any("torch-2.8.0%2Bcu128-cp311" in p for p in paths),
                    f"(b) no percent-encoded torch file request in {paths}")
        print(f"(b) pytorch style: pip resolved {len(pins or {})} packages, "
              f"{len(meta)} PEP 658 .metadata requests, {len(paths)} requests")


def check_negotiation(fail, srv):
    cases = [(None, "text/html"), ("text/html", "text/html"),
             (JSON_ACCEPT, JSON_ACCEPT), ("*/*", "text/html"),
             ("application/vnd.pypi.simple.latest+json", JSON_ACCEPT),
             (f"{JSON_ACCEPT}, {index_server.HTML_V1}; q=0.1, text/html; q=0.01", JSON_ACCEPT),
             (f"{JSON_ACCEPT}; q=0, text/html", "text/html"),
             (f"text/html; q=0.5, {JSON_ACCEPT}; q=0.9", JSON_ACCEPT),
             ("application/*", JSON_ACCEPT),
             (index_server.HTML_V1, index_server.HTML_V1),
             ("image/png", 406)]
    for accept, want in cases:
        status, headers, body = request(srv, "/simple/numpy/",
                                        {"Accept": accept} if accept else {})
        got = status if status != 200 else headers.get("content-type")
        fail.expect(got == want, f"(c) Accept {accept!r}: got {got}, expected {want}")
    status, headers, body = request(srv, "/pytorch/simple/numpy/", {"Accept": JSON_ACCEPT})
    fail.expect(status == 200 and headers.get("content-type") == "text/html",
                f"(c) pytorch style answered {status} {headers.get('content-type')} to JSON")
    print(f"(c) content negotiation: {len(cases)} Accept headers, pytorch style ignores Accept")


def check_pages(fail, srv, graph):
    status, _, body = request(srv, "/simple/", {"Accept": JSON_ACCEPT})
    names = [p["name"] for p in json.loads(body)["projects"]]
    fail.expect(names == graph.projects(), "(c) JSON project list differs from the graph")
    _, _, body = request(srv, "/simple/yank-pkg/", {"Accept": JSON_ACCEPT})
    doc = json.loads(body)
    files = {f["filename"]: f for f in doc["files"]}
    yanked = files.get("yank_pkg-1.3.0-py3-none-any.whl", {})
    fail.expect(yanked.get("yanked") == "broken build: use 1.2.0", f"(c) yanked entry {yanked}")
    f = graph.by_filename("yank_pkg-1.2.0-py3-none-any.whl")
    entry = files.get(f.filename, {})
    meta = {"sha256": f.metadata_sha256}
    fail.expect(entry.get("hashes") == {"sha256": f.sha256} and entry.get("size") == f.size and
                entry.get("core-metadata") == meta and
                entry.get("data-dist-info-metadata") == meta and entry.get("yanked") is False and
                "dist-info-metadata" not in entry and doc["versions"] == ["1.2.0", "1.3.0"] and
                re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", entry["upload-time"]),
                f"(c) JSON file entry {entry}")
    _, _, body = request(srv, "/simple/nohash-pkg/", {"Accept": JSON_ACCEPT})
    fail.expect(json.loads(body)["files"][0]["hashes"] == {}, "(c) nohash-pkg lists a hash")
    _, _, body = request(srv, "/simple/modern-lib/", {"Accept": JSON_ACCEPT})
    rps = sorted(x.get("requires-python") for x in json.loads(body)["files"])
    fail.expect(rps == [">=3.12", ">=3.9"], f"(c) modern-lib requires-python {rps}")

    _, _, page = request(srv, "/pytorch/simple/torch/")
    page = page.decode()
    torch = graph.files_for("torch")[0]
    anchor = (f'href="../../files/torch-2.8.0%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl'
              f'#sha256={torch.sha256}"')
    fail.expect(anchor in page and 'data-requires-python="&gt;=3.9.0"' in page and
                f'data-dist-info-metadata="sha256={torch.metadata_sha256}"' in page and
                f'data-core-metadata="sha256={torch.metadata_sha256}"' in page and
                ">torch-2.8.0+cu128-cp311" in page, f"(c) pytorch torch page:\n{page}")
    _, _, page = request(srv, "/pytorch/simple/triton/")
    fail.expect('.whl" data-' in page.decode() and "#sha256" not in page.decode(),
                f"(c) the triton link should have no hash:\n{page.decode()}")
    _, _, page = request(srv, "/simple/yank-pkg/", {"Accept": "text/html"})
    fail.expect(b'data-yanked="broken build: use 1.2.0"' in page and
                f"{srv.url}/files/".encode() in page, f"(c) pypi HTML page:\n{page.decode()}")
    status, headers, _ = request(srv, "/simple/Syn_Lib.10/")
    fail.expect(status == 301 and headers.get("location") == "/simple/syn-lib-10/",
                f"(c) non-normalized name: {status} {headers.get('location')}")
    status, _, _ = request(srv, "/simple/no-such-project/")
    fail.expect(status == 404, f"(c) unknown project answered {status}")
    print("(c) pages: JSON fields, yanked, no-hash links, escaped requires-python, "
          "%2B file names, redirects")


def check_files(fail, srv, graph):
    torch = graph.files_for("torch")[0]
    path = srv.file_path(torch.filename)
    with open(torch.path, "rb") as fh:
        data = fh.read()
    status, headers, body = request(srv, path, {"Range": "bytes=100-1099"})
    fail.expect(status == 206 and body == data[100:1100] and
                headers.get("content-range") == f"bytes 100-1099/{len(data)}",
                f"(c) Range 100-1099: {status} {headers.get('content-range')} {len(body)} bytes")
    status, _, body = request(srv, path, {"Range": "bytes=-10"})
    fail.expect(status == 206 and body == data[-10:], f"(c) suffix Range: {status}")
    status, headers, _ = request(srv, path, {"Range": f"bytes={len(data)}-"})
    fail.expect(status == 416 and headers.get("content-range") == f"bytes */{len(data)}",
                f"(c) Range past the end: {status}")
    status, headers, body = request(srv, path, method="HEAD")
    fail.expect(status == 200 and body == b"" and headers.get("content-length") == str(len(data)),
                f"(c) HEAD: {status} {headers.get('content-length')}")
    status, _, body = request(srv, path + ".metadata")
    fail.expect(status == 200 and body == wheel_builder.read_metadata(torch.path) and
                hashlib.sha256(body).hexdigest() == torch.metadata_sha256,
                "(c) torch .metadata differs from the wheel's METADATA")
    print(f"(c) files: Range 206 and 416, HEAD, .metadata = METADATA ({len(body)} bytes)")


def check_faults(fail, srv, graph):
    f = graph.by_filename("numpy-2.2.6-py3-none-any.whl")
    path = srv.file_path(f.filename)
    with open(f.path, "rb") as fh:
        data = fh.read()
    srv.fail(path, status=500, times=2)
    statuses = [request(srv, path)[0] for _ in range(3)]
    fail.expect(statuses == [500, 500, 200], f"(c) fail x2: {statuses}")

    srv.drop(path)
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    try:
        part = resp.read()
        fail.expect(False, f"(c) drop: read {len(part)} bytes without an error")
    except http.client.IncompleteRead as e:
        part = e.partial
    conn.close()
    status, _, rest = request(srv, path, {"Range": f"bytes={len(part)}-"})
    fail.expect(0 < len(part) < len(data) and status == 206 and part + rest == data,
                f"(c) drop then Range: {len(part)} + {len(rest)} bytes, status {status}")

    srv.corrupt(path, times=1)
    _, _, bad = request(srv, path)
    _, _, good = request(srv, path)
    fail.expect(len(bad) == len(data) and hashlib.sha256(bad).hexdigest() != f.sha256 and
                good == data, "(c) corrupt: same size, other hash, once")

    srv.stall(path, seconds=5)
    t = time.monotonic()
    try:
        request(srv, path, timeout=0.5)
        fail.expect(False, "(c) stall: the request completed")
    except (socket.timeout, TimeoutError):
        pass
    fail.expect(time.monotonic() - t < 3, "(c) stall: the client timeout did not fire")
    srv.clear_faults()
    fail.expect(request(srv, path)[2] == data, "(c) clear_faults: file not served intact")

    srv.clear_log()
    fail.expect(srv.request_count == 0 and srv.requests == [], "(c) clear_log left entries")
    request(srv, "/simple/", {"Accept": "text/html", "X-Probe": "1"})
    log = srv.requests
    fail.expect(len(log) == 1 and log[0].method == "GET" and log[0].path == "/simple/" and
                log[0].header("x-probe") == "1", f"(c) request log {log}")
    print("(c) faults: 500 x2 then 200, half body then Range resume, corrupt once, stall past "
          "a 0.5 s timeout; request log and counter")


def check_rebuilt(fail, graph):
    twin = next(iter(graph.rebuilt.values()))
    orig = graph.by_filename(twin.filename)
    modes = (("mismatch", twin, orig), ("swap", twin, twin), (None, orig, orig))
    for mode, listed, served in modes:
        with index_server.IndexServer(graph, rebuilt=mode) as srv:
            _, _, body = request(srv, "/simple/rebuilt-pkg/", {"Accept": JSON_ACCEPT})
            entry = json.loads(body)["files"][0]
            _, _, data = request(srv, srv.file_path(twin.filename))
            fail.expect(entry["hashes"]["sha256"] == listed.sha256 and
                        hashlib.sha256(data).hexdigest() == served.sha256,
                        f"(c) rebuilt={mode}: listed {entry['hashes']}, served "
                        f"{hashlib.sha256(data).hexdigest()}")
    print("(c) rebuilt file: mismatch lists B serves A; swap lists and serves B")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    fail = Failures()
    scratch = tempfile.mkdtemp(prefix="rootlock-index-fixture-")
    try:
        t = time.monotonic()
        graph = package_graph.build_graph(os.path.join(scratch, "wheels"))
        print(f"graph: {len(graph.projects())} projects, {len(graph.files)} wheels, "
              f"{graph.total_bytes()} bytes, built in {time.monotonic() - t:.1f}s")
        check_wheels(fail, graph)
        step_a(fail, graph, scratch)
        step_b(fail, graph, scratch)
        with index_server.IndexServer(graph, style="pypi") as srv:
            check_negotiation(fail, srv)
            check_pages(fail, srv, graph)
            check_files(fail, srv, graph)
            check_faults(fail, srv, graph)
        check_rebuilt(fail, graph)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(fail.items)} failures" if fail.items else "all expectations met")
    return 1 if fail.items else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
