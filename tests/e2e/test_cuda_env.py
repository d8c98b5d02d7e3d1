"""End-to-end: `rootlock check` on a torch CUDA venv, before and after the cu13 uninstall trap.

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

`-k "fixture or import_torch"` builds the trees and runs only the cases that need no rootlock:
the fixture's own predictions and the real `import torch`.
"""
import json
import os
import subprocess

import pytest

from fixtures import check_report, cuda_env, pip_like
from fixtures.check_report import by_kind, summary
from fixtures.cli import run_rootlock
from fixtures.debian_root import copy_root, run_in_chroot

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
# The trees: intact, the twins uninstalled from a hard-linked copy, and a copy of that whose
# damaged dist says rootlock installed it. Fixtures replace files by rename, never in place, so
# the copies never change each other.

def import_torch(root):
    """Exit code and output of the real `import torch` in the chroot."""
    proc = run_in_chroot(root, [cuda_env.VENV + "/bin/python3", "-c", "import torch"])
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def linked_copy(info, root):
    """A `cp -al` copy of info's root, and info with its host paths moved there."""
    subprocess.run(["cp", "-al", info["root"], root], check=True)
    moved = dict(info, root=root)
    moved["site_packages_host"] = os.path.join(root, info["site_packages"].lstrip("/"))
    return moved


@pytest.fixture(scope="module")
def data():
    return cuda_env.load_data()


@pytest.fixture(scope="module")
def intact(scratch, data):
    """(info, twins): the torch + cu12 venv with the cu13 twins installed over it."""
    root = copy_root(scratch)
    info = cuda_env.build_cuda_env(root, data=data)
    twins = [d["name"] for _, d in cuda_env.twin_dists(data, info["stacks"])]
    print(f"built {len(info['dists'])} dists, {len(info['objects'])} ELF objects; "
          f"twins: {twins}")
    return info, twins


@pytest.fixture(scope="module")
def broken(scratch, intact):
    """(info, deleted): a copy of the intact tree with the twins removed as `pip uninstall -y`
    would; `deleted` is what the data predicted the uninstall deletes."""
    info, twins = intact
    deleted = predicted_deletions(info, twins)
    moved = linked_copy(info, os.path.join(scratch, "broken"))
    for name in twins:
        pip_like.uninstall(moved["site_packages_host"], name)
    return moved, deleted


@pytest.fixture(scope="module")
def expected(data, intact, broken):
    """(missing sonames, missing RECORD files) as the data implies for the broken tree."""
    info, deleted = broken
    twins = intact[1]
    return expected_missing_sonames(info, deleted), expected_missing_records(info, twins, deleted)


@pytest.fixture(scope="module")
def intact_check(rootlock, intact):
    return run_check(rootlock, intact[0]["root"])


@pytest.fixture(scope="module")
def without_check(rootlock, intact):
    info, twins = intact
    return run_check(rootlock, info["root"], [a for t in twins for a in ("--without", t)])


@pytest.fixture(scope="module")
def broken_check(rootlock, broken):
    rc, report, raw = run_check(rootlock, broken[0]["root"])
    assert report is not None, f"check printed no JSON:\n{raw}"
    print(f"(c) broken: exit {rc}, {report.get('objects')} objects; problems: "
          f"{summary(report)}")
    return rc, report, raw


# ---------------------------------------------------------------------------------------------
# (a) the intact tree.

def test_a_intact_import_torch_works(intact):
    rc, out = import_torch(intact[0]["root"])
    assert rc == 0, f"import torch in the intact tree failed: {out}"


def test_a_intact_report_follows_the_contract(intact_check):
    rc, report, raw = intact_check
    assert report is not None, f"check printed no JSON:\n{raw}"
    problems = contract_problems(report)
    assert not problems, "contract: " + "\n".join(problems)


def test_a_intact_check_ok_no_errors(intact_check):
    rc, report, raw = intact_check
    assert report is not None, f"check printed no JSON:\n{raw}"
    errors = [p for p in report.get("problems", []) if p.get("severity") == "error"]
    assert rc == 0 and report.get("ok") is True and not errors, \
        f"intact tree: exit {rc}, ok={report.get('ok')}, errors:\n" + \
        "\n".join(json.dumps(p) for p in errors[:20])
    print(f"(a) intact: exit {rc}, ok={report.get('ok')}, {report.get('objects')} objects; "
          f"problems: {summary(report)}; shared-path warnings: "
          f"{len(by_kind(report, 'shared-path'))}")


# ---------------------------------------------------------------------------------------------
# (b) the prediction.

def test_b_check_without_twins_predicts_breakage(intact, without_check):
    rc, report, raw = without_check
    assert report is not None, f"check --without printed no JSON:\n{raw}"
    assert rc == 1 and report.get("ok") is False, \
        f"check --without: exit {rc}, ok={report.get('ok')} (expected 1, false)"
    print(f"(b) --without {' '.join(intact[1])}: exit {rc}, {report.get('objects')} objects; "
          f"problems: {summary(report)}")


@pytest.mark.parametrize("kind", ["missing-soname", "missing-record-file"])
def test_b_prediction_is_what_the_uninstall_broke(without_check, broken_check, kind):
    """The prediction of --without must be exactly what the uninstall broke."""
    get = {"missing-soname": soname_set, "missing-record-file": record_set}[kind]
    report_b, report_c = without_check[1], broken_check[1]
    assert report_b is not None, f"check --without printed no JSON:\n{without_check[2]}"
    assert get(report_b) == get(report_c), \
        f"{kind} differ:\n  --without {sorted(get(report_b))}\n" \
        f"  after uninstall {sorted(get(report_c))}"
    print(f"(b) = (c): {kind} {sorted(get(report_c))}")


# ---------------------------------------------------------------------------------------------
# (c) the twins uninstalled.

def test_c_fixture_uninstall_deletes_what_the_data_predicts(intact, broken, expected):
    info, twins = broken[0], intact[1]
    expected_r = expected[1]
    assert records_on_disk(info, twins) == expected_r, \
        "the tree after pip_like.uninstall differs from the prediction:\n" \
        f"  on disk {sorted(records_on_disk(info, twins))}\n  predicted {sorted(expected_r)}"
    print("(c) expected missing-record-file (from the data): "
          + "; ".join(f"{d}: {len(p)} paths" for d, p in sorted(expected_r)))


def test_c_fixture_needed_collision_files_go_missing(data, broken, expected):
    expected_s = expected[0]
    must = collision_sonames_needed(data, broken[0])
    got_names = {s for s, _ in expected_s}
    assert len(must) >= 2 and must <= got_names and all(n for _, n in expected_s), \
        f"expected missing sonames {sorted(got_names)} do not cover the needed " \
        f"[[collision]] files {sorted(must)}"
    print(f"(c) expected missing sonames (from the data): {sorted(expected_s)}")


def test_c_broken_report_follows_the_contract(broken_check):
    problems = contract_problems(broken_check[1])
    assert not problems, "contract: " + "\n".join(problems)


def test_c_broken_check_exit_1_not_ok(broken_check):
    rc, report, _ = broken_check
    assert rc == 1 and report.get("ok") is False, \
        f"broken tree: exit {rc}, ok={report.get('ok')} (expected 1, false)"


def test_c_missing_sonames_as_the_data_implies(broken_check, expected):
    got = soname_set(broken_check[1])
    assert got == expected[0], \
        f"missing-soname: got {sorted(got)}\n  expected {sorted(expected[0])}"


def test_c_missing_record_files_as_the_data_implies(broken_check, expected):
    got = record_set(broken_check[1])
    assert got == expected[1], \
        f"missing-record-file: got {sorted(got)}\n  expected {sorted(expected[1])}"


def test_c_cu12_partners_metadata_only(data, intact, broken, broken_check):
    """Each cu12 partner must be reported with every non-dist-info RECORD path missing."""
    info, twins = broken[0], intact[1]
    report = broken_check[1]
    reported = {p["dist"]: set(p.get("paths", [])) for p in by_kind(report, "missing-record-file")}
    partners = collision_partners(data, info, twins)
    wrong = []
    for name in partners:
        dist = info["dists"][name]
        files = {p for p in dist["files"] if f"/{dist['dist_info']}/" not in p}
        if reported.get(name) != files:
            wrong.append(f"{name} should be metadata-only: reported "
                         f"{sorted(reported.get(name, []))}, RECORD lists {sorted(files)}")
        else:
            print(f"(c) {name}: metadata-only, {len(files)} files missing")
    assert not wrong, "\n".join(wrong)


def listed_owners(info, removed):
    """file name -> [dists whose RECORD lists a file of that name, the file gone]."""
    root = info["root"]
    listed = {}
    for name, dist in info["dists"].items():
        for path in dist["files"] if name not in removed else ():
            if not os.path.lexists(os.path.join(root, path.lstrip("/"))):
                listed.setdefault(os.path.basename(path), []).append(name)
    return listed


def test_c_missing_soname_names_owner_and_pip_reinstall(intact, broken, broken_check):
    """Each missing soname names the dist whose RECORD lists it, its file gone, and the pip
    line that brings it back."""
    info, twins = broken[0], intact[1]
    listed = listed_owners(info, twins)
    pip = f"{cuda_env.VENV}/bin/python3 -m pip"
    sonames = by_kind(broken_check[1], "missing-soname")
    wrong = []
    for p in sonames:
        want = listed.get(p["soname"], [])
        owner = p.get("owner", {})
        if not (len(want) == 1 and owner.get("dist") == want[0]):
            wrong.append(f"{p['soname']}: owner {owner}, expected one of {want}")
            continue
        version = info["dists"][want[0]]["version"]
        if not (owner.get("version") == version and
                p.get("remedy") == f"{pip} install --force-reinstall --no-deps "
                                   f"{want[0]}=={version}"):
            wrong.append(f"{p['soname']}: remedy {p.get('remedy')!r}")
    print("(c) owners: " + "; ".join(f"{p['soname']}: {p.get('owner', {}).get('dist')} "
                                     f"{p.get('owner', {}).get('version')}" for p in sonames))
    if sonames:
        print(f"(c) remedy: {sonames[0].get('remedy')}")
    assert not wrong, "\n".join(wrong)


def test_c_metadata_only_warnings_of_one_cause_fold_into_one_line(rootlock, broken,
                                                                   broken_check):
    """The metadata-only warnings with one cause (the empty nvidia/__init__.py) make one text
    line."""
    report = broken_check[1]
    text = run_rootlock(rootlock, "check", "--root", broken[0]["root"], cuda_env.VENV,
                        timeout=300).stdout
    empty = [p for p in by_kind(report, "missing-record-file") if p["severity"] == "warning"]
    paths = {tuple(p["paths"]) for p in empty}
    assert len(empty) > 1 and len(paths) == 1, f"metadata-only warnings: {empty}"
    line = next((ln for ln in text.splitlines()
                 if f"for {len(empty)} distributions: " in ln), "")
    names = [f"{p['dist']} {p['version']}" for p in empty]
    assert line and all(n in line for n in names), f"no folded line naming {names}:\n{text}"
    print(f"(c) folded: {len(empty)} warnings, one line: {line.strip()[:100]}...")


def test_c_rootlock_installed_files_remedy_is_rebuild_from_lock(rootlock, scratch, broken,
                                                                broken_check):
    """Files rootlock installed come back from the lock, not from pip (on a copy of the broken
    tree whose first owner's INSTALLER says rootlock)."""
    sonames = by_kind(broken_check[1], "missing-soname")
    assert sonames and sonames[0].get("owner"), f"no missing soname with an owner: {sonames}"
    info = linked_copy(broken[0], os.path.join(scratch, "rootlock-installed"))
    owner = sonames[0]["owner"]["dist"]
    dist_info = info["dists"][owner]["dist_info"]
    pip_like.write_file(os.path.join(info["site_packages_host"], dist_info, "INSTALLER"),
                        b"rootlock\n")
    _, again, raw = run_check(rootlock, info["root"])
    got = [p.get("remedy") for p in by_kind(again, "missing-soname")
           if p.get("owner", {}).get("dist") == owner]
    assert got == ["rebuild the image from its lock: rootlock build LOCK"], \
        f"remedy for rootlock's files: {got}\n{raw if again is None else ''}"
    print(f"(c) {owner} installed by rootlock: {got}")


# ---------------------------------------------------------------------------------------------
# (d) the real loader agrees. check's own set is compared with this one in (c), so the data's
# set is the one the failing import must name.

def test_d_import_torch_fails_on_a_missing_soname(broken, expected):
    sonames = {s for s, _ in expected[0]}
    rc, out = import_torch(broken[0]["root"])
    named = [s for s in sorted(sonames) if f"{s}: {NOT_FOUND}" in out]
    assert rc != 0 and named, \
        f"import torch in the broken tree: exit {rc}, output {out!r}; expected the " \
        f"'{NOT_FOUND}' error naming one of {sorted(sonames)}"
    print(f"(d) import torch: exit {rc}: {out.splitlines()[-1] if out else ''}")
