"""End-to-end: `rootlock check` on a torch CUDA venv, before and after the cu13 uninstall trap.

Usage: test_cuda_env.py ROOTLOCK   (or --fixture-only: build the tree and run only the real
`import torch` checks, without rootlock)

A Debian root gets /opt/venv with torch 2.8.0+cu128 and its nvidia-*-cu12 wheels as stub ELF
objects (fixtures/cuda_env.py, from shared/domain/cuda-stacks.toml), then the -cu13 twins
that install over the same paths. Then:
  a. the intact tree: `check` says ok (shared paths are warnings) and `import torch` works;
  b. `check --without TWIN...` on the intact tree predicts the breakage;
  c. the twins are removed as `pip uninstall -y` would: one `check` run (exit 1) names every
     missing soname with its needed_by, and the cu12 dists as missing-record-file
     (metadata-only); the sets equal the prediction of (b) and the one derived from the data;
     each missing soname names the metadata-only dist whose RECORD lists it and pip's
     reinstall line (rootlock's own files: rebuild from the lock); the metadata-only warnings
     of one cause make one text line;
  d. the real `import torch` in the chroot fails on one of the sonames check named.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from fixtures import check_report, cuda_env, pip_like
from fixtures.debian_root import copy_root, run_in_chroot
from fixtures.failures import Failures
from fixtures.check_report import by_kind, summary

NOT_FOUND = "cannot open shared object file"


def run_check(rootlock, root, extra=()):
    """(exit code, parsed JSON report or None, raw output) of `check --json` over the venv."""
    return check_report.run_check(rootlock, root, [*extra, cuda_env.VENV])


FIELDS = {"missing-soname": ("soname", "needed_by", "candidates"),
          "missing-record-file": ("dist", "version", "paths"),
          "shared-path": ("path", "dists")}


def contract_problems(report):
    """Where a report departs from docs/cli.md (fields, severities)."""
    out = []
    for key in ("ok", "objects", "problems"):
        if key not in report:
            out.append(f"report has no {key!r}")
    for p in report.get("problems", []):
        if p.get("severity") not in ("error", "warning"):
            out.append(f"problem without error/warning severity: {p}")
        missing = [f for f in FIELDS.get(p.get("kind"), ()) if f not in p]
        if missing:
            out.append(f"{p.get('kind')} problem lacks {missing}: {p}")
    return out


def soname_set(report):
    return {(p["soname"], tuple(sorted(p.get("needed_by", []))))
            for p in by_kind(report, "missing-soname")}


def record_set(report):
    return {(p["dist"], tuple(sorted(p.get("paths", []))))
            for p in by_kind(report, "missing-record-file")}


# ---------------------------------------------------------------------------------------------
# What the data says the uninstall deletes and breaks.

def in_root(root, host_path):
    return "/" + os.path.relpath(host_path, root)


def predicted_deletions(info, dists):
    """Paths inside the root that `pip uninstall` of dists deletes (from the intact tree)."""
    sp = info["site_packages_host"]
    return {in_root(info["root"], p) for d in dists for p in pip_like.uninstall_paths(sp, d)}


def expected_missing_sonames(info, deleted):
    """{(soname, needed_by)} for the objects left whose DT_NEEDED no object left provides."""
    left = {p: f for p, f in info["objects"].items() if p not in deleted}
    provided = {f["soname"] for f in left.values()}
    needers = {}
    for path, facts in left.items():
        for soname in facts["needed"]:
            if soname not in provided:
                needers.setdefault(soname, []).append(path)
    return {(s, tuple(sorted(p))) for s, p in needers.items()}


def expected_missing_records(info, removed, deleted):
    """{(dist, paths)} for the dists left whose RECORD lists a deleted path."""
    out = set()
    for name, dist in info["dists"].items():
        if name not in removed:
            gone = sorted(p for p in dist["files"] if p in deleted)
            if gone:
                out.add((name, tuple(gone)))
    return out


def records_on_disk(info, removed):
    """{(dist, paths)} of RECORD paths absent from the tree, read from disk."""
    out = set()
    for name, dist in info["dists"].items():
        if name not in removed:
            gone = sorted(p for p in dist["files"]
                          if not os.path.lexists(os.path.join(info["root"], p.lstrip("/"))))
            if gone:
                out.add((name, tuple(gone)))
    return out


def collision_partners(data, info, removed):
    """Installed dists that share a [[collision]] with a removed one (the metadata-only ones)."""
    out = set()
    for c in data.get("collision", []):
        if set(c["dists"]) & set(removed):
            out |= {d for d in c["dists"] if d in info["dists"] and d not in removed}
    return sorted(out)


def collision_sonames_needed(data, info):
    """The [[collision]] files that some object of the stack NEEDs: they must go missing."""
    files = {f for c in data.get("collision", []) if c["dists"] for f in c["files"]}
    needed = {n for f in info["objects"].values() for n in f["needed"]}
    return files & needed


# ---------------------------------------------------------------------------------------------
# The steps.

def import_torch(root):
    """Exit code and output of the real `import torch` in the chroot."""
    proc = run_in_chroot(root, [cuda_env.VENV + "/bin/python3", "-c", "import torch"])
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def step_a(fail, rootlock, root):
    rc, out = import_torch(root)
    fail.expect(rc == 0, f"(a) import torch in the intact tree failed: {out}")
    if not rootlock:
        return None
    rc, report, raw = run_check(rootlock, root)
    if not fail.expect(report is not None, f"(a) check printed no JSON:\n{raw}"):
        return None
    for c in contract_problems(report):
        fail.expect(False, f"(a) contract: {c}")
    errors = [p for p in report.get("problems", []) if p.get("severity") == "error"]
    fail.expect(rc == 0 and report.get("ok") is True and not errors,
                f"(a) intact tree: exit {rc}, ok={report.get('ok')}, errors:\n"
                + "\n".join(json.dumps(p) for p in errors[:20]))
    print(f"(a) intact: exit {rc}, ok={report.get('ok')}, {report.get('objects')} objects; "
          f"problems: {summary(report)}; shared-path warnings: "
          f"{len(by_kind(report, 'shared-path'))}")
    return report


def step_b(fail, rootlock, root, twins):
    extra = [a for t in twins for a in ("--without", t)]
    rc, report, raw = run_check(rootlock, root, extra)
    if not fail.expect(report is not None, f"(b) check --without printed no JSON:\n{raw}"):
        return None
    fail.expect(rc == 1 and report.get("ok") is False,
                f"(b) check --without: exit {rc}, ok={report.get('ok')} (expected 1, false)")
    print(f"(b) --without {' '.join(twins)}: exit {rc}, {report.get('objects')} objects; "
          f"problems: {summary(report)}")
    return report


def step_c(fail, rootlock, info, data, twins, deleted):
    root = info["root"]
    expected_s = expected_missing_sonames(info, deleted)
    expected_r = expected_missing_records(info, twins, deleted)
    fail.expect(records_on_disk(info, twins) == expected_r,
                "(c) fixture: the tree after pip_like.uninstall differs from the prediction:\n"
                f"  on disk {sorted(records_on_disk(info, twins))}\n"
                f"  predicted {sorted(expected_r)}")
    must = collision_sonames_needed(data, info)
    got_names = {s for s, _ in expected_s}
    fail.expect(len(must) >= 2 and must <= got_names and all(n for _, n in expected_s),
                f"(c) fixture: expected missing sonames {sorted(got_names)} do not cover the "
                f"needed [[collision]] files {sorted(must)}")
    print(f"(c) expected missing sonames (from the data): {sorted(expected_s)}")
    print(f"(c) expected missing-record-file (from the data): "
          + "; ".join(f"{d}: {len(p)} paths" for d, p in sorted(expected_r)))
    if not rootlock:
        return None, expected_s, expected_r
    rc, report, raw = run_check(rootlock, root)
    if not fail.expect(report is not None, f"(c) check printed no JSON:\n{raw}"):
        return None, expected_s, expected_r
    for c in contract_problems(report):
        fail.expect(False, f"(c) contract: {c}")
    fail.expect(rc == 1 and report.get("ok") is False,
                f"(c) broken tree: exit {rc}, ok={report.get('ok')} (expected 1, false)")
    print(f"(c) broken: exit {rc}, {report.get('objects')} objects; problems: {summary(report)}")
    fail.expect(soname_set(report) == expected_s,
                f"(c) missing-soname: got {sorted(soname_set(report))}\n"
                f"  expected {sorted(expected_s)}")
    fail.expect(record_set(report) == expected_r,
                f"(c) missing-record-file: got {sorted(record_set(report))}\n"
                f"  expected {sorted(expected_r)}")
    metadata_only(fail, report, info, data, twins)
    return report, expected_s, expected_r


def metadata_only(fail, report, info, data, twins):
    """Each cu12 partner must be reported with every non-dist-info RECORD path missing."""
    reported = {p["dist"]: set(p.get("paths", [])) for p in by_kind(report, "missing-record-file")}
    for name in collision_partners(data, info, twins):
        dist = info["dists"][name]
        files = {p for p in dist["files"] if f"/{dist['dist_info']}/" not in p}
        fail.expect(reported.get(name) == files,
                    f"(c) {name} should be metadata-only: reported "
                    f"{sorted(reported.get(name, []))}, RECORD lists {sorted(files)}")
        print(f"(c) {name}: metadata-only, {len(files)} files missing")


def remedies(fail, rootlock, info, report, removed):
    """(c) Each missing soname names the dist whose RECORD lists it, its file gone, and the pip
    line that brings it back; rootlock-installed files say to rebuild from the lock. The
    metadata-only warnings with one cause (the empty nvidia/__init__.py) make one text line."""
    root = info["root"]
    listed = {}  # file name -> [dists whose RECORD lists a file of that name, the file gone]
    for name, dist in info["dists"].items():
        for path in dist["files"] if name not in removed else ():
            if not os.path.lexists(os.path.join(root, path.lstrip("/"))):
                listed.setdefault(os.path.basename(path), []).append(name)
    pip = f"{cuda_env.VENV}/bin/python3 -m pip"
    sonames = by_kind(report, "missing-soname")
    for p in sonames:
        want = listed.get(p["soname"], [])
        owner = p.get("owner", {})
        ok = len(want) == 1 and owner.get("dist") == want[0]
        if fail.expect(ok, f"(c) {p['soname']}: owner {owner}, expected one of {want}"):
            version = info["dists"][want[0]]["version"]
            fail.expect(owner.get("version") == version
                        and p.get("remedy") == f"{pip} install --force-reinstall --no-deps "
                                               f"{want[0]}=={version}",
                        f"(c) {p['soname']}: remedy {p.get('remedy')!r}")
    print("(c) owners: " + "; ".join(f"{p['soname']}: {p.get('owner', {}).get('dist')} "
                                     f"{p.get('owner', {}).get('version')}" for p in sonames))
    if sonames:
        print(f"(c) remedy: {sonames[0].get('remedy')}")
    text = subprocess.run([rootlock, "check", "--root", root, cuda_env.VENV],
                          capture_output=True, text=True, timeout=300).stdout
    empty = [p for p in by_kind(report, "missing-record-file") if p["severity"] == "warning"]
    paths = {tuple(p["paths"]) for p in empty}
    fail.expect(len(empty) > 1 and len(paths) == 1, f"(c) metadata-only warnings: {empty}")
    line = next((ln for ln in text.splitlines()
                 if f"for {len(empty)} distributions: " in ln), "")
    names = [f"{p['dist']} {p['version']}" for p in empty]
    fail.expect(line and all(n in line for n in names),
                f"(c) no folded line naming {names}:\n{text}")
    print(f"(c) folded: {len(empty)} warnings, one line: {line.strip()[:100]}...")
    # Files rootlock installed come back from the lock, not from pip.
    if sonames and sonames[0].get("owner"):
        owner = sonames[0]["owner"]["dist"]
        dist_info = info["dists"][owner]["dist_info"]
        pip_like.write_file(os.path.join(info["site_packages_host"], dist_info, "INSTALLER"),
                            b"rootlock\n")
        _, again, _ = run_check(rootlock, root)
        got = [p.get("remedy") for p in by_kind(again, "missing-soname")
               if p.get("owner", {}).get("dist") == owner]
        fail.expect(got == ["rebuild the image from its lock: rootlock build LOCK"],
                    f"(c) remedy for rootlock's files: {got}")
        print(f"(c) {owner} installed by rootlock: {got}")


def compare_b_c(fail, report_b, report_c):
    """The prediction of --without must be exactly what the uninstall broke."""
    for name, get in (("missing-soname", soname_set), ("missing-record-file", record_set)):
        fail.expect(get(report_b) == get(report_c),
                    f"(b)/(c) {name} differ:\n  --without {sorted(get(report_b))}\n"
                    f"  after uninstall {sorted(get(report_c))}")
    print(f"(b) = (c)? missing sonames {sorted(soname_set(report_c))}; dists with missing "
          f"RECORD files {sorted(d for d, _ in record_set(report_c))}")


def step_d(fail, root, sonames):
    rc, out = import_torch(root)
    named = [s for s in sorted(sonames) if f"{s}: {NOT_FOUND}" in out]
    fail.expect(rc != 0 and named,
                f"(d) import torch in the broken tree: exit {rc}, output {out!r}; expected the "
                f"'{NOT_FOUND}' error naming one of {sorted(sonames)}")
    print(f"(d) import torch: exit {rc}: {out.splitlines()[-1] if out else ''}")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rootlock = None if argv[1] == "--fixture-only" else os.path.abspath(argv[1])
    fail = Failures()
    data = cuda_env.load_data()
    parent = tempfile.mkdtemp(prefix="rootlock-cuda-env-")
    root = copy_root(parent)
    try:
        info = cuda_env.build_cuda_env(root, data=data)
        twins = [d["name"] for _, d in cuda_env.twin_dists(data, info["stacks"])]
        print(f"built {len(info['dists'])} dists, {len(info['objects'])} ELF objects; "
              f"twins: {twins}")
        step_a(fail, rootlock, root)
        report_b = step_b(fail, rootlock, root, twins) if rootlock else None
        deleted = predicted_deletions(info, twins)
        for name in twins:
            pip_like.uninstall(info["site_packages_host"], name)
        report_c, expected_s, _ = step_c(fail, rootlock, info, data, twins, deleted)
        if report_c is not None:
            remedies(fail, rootlock, info, report_c, twins)
        if report_b is not None and report_c is not None:
            compare_b_c(fail, report_b, report_c)
        reported = {s for s, _ in soname_set(report_c)} if report_c else {s for s, _ in expected_s}
        step_d(fail, root, reported)
    finally:
        if os.environ.get("ROOTLOCK_KEEP_ROOT"):
            print("kept", root)
        else:
            shutil.rmtree(parent, ignore_errors=True)
    print(f"{len(fail.items)} failures" if fail.items else "all expectations met")
    return 1 if fail.items else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
