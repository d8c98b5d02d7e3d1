"""End-to-end: `rootlock check` and `rootlock diff` read OCI images in place (an archive, a
layout), layers flattened with their whiteouts, nothing unpacked.

Usage: test_oci_check.py ROOTLOCK

test_oci.py's fixture index and recipe (torch 2.8.0+cu128, app-cli, web-router 1.0.0 or 1.2.0
over the cached Debian base). One lock is built as NAME.tar.zst and as NAME.oci.tar, whose layout
directory is the archive unpacked (the same blobs); the 1.2.0 lock as a layout. Then:
  a. `check --json` of the .oci.tar, the layout and the .tar.zst: one report (but for "root");
     time and peak RSS of each printed;
  b. a layer planted over the layout (python's tarfile; a new config, manifest and index.json
     entry "planted") whose whiteout removes libz.so.1: check names the missing soname;
     the same layer with a wrong digest in its manifest: one error line, exit 2;
  c. `diff A.oci B.oci` (1.0.0 vs 1.2.0): exactly web-router 1.0.0 -> 1.2.0, exit 1; the layout
     against its own archive: exit 0.
"""
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_oci import write_recipe, run, build  # noqa: E402  (the same fixtures and recipe)
from fixtures import index_server, package_graph  # noqa: E402
from fixtures.debian_root import base_tarball  # noqa: E402
from fixtures.failures import Failures  # noqa: E402

# Candidates for the library the planted whiteout removes: needed by the base's python3.11.
LIBDIR = "usr/lib/x86_64-linux-gnu"
VICTIMS = ["libz.so.1", "libexpat.so.1", "libffi.so.8"]


def check_json(rootlock, root):
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", rootlock, "check", "--root", root,
                           "--json"], capture_output=True, text=True, timeout=900)
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
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump(index, f, separators=(",", ":"))


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


def main(argv):
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    if shutil.which("time") is None and not os.path.exists("/usr/bin/time"):
        print("/usr/bin/time is not installed")
        return 1
    work = tempfile.mkdtemp(prefix="rootlock-oci-check-")
    try:
        graph = package_graph.build_graph(os.path.join(work, "graph"))
        base = base_tarball()
        cache = os.path.join(work, "cache")
        with index_server.IndexServer(graph, style="pypi") as server:
            locks = {}
            for version in ("1.0.0", "1.2.0"):
                recipe = write_recipe(os.path.join(work, f"oci-{version}.toml"),
                                      server.simple_url, base,
                                      ["app-cli", f"web-router=={version}"])
                locks[version] = os.path.join(work, f"pylock.oci-{version}.toml")
                proc = run([rootlock, "lock", recipe, "-o", locks[version], "--cache-dir", cache])
                if not fail.expect(proc.returncode == 0, f"lock {version}: {proc.stderr}"):
                    return 1
        out = os.path.join(work, "out")
        tarball = os.path.join(out, "ocitest.tar.zst")
        archive = os.path.join(out, "ocitest.oci.tar")
        newer = os.path.join(out, "newer.oci")
        for lock, output in ((locks["1.0.0"], tarball), (locks["1.0.0"], archive),
                             (locks["1.2.0"], newer)):
            rc, _, err = build(rootlock, lock, output, cache)
            if not fail.expect(rc == 0, f"build {output}: exit {rc}: {err}"):
                return 1
        layout = os.path.join(out, "ocitest.oci")
        with tarfile.open(archive) as tar:
            tar.extractall(layout)

        # (a) one report from the three forms.
        reports = {}
        for root in (archive, layout, tarball):
            rc, report, err, seconds, rss = check_json(rootlock, root)
            if not fail.expect(report is not None and rc in (0, 1),
                               f"(a) check {root}: exit {rc}: {err}"):
                continue
            report.pop("root", None)
            reports[root] = report
            print(f"(a) check {os.path.basename(root)}: exit {rc}, {report['objects']} objects, "
                  f"{len(report['problems'])} problems, {seconds:.2f} s, peak RSS {rss:.0f} MiB")
        if len(reports) == 3:
            fail.expect(reports[archive] == reports[tarball] and reports[layout] == reports[tarball],
                        "(a) the reports differ: " + json.dumps(
                            {os.path.basename(k): v for k, v in reports.items()})[:2000])
            fail.expect(reports[tarball]["ok"], f"(a) the image does not pass: "
                        f"{reports[tarball]['problems'][:3]}")

        # (b) a planted whiteout removes a library python needs.
        victim = base_victim(layout, "ocitest")
        if fail.expect(victim is not None, f"(b) the base holds none of {VICTIMS}"):
            plant_layer(layout, "ocitest", whiteout_layer(victim), "planted")
            rc, report, err, _, _ = check_json(rootlock, layout + ":planted")
            missing = [p for p in (report or {}).get("problems", [])
                       if p.get("kind") == "missing-soname" and p.get("soname") == victim]
            fail.expect(rc == 1 and report is not None and not report["ok"] and missing,
                        f"(b) check of the planted image: exit {rc}: {err} "
                        f"{(report or {}).get('problems', [])[:3]}")
            if missing:
                print(f"(b) whiteout of {victim}: missing-soname {victim}, needed by "
                      f"{len(missing[0].get('needed_by', []))} objects")
            # The same kind of layer, then one byte of its blob changed in place.
            tampered = whiteout_layer(victim.replace(".so", ".sx"))
            plant_layer(layout, "ocitest", tampered, "tampered")
            blob = os.path.join(layout, "blobs", "sha256", sha256_hex(tampered))
            with open(blob, "r+b") as f:
                f.seek(tampered.index(b".wh."))
                f.write(b"W")
            proc = run([rootlock, "check", "--root", layout + ":tampered", "--json"])
            lines = proc.stderr.strip().splitlines()
            fail.expect(proc.returncode == 2 and len(lines) == 1 and
                        lines[0].endswith("its sha256 differs from the descriptor's digest"),
                        f"(b) tampered layer: exit {proc.returncode}: {proc.stderr}")
            print(f"(b) a layer that is not its digest: exit {proc.returncode}: "
                  f"{lines[0] if lines else ''}")

        # (c) diff of two images says what changed, by meaning.
        proc = run([rootlock, "diff", layout + ":ocitest", newer, "--json"])
        try:
            diff = json.loads(proc.stdout)
        except json.JSONDecodeError:
            diff = None
        text = run([rootlock, "diff", layout + ":ocitest", newer])
        if fail.expect(proc.returncode == 1 and diff is not None,
                       f"(c) diff: exit {proc.returncode}: {proc.stderr}"):
            packages = diff.get("packages", [])
            fail.expect([(p.get("name"), p.get("changes"), p.get("before"), p.get("after"))
                         for p in packages] ==
                        [("web-router", ["upgraded"], "1.0.0", "1.2.0")] and
                        not diff.get("debian") and not diff.get("base") and
                        not diff.get("target") and not diff.get("torch") and
                        not diff.get("nvidia"),
                        f"(c) diff: {json.dumps(diff)[:1500]}")
            fail.expect(text.returncode == 1 and "web-router" in text.stdout and
                        "1.0.0" in text.stdout and "1.2.0" in text.stdout,
                        f"(c) diff text: {text.stdout}")
            print("(c) diff A.oci B.oci:\n    " + "\n    ".join(text.stdout.strip().splitlines()))
        same = run([rootlock, "diff", archive, layout + ":ocitest"])
        fail.expect(same.returncode == 0, f"(c) an image against itself: exit {same.returncode}: "
                    f"{same.stdout}{same.stderr}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fail.items:
        print(f"{len(fail.items)} expectation(s) failed")
        return 1
    print("all expectations met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
