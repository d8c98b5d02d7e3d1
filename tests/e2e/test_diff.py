"""End-to-end: `rootlock diff A B` over locks that `rootlock lock` really wrote.

The fixture index serves the torch 2.8.0+cu128 and 2.9.1+cu130 stacks (fixtures/package_graph.py)
over the cached Debian base. Two recipes are locked: A (torch 2.8.0, CUDA 12.8, driver 570, app-cli)
and B (torch 2.9.1, CUDA 13.0, driver 580, app-cli and numpy<2.2). Then:
  a. diff A B exits 1; its JSON names the CUDA major and driver in the target, torch upgraded to
     2.9.1+cu130, cu12 nvidia-* removed and cu13 ones added, libcudart's major in the closure
     12 -> 13, and numpy as a requirement of the recipe; the text has no colour when stdout is not
     a terminal, and the Markdown a "### Lock changes" heading;
  b. A against itself, and against a copy with its packages in reverse order, other spacing and
     comments, exits 0 with "no difference in meaning";
  c. A against a copy where one wheel's sha256 changed (an artifact rebuilt under its name)
     exits 1 with the rebuilt kind, a "!" line in the text;
  d. a uv-style foreign lock (no [tool.rootlock]) diffs against itself as equal and against A as
     different, without a crash; an unknown lock-version major, a lock missing a required key and
     a missing file each give one line on stderr and exit 2.
"""
import json
import os
import tomllib

import pytest

from fixtures import index_server, package_graph
from fixtures.cli import json_or_none, no_color, run_rootlock
from fixtures.debian_root import base_tarball


def write_recipe(path, index_url, base, torch, cuda, driver, requires):
    base_path, base_sha = base
    with open(path, "w") as f:
        f.write(f'[image]\nname = "difftest"\n\n'
                f'[base]\ntarball = "{base_path}"\nsha256 = "{base_sha}"\n\n'
                f'[python]\nversion = "3.11"\n\n'
                f'[torch]\nversion = "{torch}"\ncuda = "{cuda}"\n\n'
                f'[cuda]\ndriver = "{driver}"\n\n'
                f'[[index]]\nname = "fixture"\nurl = "{index_url}"\n\n'
                f'[packages]\nrequires = {json.dumps(requires)}\n')
    return path


def diff(rootlock, a, b, *extra):
    return run_rootlock(rootlock, "diff", a, b, *extra, env=no_color(), timeout=600)


def reformatted(text):
    """The same lock with its [[packages]] blocks reversed, blank lines doubled and comments."""
    head, *blocks = text.split("\n[[packages]]\n")
    tail = ""
    if blocks and "\n[tool.rootlock]" in blocks[-1]:
        last, rest = blocks[-1].split("\n[tool.rootlock]", 1)
        blocks[-1] = last
        tail = "\n[tool.rootlock]" + rest
    body = "".join("\n# moved\n[[packages]]\n" + b.replace("\n", "\n\n")
                   for b in reversed(blocks))
    return head + body + tail


FOREIGN = '''lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.11"

[[packages]]
name = "numpy"
version = "2.1.3"
wheels = [
  { name = "numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.whl", url = "https://example.invalid/numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.whl", hashes = { sha256 = "%s" } },
]
''' % ("ab" * 32)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.fixture(scope="module")
def locks(rootlock, scratch):
    """{"a": path, "b": path}: the two recipes locked against the fixture index."""
    graph = package_graph.build_graph(os.path.join(scratch, "graph"),
                                      package_graph.DEFAULT_STACKS + (package_graph.CU13_STACK,))
    base = base_tarball()
    cache = os.path.join(scratch, "cache")
    out = {}
    with index_server.IndexServer(graph, style="pypi") as server:
        for name, torch, cuda, driver, requires in [
                ("a", "2.8.0", "12.8", "570.133.07", ["app-cli"]),
                ("b", "2.9.1", "13.0", "580.65.06", ["app-cli", "numpy<2.2"])]:
            recipe = write_recipe(os.path.join(scratch, f"{name}.toml"), server.simple_url,
                                  base, torch, cuda, driver, requires)
            out[name] = os.path.join(scratch, f"pylock.{name}.toml")
            proc = run_rootlock(rootlock, "lock", recipe, "-o", out[name],
                                "--cache-dir", cache, timeout=600)
            assert proc.returncode == 0, f"lock {name}: {proc.stderr}"
    return out


# (a) the cu12 -> cu13 move.

@pytest.fixture(scope="module")
def a_to_b(rootlock, locks):
    """`diff A B --json`: the process and its JSON ({} when it printed none)."""
    proc = diff(rootlock, locks["a"], locks["b"], "--json")
    out = json_or_none(proc.stdout) if proc.stdout.startswith("{") else None
    return proc, out or {}


def test_a_cu12_to_cu13_exits_1(a_to_b):
    proc, out = a_to_b
    assert proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr}"
    target = {f["field"]: (f["before"], f["after"]) for f in out.get("target", [])}
    nvidia = out.get("nvidia", [])
    sonames = out.get("sonames", {})
    print(f"(a) {len(nvidia)} nvidia changes, {len(sonames.get('changes', []))} soname "
          f"changes, target {sorted(target)}")


def test_a_target_names_cuda_major_and_driver(a_to_b):
    _, out = a_to_b
    target = {f["field"]: (f["before"], f["after"]) for f in out.get("target", [])}
    assert target.get("cuda-major") == ("12", "13") and \
        target.get("driver") == ("570.133.07", "580.65.06"), f"target: {out.get('target')}"


def test_a_torch_upgraded_to_cu130(a_to_b):
    _, out = a_to_b
    torch = {p["name"]: p for p in out.get("torch", [])}
    assert torch.get("torch", {}).get("after") == "2.9.1+cu130" and \
        "upgraded" in torch.get("torch", {}).get("changes", []), f"torch: {out.get('torch')}"


def test_a_cu12_nvidia_removed_cu13_added(a_to_b):
    _, out = a_to_b
    nvidia = out.get("nvidia", [])
    removed = [p["name"] for p in nvidia if "removed" in p["changes"]]
    added = [p["name"] for p in nvidia if "added" in p["changes"]]
    assert any(n.endswith("-cu12") for n in removed) and \
        any(n.endswith("-cu13") for n in added), f"nvidia set: removed {removed}, added {added}"


def test_a_libcudart_major_12_to_13_in_closure(a_to_b):
    _, out = a_to_b
    sonames = out.get("sonames", {})
    assert 13 in sonames.get("cuda_majors_added", []) and \
        12 in sonames.get("cuda_majors_removed", []), f"CUDA majors: {sonames}"


def test_a_numpy_a_new_recipe_requirement(a_to_b):
    _, out = a_to_b
    recipe = {r["field"]: r for r in out.get("recipe", [])}
    assert any(x.startswith("numpy") for x in
               recipe.get("requirements", {}).get("added", [])), f"recipe: {out.get('recipe')}"


def test_a_text_has_no_colour_on_a_pipe(rootlock, locks):
    proc = diff(rootlock, locks["a"], locks["b"])
    assert proc.returncode == 1 and "\x1b[" not in proc.stdout and "torch" in proc.stdout, \
        f"text: exit {proc.returncode}: {proc.stdout[:600]}"


def test_a_markdown_has_lock_changes_heading(rootlock, locks):
    proc = diff(rootlock, locks["a"], locks["b"], "--format", "markdown")
    assert proc.returncode == 1 and proc.stdout.startswith("### Lock changes"), \
        f"markdown: exit {proc.returncode}: {proc.stdout[:300]}"


# (b) the same meaning.

def package_names(lock_text):
    lines = [line for line in lock_text.splitlines() if line.strip()]
    return [lines[i + 1] for i, line in enumerate(lines) if line == "[[packages]]"]


@pytest.fixture(scope="module")
def moved(scratch, locks):
    """A's text reformatted: packages reversed, other spacing, comments."""
    with open(locks["a"]) as f:
        text = f.read()
    return write(os.path.join(scratch, "pylock.a-moved.toml"), reformatted(text))


def test_b_reformatted_copy_holds_packages_reversed(locks, moved):
    with open(locks["a"]) as f:
        first = package_names(f.read())
    with open(moved) as f:
        first_moved = package_names(f.read())
    assert len(first) > 2 and first_moved == list(reversed(first)), \
        f"the reformatted copy does not hold the packages reversed: {first} / {first_moved}"


@pytest.mark.parametrize("other", ["itself", "reformatted"])
def test_b_same_meaning_no_difference(rootlock, locks, moved, other):
    b = locks["a"] if other == "itself" else moved
    proc = diff(rootlock, locks["a"], b)
    assert proc.returncode == 0 and proc.stdout == "no difference in meaning\n", \
        f"{os.path.basename(b)}: exit {proc.returncode}: {proc.stdout[:400]}{proc.stderr}"


# (c) a rebuilt artifact: same name and version, another digest.

@pytest.fixture(scope="module")
def rebuilt(scratch, locks):
    """(path, package name): A with one nvidia-* wheel's sha256 changed."""
    with open(locks["a"], "rb") as f:
        data = tomllib.load(f)
    with open(locks["a"]) as f:
        text = f.read()
    victim = next(p for p in data["packages"] if p["name"].startswith("nvidia-"))
    old = victim["wheels"][0]["hashes"]["sha256"]
    path = write(os.path.join(scratch, "pylock.a-rebuilt.toml"), text.replace(old, "0" * 64))
    return path, victim["name"]


def test_c_rebuilt_wheel_json_kind(rootlock, locks, rebuilt):
    proc = diff(rootlock, locks["a"], rebuilt[0], "--json")
    out = json_or_none(proc.stdout) if proc.stdout.startswith("{") else None
    kinds = [c for p in (out or {}).get("nvidia", []) for c in p["changes"]]
    assert proc.returncode == 1 and kinds == ["rebuilt"], \
        f"rebuilt: exit {proc.returncode}: {kinds}"


def test_c_rebuilt_wheel_text_bang_line(rootlock, locks, rebuilt):
    path, name = rebuilt
    proc = diff(rootlock, locks["a"], path)
    assert any(line.lstrip().startswith("!") and name in line
               for line in proc.stdout.splitlines()), f"text: {proc.stdout}"


# (d) foreign and malformed locks.

@pytest.fixture(scope="module")
def foreign(scratch):
    return write(os.path.join(scratch, "pylock.uv.toml"), FOREIGN)


def test_d_foreign_lock_against_itself_equal(rootlock, foreign):
    proc = diff(rootlock, foreign, foreign)
    assert proc.returncode == 0, f"foreign vs itself: {proc.returncode} {proc.stderr}"


def test_d_foreign_lock_against_ours_differs_without_crash(rootlock, foreign, locks):
    proc = diff(rootlock, foreign, locks["a"])
    assert proc.returncode == 1 and not proc.stderr, \
        f"foreign vs ours: {proc.returncode} {proc.stderr}"


BAD_LOCKS = {
    "pylock.future.toml": FOREIGN.replace('lock-version = "1.0"', 'lock-version = "2.0"'),
    "pylock.nokey.toml": FOREIGN.replace('name = "numpy"\n', ""),
    "absent.toml": None,
}


@pytest.mark.parametrize("name", list(BAD_LOCKS),
                         ids=["unknown-major", "missing-required-key", "missing-file"])
def test_d_bad_lock_one_line_exit_2(rootlock, scratch, locks, name):
    bad = os.path.join(scratch, name)
    if BAD_LOCKS[name] is not None:
        write(bad, BAD_LOCKS[name])
    proc = diff(rootlock, bad, locks["a"])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and not proc.stdout, \
        f"{name}: exit {proc.returncode}: {proc.stderr}"
    print(f"(d) {name}: {proc.stderr.strip()}")
