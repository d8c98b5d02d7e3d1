"""End-to-end: `rootlock build` writes OCI images (an archive and a layout) that real clients
take, layered so that a one-package change ships one layer, the same bytes on every build.

Usage: test_oci.py ROOTLOCK

The fixture index serves the torch 2.8.0+cu128 stack, app-cli and web-router 1.0.0 and 1.2.0;
the base is the cached Debian root as a pinned tarball. Then:
  a. one lock, three outputs: NAME.tar.zst, NAME.oci.tar (--format oci) and NAME.oci (a layout
     directory); skopeo inspects the archive and the layout and finds the manifest digest
     rootlock printed, the layers in order (base, nvidia-*, torch, the rest of the venv, the
     recipe's files), the lock's sha256 and the recipe's name as labels, PATH led by the venv;
  b. `umoci unpack` of the layout gives exactly the tree of the .tar.zst: every path, type, mode,
     owner, link target and content;
  c. a second build of the archive with another TZ, locale, umask, working directory and cache
     gives the same bytes, so the same manifest digest;
  d. a lock that differs in one pure-Python package (web-router 1.0.0 -> 1.2.0) changes exactly
     one layer digest, the rest of the venv's;
  e. `skopeo copy` of the archive to another layout keeps the manifest digest (nothing to
     convert: the blobs are as the spec wants them).
"""
import hashlib
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile

from fixtures import index_server, package_graph
from fixtures.debian_root import base_tarball
from fixtures.failures import Failures

VENV = "/opt/venv"
EXTRA_FILE = ("/etc/rootlock-test/motd", "built by rootlock\n")
EXPECTED_LAYERS = ["rootlock: the base", "rootlock: the nvidia-* wheels",
                   "rootlock: torch and triton", "rootlock: the rest of the venv",
                   "rootlock: the recipe's files"]


def write_recipe(path, index_url, base, requires):
    base_path, base_sha = base
    with open(path, "w") as f:
        f.write(f'[image]\nname = "ocitest"\n\n'
                f'[base]\ntarball = "{base_path}"\nsha256 = "{base_sha}"\n\n'
                f'[python]\nversion = "3.11"\ncompile-bytecode = true\n\n'
                '[torch]\nversion = "2.8.0"\ncuda = "12.8"\n\n[cuda]\ndriver = "570.133.07"\n\n'
                f'[[index]]\nname = "fixture"\nurl = "{index_url}"\n\n'
                f'[packages]\nrequires = {json.dumps(requires)}\n\n'
                '[environment]\nPYTHONUNBUFFERED = "1"\n\n'
                f'[files]\n"{EXTRA_FILE[0]}" = {json.dumps(EXTRA_FILE[1])}\n')
    return path


def run(argv, env=None, cwd=None, timeout=900):
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def tree_of(root):
    """{path: (type, mode, uid, gid, link or content digest)} for everything under root."""
    out = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            rel = "/" + os.path.relpath(path, root)
            if stat.S_ISLNK(st.st_mode):
                what = ("l", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                what = ("d", None)
            else:
                what = ("f", sha256_of(path))
            out[rel] = (what[0], stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, what[1])
    return out


def build(rootlock, lock, output, cache, extra=(), env=None, cwd=None):
    proc = run([rootlock, "build", lock, "-o", output, "--cache-dir", cache, "--json", *extra],
               env=env, cwd=cwd)
    try:
        return proc.returncode, json.loads(proc.stdout), proc.stderr
    except json.JSONDecodeError:
        return proc.returncode, None, proc.stdout + proc.stderr


def inspect(reference):
    raw = run(["skopeo", "inspect", "--raw", reference])
    config = run(["skopeo", "inspect", "--config", reference])
    if raw.returncode != 0 or config.returncode != 0:
        return None, None, raw.stderr + config.stderr
    return raw.stdout, json.loads(config.stdout), ""


def main(argv):
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    for tool in ("skopeo", "umoci"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed (make test installs it)")
            return 1
    work = tempfile.mkdtemp(prefix="rootlock-oci-")
    try:
        graph = package_graph.build_graph(os.path.join(work, "graph"))
        base = base_tarball()
        with index_server.IndexServer(graph, style="pypi") as server:
            locks = {}
            for version in ("1.0.0", "1.2.0"):
                recipe = write_recipe(os.path.join(work, f"oci-{version}.toml"), server.simple_url,
                                      base, ["app-cli", f"web-router=={version}"])
                locks[version] = os.path.join(work, f"pylock.oci-{version}.toml")
                proc = run([rootlock, "lock", recipe, "-o", locks[version], "--cache-dir",
                            os.path.join(work, "cache")])
                if not fail.expect(proc.returncode == 0, f"lock {version}: {proc.stderr}"):
                    return 1
            lock = locks["1.0.0"]
            cache = os.path.join(work, "cache")

            # (a) three outputs of one lock.
            out = os.path.join(work, "out")
            tarball = os.path.join(out, "ocitest.tar.zst")
            rc, built_tar, err = build(rootlock, lock, tarball, cache)
            if not fail.expect(rc == 0, f"(a) tarball build: exit {rc}: {err}"):
                return 1
            rc, built, err = build(rootlock, lock, tarball, cache, ["--format", "oci"])
            archive = os.path.join(out, "ocitest.oci.tar")
            if not fail.expect(rc == 0 and built["image"] == archive and os.path.isfile(archive),
                               f"(a) --format oci: exit {rc}: {err} {built}"):
                return 1
            manifest_digest = built["manifest"]
            fail.expect(built["sha256"] == sha256_of(archive), "(a) the archive's sha256")
            layout = os.path.join(out, "ocitest.oci")
            rc, built_layout, err = build(rootlock, lock, layout, cache)
            fail.expect(rc == 0 and built_layout["manifest"] == manifest_digest,
                        f"(a) layout: exit {rc}: {err} {built_layout}")
            print(f"(a) manifest {manifest_digest}, {len(built['layers'])} layers:")
            for line in built["layers"]:
                print("    " + line)
            lock_sha = sha256_of(lock)
            for reference in (f"oci-archive:{archive}", f"oci:{layout}:ocitest"):
                raw, config, err = inspect(reference)
                if not fail.expect(raw is not None, f"(a) skopeo inspect {reference}: {err}"):
                    continue
                fail.expect("sha256:" + hashlib.sha256(raw.encode()).hexdigest() ==
                            manifest_digest, f"(a) {reference}: another manifest")
                history = [h.get("created_by") for h in config.get("history", [])]
                fail.expect(history == EXPECTED_LAYERS, f"(a) {reference}: layers {history}")
                labels = config.get("config", {}).get("Labels", {})
                fail.expect(labels.get("org.rootlock.lock.sha256") == lock_sha and
                            labels.get("org.rootlock.recipe") == "ocitest",
                            f"(a) {reference}: labels {labels}")
                env = config.get("config", {}).get("Env", [])
                fail.expect(env[:1] and env[0].startswith(f"PATH={VENV}/bin:") and
                            "PYTHONUNBUFFERED=1" in env, f"(a) {reference}: Env {env}")
                fail.expect(config.get("architecture") == "amd64" and config.get("os") == "linux",
                            f"(a) {reference}: platform {config.get('architecture')}")

            # (b) umoci's tree is the tarball's tree.
            bundle = os.path.join(work, "bundle")
            proc = run(["umoci", "unpack", "--image", f"{layout}:ocitest", bundle])
            rootfs = os.path.join(work, "rootfs")
            os.makedirs(rootfs)
            untar = run(["tar", "--zstd", "--numeric-owner", "-xpf", tarball, "-C", rootfs])
            if fail.expect(proc.returncode == 0 and untar.returncode == 0,
                           f"(b) umoci unpack: {proc.stderr} / tar: {untar.stderr}"):
                from_oci, from_tar = tree_of(os.path.join(bundle, "rootfs")), tree_of(rootfs)
                only_oci = sorted(set(from_oci) - set(from_tar))
                only_tar = sorted(set(from_tar) - set(from_oci))
                differ = sorted(p for p in set(from_oci) & set(from_tar)
                                if from_oci[p] != from_tar[p])
                fail.expect(not only_oci and not only_tar and not differ,
                            f"(b) trees differ: only OCI {only_oci[:5]}, only tarball "
                            f"{only_tar[:5]}, differ {[(p, from_oci[p], from_tar[p]) for p in differ[:3]]}")
                print(f"(b) umoci unpack gives the tarball's {len(from_tar)} entries exactly")

            # (c) another environment, the same bytes.
            other = os.path.join(work, "elsewhere")
            os.makedirs(other)
            second = os.path.join(work, "out2", "ocitest.oci.tar")
            command = [rootlock, "build", lock, "-o", second, "--cache-dir",
                       os.path.join(work, "cache-2"), "-j", "1"]
            proc = run(["sh", "-c", "umask 077 && exec " + shlex.join(command)],
                       env=dict(os.environ, TZ="Pacific/Kiritimati", LC_ALL="C", LANG="C"),
                       cwd=other)
            fail.expect(proc.returncode == 0 and os.path.isfile(second) and
                        sha256_of(second) == sha256_of(archive),
                        f"(c) second build: exit {proc.returncode}: {proc.stderr}")

            # (d) one package changed, one layer changed.
            changed = os.path.join(work, "out3", "ocitest.oci.tar")
            rc, built_changed, err = build(rootlock, locks["1.2.0"], changed, cache)
            if fail.expect(rc == 0, f"(d) build: exit {rc}: {err}"):
                before = [line.split(" sha256:")[1] for line in built["layers"]]
                after = [line.split(" sha256:")[1] for line in built_changed["layers"]]
                differing = [EXPECTED_LAYERS[i] for i in range(len(before))
                             if before[i] != after[i]]
                fail.expect(len(before) == len(after) and
                            differing == ["rootlock: the rest of the venv"],
                            f"(d) layers that changed: {differing}")
                print(f"(d) web-router 1.0.0 -> 1.2.0 changes: {differing}")

            # (e) skopeo copies it as it is.
            copied = os.path.join(work, "copied")
            proc = run(["skopeo", "copy", f"oci-archive:{archive}", f"oci:{copied}:ocitest"])
            raw, _, err = inspect(f"oci:{copied}:ocitest") if proc.returncode == 0 else (
                None, None, proc.stderr)
            fail.expect(raw is not None and "sha256:" + hashlib.sha256(raw.encode()).hexdigest()
                        == manifest_digest, f"(e) skopeo copy: {err}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fail.items:
        print(f"{len(fail.items)} expectation(s) failed")
        return 1
    print("all expectations met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
