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
  c. (with g) a second build of the archive with another TZ, locale, umask, working
     directory, thread count and cache gives the same bytes, so the same manifest digest;
  d. a lock that differs in one pure-Python package (web-router 1.0.0 -> 1.2.0) changes exactly
     one layer digest, the rest of the venv's;
  e. `skopeo copy` of the archive to another layout keeps the manifest digest (nothing to
     convert: the blobs are as the spec wants them);
  f. `podman run` of the archive runs the recipe's entrypoint and cmd (`python -c "import
     torch"`) with no argument given, with the flags this kind of machine needs;
  g. the same lock built twice more, each in its own UTS and mount namespace with another
     hostname, cache, HOME and TMPDIR (a tmpfs), the first also with (c)'s changes: the same
     manifest digest and the same archive bytes as (a)'s;
  h. the SBOM as an artifact: index.json lists the image alone, by name, its annotation
     org.rootlock.sbom.manifest naming a manifest of artifactType
     application/vnd.cyclonedx+json in the blobs whose subject is the image manifest, config the empty descriptor, and one layer byte-equal to NAME.oci.tar.cdx.json
     (which names the image by its manifest digest); the same in the layout.

index.json lists the image alone (skopeo 1.9 and podman 4.3 refuse an index of two manifests
without the image's name), so (e) copies and (f) loads the archive without one.
"""
import hashlib
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile

from fixtures import index_server, package_graph
from fixtures.debian_root import base_tarball
from fixtures.failures import Failures

VENV = "/opt/venv"
EXTRA_FILE = ("/etc/rootlock-test/motd", "built by rootlock\n")
ENTRYPOINT = [f"{VENV}/bin/python"]
CMD = ["-c", "import torch; print('torch from', torch.__file__)"]
PODMAN_RUN_FLAGS = ["--network=none", "--ulimit", "nofile=20000:20000",
                    "--ulimit", "nproc=4096:4096"]
EXPECTED_LAYERS = ["rootlock: the base", "rootlock: the nvidia-* wheels",
                   "rootlock: torch and triton", "rootlock: the rest of the venv",
                   "rootlock: the recipe's files"]


def write_recipe(path, index_url, base, requires):
    base_path, base_sha = base
    with open(path, "w") as f:
        f.write(f'[image]\nname = "ocitest"\nentrypoint = {json.dumps(ENTRYPOINT)}\n'
                f'cmd = {json.dumps(CMD)}\n\n'
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


def podman_run(work, image_ref):
    """`podman run` as this kind of machine allows it (see shared/domain/archives-oci-arm64.md):
    runc, cgroupfs, file events, no network, limits it cannot raise, storage under `work`."""
    storage = os.path.join(work, "podman")
    for sub in ("root", "runroot", "tmp"):
        os.makedirs(os.path.join(storage, sub), exist_ok=True)
    argv = ["podman", "--root", os.path.join(storage, "root"),
            "--runroot", os.path.join(storage, "runroot"),
            "--tmpdir", os.path.join(storage, "tmp"), "--runtime=runc",
            "--cgroup-manager=cgroupfs", "--events-backend=file",
            "run", "--rm", *PODMAN_RUN_FLAGS, image_ref]
    return run(argv, timeout=300)


def namespaced_build(rootlock, lock, output, n, work, env=None, shell_prefix="", extra=()):
    """`rootlock build` in a new UTS and mount namespace with hostname other-N, its own cache,
    HOME and a tmpfs as TMPDIR."""
    home, tmp = os.path.join(work, f"home-{n}"), os.path.join(work, f"tmp-{n}")
    os.makedirs(home)
    os.makedirs(tmp)
    command = [rootlock, "build", lock, "-o", output, "--cache-dir",
               os.path.join(work, f"cache-ns-{n}"), "--json", *extra]
    script = (f"hostname other-{n} && mount -t tmpfs tmpfs {shlex.quote(tmp)} && "
              f"test \"$(hostname)\" = other-{n} && {shell_prefix}exec {shlex.join(command)}")
    proc = run(["unshare", "--uts", "--mount", "sh", "-c", script],
               env=dict(env or os.environ, HOME=home, TMPDIR=tmp))
    return proc


def archive_members(path):
    """{name: bytes} of an OCI archive's regular members."""
    with tarfile.open(path) as archive:
        return {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}


def check_sbom_artifact(fail, label, index, blob, manifest_digest, sbom_bytes, sbom_digest):
    """(h): index.json lists the image alone, by name, and names the SBOM's artifact manifest
    in an annotation; the artifact's blobs are in the image."""
    manifests = index.get("manifests", [])
    if not fail.expect(len(manifests) == 1, f"(h) {label}: index.json lists {manifests}"):
        return
    image = manifests[0]
    notes = image.get("annotations", {})
    fail.expect(image.get("digest") == manifest_digest and
                notes.get("org.opencontainers.image.ref.name") == "ocitest" and
                notes.get("org.rootlock.sbom.manifest") == sbom_digest,
                f"(h) {label}: the entry is not the named image with its SBOM: {image}")
    listed = {"digest": sbom_digest}
    artifact_bytes = blob(listed["digest"])
    fail.expect("sha256:" + hashlib.sha256(artifact_bytes).hexdigest() == listed["digest"],
                f"(h) {label}: the artifact manifest's digest")
    artifact = json.loads(artifact_bytes)
    fail.expect(artifact.get("mediaType") == "application/vnd.oci.image.manifest.v1+json" and
                artifact.get("artifactType") == "application/vnd.cyclonedx+json",
                f"(h) {label}: artifact types {artifact.get('mediaType')}")
    fail.expect(artifact.get("subject", {}).get("digest") == manifest_digest,
                f"(h) {label}: subject {artifact.get('subject')}")
    empty = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    config = artifact.get("config", {})
    fail.expect(config == {"mediaType": "application/vnd.oci.empty.v1+json", "digest": empty,
                           "size": 2, "data": "e30="} and blob(empty) == b"{}",
                f"(h) {label}: config {config}")
    layers = artifact.get("layers", [])
    fail.expect(len(layers) == 1 and layers[0].get("mediaType") ==
                "application/vnd.cyclonedx+json" and blob(layers[0]["digest"]) == sbom_bytes,
                f"(h) {label}: the SBOM layer is not the .cdx.json: {layers}")


def main(argv):
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    for tool in ("skopeo", "umoci", "podman", "runc", "unshare"):
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
            for reference in (f"oci-archive:{archive}:ocitest", f"oci:{layout}:ocitest"):
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
                run_config = config.get("config", {})
                fail.expect(run_config.get("Entrypoint") == ENTRYPOINT and
                            run_config.get("Cmd") == CMD,
                            f"(a) {reference}: Entrypoint {run_config.get('Entrypoint')} "
                            f"Cmd {run_config.get('Cmd')}")

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

            # (c), (g) two builds in namespaces of their own: the same bytes.
            for n in (1, 2):
                again = os.path.join(work, f"out-ns-{n}", "ocitest.oci.tar")
                if n == 1:
                    cwd = os.path.join(work, "elsewhere")
                    os.makedirs(cwd)
                    env = dict(os.environ, TZ="Pacific/Kiritimati", LC_ALL="C", LANG="C")
                    proc = namespaced_build(rootlock, lock, again, n, work, env=env,
                                            shell_prefix=f"cd {shlex.quote(cwd)} && umask 077 && ",
                                            extra=["-j", "1"])
                else:
                    proc = namespaced_build(rootlock, lock, again, n, work)
                try:
                    digest = json.loads(proc.stdout)["manifest"]
                except (json.JSONDecodeError, KeyError):
                    digest = None
                same = os.path.isfile(again) and sha256_of(again) == sha256_of(archive)
                fail.expect(proc.returncode == 0 and digest == manifest_digest and same,
                            f"(c/g) build in namespace other-{n}: exit {proc.returncode}, manifest "
                            f"{digest}, same bytes {same}: {proc.stderr[-2000:]}")
            print("(c/g) two builds in namespaces other-1 (also TZ, locale, umask, cwd, -j 1) and "
                  "other-2: manifest and archive bytes as (a)'s")

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

            # (f) podman runs the entrypoint and cmd.
            proc = podman_run(work, f"oci-archive:{archive}")
            fail.expect(proc.returncode == 0 and
                        f"torch from {VENV}/lib/python3.11/site-packages/torch/__init__.py"
                        in proc.stdout, f"(f) podman run: exit {proc.returncode}: "
                        f"{proc.stdout[-1000:]} {proc.stderr[-2000:]}")
            print(f"(f) podman run: {proc.stdout.strip().splitlines()[-1:]}")

            # (h) the SBOM, attached to the image, is the .cdx.json beside it.
            members = archive_members(archive)
            with open(archive + ".cdx.json", "rb") as f:
                sbom_bytes = f.read()
            cdx = json.loads(sbom_bytes)
            image_hashes = cdx.get("metadata", {}).get("component", {}).get("hashes", [])
            fail.expect(image_hashes == [{"alg": "SHA-256", "content": manifest_digest[7:]}],
                        f"(h) the SBOM names the image by {image_hashes}")
            blob_of = lambda digest: members.get("blobs/sha256/" + digest[7:], b"")
            check_sbom_artifact(fail, "archive", json.loads(members["index.json"]), blob_of,
                                manifest_digest, sbom_bytes, built.get("sbom_manifest"))

            def layout_blob(digest):
                path = os.path.join(layout, "blobs", "sha256", digest[7:])
                if not os.path.isfile(path):
                    return b""
                with open(path, "rb") as f:
                    return f.read()
            with open(os.path.join(layout, "index.json")) as f:
                layout_index = json.load(f)
            with open(layout + ".cdx.json", "rb") as f:
                layout_sbom = f.read()
            fail.expect(layout_sbom == sbom_bytes, "(h) the layout's .cdx.json is the archive's")
            check_sbom_artifact(fail, "layout", layout_index, layout_blob, manifest_digest,
                                layout_sbom, built_layout.get("sbom_manifest"))
            print(f"(h) SBOM artifact {built.get('sbom_manifest')} ({len(sbom_bytes)} bytes), "
                  f"subject {manifest_digest}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fail.items:
        print(f"{len(fail.items)} expectation(s) failed")
        return 1
    print("all expectations met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
