"""End-to-end: `rootlock build` writes OCI images (an archive and a layout) that real clients
take, layered so that a one-package change ships one layer, the same bytes on every build.

The fixture index serves the torch 2.8.0+cu128 stack, app-cli and web-router 1.0.0 and 1.2.0;
the base is the cached Debian root as a pinned tarball. Then:
  a. one lock, three outputs: NAME.tar.zst, NAME.oci.tar (--format oci) and NAME.oci (a layout
     directory); skopeo inspects the archive and the layout and finds the manifest digest
     rootlock printed, the layers in order (base, nvidia-*, torch, the rest of the venv, the
     recipe's files), the lock's sha256 and the recipe's name as labels, PATH led by the venv
     and the recipe's environment, linux/amd64, the recipe's entrypoint and cmd;
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
     application/vnd.cyclonedx+json in the blobs whose subject is the image manifest, config
     the empty descriptor, and one layer byte-equal to NAME.oci.tar.cdx.json (which names the
     image by its manifest digest); the same in the layout, whose .cdx.json is the archive's.

index.json lists the image alone (skopeo 1.9 and podman 4.3 refuse an index of two manifests
without the image's name), so (e) copies and (f) loads the archive without one.
"""
import hashlib
import json
import os
import shlex
import shutil
import stat
import tarfile

import pytest

from fixtures.cli import run
from fixtures.debian_root import base_tarball

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


def blob_digest(data):
    return "sha256:" + hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


@pytest.fixture(scope="module", autouse=True)
def tools():
    missing = [t for t in ("skopeo", "umoci", "podman", "runc", "unshare") if not shutil.which(t)]
    assert not missing, f"{missing} not installed (make test installs them)"


@pytest.fixture(scope="module")
def cache(scratch):
    return os.path.join(scratch, "cache")


def lock_web_router_versions(rootlock, scratch, index_url, cache):
    """{"1.0.0": path, "1.2.0": path}: the recipe locked with each web-router."""
    base = base_tarball()
    out = {}
    for version in ("1.0.0", "1.2.0"):
        recipe = write_recipe(os.path.join(scratch, f"oci-{version}.toml"), index_url,
                              base, ["app-cli", f"web-router=={version}"])
        out[version] = os.path.join(scratch, f"pylock.oci-{version}.toml")
        proc = run([rootlock, "lock", recipe, "-o", out[version], "--cache-dir", cache])
        assert proc.returncode == 0, f"lock {version}: {proc.stderr}"
    return out


@pytest.fixture(scope="module")
def locks(rootlock, scratch, fixture_index, cache):
    return lock_web_router_versions(rootlock, scratch, fixture_index.simple_url, cache)


# (a) three outputs of one lock.

@pytest.fixture(scope="module")
def tarball(rootlock, scratch, locks, cache):
    path = os.path.join(scratch, "out", "ocitest.tar.zst")
    rc, _, err = build(rootlock, locks["1.0.0"], path, cache)
    assert rc == 0, f"tarball build: exit {rc}: {err}"
    return path


@pytest.fixture(scope="module")
def archive(rootlock, scratch, locks, cache):
    """(path, build JSON): `--format oci` beside the tarball of the same name."""
    tarball_name = os.path.join(scratch, "out", "ocitest.tar.zst")
    rc, built, err = build(rootlock, locks["1.0.0"], tarball_name, cache, ["--format", "oci"])
    path = os.path.join(scratch, "out", "ocitest.oci.tar")
    assert rc == 0 and built and built.get("image") == path and os.path.isfile(path), \
        f"--format oci: exit {rc}: {err} {built}"
    print(f"(a) manifest {built['manifest']}, {len(built['layers'])} layers:")
    for line in built["layers"]:
        print("    " + line)
    return path, built


@pytest.fixture(scope="module")
def manifest_digest(archive):
    return archive[1]["manifest"]


@pytest.fixture(scope="module")
def layout(rootlock, scratch, locks, cache):
    """(path, build JSON) of the layout directory."""
    path = os.path.join(scratch, "out", "ocitest.oci")
    rc, built, err = build(rootlock, locks["1.0.0"], path, cache)
    assert rc == 0 and built and os.path.isdir(path), f"layout: exit {rc}: {err} {built}"
    return path, built


def test_a_tarball_written(tarball):
    assert os.path.isfile(tarball) and os.path.getsize(tarball) > 0, \
        f"the .tar.zst of the same lock is not written: {tarball}"


def test_a_archive_sha256_printed(archive):
    path, built = archive
    assert built.get("sha256") == sha256_of(path), \
        f"the printed sha256 {built.get('sha256')} is not the archive's {sha256_of(path)}"


def test_a_layout_has_the_archives_manifest(layout, manifest_digest):
    assert layout[1].get("manifest") == manifest_digest, \
        f"the layout's manifest is not the archive's {manifest_digest}: {layout[1]}"


@pytest.fixture(scope="module")
def inspected(archive, layout):
    """skopeo's view of each form: {"archive"|"layout": (reference, raw, config, err)}."""
    out = {}
    for kind, reference in (("archive", f"oci-archive:{archive[0]}:ocitest"),
                            ("layout", f"oci:{layout[0]}:ocitest")):
        out[kind] = (reference, *inspect(reference))
    return out


@pytest.fixture(params=["archive", "layout"])
def skopeo_view(request, inspected):
    """(reference, manifest text, config) of one form, as skopeo inspects it."""
    reference, raw, config, err = inspected[request.param]
    assert raw is not None, f"skopeo inspect {reference}: {err}"
    return reference, raw, config


def test_a_skopeo_finds_the_manifest_digest(skopeo_view, manifest_digest):
    reference, raw, _ = skopeo_view
    assert blob_digest(raw) == manifest_digest, f"{reference}: another manifest"


def test_a_layers_in_order(skopeo_view):
    reference, _, config = skopeo_view
    history = [h.get("created_by") for h in config.get("history", [])]
    assert history == EXPECTED_LAYERS, f"{reference}: layers {history}"


def test_a_lock_sha256_and_recipe_labels(skopeo_view, locks):
    reference, _, config = skopeo_view
    labels = config.get("config", {}).get("Labels", {})
    assert labels.get("org.rootlock.lock.sha256") == sha256_of(locks["1.0.0"]) and \
        labels.get("org.rootlock.recipe") == "ocitest", f"{reference}: labels {labels}"


def test_a_path_led_by_the_venv(skopeo_view):
    reference, _, config = skopeo_view
    env = config.get("config", {}).get("Env", [])
    assert env[:1] and env[0].startswith(f"PATH={VENV}/bin:") and \
        "PYTHONUNBUFFERED=1" in env, f"{reference}: Env {env}"


def test_a_platform_linux_amd64(skopeo_view):
    reference, _, config = skopeo_view
    assert config.get("architecture") == "amd64" and config.get("os") == "linux", \
        f"{reference}: platform {config.get('architecture')} {config.get('os')}"


def test_a_entrypoint_and_cmd(skopeo_view):
    reference, _, config = skopeo_view
    run_config = config.get("config", {})
    assert run_config.get("Entrypoint") == ENTRYPOINT and run_config.get("Cmd") == CMD, \
        f"{reference}: Entrypoint {run_config.get('Entrypoint')} Cmd {run_config.get('Cmd')}"


def test_b_umoci_unpack_is_the_tarballs_tree(scratch, layout, tarball):
    bundle = os.path.join(scratch, "bundle")
    proc = run(["umoci", "unpack", "--image", f"{layout[0]}:ocitest", bundle])
    rootfs = os.path.join(scratch, "rootfs")
    os.makedirs(rootfs)
    untar = run(["tar", "--zstd", "--numeric-owner", "-xpf", tarball, "-C", rootfs])
    assert proc.returncode == 0 and untar.returncode == 0, \
        f"umoci unpack: {proc.stderr} / tar: {untar.stderr}"
    from_oci, from_tar = tree_of(os.path.join(bundle, "rootfs")), tree_of(rootfs)
    only_oci = sorted(set(from_oci) - set(from_tar))
    only_tar = sorted(set(from_tar) - set(from_oci))
    differ = sorted(p for p in set(from_oci) & set(from_tar) if from_oci[p] != from_tar[p])
    assert not only_oci and not only_tar and not differ, \
        f"trees differ: only OCI {only_oci[:5]}, only tarball {only_tar[:5]}, " \
        f"differ {[(p, from_oci[p], from_tar[p]) for p in differ[:3]]}"
    print(f"(b) umoci unpack gives the tarball's {len(from_tar)} entries exactly")


@pytest.mark.parametrize("n", [1, 2], ids=["other-1-tz-locale-umask-cwd-j1", "other-2"])
def test_c_g_namespaced_build_gives_the_same_bytes(rootlock, scratch, locks, archive,
                                                   manifest_digest, n):
    """(c), (g): a build in namespaces of its own, other-1 also with another TZ, locale, umask,
    working directory and -j 1: the same manifest and archive bytes as (a)'s."""
    again = os.path.join(scratch, f"out-ns-{n}", "ocitest.oci.tar")
    if n == 1:
        cwd = os.path.join(scratch, "elsewhere")
        os.makedirs(cwd)
        env = dict(os.environ, TZ="Pacific/Kiritimati", LC_ALL="C", LANG="C")
        proc = namespaced_build(rootlock, locks["1.0.0"], again, n, scratch, env=env,
                                shell_prefix=f"cd {shlex.quote(cwd)} && umask 077 && ",
                                extra=["-j", "1"])
    else:
        proc = namespaced_build(rootlock, locks["1.0.0"], again, n, scratch)
    try:
        digest = json.loads(proc.stdout)["manifest"]
    except (json.JSONDecodeError, KeyError):
        digest = None
    same = os.path.isfile(again) and sha256_of(again) == sha256_of(archive[0])
    assert proc.returncode == 0 and digest == manifest_digest and same, \
        f"build in namespace other-{n}: exit {proc.returncode}, manifest {digest}, " \
        f"same bytes {same}: {proc.stderr[-2000:]}"


def test_d_one_package_changed_one_layer_changed(rootlock, scratch, locks, cache, archive):
    changed = os.path.join(scratch, "out3", "ocitest.oci.tar")
    rc, built_changed, err = build(rootlock, locks["1.2.0"], changed, cache)
    assert rc == 0, f"build: exit {rc}: {err}"
    before = [line.split(" sha256:")[1] for line in archive[1]["layers"]]
    after = [line.split(" sha256:")[1] for line in built_changed["layers"]]
    differing = [EXPECTED_LAYERS[i] for i in range(len(before)) if before[i] != after[i]]
    assert len(before) == len(after) and differing == ["rootlock: the rest of the venv"], \
        f"layers that changed: {differing} ({len(before)} layers before, {len(after)} after)"
    print(f"(d) web-router 1.0.0 -> 1.2.0 changes: {differing}")


def test_e_skopeo_copy_keeps_the_manifest_digest(scratch, archive, manifest_digest):
    copied = os.path.join(scratch, "copied")
    proc = run(["skopeo", "copy", f"oci-archive:{archive[0]}", f"oci:{copied}:ocitest"])
    raw, _, err = inspect(f"oci:{copied}:ocitest") if proc.returncode == 0 else (
        None, None, proc.stderr)
    assert raw is not None and blob_digest(raw) == manifest_digest, f"skopeo copy: {err}"


def test_f_podman_runs_entrypoint_and_cmd(scratch, archive):
    proc = podman_run(scratch, f"oci-archive:{archive[0]}")
    assert proc.returncode == 0 and \
        f"torch from {VENV}/lib/python3.11/site-packages/torch/__init__.py" in proc.stdout, \
        f"podman run: exit {proc.returncode}: {proc.stdout[-1000:]} {proc.stderr[-2000:]}"
    print(f"(f) podman run: {proc.stdout.strip().splitlines()[-1:]}")


# (h) the SBOM, attached to the image, is the .cdx.json beside it.

@pytest.fixture(scope="module")
def sbom_bytes(archive):
    with open(archive[0] + ".cdx.json", "rb") as f:
        return f.read()


def test_h_sbom_names_the_image_by_manifest_digest(sbom_bytes, manifest_digest):
    cdx = json.loads(sbom_bytes)
    image_hashes = cdx.get("metadata", {}).get("component", {}).get("hashes", [])
    assert image_hashes == [{"alg": "SHA-256", "content": manifest_digest[7:]}], \
        f"the SBOM names the image by {image_hashes}"


def test_h_layouts_cdx_json_is_the_archives(layout, sbom_bytes):
    with open(layout[0] + ".cdx.json", "rb") as f:
        layout_sbom = f.read()
    assert layout_sbom == sbom_bytes, "the layout's .cdx.json is not the archive's"


def archive_view(archive):
    """(index.json, blob by digest, the build's SBOM manifest digest) of the OCI archive."""
    members = archive_members(archive[0])
    return (json.loads(members["index.json"]),
            lambda digest: members.get("blobs/sha256/" + (digest or "")[7:], b""),
            archive[1].get("sbom_manifest"))


def layout_view(layout):
    def blob(digest):
        path = os.path.join(layout[0], "blobs", "sha256", (digest or "")[7:])
        if not os.path.isfile(path):
            return b""
        with open(path, "rb") as f:
            return f.read()
    with open(os.path.join(layout[0], "index.json")) as f:
        index = json.load(f)
    return index, blob, layout[1].get("sbom_manifest")


@pytest.mark.parametrize("label", ["archive", "layout"])
def test_h_sbom_artifact_attached_to_the_image(request, label, manifest_digest):
    """index.json lists the image alone, by name, and names the SBOM's artifact manifest in an
    annotation; the artifact's blobs are in the image, its one layer the form's .cdx.json."""
    form = request.getfixturevalue(label)
    index, blob, sbom_digest = archive_view(form) if label == "archive" else layout_view(form)
    with open(form[0] + ".cdx.json", "rb") as f:
        sbom_bytes = f.read()
    manifests = index.get("manifests", [])
    assert len(manifests) == 1, f"{label}: index.json lists {manifests}"
    image = manifests[0]
    notes = image.get("annotations", {})
    assert image.get("digest") == manifest_digest and \
        notes.get("org.opencontainers.image.ref.name") == "ocitest" and \
        notes.get("org.rootlock.sbom.manifest") == sbom_digest, \
        f"{label}: the entry is not the named image with its SBOM: {image}"
    artifact_bytes = blob(sbom_digest)
    assert sbom_digest and blob_digest(artifact_bytes) == sbom_digest, \
        f"{label}: the artifact manifest's digest: {blob_digest(artifact_bytes)} != {sbom_digest}"
    artifact = json.loads(artifact_bytes)
    assert artifact.get("mediaType") == "application/vnd.oci.image.manifest.v1+json" and \
        artifact.get("artifactType") == "application/vnd.cyclonedx+json", \
        f"{label}: artifact types {artifact.get('mediaType')} {artifact.get('artifactType')}"
    assert artifact.get("subject", {}).get("digest") == manifest_digest, \
        f"{label}: subject {artifact.get('subject')}"
    empty = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    config = artifact.get("config", {})
    assert config == {"mediaType": "application/vnd.oci.empty.v1+json", "digest": empty,
                      "size": 2, "data": "e30="} and blob(empty) == b"{}", \
        f"{label}: config {config}"
    layers = artifact.get("layers", [])
    assert len(layers) == 1 and layers[0].get("mediaType") == \
        "application/vnd.cyclonedx+json" and blob(layers[0]["digest"]) == sbom_bytes, \
        f"{label}: the SBOM layer is not {os.path.basename(form[0])}.cdx.json: {layers}"
    print(f"(h) {label}: SBOM artifact {sbom_digest} ({len(sbom_bytes)} bytes), "
          f"subject {manifest_digest}")
