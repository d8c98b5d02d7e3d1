"""End-to-end: yanked releases pinned by a dependency, and no silent downgrade of a root
requirement, with the real pip as the referee.

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
The index, its two servers, pip's answer for each set of roots and each lock are module
fixtures; the --json relock of (a, d) works on a copy of the text-mode lock, so any case runs
alone.
"""
import json
import os
import shutil
import tomllib

import pytest

from fixtures import index_server, package_graph, pip_like, pip_referee, wheel_builder
from fixtures.cli import json_or_none, run
from fixtures.debian_root import base_tarball

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

APP_PINS = {"app": "1.1.0", "torchlike": "2.8.0", "nvidia-nccl-cu12": "2.27.3",
            "tl-helper": "1.0"}
STUCK_PINS = {"stuck": "1.0.0", "torchlike": "2.7.0", "nvidia-nccl-cu12": "2.26.5"}
RANGE_ROOTS = ["torchlike", "nvidia-nccl-cu12>=2.26"]
RANGE_PINS = {"torchlike": "2.8.0", "nvidia-nccl-cu12": "2.27.3", "tl-helper": "1.0"}
WILDCARD = ["nvidia-nccl-cu12==2.27.*"]

NCCL_LINE = ('rootlock: warning: nvidia-nccl-cu12 2.27.3 is yanked ("' + NCCL_REASON +
             '"), chosen because torchlike 2.8.0 requires nvidia-nccl-cu12==2.27.3')
HELPER_LINE = ("rootlock: warning: tl-helper 1.0 is yanked (no reason given), chosen "
               "because torchlike 2.8.0 requires tl-helper===1.0")
STUCK_WHY = ("with stuck==1.1.0, no version of nvidia-nccl-cu12 satisfies every requirement:\n"
             "  stuck 1.1.0 requires nvidia-nccl-cu12>=2.27,<2.28, which no version of "
             "nvidia-nccl-cu12 matches (available: 2.26.5, 2.27.3 (yanked), 2.28.0)\n"
             "  the recipe requires stuck==1.1.0")


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
    """(exit code, the --json report or None, stdout, stderr) of `rootlock lock`."""
    argv = [rootlock, "lock", recipe, "-o", out, "--cache-dir", cache] + (
        ["--json"] if as_json else [])
    proc = run(argv, timeout=600)
    report = json_or_none(proc.stdout) if as_json else None
    return proc.returncode, report, proc.stdout, proc.stderr


def locked(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return {p["name"]: p for p in data["packages"]}


def pins(packages):
    return {name: p["version"] for name, p in packages.items()}


def tools(packages):
    return {name: p.get("tool", {}).get("rootlock", {}) for name, p in packages.items()}


def warnings_of(stderr):
    return [line for line in stderr.splitlines() if line.startswith("rootlock: warning: ")]


def read(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def graph(scratch):
    wheels = os.path.join(scratch, "wheels")
    os.makedirs(wheels)
    return build_index(wheels)


@pytest.fixture(scope="module")
def base():
    return base_tarball()


@pytest.fixture(scope="module")
def pypi(graph):
    with index_server.IndexServer(graph, style="pypi") as server:
        yield server


@pytest.fixture(scope="module")
def pip(scratch, pypi):
    """pip(roots): (exit code, {canonical name: version} or None, output) of pip's dry-run
    resolution for the lock's target (CPython 3.11, manylinux x86_64), from the JSON index
    only; each set of roots resolved once."""
    answers = {}

    def resolve(roots):
        key = tuple(roots)
        if key not in answers:
            work = os.path.join(scratch, f"pip-{len(answers)}")
            os.makedirs(work)
            answers[key] = pip_referee.resolve(pypi.simple_url, roots, work, PLATFORMS)
        return answers[key]
    return resolve


def pip_pins(pip, roots, wanted):
    """pip's pins for roots, asserted to be the referee's known answer `wanted`."""
    rc, got, out = pip(roots)
    assert rc == 0, f"expected pip to resolve {roots} (exit 0), got exit {rc}:\n{out[-3000:]}"
    assert got == wanted, f"the referee's own answer for {roots} changed: expected {wanted}, " \
                          f"got {got}"
    return got


@pytest.mark.parametrize("roots, wanted", [(["app"], APP_PINS), (["stuck"], STUCK_PINS),
                                           (RANGE_ROOTS, RANGE_PINS)],
                         ids=["a-app", "b-stuck", "e-pin-beside-range"])
def test_referee_answer(pip, roots, wanted):
    pip_pins(pip, roots, wanted)


# ---------------------------------------------------------------------------------------------
# (a) and (d): `lock app`.

@pytest.fixture(scope="module")
def app_lock(rootlock, scratch, pypi, base):
    """`lock app` in text mode: (recipe, lock path, cache, stdout, stderr)."""
    recipe = write_recipe(os.path.join(scratch, "app.toml"), pypi.simple_url, base, ["app"])
    out = os.path.join(scratch, "pylock.app.toml")
    cache = os.path.join(scratch, "cache-app")
    rc, _, stdout, stderr = lock(rootlock, recipe, out, cache, as_json=False)
    assert rc == 0, f"lock app: expected exit 0, got {rc}: {stderr[-3000:]}"
    return recipe, out, cache, stdout, stderr


@pytest.fixture(scope="module")
def app_json_relock(rootlock, scratch, app_lock):
    """`lock app --json` over a copy of app_lock's lock, same cache: (report, lock path,
    stderr)."""
    recipe, first, cache, _, _ = app_lock
    out = os.path.join(scratch, "pylock.app-relock.toml")
    shutil.copyfile(first, out)
    rc, report, _, stderr = lock(rootlock, recipe, out, cache, as_json=True)
    assert rc == 0 and report is not None, \
        f"lock app --json: expected exit 0 and a JSON report, got exit {rc}: {stderr[-2000:]}"
    return report, out, stderr


def test_a_pins_equal_pips(pip, app_lock):
    want = pip_pins(pip, ["app"], APP_PINS)
    got = pins(locked(app_lock[1]))
    assert got == want, f"expected pip's pins {want}, rootlock locked {got}"
    print(f"(a) pip and rootlock agree: {got}")


def test_a_nccl_yanked_reason_recorded(app_lock):
    nccl = tools(locked(app_lock[1])).get("nvidia-nccl-cu12", {})
    assert nccl.get("yanked") == NCCL_REASON, \
        f"expected nvidia-nccl-cu12's yanked = {NCCL_REASON!r}: {nccl}"


def test_a_helper_yanked_true_without_reason(app_lock):
    helper = tools(locked(app_lock[1])).get("tl-helper", {})
    assert helper.get("yanked") is True, \
        f"expected tl-helper's yanked = true (no reason): {helper}"


def test_a_not_yanked_not_recorded(app_lock):
    recorded = tools(locked(app_lock[1]))
    assert all("yanked" not in recorded.get(n, {}) for n in ("app", "torchlike")), \
        f"expected no yanked key on app and torchlike (not yanked): {recorded}"


def test_a_one_warning_per_yanked_wheel(app_lock):
    warned = warnings_of(app_lock[4])
    assert warned == [NCCL_LINE, HELPER_LINE], \
        f"expected exactly the warnings\n  {NCCL_LINE}\n  {HELPER_LINE}\ngot:\n  " + \
        "\n  ".join(warned)
    print("(a) " + "\n(a) ".join(warned))


def test_a_text_output_counts_4_packages(app_lock):
    stdout = app_lock[3]
    assert "locked 4 packages" in stdout, f"expected 'locked 4 packages' in: {stdout}"


def test_a_json_lists_the_yanked(app_json_relock):
    report = app_json_relock[0]
    want = [{"name": "nvidia-nccl-cu12", "version": "2.27.3", "reason": NCCL_REASON,
             "required_by": ["torchlike 2.8.0 requires nvidia-nccl-cu12==2.27.3"]},
            {"name": "tl-helper", "version": "1.0", "reason": None,
             "required_by": ["torchlike 2.8.0 requires tl-helper===1.0"]}]
    assert report.get("yanked") == want, \
        f"expected --json yanked {want}, got {report.get('yanked')}"


def test_a_json_no_downgrades(app_json_relock):
    report = app_json_relock[0]
    assert report.get("downgrades") == [], \
        f"expected --json downgrades [], got {report.get('downgrades')}"


def test_d_relock_writes_the_same_bytes(app_lock, app_json_relock):
    # The relock read the lock with its yanked keys (as the previous lock) and kept it.
    assert read(app_json_relock[1]) == read(app_lock[1]), "expected the relock to keep the lock " \
        "byte for byte; it changed"


def test_d_relock_reads_its_own_lock(app_json_relock):
    stderr = app_json_relock[2]
    assert not any("ignoring the existing lock" in line for line in warnings_of(stderr)), \
        f"expected the relock to read its own lock (no 'ignoring the existing lock'): {stderr}"


@pytest.fixture(scope="module")
def html_app_lock(rootlock, scratch, graph, base):
    """`lock app` from the PyTorch-style HTML index: (locked packages, stderr)."""
    with index_server.IndexServer(graph, style="pytorch") as server:
        recipe = write_recipe(os.path.join(scratch, "app-html.toml"), server.simple_url, base,
                              ["app"])
        out = os.path.join(scratch, "pylock.app-html.toml")
        rc, _, _, stderr = lock(rootlock, recipe, out, os.path.join(scratch, "cache-html"),
                                as_json=False)
    assert rc == 0, f"lock app from the HTML index: expected exit 0, got {rc}: {stderr[-2000:]}"
    return locked(out), stderr


def test_a_html_pins_equal_pips(pip, html_app_lock):
    want = pip_pins(pip, ["app"], APP_PINS)
    got = pins(html_app_lock[0])
    assert got == want, f"expected pip's pins {want} from the HTML index, got {got}"


def test_a_html_yanked_reason_recorded(html_app_lock):
    nccl = tools(html_app_lock[0]).get("nvidia-nccl-cu12", {})
    assert nccl.get("yanked") == NCCL_REASON, \
        f"expected data-yanked's reason recorded as nvidia-nccl-cu12's yanked: {nccl}"


def test_a_html_two_warnings(html_app_lock):
    stderr = html_app_lock[1]
    assert len(warnings_of(stderr)) == 2, f"expected 2 warnings from the HTML index: {stderr}"


# ---------------------------------------------------------------------------------------------
# (b) and (c): no silent downgrade; a wildcard is not an exact pin.

@pytest.fixture(scope="module")
def stuck_recipe(scratch, pypi, base):
    return write_recipe(os.path.join(scratch, "stuck.toml"), pypi.simple_url, base, ["stuck"])


@pytest.fixture(scope="module")
def stuck_lock(rootlock, scratch, stuck_recipe):
    """`lock stuck` in text mode: (lock path, stderr)."""
    out = os.path.join(scratch, "pylock.stuck.toml")
    rc, _, _, stderr = lock(rootlock, stuck_recipe, out, os.path.join(scratch, "cache-stuck"),
                            as_json=False)
    assert rc == 0, f"lock stuck: expected exit 0, got {rc}: {stderr[-3000:]}"
    return out, stderr


@pytest.fixture(scope="module")
def stuck_json_lock(rootlock, scratch, stuck_recipe):
    """`lock stuck --json` into a fresh path: (exit code, report, stderr)."""
    out = os.path.join(scratch, "pylock.stuck-json.toml")
    rc, report, _, stderr = lock(rootlock, stuck_recipe, out,
                                 os.path.join(scratch, "cache-stuck"), as_json=True)
    return rc, report, stderr


def test_b_pins_equal_pips(pip, stuck_lock):
    want = pip_pins(pip, ["stuck"], STUCK_PINS)
    got = pins(locked(stuck_lock[0]))
    assert got == want, f"expected pip's pins {want}, rootlock locked {got}"


def test_b_text_warns_of_the_downgrade_with_why(stuck_lock):
    stderr = stuck_lock[1]
    expected = "rootlock: warning: stuck: locked 1.0.0, not the newest 1.1.0: " + STUCK_WHY
    assert expected in stderr, f"expected the downgrade's why on stderr:\n{expected}\ngot:\n{stderr}"
    print("(b) " + stderr.strip().replace("\n", "\n(b) "))


def test_b_json_downgrades_entry(stuck_json_lock):
    rc, report, stderr = stuck_json_lock
    want = [{"name": "stuck", "chosen": "1.0.0", "newest": "1.1.0", "why": STUCK_WHY}]
    assert rc == 0 and report is not None and report.get("downgrades") == want, \
        f"expected exit 0 and --json downgrades {want}: exit {rc}, " \
        f"{report and report.get('downgrades')} {stderr[-2000:]}"


def test_b_json_yanked_empty(stuck_json_lock):
    _, report, _ = stuck_json_lock
    assert report is not None and report.get("yanked") == [], \
        f"expected --json yanked [], got {report and report.get('yanked')}"


def test_c_pip_finds_nothing_for_a_wildcard(pip):
    rc, got, _ = pip(WILDCARD)
    assert rc != 0 and got is None, \
        f"expected pip to find nothing for {WILDCARD} (a wildcard is no exact pin), got {got}"


def test_c_wildcard_exit_2_lists_the_yanked(rootlock, scratch, pypi, base):
    recipe = write_recipe(os.path.join(scratch, "wild.toml"), pypi.simple_url, base, WILDCARD)
    out = os.path.join(scratch, "pylock.wild.toml")
    rc, _, _, stderr = lock(rootlock, recipe, out, os.path.join(scratch, "cache-stuck"),
                            as_json=False)
    want = ("no version of nvidia-nccl-cu12 matches nvidia-nccl-cu12==2.27.* "
            "(available: 2.26.5, 2.27.3 (yanked), 2.28.0)")
    assert rc == 2 and not os.path.exists(out) and want in stderr, \
        f"expected exit 2, no lock, and '{want}': exit {rc}: {stderr}"
    print(f"(c) rootlock exit {rc}: {stderr.strip()}")


# ---------------------------------------------------------------------------------------------
# (e) an exact pin beside a range.

@pytest.fixture(scope="module")
def range_lock(rootlock, scratch, pypi, base):
    """`lock torchlike "nvidia-nccl-cu12>=2.26"` with --json: (locked packages, report)."""
    recipe = write_recipe(os.path.join(scratch, "range.toml"), pypi.simple_url, base,
                          RANGE_ROOTS)
    out = os.path.join(scratch, "pylock.range.toml")
    rc, report, _, stderr = lock(rootlock, recipe, out, os.path.join(scratch, "cache-range"),
                                 as_json=True)
    assert rc == 0 and report is not None, \
        f"lock {RANGE_ROOTS}: expected exit 0 and a JSON report, got exit {rc}: {stderr[-3000:]}"
    return locked(out), report


def test_e_pins_equal_pips(pip, range_lock):
    want = pip_pins(pip, RANGE_ROOTS, RANGE_PINS)
    got = pins(range_lock[0])
    assert got == want, f"expected pip's pins {want}, rootlock locked {got}"
    print(f"(e) pip and rootlock agree: {got}")


def test_e_yanked_chosen_by_the_pin(range_lock):
    report = range_lock[1]
    yanked = {entry["name"]: entry["required_by"] for entry in report.get("yanked", [])}
    assert yanked.get("nvidia-nccl-cu12") == \
        ["torchlike 2.8.0 requires nvidia-nccl-cu12==2.27.3"], \
        f"expected nvidia-nccl-cu12 recorded as chosen by torchlike 2.8.0's pin: " \
        f"{report.get('yanked')}"


def test_e_range_newest_reported_not_taken(range_lock):
    downgrades = range_lock[1].get("downgrades", [])
    assert [(d["name"], d["chosen"], d["newest"]) for d in downgrades] == \
        [("nvidia-nccl-cu12", "2.27.3", "2.28.0")] and \
        "torchlike 2.8.0 requires nvidia-nccl-cu12==2.27.3" in downgrades[0]["why"], \
        f"expected one downgrade, nvidia-nccl-cu12 2.27.3 not 2.28.0, why naming torchlike " \
        f"2.8.0's pin: {downgrades}"
