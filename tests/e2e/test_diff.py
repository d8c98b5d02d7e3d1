"""End-to-end: `rootlock diff A B` over locks that `rootlock lock` really wrote.

Usage: test_diff.py ROOTLOCK

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
import shutil
import subprocess
import sys
import tempfile

from fixtures import index_server, package_graph
from fixtures.debian_root import base_tarball
from fixtures.failures import Failures


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


def run(argv, env=None):
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)


def diff(rootlock, a, b, *extra):
    return run([rootlock, "diff", a, b, *extra], env=dict(os.environ, NO_COLOR="1"))


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


def main(argv):
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    work = tempfile.mkdtemp(prefix="rootlock-diff-")
    try:
        graph = package_graph.build_graph(os.path.join(work, "graph"),
                                          package_graph.DEFAULT_STACKS + (package_graph.CU13_STACK,))
        base = base_tarball()
        cache = os.path.join(work, "cache")
        locks = {}
        with index_server.IndexServer(graph, style="pypi") as server:
            for name, torch, cuda, driver, requires in [
                    ("a", "2.8.0", "12.8", "570.133.07", ["app-cli"]),
                    ("b", "2.9.1", "13.0", "580.65.06", ["app-cli", "numpy<2.2"])]:
                recipe = write_recipe(os.path.join(work, f"{name}.toml"), server.simple_url,
                                      base, torch, cuda, driver, requires)
                locks[name] = os.path.join(work, f"pylock.{name}.toml")
                proc = run([rootlock, "lock", recipe, "-o", locks[name], "--cache-dir", cache])
                if not fail.expect(proc.returncode == 0, f"lock {name}: {proc.stderr}"):
                    return 1
        a, b = locks["a"], locks["b"]

        # (a) the cu12 -> cu13 move.
        proc = diff(rootlock, a, b, "--json")
        fail.expect(proc.returncode == 1, f"(a) exit {proc.returncode}: {proc.stderr}")
        out = json.loads(proc.stdout) if proc.stdout.startswith("{") else {}
        target = {f["field"]: (f["before"], f["after"]) for f in out.get("target", [])}
        fail.expect(target.get("cuda-major") == ("12", "13") and
                    target.get("driver") == ("570.133.07", "580.65.06"),
                    f"(a) target: {out.get('target')}")
        torch = {p["name"]: p for p in out.get("torch", [])}
        fail.expect(torch.get("torch", {}).get("after") == "2.9.1+cu130" and
                    "upgraded" in torch.get("torch", {}).get("changes", []),
                    f"(a) torch: {out.get('torch')}")
        nvidia = out.get("nvidia", [])
        removed = [p["name"] for p in nvidia if "removed" in p["changes"]]
        added = [p["name"] for p in nvidia if "added" in p["changes"]]
        fail.expect(any(n.endswith("-cu12") for n in removed) and
                    any(n.endswith("-cu13") for n in added),
                    f"(a) nvidia set: removed {removed}, added {added}")
        sonames = out.get("sonames", {})
        fail.expect(13 in sonames.get("cuda_majors_added", []) and
                    12 in sonames.get("cuda_majors_removed", []),
                    f"(a) CUDA majors: {sonames}")
        recipe = {r["field"]: r for r in out.get("recipe", [])}
        fail.expect(any(x.startswith("numpy") for x in
                        recipe.get("requirements", {}).get("added", [])),
                    f"(a) recipe: {out.get('recipe')}")
        print(f"(a) {len(nvidia)} nvidia changes, {len(sonames.get('changes', []))} soname "
              f"changes, target {sorted(target)}")
        proc = diff(rootlock, a, b)
        fail.expect(proc.returncode == 1 and "\x1b[" not in proc.stdout and
                    "torch" in proc.stdout, f"(a) text: {proc.stdout[:600]}")
        proc = diff(rootlock, a, b, "--format", "markdown")
        fail.expect(proc.returncode == 1 and proc.stdout.startswith("### Lock changes"),
                    f"(a) markdown: {proc.stdout[:300]}")

        # (b) the same meaning.
        with open(a) as f:
            text = f.read()
        moved = os.path.join(work, "pylock.a-moved.toml")
        moved_text = reformatted(text)
        with open(moved, "w") as f:
            f.write(moved_text)
        def package_names(lock_text):
            lines = [line for line in lock_text.splitlines() if line.strip()]
            return [lines[i + 1] for i, line in enumerate(lines) if line == "[[packages]]"]
        first, first_moved = package_names(text), package_names(moved_text)
        fail.expect(len(first) > 2 and first_moved == list(reversed(first)),
                    "(b) the reformatted copy does not hold the packages reversed")
        for other in (a, moved):
            proc = diff(rootlock, a, other)
            fail.expect(proc.returncode == 0 and proc.stdout == "no difference in meaning\n",
                        f"(b) {os.path.basename(other)}: exit {proc.returncode}: "
                        f"{proc.stdout[:400]}{proc.stderr}")

        # (c) a rebuilt artifact: same name and version, another digest.
        with open(a, "rb") as f:
            import tomllib
            data = tomllib.load(f)
        victim = next(p for p in data["packages"] if p["name"].startswith("nvidia-"))
        old = victim["wheels"][0]["hashes"]["sha256"]
        rebuilt = os.path.join(work, "pylock.a-rebuilt.toml")
        with open(rebuilt, "w") as f:
            f.write(text.replace(old, "0" * 64))
        proc = diff(rootlock, a, rebuilt, "--json")
        out = json.loads(proc.stdout) if proc.stdout.startswith("{") else {}
        kinds = [c for p in out.get("nvidia", []) for c in p["changes"]]
        fail.expect(proc.returncode == 1 and kinds == ["rebuilt"],
                    f"(c) rebuilt: exit {proc.returncode}: {kinds}")
        proc = diff(rootlock, a, rebuilt)
        fail.expect(any(line.lstrip().startswith("!") and victim["name"] in line
                        for line in proc.stdout.splitlines()),
                    f"(c) text: {proc.stdout}")

        # (d) foreign and malformed locks.
        foreign = os.path.join(work, "pylock.uv.toml")
        with open(foreign, "w") as f:
            f.write(FOREIGN)
        proc = diff(rootlock, foreign, foreign)
        fail.expect(proc.returncode == 0, f"(d) foreign vs itself: {proc.returncode} {proc.stderr}")
        proc = diff(rootlock, foreign, a)
        fail.expect(proc.returncode == 1 and not proc.stderr,
                    f"(d) foreign vs ours: {proc.returncode} {proc.stderr}")
        future = os.path.join(work, "pylock.future.toml")
        with open(future, "w") as f:
            f.write(FOREIGN.replace('lock-version = "1.0"', 'lock-version = "2.0"'))
        missing_key = os.path.join(work, "pylock.nokey.toml")
        with open(missing_key, "w") as f:
            f.write(FOREIGN.replace('name = "numpy"\n', ""))
        for bad in (future, missing_key, os.path.join(work, "absent.toml")):
            proc = diff(rootlock, bad, a)
            lines = proc.stderr.strip().splitlines()
            fail.expect(proc.returncode == 2 and len(lines) == 1 and not proc.stdout,
                        f"(d) {os.path.basename(bad)}: exit {proc.returncode}: {proc.stderr}")
            print(f"(d) {os.path.basename(bad)}: {proc.stderr.strip()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fail.items:
        print(f"{len(fail.items)} expectation(s) failed")
        return 1
    print("all expectations met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
