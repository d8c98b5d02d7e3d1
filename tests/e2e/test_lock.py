"""End-to-end: `rootlock lock` against a real HTTP index on 127.0.0.1 (fixtures/index_server.py).

The index serves the generated graph (fixtures/package_graph.py): the torch 2.8.0+cu128 stack as
real wheels with stub ELF objects, and more than 100 pure-Python packages whose resolution needs
backtracking, with the real quirks (links without hashes, a yanked release, a pre-release,
requires-python, an artifact rebuilt under the same name). The base is a real Debian root, as a
tarball pinned by sha256. Then:
  a. JSON index: the lock has every expected pin, each wheel's url, size and sha256 as served,
     and passes an independent PEP 751 reader (tomllib);
  b. relock warm: the same bytes; --offline: the same bytes and no request reaches the server;
  c. --check: up to date, then stale after the recipe changes;
  d. a kept pin survives a relock; --upgrade-package moves it;
  e. HTML index (PyTorch style): the torch stack locks with the same versions, the escaped
     local version and the hash of a link that had none;
  f. an impossible set is explained, exit 2; a broken closure writes no lock, exit 1, and
     --allow-broken writes it with the problem recorded;
  g. faults: 500 then success, a dropped body resumed with Range, a wrong hash refused without
     harming the cache, a stalled server (exit 3);
  h. a CUDA 13 runtime wheel in a cu128 lock: cuda-major-mismatch, no lock;
  i. an index that lists one hash and serves a file rebuilt under the same name: refused;
  j. two indexes: the first that has a project is its only source, a pinned pattern's packages
     come only from its index (never from another, even a newer version);
  k. a bad recipe gives every error at once (exit 2); --offline on a cold cache fails (exit 3).
The graphs, the servers and the first lock of each index style are module fixtures. A case that
relocks or edits works on copies (of the lock, of the recipe), and each fault case has a server
and a cache of its own, so any case runs alone (`-k`) and in any order.
"""
import hashlib
import json
import os
import shutil
import tempfile
import time
import tomllib
from types import SimpleNamespace

import pytest

from fixtures import index_server, package_graph, pylock_check
from fixtures.cli import json_or_none, run, run_rootlock
from fixtures.debian_root import base_tarball


def write_recipe(path, index_url, base, requires, torch=True, extra=""):
    base_path, base_sha = base
    torch_tables = ('[torch]\nversion = "2.8.0"\ncuda = "12.8"\n\n'
                    '[cuda]\ndriver = "570.133.07"\n\n') if torch else ""
    text = (f'[image]\nname = "locktest"\n\n'
            f'[base]\ntarball = "{base_path}"\nsha256 = "{base_sha}"\n\n'
            f'[python]\nversion = "3.11"\n\n{torch_tables}'
            f'[[index]]\nname = "fixture"\nurl = "{index_url}"\n\n'
            f'[packages]\nrequires = {json.dumps(requires)}\n{extra}')
    with open(path, "w") as f:
        f.write(text)
    return path


def lock(rootlock, recipe, out, cache, *extra, timeout=600):
    """(exit code, the --json report or None, stderr, seconds taken) of `rootlock lock`."""
    argv = [rootlock, "lock", recipe, "-o", out, "--cache-dir", cache, "--json", *extra]
    started = time.monotonic()
    proc = run(argv, timeout=timeout)
    took = time.monotonic() - started
    return proc.returncode, json_or_none(proc.stdout), proc.stderr, took


def read(path):
    with open(path, "rb") as f:
        return f.read()


def pins_of(lock_path):
    with open(lock_path, "rb") as f:
        data = tomllib.load(f)
    return {p["name"]: p["version"] for p in data["packages"]}, data


def copy_to(src, scratch, name):
    """src copied to scratch/name (so a case changes its own file, never a fixture's)."""
    dest = os.path.join(scratch, name)
    shutil.copyfile(src, dest)
    return dest


def wheel_mismatches(data, graph):
    """Every locked wheel whose url is not a file of the index, or whose size or sha256 are
    not those of the bytes the index serves."""
    out = []
    for package in data["packages"]:
        for wheel in package.get("wheels", []):
            try:
                served = graph.by_filename(wheel["name"])
            except KeyError:
                out.append(f"{wheel['name']} is not a file of the index")
                continue
            if wheel["size"] != served.size or wheel["hashes"]["sha256"] != served.sha256:
                out.append(f"{wheel['name']}: locked size/sha256 {wheel['size']}/"
                           f"{wheel['hashes']['sha256']}, served {served.size}/{served.sha256}")
    return out


@pytest.fixture(scope="module")
def graph(scratch):
    return package_graph.build_graph(os.path.join(scratch, "graph"))


@pytest.fixture(scope="module")
def graph13(scratch):
    """The graph with the torch 2.9.1+cu130 stack beside 2.8.0+cu128."""
    return package_graph.build_graph(
        os.path.join(scratch, "graph13"),
        stacks=package_graph.DEFAULT_STACKS + (package_graph.CU13_STACK,))


@pytest.fixture(scope="module")
def base():
    return base_tarball()


@pytest.fixture(scope="module")
def pypi(graph):
    """The JSON (PEP 691) index the (a)-(d) and (f) cases lock from."""
    with index_server.IndexServer(graph, style="pypi") as server:
        yield server


# ---------------------------------------------------------------------------------------------
# (a) the JSON index.

@pytest.fixture(scope="module")
def json_lock(rootlock, scratch, pypi, base):
    """The cold lock of the backtracking roots (torch from [torch]) from the JSON index."""
    roots = [r for r in package_graph.ROOTS_BACKTRACK if not r.startswith("torch")]
    recipe = write_recipe(os.path.join(scratch, "json.toml"), pypi.simple_url, base, roots)
    out = os.path.join(scratch, "pylock.json.toml")
    cache = os.path.join(scratch, "cache-json")
    rc, report, err, took = lock(rootlock, recipe, out, cache)
    assert rc == 0, f"(a) lock from the JSON index: expected exit 0, got {rc}: {err[-3000:]}"
    pins, data = pins_of(out)
    print(f"(a) {len(pins)} packages locked cold in {took:.2f} s")
    return SimpleNamespace(recipe=recipe, out=out, cache=cache, report=report, pins=pins,
                           data=data, bytes=read(out))


def test_a_pins_are_the_expected_ones(json_lock):
    expected = dict(package_graph.EXPECTED_PINS)
    expected["torch"] = "2.8.0+cu128"
    pins = json_lock.pins
    diffs = sorted(f"{n}: want {expected.get(n)} got {pins.get(n)}"
                   for n in set(pins) | set(expected) if pins.get(n) != expected.get(n))
    assert not diffs, "pins differ from package_graph.EXPECTED_PINS:\n  " + "\n  ".join(diffs)


def test_a_at_least_100_packages(json_lock):
    assert len(json_lock.pins) >= 100, \
        f"expected at least 100 packages locked, got {len(json_lock.pins)}"


def test_a_resolution_rejected_versions(json_lock):
    # The newest app-web and array-tools lose to constraints found later (pip downloads
    # three app-web versions here); rootlock must have tried and rejected versions too.
    report = json_lock.report
    assert report and report["stats"]["resolver_steps"] > len(json_lock.pins), \
        f"expected more resolver steps than the {len(json_lock.pins)} pins (versions " \
        f"rejected): {report and report['stats']}"


def test_a_independent_pep751_reader(json_lock):
    try:
        pylock_check.check_pylock(json_lock.out)
    except AssertionError as error:
        pytest.fail(f"independent PEP 751 reader: {error}")


def test_a_wheels_as_served(json_lock, graph):
    wrong = wheel_mismatches(json_lock.data, graph)
    assert not wrong, "locked wheels differ from what the index serves:\n  " + "\n  ".join(wrong)


def test_a_torch_soname_table(json_lock):
    torch = next(p for p in json_lock.data["packages"] if p["name"] == "torch")
    tool = torch.get("tool", {}).get("rootlock", {})
    assert "libtorch_cuda.so" in tool.get("provides", []) and \
        "libcudnn.so.9" in tool.get("needs", []), \
        f"expected torch to provide libtorch_cuda.so and need libcudnn.so.9: {tool}"


def test_a_target_read_from_the_base(json_lock):
    target = json_lock.data["tool"]["rootlock"]["target"]
    assert target["glibc"] == "2.36" and target["arch"] == "x86_64", \
        f"expected glibc 2.36 on x86_64: {target}"


# ---------------------------------------------------------------------------------------------
# (b) relocks, on a copy of the lock each.

def test_b_warm_relock_same_bytes_nothing_downloaded(rootlock, scratch, json_lock):
    out = copy_to(json_lock.out, scratch, "pylock.json-warm.toml")
    rc, report, err, took = lock(rootlock, json_lock.recipe, out, json_lock.cache)
    assert rc == 0 and read(out) == json_lock.bytes, \
        f"expected a warm relock to write the same bytes: exit {rc}: {err}"
    assert report and report["stats"]["wheels_downloaded"] == 0 and \
        report["stats"]["wheels_scanned"] == 0, \
        f"expected a warm relock to download and rescan nothing: {report and report['stats']}"
    print(f"(b) warm relock of {len(json_lock.pins)} packages: {took:.2f} s")


def test_b_offline_relock_same_bytes_no_request(rootlock, scratch, pypi, json_lock):
    out = copy_to(json_lock.out, scratch, "pylock.json-offline.toml")
    before = pypi.request_count
    rc, _, err, took = lock(rootlock, json_lock.recipe, out, json_lock.cache, "--offline")
    assert rc == 0 and read(out) == json_lock.bytes, \
        f"expected an --offline relock to write the same bytes: exit {rc} {err}"
    assert pypi.request_count == before, \
        f"expected no request from --offline, got {pypi.request_count - before}"
    print(f"(b) offline relock: {took:.2f} s")


# ---------------------------------------------------------------------------------------------
# (c) --check.

def check(rootlock, recipe, out):
    return run_rootlock(rootlock, "lock", recipe, "-o", out, "--check")


def test_c_check_up_to_date(rootlock, json_lock):
    proc = check(rootlock, json_lock.recipe, json_lock.out)
    assert proc.returncode == 0, \
        f"expected --check on a fresh lock to exit 0: {proc.returncode} {proc.stderr}"
    assert read(json_lock.out) == json_lock.bytes, "--check rewrote the lock"


def test_c_check_stale_after_recipe_edit(rootlock, scratch, json_lock):
    # The edited recipe is a copy: unedited it checks as up to date, so only the edit differs.
    recipe = copy_to(json_lock.recipe, scratch, "json-edited.toml")
    out = copy_to(json_lock.out, scratch, "pylock.json-edited.toml")
    proc = check(rootlock, recipe, out)
    assert proc.returncode == 0, \
        f"expected --check against an unedited copy of the recipe to exit 0: " \
        f"{proc.returncode} {proc.stderr}"
    with open(recipe, "a") as f:
        f.write("# edited\n")
    proc = check(rootlock, recipe, out)
    assert proc.returncode == 1 and "stale" in proc.stderr, \
        f"expected --check after an edit to exit 1 saying stale: {proc.returncode} {proc.stderr}"
    assert read(out) == json_lock.bytes, "--check rewrote the lock"


# ---------------------------------------------------------------------------------------------
# (d) numpy<2.2 locks 2.1.3; relaxing to <2.3 keeps it; --upgrade-package moves it.

@pytest.fixture(scope="module")
def numpy_lock(rootlock, scratch, pypi, base):
    """(recipe, lock) of numpy<2.2 alone, no torch."""
    recipe = write_recipe(os.path.join(scratch, "keep.toml"), pypi.simple_url, base,
                          ["numpy<2.2"], torch=False)
    out = os.path.join(scratch, "pylock.keep.toml")
    rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-json"))
    assert rc == 0, f"(d) lock of numpy<2.2: expected exit 0, got {rc}: {err}"
    return recipe, out


@pytest.fixture(scope="module")
def relaxed_lock(rootlock, scratch, pypi, base, numpy_lock):
    """(recipe, lock, stderr): numpy_lock relocked (a copy) with the recipe relaxed to <2.3."""
    recipe = write_recipe(os.path.join(scratch, "keep-relaxed.toml"), pypi.simple_url, base,
                          ["numpy<2.3"], torch=False)
    out = copy_to(numpy_lock[1], scratch, "pylock.keep-relaxed.toml")
    rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-json"))
    assert rc == 0, f"(d) relock with numpy<2.3: expected exit 0, got {rc}: {err}"
    return recipe, out, err


def test_d_numpy_below_2_2_locks_2_1_3(numpy_lock):
    numpy = pins_of(numpy_lock[1])[0].get("numpy")
    assert numpy == "2.1.3", f"expected numpy<2.2 to lock 2.1.3, got {numpy}"


def test_d_relaxed_recipe_keeps_the_locked_pin(relaxed_lock):
    numpy = pins_of(relaxed_lock[1])[0].get("numpy")
    assert numpy == "2.1.3", \
        f"expected the locked numpy 2.1.3 kept under numpy<2.3, got {numpy}: {relaxed_lock[2]}"


def test_d_upgrade_package_moves_the_pin(rootlock, scratch, relaxed_lock):
    recipe, kept, _ = relaxed_lock
    out = copy_to(kept, scratch, "pylock.keep-upgraded.toml")
    rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-json"),
                         "--upgrade-package", "NumPy")
    numpy = pins_of(out)[0].get("numpy")
    assert rc == 0 and numpy == "2.2.6", \
        f"expected --upgrade-package NumPy to move numpy to 2.2.6: exit {rc}, {numpy} {err}"


# ---------------------------------------------------------------------------------------------
# (e) the PyTorch-style HTML index.

@pytest.fixture(scope="module")
def html_lock(rootlock, scratch, graph, base):
    """(lock data, the /simple/ requests' Accept headers) of the torch stack from HTML."""
    with index_server.IndexServer(graph, style="pytorch") as server:
        recipe = write_recipe(os.path.join(scratch, "html.toml"), server.simple_url, base, [])
        out = os.path.join(scratch, "pylock.html.toml")
        rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-html"))
        assert rc == 0, f"(e) lock from the HTML index: expected exit 0, got {rc}: {err[-3000:]}"
        accepts = [r.header("Accept") for r in server.requests if r.path.startswith("/simple/")]
    return pins_of(out), accepts


def test_e_html_pins_equal_the_json_locks(html_lock, json_lock):
    (pins, _), _ = html_lock
    differ = {name: (version, json_lock.pins.get(name)) for name, version in pins.items()
              if json_lock.pins.get(name) != version}
    assert not differ, f"expected the JSON lock's versions; (HTML, JSON) differ: {differ}"


def test_e_html_wheels_as_served(html_lock, graph):
    (_, data), _ = html_lock
    wrong = wheel_mismatches(data, graph)
    assert not wrong, "locked wheels differ from what the index serves:\n  " + "\n  ".join(wrong)


def test_e_torch_url_escaped_name_decoded(html_lock):
    (_, data), _ = html_lock
    torch = next(p for p in data["packages"] if p["name"] == "torch")
    url = torch["wheels"][0]["url"]
    assert "%2B" in url and "+" in torch["wheels"][0]["name"], \
        f"expected torch's url to keep the escaped local version, its name the decoded: {url}"


def test_e_json_asked_for_first(html_lock):
    _, accepts = html_lock
    assert accepts and all("json" in (a or "") for a in accepts), \
        f"expected every /simple/ request to ask for JSON first: Accept {accepts}"


# ---------------------------------------------------------------------------------------------
# (f) an impossible set and a broken closure.

def test_f_impossible_set_explained_exit_2(rootlock, scratch, pypi, base):
    recipe = write_recipe(os.path.join(scratch, "impossible.toml"), pypi.simple_url, base,
                          package_graph.ROOTS_IMPOSSIBLE, torch=False)
    out = os.path.join(scratch, "pylock.impossible.toml")
    rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-f"))
    assert rc == 2 and "conflict-base" in err and "conflict-left" in err and \
        "conflict-right" in err and not os.path.exists(out), \
        f"expected exit 2, no lock, and conflict-base/-left/-right named: exit {rc}: {err}"
    print("(f) impossible set explained:\n" + err)


@pytest.fixture(scope="module")
def broken_recipe(scratch, pypi, base):
    return write_recipe(os.path.join(scratch, "broken.toml"), pypi.simple_url, base,
                        ["broken-ext"], torch=False)


def test_f_broken_closure_no_lock_exit_1(rootlock, scratch, broken_recipe):
    out = os.path.join(scratch, "pylock.broken.toml")
    rc, report, err, _ = lock(rootlock, broken_recipe, out, os.path.join(scratch, "cache-f"))
    kinds = [(p["kind"], p.get("soname")) for p in (report or {}).get("problems", [])]
    assert rc == 1 and not os.path.exists(out) and \
        ("missing-soname", "libnotthere.so.1") in kinds, \
        f"expected exit 1, no lock, and missing-soname libnotthere.so.1: exit {rc}, " \
        f"problems {kinds}, {err}"


def test_f_allow_broken_writes_the_problem(rootlock, scratch, broken_recipe):
    out = os.path.join(scratch, "pylock.broken-allowed.toml")
    rc, _, err, _ = lock(rootlock, broken_recipe, out, os.path.join(scratch, "cache-f"),
                         "--allow-broken")
    recorded = []
    if os.path.exists(out):
        with open(out, "rb") as f:
            recorded = tomllib.load(f)["tool"]["rootlock"].get("problems", [])
    assert rc == 0 and any("libnotthere.so.1" in json.dumps(p) for p in recorded), \
        f"expected --allow-broken to exit 0 and record libnotthere.so.1: exit {rc}, " \
        f"recorded {recorded}, {err}"


# ---------------------------------------------------------------------------------------------
# (h) a CUDA 13 runtime in a cu128 lock; (i) an artifact rebuilt under the same name.

def test_h_cuda13_runtime_in_a_cu128_lock(rootlock, scratch, graph13, base):
    with index_server.IndexServer(graph13, style="pypi") as server:
        recipe = write_recipe(os.path.join(scratch, "cuda.toml"), server.simple_url, base,
                              ["nvidia-cuda-runtime"])
        out = os.path.join(scratch, "pylock.cuda.toml")
        rc, report, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-h"))
    mismatch = [p for p in (report or {}).get("problems", [])
                if p["kind"] == "cuda-major-mismatch"]
    sonames = [lib["soname"] for p in mismatch for lib in p.get("libraries", [])]
    assert rc == 1 and not os.path.exists(out) and "libcudart.so.13" in sonames, \
        f"expected exit 1, no lock, and cuda-major-mismatch naming libcudart.so.13: exit " \
        f"{rc}, {mismatch}, {err[-2000:]}"


def test_i_rebuilt_artifact_refused(rootlock, scratch, graph, base):
    with index_server.IndexServer(graph, style="pypi", rebuilt="mismatch") as server:
        recipe = write_recipe(os.path.join(scratch, "rebuilt.toml"), server.simple_url, base,
                              ["rebuilt-pkg"], torch=False)
        out = os.path.join(scratch, "pylock.rebuilt.toml")
        rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-i"))
    # The rebuild is two bytes shorter: the size check refuses it before the hash would.
    # An integrity failure: exit 3, as for every download that fails its digest.
    assert rc == 3 and ("sha256 mismatch" in err or "size mismatch" in err) and \
        "rebuilt_pkg" in err and not os.path.exists(out), \
        f"expected exit 3, no lock, and a sha256 or size mismatch of rebuilt_pkg: " \
        f"exit {rc}: {err}"


# ---------------------------------------------------------------------------------------------
# (j) index order and pinning. Index A serves torch 2.8.0 only, index B also 2.9.1.

@pytest.fixture(scope="module")
def two_indexes(graph, graph13):
    with index_server.IndexServer(graph, style="pypi") as a, \
            index_server.IndexServer(graph13, style="pytorch") as b:
        yield a, b


def two_index_recipe(path, base, indexes, requires):
    """A recipe with one [[index]] table per (name, url, pinned patterns)."""
    write_recipe(path, indexes[0][1], base, requires, torch=False)
    with open(path) as f:
        text = f.read()
    start = text.index("[[index]]")
    end = text.index("[packages]")
    blocks = "".join(f'[[index]]\nname = "{name}"\nurl = "{url}"\n'
                     f'packages = {json.dumps(pins)}\n\n' for name, url, pins in indexes)
    with open(path, "w") as f:
        f.write(text[:start] + blocks + text[end:])
    return path


def test_j_first_index_with_the_project_wins(rootlock, scratch, base, two_indexes):
    # A has torch, so torch never comes from B, although B has a newer one.
    a, b = two_indexes
    recipe = two_index_recipe(os.path.join(scratch, "two-first.toml"), base,
                              [("a", a.simple_url, []), ("b", b.simple_url, [])], ["torch>=2.8"])
    out = os.path.join(scratch, "pylock.two-first.toml")
    rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-j"))
    assert rc == 0, f"expected exit 0: got {rc}: {err[-2000:]}"
    _, data = pins_of(out)
    torch = next(p for p in data["packages"] if p["name"] == "torch")
    assert torch["version"] == "2.8.0+cu128" and torch["index"] == a.simple_url, \
        f"expected torch 2.8.0+cu128 from A: torch {torch['version']} from {torch['index']}"


def test_j_pinned_patterns_come_only_from_their_index(rootlock, scratch, base, two_indexes):
    # Pinned to B, torch and nvidia-* come only from B: the newest there is 2.9.1+cu130. A
    # fresh lock: a previous one's torch would be kept as a preference.
    a, b = two_indexes
    recipe = two_index_recipe(os.path.join(scratch, "two-pinned.toml"), base,
                              [("a", a.simple_url, []),
                               ("b", b.simple_url, ["torch", "nvidia-*", "triton"])],
                              ["torch>=2.8"])
    out = os.path.join(scratch, "pylock.two-pinned.toml")
    rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-j"))
    assert rc == 0, f"expected exit 0: got {rc}: {err[-2000:]}"
    _, data = pins_of(out)
    wrong = [(p["name"], p["index"]) for p in data["packages"]
             if (p["name"] == "torch" or p["name"].startswith("nvidia-")) and
             p["index"] != b.simple_url]
    torch = next(p for p in data["packages"] if p["name"] == "torch")
    assert torch["version"] == "2.9.1+cu130" and not wrong, \
        f"expected torch 2.9.1+cu130 and every nvidia-* from B: torch {torch['version']}, " \
        f"not from B: {wrong}"


def test_j_pinned_to_an_index_without_it_is_an_error(rootlock, scratch, base, two_indexes):
    # A pinned pattern whose index lacks the project is an error, never a fallback to A.
    a, _ = two_indexes
    recipe = two_index_recipe(os.path.join(scratch, "two-empty.toml"), base,
                              [("a", a.simple_url, []), ("b", a.url + "/empty/simple", ["app-*"])],
                              ["app-cli"])
    out = os.path.join(scratch, "pylock.two-empty.toml")
    rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-j"))
    assert rc == 2 and "app-cli" in err and "index b" in err, \
        f"expected exit 2 naming app-cli and index b: exit {rc}: {err}"


# ---------------------------------------------------------------------------------------------
# (k) bad input.

def test_k_bad_recipe_every_error_at_once(rootlock, scratch):
    recipe = os.path.join(scratch, "bad.toml")
    with open(recipe, "w") as f:
        f.write('[image]\nname = "Bad Name"\n\n[python]\nversion = "three"\n')
    proc = run_rootlock(rootlock, "lock", recipe)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("rootlock: ")]
    assert proc.returncode == 2 and len(lines) >= 3 and all("bad.toml:" in l for l in lines), \
        f"expected exit 2 and at least 3 errors, each located in bad.toml: exit " \
        f"{proc.returncode}: {proc.stderr}"


def test_k_offline_on_a_cold_cache_exit_3(rootlock, scratch, base):
    recipe = write_recipe(os.path.join(scratch, "cold.toml"), "http://127.0.0.1:9/simple", base,
                          ["app-cli"], torch=False)
    out = os.path.join(scratch, "pylock.cold.toml")
    rc, _, err, _ = lock(rootlock, recipe, out, os.path.join(scratch, "cache-k"), "--offline")
    assert rc == 3 and "--offline" in err and not os.path.exists(out), \
        f"expected exit 3, no lock, and --offline named: exit {rc}: {err}"


# ---------------------------------------------------------------------------------------------
# (g) the server misbehaves: each case has a server of its own and a fresh cache, so the wheel
# is fetched.

@pytest.fixture
def faulty(scratch, graph, base):
    """A fresh server for app-cli's recipe: (server, recipe, app-cli's file URL path)."""
    target = graph.files_for("app-cli")[0]
    with index_server.IndexServer(graph, style="pypi") as server:
        recipe = write_recipe(os.path.join(tempfile.mkdtemp(prefix="faults-", dir=scratch),
                                           "faults.toml"),
                              server.simple_url, base, ["app-cli"], torch=False)
        yield server, recipe, server.file_path(target.filename)
        server.clear_faults()


def fresh_lock(rootlock, scratch, recipe, *extra):
    """A lock of recipe into a new path with a new cache: (exit, report, stderr, out, cache)."""
    work = tempfile.mkdtemp(prefix="faults-", dir=scratch)
    out, cache = os.path.join(work, "pylock.toml"), os.path.join(work, "cache")
    rc, report, err, _ = lock(rootlock, recipe, out, cache, *extra)
    return rc, report, err, out, cache


def test_g_500_twice_then_success(rootlock, scratch, faulty):
    server, recipe, path = faulty
    server.fail(path, status=500, times=2)
    rc, _, err, _, _ = fresh_lock(rootlock, scratch, recipe)
    hits = [r for r in server.requests if r.path == path]
    assert rc == 0 and len(hits) == 3, \
        f"expected exit 0 after 3 requests of the file: exit {rc}, {len(hits)} requests, {err}"


def test_g_dropped_body_resumed_with_range(rootlock, scratch, faulty, graph):
    server, recipe, path = faulty
    server.drop(path, times=1)
    rc, _, err, out, _ = fresh_lock(rootlock, scratch, recipe)
    ranged = [r for r in server.requests if r.path == path and r.header("Range")]
    assert rc == 0 and ranged, \
        f"expected exit 0 with a Range request: exit {rc}, Range requests {len(ranged)}, {err}"
    wrong = wheel_mismatches(pins_of(out)[1], graph)
    assert not wrong, "resumed: locked wheels differ from what the index serves:\n  " + \
        "\n  ".join(wrong)


@pytest.fixture
def wrong_hash(rootlock, scratch, faulty):
    """A lock from a server that corrupts app-cli's wheel every time: (exit, stderr, out,
    cache), the corruption still on."""
    server, recipe, path = faulty
    server.corrupt(path, times=None)
    rc, _, err, out, cache = fresh_lock(rootlock, scratch, recipe)
    return rc, err, out, cache


def test_g_wrong_hash_refused(wrong_hash):
    rc, err, out, _ = wrong_hash
    assert rc == 3 and "sha256" in err and not os.path.exists(out), \
        f"expected exit 3 (integrity), no lock, and sha256 named: exit {rc}: {err}"


def test_g_wrong_hash_leaves_no_bad_blob(wrong_hash):
    _, _, _, cache = wrong_hash
    poisoned = []
    for folder, _, files in os.walk(os.path.join(cache, "blobs")):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            if digest != os.path.basename(folder) + name:
                poisoned.append(name)
    assert not poisoned, f"expected every cached blob to match its hash: {poisoned}"


def test_g_wrong_hash_then_clean_relock_same_cache(rootlock, faulty, wrong_hash):
    server, recipe, _ = faulty
    _, _, out, cache = wrong_hash
    server.clear_faults()
    rc, _, err, _ = lock(rootlock, recipe, out, cache)
    assert rc == 0, f"expected a clean relock with the same cache after the wrong hash to " \
        f"exit 0: exit {rc}: {err}"


def test_g_one_stall_retried(rootlock, scratch, faulty):
    # One stall is retried (a slow mirror recovers).
    server, recipe, path = faulty
    server.stall(path, seconds=30, times=1)
    rc, _, err, _, _ = fresh_lock(rootlock, scratch, recipe, "--timeout", "1")
    assert rc == 0, f"expected one stall then data to exit 0: exit {rc}: {err}"


def test_g_always_stalling_fails_exit_3(rootlock, scratch, faulty):
    server, recipe, path = faulty
    server.stall(path, seconds=30, times=None)
    started = time.monotonic()
    rc, _, err, _, _ = fresh_lock(rootlock, scratch, recipe, "--timeout", "1")
    took = time.monotonic() - started
    assert rc == 3 and "app_cli" in err and "no data received" in err and took < 30, \
        f"expected exit 3 within 30 s naming app_cli and 'no data received': exit {rc} after " \
        f"{took:.1f} s: {err}"
