"""End-to-end: `rootlock check` and `rootlock diff` read OCI images in place (an archive, a
layout), layers flattened with their whiteouts, nothing unpacked.

test_oci.py's recipe (torch 2.8.0+cu128, app-cli, web-router 1.0.0 or 1.2.0 over the cached
Debian base) and the fixture index. One lock is built as NAME.tar.zst and as NAME.oci.tar, whose
layout directory is the archive unpacked (the same blobs); the 1.2.0 lock as a layout. Then:
  a. `check --json` of the .oci.tar, the layout and the .tar.zst: one report (but for "root"),
     and the image passes; time and peak RSS of each printed;
  b. a layer planted over a copy of the layout (python's tarfile; a new config, manifest and
     index.json entry "planted") whose whiteout removes libz.so.1: check names the missing
     soname; the same kind of layer with one byte of its blob changed in place, in a copy of
     its own: one error line, exit 2;
  c. `diff A.oci B.oci` (1.0.0 vs 1.2.0): exactly web-router 1.0.0 -> 1.2.0, exit 1, the text
     naming it; the layout against its own archive: exit 0.
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_oci import build, lock_web_router_versions  # noqa: E402  (the same recipe and build)
from fixtures.cli import run, run_rootlock  # noqa: E402

# Candidates for the library the planted whiteout removes: needed by the base's python3.11.
LIBDIR = "usr/lib/x86_64-linux-gnu"
VICTIMS = ["libz.so.1", "libexpat.so.1", "libffi.so.8"]


def check_json(rootlock, root):
    """(exit, report without "root" or None, stderr less the time line, seconds, peak MiB)."""
    start = time.monotonic()
    proc = run(["/usr/bin/time", "-f", "%M", rootlock, "check", "--root", root, "--json"])
    seconds = time.monotonic() - start
    lines = proc.stderr.strip().splitlines()
    rss = int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else 0.0
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = None
    return proc.returncode, report, "\n".join(lines[:-1]), seconds, rss


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def add_blob(layout, data):
    digest = sha256_hex(data)
    with open(os.path.join(layout, "blobs", "sha256", digest), "wb") as f:
        f.write(data)
    return "sha256:" + digest


def read_blob(layout, digest):
    with open(os.path.join(layout, "blobs", "sha256", digest.split(":", 1)[1]), "rb") as f:
        return f.read()


def whiteout_layer(victim):
    """An uncompressed layer holding only LIBDIR/.wh.VICTIM (and its directories)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        parts = LIBDIR.split("/")
        for i in range(1, len(parts) + 1):
            info = tarfile.TarInfo("/".join(parts[:i]) + "/")
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        info = tarfile.TarInfo(f"{LIBDIR}/.wh.{victim}")
        tar.addfile(info, io.BytesIO(b""))
    return buf.getvalue()


def plant_layer(layout, ref, layer, new_ref):
    """A new image in `layout`: `ref`'s manifest with `layer` on top, named `new_ref`."""
    with open(os.path.join(layout, "index.json")) as f:
        index = json.load(f)
    entry = next(m for m in index["manifests"]
                 if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == ref)
    manifest = json.loads(read_blob(layout, entry["digest"]))
    config = json.loads(read_blob(layout, manifest["config"]["digest"]))
    layer_digest = add_blob(layout, layer)
    config["rootfs"]["diff_ids"].append(layer_digest)
    config.setdefault("history", []).append({"created_by": "test: planted whiteout"})
    config_bytes = json.dumps(config, separators=(",", ":")).encode()
    manifest["config"] = {"mediaType": manifest["config"]["mediaType"],
                          "digest": add_blob(layout, config_bytes), "size": len(config_bytes)}
    manifest["layers"].append({"mediaType": "application/vnd.oci.image.layer.v1.tar",
                               "digest": layer_digest, "size": len(layer)})
    manifest_bytes = json.dumps(manifest, separators=(",", ":")).encode()
    index["manifests"].append({"mediaType": entry["mediaType"],
                               "digest": add_blob(layout, manifest_bytes),
                               "size": len(manifest_bytes),
                               "annotations": {"org.opencontainers.image.ref.name": new_ref}})
    # By rename: the layout is a hard-linked copy, its index.json shared with the original.
    tmp = os.path.join(layout, "index.json.tmp")
    with open(tmp, "w") as f:
        json.dump(index, f, separators=(",", ":"))
    os.replace(tmp, os.path.join(layout, "index.json"))


def base_victim(layout, ref):
    """The first of VICTIMS that the image's first layer (the base) holds."""
    with open(os.path.join(layout, "index.json")) as f:
        index = json.load(f)
    entry = next(m for m in index["manifests"]
                 if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == ref)
    manifest = json.loads(read_blob(layout, entry["digest"]))
    path = os.path.join(layout, "blobs", "sha256", manifest["layers"][0]["digest"][7:])
    with tarfile.open(path, mode="r:*") as tar:
        names = {m.name.lstrip("./") for m in tar.getmembers()}
    return next((v for v in VICTIMS if f"{LIBDIR}/{v}" in names), None)



@pytest.fixture(scope="module", autouse=True)
def tools():
    assert os.access("/usr/bin/time", os.X_OK), "/usr/bin/time is not installed (make deps)"


@pytest.fixture(scope="module")
def cache(scratch):
    return os.path.join(scratch, "cache")


@pytest.fixture(scope="module")
def locks(rootlock, scratch, fixture_index, cache):
    """test_oci.py's recipe locked with each web-router."""
    return lock_web_router_versions(rootlock, scratch, fixture_index.simple_url, cache)


def built(rootlock, lock, output, cache):
    rc, _, err = build(rootlock, lock, output, cache)
    assert rc == 0, f"build {output}: exit {rc}: {err}"
    return output


@pytest.fixture(scope="module")
def tarball(rootlock, scratch, locks, cache):
    return built(rootlock, locks["1.0.0"], os.path.join(scratch, "out", "ocitest.tar.zst"), cache)


@pytest.fixture(scope="module")
def archive(rootlock, scratch, locks, cache):
    return built(rootlock, locks["1.0.0"], os.path.join(scratch, "out", "ocitest.oci.tar"), cache)


@pytest.fixture(scope="module")
def newer(rootlock, scratch, locks, cache):
    """The 1.2.0 lock built as a layout."""
    return built(rootlock, locks["1.2.0"], os.path.join(scratch, "out", "newer.oci"), cache)


@pytest.fixture(scope="module")
def layout(scratch, archive):
    """The archive unpacked: a layout holding the same blobs. Cases only read it."""
    path = os.path.join(scratch, "out", "ocitest.oci")
    with tarfile.open(archive) as tar:
        tar.extractall(path)
    return path


def layout_copy(layout, name):
    """A hard-linked copy of the layout to plant layers in (files added or renamed over)."""
    dest = os.path.join(os.path.dirname(layout), name)
    subprocess.run(["cp", "-al", layout, dest], check=True)
    return dest


# (a) one report from the three forms.

@pytest.fixture(scope="module")
def reports(rootlock, tarball, archive, layout):
    """{"archive"|"layout"|"tarball": (exit, report or None, stderr)}."""
    out = {}
    for form, root in (("archive", archive), ("layout", layout), ("tarball", tarball)):
        rc, report, err, seconds, rss = check_json(rootlock, root)
        if report is not None:
            report.pop("root", None)
            print(f"(a) check {os.path.basename(root)}: exit {rc}, {report.get('objects')} "
                  f"objects, {len(report.get('problems', []))} problems, {seconds:.2f} s, "
                  f"peak RSS {rss:.0f} MiB")
        out[form] = (rc, report, err)
    return out


@pytest.mark.parametrize("form", ["archive", "layout", "tarball"])
def test_a_check_reads_the_form(reports, form):
    rc, report, err = reports[form]
    assert report is not None and rc in (0, 1), \
        f"check --json of the {form}: expected a report and exit 0 or 1, got exit {rc}: {err}"


@pytest.mark.parametrize("form", ["archive", "layout"])
def test_a_report_is_the_tarballs(reports, form):
    ours, theirs = reports[form][1], reports["tarball"][1]
    assert ours is not None and theirs is not None and ours == theirs, \
        f"the {form}'s report differs from the .tar.zst's: " + json.dumps(
            {form: ours, "tarball": theirs})[:2000]


def test_a_the_image_passes(reports):
    rc, report, err = reports["tarball"]
    assert report is not None and report["ok"], \
        f"the image does not pass check: exit {rc}: {(report or {}).get('problems', [])[:3]} {err}"


# (b) a planted whiteout, and a layer that is not its digest.

@pytest.fixture(scope="module")
def victim(layout):
    found = base_victim(layout, "ocitest")
    assert found is not None, f"the base holds none of {VICTIMS} in {LIBDIR}"
    return found


def test_b_planted_whiteout_names_the_missing_soname(rootlock, layout, victim):
    planted = layout_copy(layout, "planted.oci")
    plant_layer(planted, "ocitest", whiteout_layer(victim), "planted")
    rc, report, err, _, _ = check_json(rootlock, planted + ":planted")
    missing = [p for p in (report or {}).get("problems", [])
               if p.get("kind") == "missing-soname" and p.get("soname") == victim]
    assert rc == 1 and report is not None and not report["ok"] and missing, \
        f"check of the planted image: expected exit 1 and missing-soname {victim}, got exit " \
        f"{rc}: {err} {(report or {}).get('problems', [])[:3]}"
    print(f"(b) whiteout of {victim}: missing-soname {victim}, needed by "
          f"{len(missing[0].get('needed_by', []))} objects")


def test_b_tampered_layer_one_line_exit_2(rootlock, layout, victim):
    tampered_layout = layout_copy(layout, "tampered.oci")
    tampered = whiteout_layer(victim.replace(".so", ".sx"))
    plant_layer(tampered_layout, "ocitest", tampered, "tampered")
    # The blob is new to this copy (its own file), so changing it in place is safe.
    blob = os.path.join(tampered_layout, "blobs", "sha256", sha256_hex(tampered))
    with open(blob, "r+b") as f:
        f.seek(tampered.index(b".wh."))
        f.write(b"W")
    proc = run_rootlock(rootlock, "check", "--root", tampered_layout + ":tampered", "--json")
    lines = proc.stderr.strip().splitlines()
    print(f"(b) a layer that is not its digest: exit {proc.returncode}: "
          f"{lines[0] if lines else ''}")
    assert proc.returncode == 3 and len(lines) == 1 and \
        lines[0].endswith("its sha256 differs from the descriptor's digest"), \
        f"tampered layer: expected exit 3 (integrity) and one line ending 'its sha256 differs from the " \
        f"descriptor's digest', got exit {proc.returncode}: {proc.stderr}"


# (c) diff of two images says what changed, by meaning.

@pytest.fixture(scope="module")
def image_diff(rootlock, layout, newer):
    """(process, JSON or None) of `diff --json` of the 1.0.0 layout and the 1.2.0 one."""
    proc = run_rootlock(rootlock, "diff", layout + ":ocitest", newer, "--json")
    try:
        return proc, json.loads(proc.stdout)
    except json.JSONDecodeError:
        return proc, None


def test_c_diff_exits_1_with_json(image_diff):
    proc, diff = image_diff
    assert proc.returncode == 1 and diff is not None, \
        f"diff: expected exit 1 and JSON, got exit {proc.returncode}: {proc.stderr}"


def test_c_diff_is_exactly_web_router_upgraded(image_diff):
    _, diff = image_diff
    diff = diff or {}
    packages = [(p.get("name"), p.get("changes"), p.get("before"), p.get("after"))
                for p in diff.get("packages", [])]
    others = {k: diff.get(k) for k in ("debian", "base", "target", "torch", "nvidia")
              if diff.get(k)}
    assert packages == [("web-router", ["upgraded"], "1.0.0", "1.2.0")] and not others, \
        f"diff: expected only web-router 1.0.0 -> 1.2.0, got packages {packages}, " \
        f"others {json.dumps(others)[:1500]}"


def test_c_diff_text_names_web_router(rootlock, layout, newer):
    text = run_rootlock(rootlock, "diff", layout + ":ocitest", newer)
    print("(c) diff A.oci B.oci:\n    " + "\n    ".join(text.stdout.strip().splitlines()))
    assert text.returncode == 1 and "web-router" in text.stdout and \
        "1.0.0" in text.stdout and "1.2.0" in text.stdout, \
        f"diff text: expected exit 1 naming web-router 1.0.0 and 1.2.0, got exit " \
        f"{text.returncode}: {text.stdout}{text.stderr}"


def test_c_image_against_its_own_archive_exit_0(rootlock, archive, layout):
    same = run_rootlock(rootlock, "diff", archive, layout + ":ocitest")
    assert same.returncode == 0, \
        f"an image against itself: expected exit 0, got {same.returncode}: " \
        f"{same.stdout}{same.stderr}"
