"""End-to-end: yanked releases pinned by a dependency, and no silent downgrade of a root
requirement, with the real pip as the referee.

Usage: test_lock_yanked.py ROOTLOCK

A small index of real wheels on 127.0.0.1 (fixtures/index_server.py, JSON and PyTorch-style
HTML), over the real Debian base tarball:
  app 1.1.0 -> torchlike==2.8.0 -> nvidia-nccl-cu12==2.27.3 (yanked, with a reason) and
                                   tl-helper===1.0 (yanked, no reason; 0.9 is not)
  app 1.0.0 -> torchlike==2.7.0 -> nvidia-nccl-cu12==2.26.5
  stuck 1.1.0 -> nvidia-nccl-cu12>=2.27,<2.28 (a range: only the yanked 2.27.3 matches)
  stuck 1.0.0 -> torchlike==2.7.0
  nvidia-nccl-cu12 also has 2.28.0, newer and not yanked.
Then:
  a. `lock app`: the pins equal pip's (app 1.1.0, not the 1.0.0 rootlock locked before PEP 592
     was applied to every pin); the lock records both yanked wheels under
     [packages.tool.rootlock] (the reason, or true), and stderr warns once per yanked wheel with
     its reason and the pin that required it; --json lists them; the same from the HTML index;
  b. `lock stuck`: pip and rootlock both take stuck 1.0.0; rootlock says so and why, on stderr
     in text mode and as a `downgrades` entry with --json;
  c. `nvidia-nccl-cu12==2.27.*` (a wildcard is not an exact pin): pip finds nothing, rootlock
     fails with exit 2 and lists 2.27.3 as yanked;
  d. a relock reads its own lock (the yanked key included) and writes the same bytes;
  e. `lock torchlike "nvidia-nccl-cu12>=2.26"`: pip merges the range with torchlike 2.8.0's pin
     and takes the yanked 2.27.3 with the newest torchlike; rootlock's pins equal pip's, the
     yanked wheel is recorded as chosen by that pin, and the range's newest (2.28.0) is
     reported as not taken, with why.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

from fixtures import index_server, package_graph, pip_like, pip_referee, wheel_builder
from fixtures.debian_root import base_tarball
from fixtures.failures import Failures

NCCL_REASON = "NCCL 2.27.3 hangs in all_reduce on H100: use 2.27.5"
PLATFORMS = ["manylinux_2_36_x86_64", "manylinux_2_28_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64"]

# (name, version, Requires-Dist, yanked: False, True or the reason)
PACKAGES = [
    ("app", "1.0.0", ["torchlike==2.7.0"], False),
    ("app", "1.1.0", ["torchlike==2.8.0"], False),
    ("torchlike", "2.7.0", ["nvidia-nccl-cu12==2.26.5"], False),
    ("torchlike", "2.8.0", ["nvidia-nccl-cu12==2.27.3; platform_system == 'Linux'",
                            "tl-helper===1.0"], False),
    ("nvidia-nccl-cu12", "2.26.5", [], False),
    ("nvidia-nccl-cu12", "2.27.3", [], NCCL_REASON),
    ("nvidia-nccl-cu12", "2.28.0", [], False),
    ("tl-helper", "0.9", [], False),
    ("tl-helper", "1.0", [], True),
    ("stuck", "1.0.0", ["torchlike==2.7.0"], False),
    ("stuck", "1.1.0", ["nvidia-nccl-cu12>=2.27,<2.28"], False),
]


def build_index(out_dir):
    """The graph above as real wheels, in the shape index_server serves."""
    files = []
    for rank, (name, version, requires, yanked) in enumerate(PACKAGES):
        spec = package_graph.pure(name, version, requires)
        built = wheel_builder.build_wheel(spec, out_dir)
        files.append(package_graph.IndexFile(
            project=pip_like.canonical_name(name), name=name, version=version,
            filename=built.filename, path=built.path, sha256=built.sha256, size=built.size,
            metadata=built.metadata, requires_python=None, yanked=yanked, hash_listed=True,
            upload_time=f"2024-02-{rank + 1:02d}T12:00:00.000000Z"))
    files.sort(key=lambda f: (f.project, package_graph.version_key(f.version), f.filename))
    return package_graph.Graph(root=out_dir, stacks=(), files=files, rebuilt={})


def write_recipe(path, index_url, base, requires):
    base_path, base_sha = base
    with open(path, "w") as f:
        f.write(f'[image]\nname = "yanked"\n\n[base]\ntarball = "{base_path}"\n'
                f'sha256 = "{base_sha}"\n\n[python]\nversion = "3.11"\n\n'
                f'[[index]]\nname = "fixture"\nurl = "{index_url}"\n\n'
                f'[packages]\nrequires = {json.dumps(requires)}\n')
    return path


def lock(rootlock, recipe, out, cache, as_json):
    argv = [rootlock, "lock", recipe, "-o", out, "--cache-dir", cache] + (
        ["--json"] if as_json else [])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    report = None
    if as_json:
        try:
            report = json.loads(proc.stdout)
        except json.JSONDecodeError:
            pass
    return proc.returncode, report, proc.stdout, proc.stderr


def pip_resolve(index_url, roots, scratch):
    """(exit code, {canonical name: version} or None, output) of pip's dry-run resolution for
    the lock's target (CPython 3.11, manylinux x86_64); pip reaches nothing but index_url."""
    return pip_referee.resolve(index_url, roots, scratch, PLATFORMS)


def locked(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return {p["name"]: p for p in data["packages"]}


def warnings_of(stderr):
    return [line for line in stderr.splitlines() if line.startswith("rootlock: warning: ")]


def scenario_yanked(fail, rootlock, graph, base, work):
    """(a) and (d)."""
    with index_server.IndexServer(graph, style="pypi") as server:
        rc, pip_pins, out = pip_resolve(server.simple_url, ["app"], work)
        if not fail.expect(rc == 0, f"(a) pip failed on app (exit {rc}):\n{out[-3000:]}"):
            return
        want = {"app": "1.1.0", "torchlike": "2.8.0", "nvidia-nccl-cu12": "2.27.3",
                "tl-helper": "1.0"}
        fail.expect(pip_pins == want, f"(a) the referee's own answer changed: {pip_pins}")

        recipe = write_recipe(os.path.join(work, "app.toml"), server.simple_url, base, ["app"])
        out_path = os.path.join(work, "pylock.app.toml")
        cache = os.path.join(work, "cache-app")
        rc, _, stdout, stderr = lock(rootlock, recipe, out_path, cache, as_json=False)
        if not fail.expect(rc == 0, f"(a) lock app: exit {rc}: {stderr[-3000:]}"):
            return
        packages = locked(out_path)
        pins = {name: p["version"] for name, p in packages.items()}
        fail.expect(pins == pip_pins, f"(a) rootlock {pins}, pip {pip_pins}")
        tools = {name: p.get("tool", {}).get("rootlock", {}) for name, p in packages.items()}
        nccl, helper = tools.get("nvidia-nccl-cu12", {}), tools.get("tl-helper", {})
        fail.expect(nccl.get("yanked") == NCCL_REASON, f"(a) nccl's yanked record: {nccl}")
        fail.expect(helper.get("yanked") is True,
                    f"(a) tl-helper's yanked record (no reason): {helper}")
        fail.expect(all("yanked" not in tools.get(n, {}) for n in ("app", "torchlike")),
                    f"(a) a wheel that is not yanked is recorded as yanked: {tools}")
        warned = warnings_of(stderr)
        nccl_line = ('rootlock: warning: nvidia-nccl-cu12 2.27.3 is yanked ("' + NCCL_REASON +
                     '"), chosen because torchlike 2.8.0 requires nvidia-nccl-cu12==2.27.3')
        helper_line = ("rootlock: warning: tl-helper 1.0 is yanked (no reason given), chosen "
                       "because torchlike 2.8.0 requires tl-helper===1.0")
        fail.expect(warned == [nccl_line, helper_line],
                    f"(a) warnings:\n  " + "\n  ".join(warned))
        fail.expect("locked 4 packages" in stdout, f"(a) text output: {stdout}")
        print(f"(a) pip and rootlock agree: {pins}")
        print("(a) " + "\n(a) ".join(warned))
        first = open(out_path, "rb").read()

        rc, report, _, stderr = lock(rootlock, recipe, out_path, cache, as_json=True)
        fail.expect(rc == 0 and report is not None, f"(a) --json: exit {rc}: {stderr[-2000:]}")
        if report is not None:
            fail.expect(report.get("yanked") == [
                {"name": "nvidia-nccl-cu12", "version": "2.27.3", "reason": NCCL_REASON,
                 "required_by": ["torchlike 2.8.0 requires nvidia-nccl-cu12==2.27.3"]},
                {"name": "tl-helper", "version": "1.0", "reason": None,
                 "required_by": ["torchlike 2.8.0 requires tl-helper===1.0"]}],
                f"(a) --json yanked: {report.get('yanked')}")
            fail.expect(report.get("downgrades") == [],
                        f"(a) --json downgrades: {report.get('downgrades')}")
        # (d) the relock read the lock with its yanked keys (as the previous lock) and kept it.
        fail.expect(open(out_path, "rb").read() == first, "(d) the relock changed the lock")
        fail.expect(not any("ignoring the existing lock" in line for line in warnings_of(stderr)),
                    f"(d) the relock could not read its own lock: {stderr}")

    with index_server.IndexServer(graph, style="pytorch") as server:
        recipe = write_recipe(os.path.join(work, "app-html.toml"), server.simple_url, base,
                              ["app"])
        html_out = os.path.join(work, "pylock.app-html.toml")
        rc, _, _, stderr = lock(rootlock, recipe, html_out, os.path.join(work, "cache-html"),
                                as_json=False)
        if fail.expect(rc == 0, f"(a) HTML index: exit {rc}: {stderr[-2000:]}"):
            packages = locked(html_out)
            fail.expect({n: p["version"] for n, p in packages.items()} == pip_pins,
                        f"(a) HTML index pins: {packages.keys()}")
            nccl = packages.get("nvidia-nccl-cu12", {}).get("tool", {}).get("rootlock", {})
            fail.expect(nccl.get("yanked") == NCCL_REASON,
                        f"(a) HTML index: data-yanked's reason is not recorded: {nccl}")
            fail.expect(len(warnings_of(stderr)) == 2, f"(a) HTML index warnings: {stderr}")


def scenario_downgrade(fail, rootlock, graph, base, work):
    """(b) and (c)."""
    with index_server.IndexServer(graph, style="pypi") as server:
        rc, pip_pins, out = pip_resolve(server.simple_url, ["stuck"], work)
        if not fail.expect(rc == 0, f"(b) pip failed on stuck (exit {rc}):\n{out[-3000:]}"):
            return
        fail.expect(pip_pins == {"stuck": "1.0.0", "torchlike": "2.7.0",
                                 "nvidia-nccl-cu12": "2.26.5"},
                    f"(b) the referee's own answer changed: {pip_pins}")
        recipe = write_recipe(os.path.join(work, "stuck.toml"), server.simple_url, base,
                              ["stuck"])
        out_path = os.path.join(work, "pylock.stuck.toml")
        cache = os.path.join(work, "cache-stuck")
        rc, _, _, stderr = lock(rootlock, recipe, out_path, cache, as_json=False)
        if not fail.expect(rc == 0, f"(b) lock stuck: exit {rc}: {stderr[-3000:]}"):
            return
        pins = {name: p["version"] for name, p in locked(out_path).items()}
        fail.expect(pins == pip_pins, f"(b) rootlock {pins}, pip {pip_pins}")
        why = ("with stuck==1.1.0, no version of nvidia-nccl-cu12 satisfies every requirement:\n"
               "  stuck 1.1.0 requires nvidia-nccl-cu12>=2.27,<2.28, which no version of "
               "nvidia-nccl-cu12 matches (available: 2.26.5, 2.27.3 (yanked), 2.28.0)\n"
               "  the recipe requires stuck==1.1.0")
        expected = "rootlock: warning: stuck: locked 1.0.0, not the newest 1.1.0: " + why
        fail.expect(expected in stderr, f"(b) text: the downgrade's why is missing:\n{stderr}")
        print("(b) " + stderr.strip().replace("\n", "\n(b) "))

        os.unlink(out_path)
        rc, report, _, stderr = lock(rootlock, recipe, out_path, cache, as_json=True)
        fail.expect(rc == 0 and report is not None and report.get("downgrades") == [
            {"name": "stuck", "chosen": "1.0.0", "newest": "1.1.0", "why": why}],
            f"(b) --json downgrades: {report and report.get('downgrades')} {stderr[-2000:]}")
        fail.expect(report is not None and report.get("yanked") == [],
                    f"(b) --json yanked: {report and report.get('yanked')}")

        wildcard = ["nvidia-nccl-cu12==2.27.*"]
        rc, pip_pins, out = pip_resolve(server.simple_url, wildcard, work)
        fail.expect(rc != 0 and pip_pins is None, f"(c) pip took a yanked release for a "
                    f"wildcard pin: {pip_pins}")
        recipe = write_recipe(os.path.join(work, "wild.toml"), server.simple_url, base, wildcard)
        wild_out = os.path.join(work, "pylock.wild.toml")
        rc, _, _, stderr = lock(rootlock, recipe, wild_out, cache, as_json=False)
        fail.expect(rc == 2 and not os.path.exists(wild_out) and
                    "no version of nvidia-nccl-cu12 matches nvidia-nccl-cu12==2.27.* "
                    "(available: 2.26.5, 2.27.3 (yanked), 2.28.0)" in stderr,
                    f"(c) wildcard pin: exit {rc}: {stderr}")
        print(f"(c) pip found nothing, rootlock exit {rc}: {stderr.strip()}")


def scenario_pin_beside_range(fail, rootlock, graph, base, work):
    """(e)."""
    roots = ["torchlike", "nvidia-nccl-cu12>=2.26"]
    with index_server.IndexServer(graph, style="pypi") as server:
        rc, pip_pins, out = pip_resolve(server.simple_url, roots, work)
        if not fail.expect(rc == 0, f"(e) pip failed (exit {rc}):\n{out[-3000:]}"):
            return
        fail.expect(pip_pins == {"torchlike": "2.8.0", "nvidia-nccl-cu12": "2.27.3",
                                 "tl-helper": "1.0"},
                    f"(e) the referee's own answer changed: {pip_pins}")
        recipe = write_recipe(os.path.join(work, "range.toml"), server.simple_url, base, roots)
        out_path = os.path.join(work, "pylock.range.toml")
        rc, report, _, stderr = lock(rootlock, recipe, out_path, os.path.join(work, "cache-range"),
                                     as_json=True)
        if not fail.expect(rc == 0 and report is not None, f"(e) exit {rc}: {stderr[-3000:]}"):
            return
        packages = locked(out_path)
        pins = {name: p["version"] for name, p in packages.items()}
        fail.expect(pins == pip_pins, f"(e) rootlock {pins}, pip {pip_pins}")
        yanked = {entry["name"]: entry["required_by"] for entry in report.get("yanked", [])}
        fail.expect(yanked.get("nvidia-nccl-cu12") ==
                    ["torchlike 2.8.0 requires nvidia-nccl-cu12==2.27.3"],
                    f"(e) --json yanked: {report.get('yanked')}")
        downgrades = report.get("downgrades", [])
        fail.expect([(d["name"], d["chosen"], d["newest"]) for d in downgrades] ==
                    [("nvidia-nccl-cu12", "2.27.3", "2.28.0")] and
                    "torchlike 2.8.0 requires nvidia-nccl-cu12==2.27.3" in downgrades[0]["why"],
                    f"(e) --json downgrades: {downgrades}")
        print(f"(e) pip and rootlock agree: {pins}")


def main(argv):
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    work = tempfile.mkdtemp(prefix="rootlock-yanked-")
    try:
        wheels = os.path.join(work, "wheels")
        os.makedirs(wheels)
        graph = build_index(wheels)
        base = base_tarball()
        scenario_yanked(fail, rootlock, graph, base, work)
        scenario_downgrade(fail, rootlock, graph, base, work)
        scenario_pin_beside_range(fail, rootlock, graph, base, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fail.items:
        print(f"{len(fail.items)} expectation(s) failed")
        return 1
    print("all expectations met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
