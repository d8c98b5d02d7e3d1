"""End-to-end: rootlock ldd against the real ld.so, one small scenario per glibc loader rule.

For every fixture of fixtures/loader_rules.py, built in throwaway Debian roots: first the real
ld.so inside the chroot must show the outcome shared/domain/loader.md states (otherwise the
fixture is wrong and the test fails as such); then `rootlock ldd --root ROOT --json` (with
--ld-library-path and --hwcaps as the fixture needs) must give exactly ld.so's (name, path)
list in the same order, the expected `via` (and `via_object` for RPATH hits), and the missing
symbol versions ld.so reports. Each fixture is two cases:
`test_ld_so_agrees_with_loader_md[NAME]` (the referee alone, no rootlock needed) and
`test_rootlock_agrees_with_ld_so[NAME]`.

The root without /etc/ld.so.cache (h-no-cache-file) compares `rootlock ldd` with ld.so, which
then searches only the default directories; `rootlock check` there may model the cache from
ld.so.conf and say so in a note, which is printed, not asserted.
"""
import json
import os

import pytest

from fixtures import loader_rules, referee
from fixtures.cli import run_rootlock
from fixtures.debian_root import copy_root, run_in_chroot

# Every fixture by the root it is built in: loader_rules.build_all's, then the cache steps (each
# changes the root's cache, so step N's fixtures are checked in a root where steps 1..N ran and
# no later one), then the root without a cache. test_every_fixture_is_a_case keeps it complete.
STAGES = {
    "rules": ["a-rpath-vs-runpath", "b-rpath-chain", "c-runpath-not-inherited",
              "d-runpath-stops-chain", "e-ld-library-path", "e-no-ld-library-path", "f-origin",
              "g-nodeflib", "g-nodeflib-llp", "g-nodeflib-requester", "i-wrong-class-skipped",
              "i-only-wrong-class", "j-already-loaded", "l-dollar-lib", "m-missing-version",
              "k-hwcaps"],
    "cache-1": ["h-added-after-ldconfig"],
    "cache-2": ["h-conf-without-ldconfig"],
    "cache-3": ["h-after-ldconfig", "h-first-dir-wins", "g-nodeflib-cache", "g-cache-control"],
    "nocache": ["h-no-cache-file"],
}
STAGE_OF = {name: stage for stage, names in STAGES.items() for name in names}


def referee_problems(root, fx):
    """Where the real ld.so differs from what loader.md says for this fixture; [] if right."""
    refs = referee.ld_so_list_many(root, fx["paths"], fx["ld_library_path"])
    out = []
    for path, want in fx["expected"].items():
        got = refs[path]
        pairs = [(n, p) for n, p, _, _ in want]
        if got.fatal or got.loaded != pairs:
            out.append(f"{path}: loader.md says {referee._fmt(pairs)}, ld.so printed "
                       f"{referee._fmt(got.loaded)} fatal={got.fatal}")
        versions = sorted(v for v, _, _ in got.version_errors)
        if versions != sorted(fx["version_errors"].get(path, [])):
            out.append(f"{path}: version errors {versions}, expected "
                       f"{fx['version_errors'].get(path, [])}")
    for run in fx["runs"]:
        env = [f"{k}={v}" for k, v in sorted(run["env"].items())]
        proc = run_in_chroot(root, ["/usr/bin/env"] + env + run["argv"])
        if run["expect"] not in proc.stdout + proc.stderr:
            out.append(f"running {run['argv']} {run['env']}: expected {run['expect']!r} in "
                       f"{(proc.stdout + proc.stderr).strip()!r}")
    return refs, out


def rootlock_args(fx, hwcaps):
    args = []
    if fx["ld_library_path"] is not None:
        args += ["--ld-library-path", fx["ld_library_path"]]
    if fx["hwcaps"] and hwcaps:
        args += ["--hwcaps", ",".join(hwcaps)]
    return args


def via_problems(fx, gots):
    """Expected via/via_object against rootlock's raw entries."""
    out = []
    for path, want in fx["expected"].items():
        entries = [e for e in gots[path].entries if e.get("via") != "already-loaded"]
        if gots[path].loaded != [(n, p) for n, p, _, _ in want]:
            continue  # the list itself differs: reported by the comparison
        for (name, _, via, obj), entry in zip(want, entries):
            if via is None:
                continue
            if entry.get("via") != via:
                out.append(f"{path}: {name}: via {entry.get('via')!r}, expected {via!r}")
            elif obj and os.path.normpath(entry.get("via_object") or "") != os.path.normpath(obj):
                out.append(f"{path}: {name}: via_object {entry.get('via_object')!r}, "
                           f"expected {obj!r}")
    return out


def baseline_problems(rootlock, root, fx):
    """rootlock without --hwcaps must pick the plain-directory copies (the baseline)."""
    if not fx.get("baseline"):
        return []
    gots = referee.rootlock_ldd(rootlock, root, list(fx["baseline"]),
                                rootlock_args(dict(fx, hwcaps=False), None))
    out = []
    for path, want in fx["baseline"].items():
        have = [p for p in gots[path].loaded if p[0] in dict(want)]
        if have != want:
            out.append(f"{path}: without --hwcaps rootlock gave {have}, expected {want}")
    return out


def check_problems(rootlock, root, fx):
    """Run `rootlock check --json` on check_paths; find check_expect among the problems."""
    if not fx.get("check_paths"):
        return [], None
    proc = run_rootlock(rootlock, "check", "--root", root, "--json", *fx["check_paths"],
                        timeout=600)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return [f"rootlock check rc={proc.returncode}: {proc.stdout[-300:]} "
                f"{proc.stderr[-300:]}"], None
    want = fx.get("check_expect")
    if not want:
        return [], report
    if report.get("ok") is not False or proc.returncode != 1:
        return [f"rootlock check: ok={report.get('ok')} rc={proc.returncode}, "
                "expected false/1"], report
    for problem in report.get("problems", []):
        if all(_matches(problem.get(k), v) for k, v in want.items()):
            return [], report
    return [f"rootlock check: no problem like {want} in "
            f"{json.dumps(report.get('problems'))}"], report


def _matches(value, want):
    return want in value if isinstance(value, list) else value == want


def compare_fixture(rootlock, root, fx, refs, hwcaps):
    gots = referee.rootlock_ldd(rootlock, root, fx["paths"], rootlock_args(fx, hwcaps))
    out = [f"{path}: {d}" for path, diffs in referee.compare(refs, gots).items() for d in diffs]
    out += via_problems(fx, gots)
    out += baseline_problems(rootlock, root, fx)
    problems, report = check_problems(rootlock, root, fx)
    out += problems
    if report is not None and report.get("notes"):
        print(f"    note from rootlock check ({fx['name']}): {report['notes']}")
    return out


class Stages:
    """The roots of STAGES, each built the first time a case asks for one of its fixtures, and
    ld.so's listing of each fixture, run once."""

    def __init__(self, scratch):
        self.scratch = scratch
        self.built = {}
        self.referee = {}
        self.hwcaps = None

    def stage(self, stage):
        """(root, {name: fixture}) of one stage."""
        if stage not in self.built:
            root = copy_root(self.scratch)
            if self.hwcaps is None:
                self.hwcaps, _ = referee.ld_so_hwcaps(root)
            if stage == "rules":
                fixtures = loader_rules.build_all(root)
            elif stage == "nocache":
                fixtures = loader_rules.nocache_fixture(root)
            else:
                steps = loader_rules.cache_steps()[:int(stage.split("-")[1])]
                for step in steps:
                    fixtures = step(root)
            self.built[stage] = root, {fx["name"]: fx for fx in fixtures}
        return self.built[stage]

    def fixture(self, name):
        """(root, fixture, ld.so's listings, where ld.so differs from loader.md)."""
        if name not in self.referee:
            root, fixtures = self.stage(STAGE_OF[name])
            refs, bad = referee_problems(root, fixtures[name])
            self.referee[name] = root, fixtures[name], refs, bad
        return self.referee[name]


@pytest.fixture(scope="module")
def stages(scratch):
    return Stages(scratch)


@pytest.mark.parametrize("stage", list(STAGES))
def test_every_fixture_is_a_case(stages, stage):
    _, fixtures = stages.stage(stage)
    assert sorted(fixtures) == sorted(STAGES[stage]), \
        f"loader_rules built {sorted(fixtures)}, STAGES names {sorted(STAGES[stage])}"


@pytest.mark.parametrize("name", list(STAGE_OF))
def test_ld_so_agrees_with_loader_md(stages, name):
    _, fx, _, bad = stages.fixture(name)
    print(f"{name:28} {len(fx['paths'])} objects  "
          f"{'FIXTURE WRONG' if bad else 'ld.so agrees with loader.md'}  ({fx['rule']})")
    assert not bad, "the fixture is wrong (ld.so differs from loader.md):\n" + "\n".join(bad)


@pytest.mark.parametrize("name", list(STAGE_OF))
def test_rootlock_agrees_with_ld_so(rootlock, stages, name):
    root, fx, refs, bad = stages.fixture(name)
    if bad:
        pytest.fail("the fixture is wrong (ld.so differs from loader.md), nothing to compare "
                    "rootlock with:\n" + "\n".join(bad))
    diffs = compare_fixture(rootlock, root, fx, refs, stages.hwcaps)
    print(f"{name:28} {len(fx['paths'])} objects  {'disagree' if diffs else 'agree'}   "
          f"({fx['rule']})")
    assert not diffs, "rootlock disagrees:\n" + "\n".join(diffs)
