"""End-to-end: rootlock ldd against the real ld.so, one small scenario per glibc loader rule.

Usage: test_loader_rules.py ROOTLOCK   (or --referee-only: check only that the fixtures are right)

For every fixture of fixtures/loader_rules.py, built in throwaway Debian roots: first the real
ld.so inside the chroot must show the outcome shared/domain/loader.md states (otherwise the
fixture is wrong and the test fails as such); then `rootlock ldd --root ROOT --json` (with
--ld-library-path and --hwcaps as the fixture needs) must give exactly ld.so's (name, path)
list in the same order, the expected `via` (and `via_object` for RPATH hits), and the missing
symbol versions ld.so reports. Output: one line per rule, then every disagreement in full.

The root without /etc/ld.so.cache (h-no-cache-file) compares `rootlock ldd` with ld.so, which
then searches only the default directories; `rootlock check` there may model the cache from
ld.so.conf and say so in a note, which is printed, not asserted.
"""
import json
import os
import subprocess
import sys

from fixtures import loader_rules, referee
from fixtures.debian_root import copy_root, run_in_chroot


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
    proc = subprocess.run([rootlock, "check", "--root", root, "--json"] + fx["check_paths"],
                          capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return [f"rootlock check rc={proc.returncode}: {proc.stdout[-300:]} {proc.stderr[-300:]}"], None
    want = fx.get("check_expect")
    if not want:
        return [], report
    if report.get("ok") is not False or proc.returncode != 1:
        return [f"rootlock check: ok={report.get('ok')} rc={proc.returncode}, expected false/1"], report
    for problem in report.get("problems", []):
        if all(_matches(problem.get(k), v) for k, v in want.items()):
            return [], report
    return [f"rootlock check: no problem like {want} in {json.dumps(report.get('problems'))}"], report


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


def run_fixtures(rootlock, root, fixtures, hwcaps, failures):
    for fx in fixtures:
        refs, bad = referee_problems(root, fx)
        n = len(fx["paths"])
        if bad:
            print(f"{fx['name']:28} {n} objects  FIXTURE WRONG (ld.so differs from loader.md)")
            failures += [f"[{fx['name']}] referee: {b}" for b in bad]
            continue
        if rootlock is None:
            print(f"{fx['name']:28} {n} objects  ld.so agrees with loader.md")
            continue
        diffs = compare_fixture(rootlock, root, fx, refs, hwcaps)
        print(f"{fx['name']:28} {n} objects  {'disagree' if diffs else 'agree'}   ({fx['rule']})")
        failures += [f"[{fx['name']}] {d}" for d in diffs]


def main(argv):
    rootlock = None if argv[1] == "--referee-only" else os.path.abspath(argv[1])
    failures, roots = [], []
    try:
        root = copy_root()
        roots.append(root)
        hwcaps, _ = referee.ld_so_hwcaps(root)
        run_fixtures(rootlock, root, loader_rules.build_all(root), hwcaps, failures)
        cache_root = copy_root()
        roots.append(cache_root)
        for step in loader_rules.cache_steps():
            run_fixtures(rootlock, cache_root, step(cache_root), hwcaps, failures)
        nocache_root = copy_root()
        roots.append(nocache_root)
        run_fixtures(rootlock, nocache_root, loader_rules.nocache_fixture(nocache_root), hwcaps,
                     failures)
    finally:
        for r in roots:
            loader_rules.remove(r)
    for f in failures:
        print("FAIL " + f)
    print(f"{len(failures)} disagreement(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
