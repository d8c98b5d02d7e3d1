"""End-to-end: an arm64 image locked, built and checked on this x86-64 host (issue 15).

fixtures/debian_archive.py serves a signed archive of real bookworm .debs for amd64 and arm64 on
127.0.0.1; fixtures/package_graph.py serves the torch 2.8.0+cu128 stack twice, x86_64 and aarch64
wheels side by side as PyPI lists them, their ELF objects cross-compiled now with
gcc-aarch64-linux-gnu (torch's libraries with their RPATHs, the _C extension, the nvidia trees).
The recipe asks for torch, `numpy<2.3`, `numpy<2.2; platform_machine == "aarch64"` and
`app-cli; platform_machine == "x86_64"`, so that markers decide part of the answer:
  a. without emulation (qemu-aarch64 disabled in binfmt_misc): `lock` of the minbase variant
     exits non-zero with one line naming qemu-user-static and update-binfmts, and writes no
     lock; the extract variant, which runs nothing, locks (target aarch64, base arm64);
  b. with emulation: `lock` exits 0; the target is aarch64, the base arm64 (every .deb arm64 or
     all), the environments marker says aarch64; every wheel is aarch64 or pure, no x86_64 one
     is chosen; the pins are those of the real pip, run natively for aarch64 inside the image
     under qemu (numpy 2.1.3, no app-cli), file for file;
  c. `build`: exit 0, the output names arm64; the image's /bin/sh is an AArch64 ELF (what pct
     reads); the check report is ok; the recipe's [loader] library-paths entry is in the
     ld.so.cache rootlock wrote, as `(libc6,AArch64)` to the image's own `ldconfig -p` (under
     qemu); `--format oci` writes a config for linux/arm64/v8;
  d. the referee: for every ELF object of the image (/usr and /opt), the root's own loader in
     trace mode under qemu-aarch64-static -L ROOT and `rootlock ldd` agree, path for path;
  e. `import torch` works in a chroot of the image (under binfmt's qemu), in an aarch64 python;
  f. an x86-64 libnccl.so.2 planted over the aarch64 one: `check` exits 1 naming libnccl.so.2
     missing and the planted file as of another machine; the real import fails on libnccl.so.2;
  g. the demo's cleanup replayed (the cu13 twins installed over the venv, then uninstalled as
     pip does): one `check` names the same three missing sonames on the arm64 image and on the
     amd64 one of (h);
  i. the arm64 image as a recipe's tarball base: `lock` reads aarch64 from its /bin/sh and
     picks the same wheels as (b);
  h. `arch = ["amd64", "arm64"]`: `lock` writes pylock.NAME-amd64.toml and pylock.NAME-arm64.toml
     (the arm64 one pins what (b) pinned), `build` one image each, and `diff` between them
     exits 1 naming the architecture, numpy's two versions and app-cli on amd64 only.
The archive and the assembled bases are kept between runs ($ROOTLOCK_TEST_CACHE/arm64-archive,
arm64-cache; the archive's key is part of a base's cache key): the arm64 minbase takes about
three minutes under qemu the first time.

The servers, the arm64 lock, its image (and the unpacked root), the referee's verdicts, the
planted root and the two-architecture locks and images are module fixtures, so any case runs
alone; the emulation is enabled for the whole module (and again after (a) turns it off).
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
import types

import pytest

from fixtures import cuda_env, debian_archive as da, elf_stub, emulation, index_server
from fixtures import loader_rules, package_graph, pip_like, referee
from fixtures.cli import run as cli_run
from fixtures.debian_root import run_in_chroot

TEST_CACHE = os.environ.get("ROOTLOCK_TEST_CACHE", "/var/cache/rootlock-test")
CACHE_DIR = os.path.join(TEST_CACHE, "arm64-cache")
# The archive is kept too: its key is part of what the cached bases were made from.
ARCHIVE_DIR = os.path.join(TEST_CACHE, "arm64-archive")
# Fixed ports when free, so that the cached bases (whose sources.list names the mirror) serve
# the next run too.
ARCHIVE_PORT, INDEX_PORT = 8796, 8797
TWINS = ["nvidia-cudnn-cu13", "nvidia-cusparselt-cu13", "nvidia-nccl-cu13", "nvidia-nvshmem-cu13"]
REQUIRES = ['numpy<2.3', 'numpy<2.2; platform_machine == "aarch64"',
            'app-cli; platform_machine == "x86_64"']
EM_AARCH64 = 183
SITE = "/opt/venv/lib/python3.11/site-packages"

RECIPE = """\
[image]
name = "gh"
output = "gh.tar.zst"

[base]
debian = {{ suite = "bookworm", mirror = "{mirror}", variant = "{variant}", include = ["python3", "python3-venv", "ca-certificates"], keyring = "keyring.gpg", arch = {arch} }}

[python]
version = "3.11"
venv = "/opt/venv"

[loader]
library-paths = ["/opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib"]

[torch]
version = "2.8.0"
cuda = "12.8"

[cuda]
driver = "570.133.07"

[[index]]
name = "fixture"
url = "{index}/simple"

[packages]
requires = {requires}
"""



def run(argv, cwd=None, timeout=1200):
    """fixtures.cli.run with TMPDIR on a fast filesystem (mmdebstrap's chroot goes there)."""
    env = dict(os.environ, TMPDIR=os.environ.get("ROOTLOCK_TEST_TMPDIR", "/dev/shm"))
    return cli_run(argv, env=env, cwd=cwd, timeout=timeout)


def show(proc, limit=800):
    return f" (exit {proc.returncode}): {(proc.stderr or proc.stdout)[-limit:]}"


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def wheel_names(lock):
    return sorted(w["name"] for p in lock["packages"] for w in p.get("wheels", []))


def pins(lock):
    return {p["name"]: p["version"] for p in lock["packages"]}


def elf_machine(path):
    with open(path, "rb") as f:
        head = f.read(20)
    return int.from_bytes(head[18:20], "little") if head[:4] == b"\x7fELF" else None


def extract(image, dest):
    os.makedirs(dest)
    subprocess.run(["tar", "--zstd", "-xf", image, "-C", dest], check=True)
    return dest


class serve:
    """`with serve(Server, content, port)`: on that port when it is free, else on any."""

    def __init__(self, server, content, port):
        self.server, self.content, self.port = server, content, port

    def __enter__(self):
        try:
            self.running = self.server(self.content, port=self.port).__enter__()
        except OSError:
            self.running = self.server(self.content, port=0).__enter__()
        return self.running

    def __exit__(self, *exc):
        return self.running.__exit__(*exc)


# -- the set-up ----------------------------------------------------------------------------------

@pytest.fixture(scope="module", autouse=True)
def qemu():
    """binfmt_misc hands aarch64 programs to qemu for the whole module."""
    try:
        path = emulation.enable("aarch64")
    except emulation.EmulationError as error:
        pytest.fail(f"emulation: {error}")
    print(f"emulation: {path}, binfmt_misc qemu-aarch64 enabled")
    return path


@pytest.fixture(scope="module")
def work():
    """The module's scratch folder, on tmpfs (/dev/shm or $ROOTLOCK_TEST_TMPDIR)."""
    path = tempfile.mkdtemp(prefix="rootlock-arm64-",
                            dir=os.environ.get("ROOTLOCK_TEST_TMPDIR", "/dev/shm"))
    yield path
    if os.environ.get("ROOTLOCK_KEEP") == "1":
        print(f"kept {path}")
    else:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def archive(qemu, work):
    t = time.monotonic()
    a = da.demo_archive(ARCHIVE_DIR, architectures=("amd64", "arm64"))
    shutil.copy(a.keyring, os.path.join(work, "keyring.gpg"))
    print(f"archive {a.suite_architectures()} ({time.monotonic() - t:.0f}s)")
    yield a
    a.close()


@pytest.fixture(scope="module")
def srv(archive):
    with serve(da.ArchiveServer, archive, ARCHIVE_PORT) as server:
        yield server


@pytest.fixture(scope="module")
def idx(work):
    t = time.monotonic()
    graph = package_graph.build_graph(os.path.join(work, "graph"),
                                      machines=("x86_64", "aarch64"))
    print(f"index of {len(graph.files)} wheels ({time.monotonic() - t:.0f}s)")
    with serve(index_server.IndexServer, graph, INDEX_PORT) as server:
        yield server


@pytest.fixture(scope="module")
def recipe(work, srv, idx):
    """write(name, variant="minbase", arch='"arm64"'): a recipe in the work folder."""
    def write(name, variant="minbase", arch='"arm64"'):
        path = os.path.join(work, name)
        text = RECIPE.format(mirror=srv.mirror_url, variant=variant, arch=arch, index=idx.url,
                             requires=json.dumps(REQUIRES))
        if variant == "extract":
            # No maintainer script ran, so no ld.so.conf includes ld.so.conf.d: rootlock
            # refuses library-paths there (they would be ignored), rightly.
            text = re.sub(r"\[loader\]\n[^\n]*\n\n", "", text)
        with open(path, "w") as f:
            f.write(text)
        return path
    return write


# -- a. without emulation ------------------------------------------------------------------------

def test_a_minbase_without_emulation_refused_in_one_line(rootlock, work, recipe):
    minbase = recipe("noemu.toml")
    out = os.path.join(work, "pylock.noemu.toml")
    with emulation.disabled():
        proc = run([rootlock, "lock", minbase, "-o", out, "--cache-dir",
                    os.path.join(work, "cache-fresh")])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1 and "qemu-user-static" in lines[0] \
        and "update-binfmts --enable qemu-aarch64" in lines[0] and not os.path.exists(out), \
        "(a) minbase without emulation: expected one line naming qemu-user-static and " \
        f"update-binfmts, no lock written{' (a lock was)' if os.path.exists(out) else ''}" + \
        show(proc)


@pytest.fixture(scope="module")
def extract_lock(rootlock, work, recipe):
    """(process, lock path) of `lock` of the extract variant without emulation."""
    ext = os.path.join(work, "pylock.extract.toml")
    with emulation.disabled():
        proc = run([rootlock, "lock", recipe("extract.toml", variant="extract"), "-o", ext,
                    "--cache-dir", os.path.join(work, "cache-fresh")])
    return proc, ext


def test_a_extract_without_emulation_locks(extract_lock):
    proc, _ = extract_lock
    assert proc.returncode == 0, "(a) extract without emulation should lock" + show(proc)


def test_a_extract_lock_target_aarch64_base_arm64(extract_lock):
    proc, ext = extract_lock
    assert proc.returncode == 0, "(a) extract without emulation should lock" + show(proc)
    tool = load(ext)["tool"]["rootlock"]
    assert tool["target"]["arch"] == "aarch64" and tool["base"].get("architecture") == "arm64", \
        f"(a) extract lock: target {tool['target']}, base arch " \
        f"{tool['base'].get('architecture')}; expected aarch64 and arm64"


# -- b. the arm64 lock ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lock(rootlock, work, recipe):
    """(path, parsed lock) of the arm64 lock."""
    path = os.path.join(work, "pylock.gh.toml")
    t = time.monotonic()
    proc = run([rootlock, "lock", recipe("gh.toml"), "-o", path, "--cache-dir", CACHE_DIR])
    assert proc.returncode == 0, "(b) lock for arm64" + show(proc)
    data = load(path)
    print(f"(b) locked for arm64 in {time.monotonic() - t:.0f}s: {len(pins(data))} packages, "
          f"{len(data['tool']['rootlock']['base']['debs'])} .debs, "
          f"{len(wheel_names(data))} wheels")
    return path, data


def test_b_target_aarch64_base_arm64(lock):
    tool = lock[1]["tool"]["rootlock"]
    assert tool["target"]["arch"] == "aarch64" and tool["base"].get("architecture") == "arm64", \
        f"(b) target {tool['target']}, base architecture {tool['base'].get('architecture')}; " \
        "expected aarch64 and arm64"


def test_b_debs_arm64_or_all(lock):
    archs = {d["architecture"] for d in lock[1]["tool"]["rootlock"]["base"]["debs"]}
    assert archs == {"arm64", "all"}, f"(b) .deb architectures {sorted(archs)}, expected all, arm64"


def test_b_environments_marker_says_aarch64(lock):
    envs = lock[1].get("environments", [])
    assert any('platform_machine == "aarch64"' in e for e in envs), \
        f"(b) environments {envs}, expected a platform_machine == \"aarch64\" marker"


def test_b_wheels_aarch64_or_pure(lock):
    wheels = wheel_names(lock[1])
    assert wheels and not [w for w in wheels if "x86_64" in w] and \
        all(w.endswith("_aarch64.whl") or w.endswith("-any.whl") for w in wheels), \
        f"(b) wheels neither aarch64 nor pure: {[w for w in wheels if 'aarch64' not in w]}"


def test_b_pins(lock):
    got = pins(lock[1])
    assert got.get("torch") == "2.8.0+cu128" and got.get("numpy") == "2.1.3" and \
        "app-cli" not in got, f"(b) pins {got}; expected torch 2.8.0+cu128, numpy 2.1.3, no app-cli"


# -- c. the arm64 image --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def image(rootlock, work, lock):
    """(path, build process) of the arm64 image."""
    path = os.path.join(work, "gh.tar.zst")
    proc = run([rootlock, "build", lock[0], "-o", path, "--cache-dir", CACHE_DIR])
    assert proc.returncode == 0, "(c) build" + show(proc)
    return path, proc


@pytest.fixture(scope="module")
def root(work, image):
    """The arm64 image unpacked (read-only: the cases that change it take a copy)."""
    return extract(image[0], os.path.join(work, "root"))


def test_c_build_output_names_arm64(image):
    out = image[1].stdout
    assert "arm64" in out, f"(c) build output should name arm64: {out[-500:]}"


def test_c_check_report_ok(image):
    with open(image[0] + ".check.json") as f:
        report = json.load(f)
    assert report["ok"] is True, f"(c) the check report is not ok: {json.dumps(report)[:1500]}"


def test_c_bin_sh_is_aarch64(root):
    sh = os.path.realpath(os.path.join(root, "bin/sh"))
    if not sh.startswith(os.path.realpath(root)):  # an absolute link: inside the root
        sh = os.path.join(root, os.readlink(os.path.join(root, "bin/sh")).lstrip("/"))
    assert elf_machine(sh) == EM_AARCH64, \
        f"(c) /bin/sh machine {elf_machine(sh)}, expected {EM_AARCH64} (AArch64)"


def test_c_library_paths_in_ld_so_cache_as_aarch64(root):
    # [loader] library-paths: the ld.so.cache rootlock wrote, as the root's own ldconfig reads it.
    cache = run_in_chroot(root, ["/sbin/ldconfig", "-p"]).stdout
    entry = f"libcudnn.so.9 (libc6,AArch64) => {SITE}/nvidia/cudnn/lib/libcudnn.so.9"
    assert entry in cache, f"(c) ldconfig -p lacks {entry!r}: {cache[:300]!r}"


def oci_config(archive):
    def member(name):
        return subprocess.run(["tar", "-xOf", archive, name], capture_output=True,
                              check=True).stdout

    def blob(digest):
        return json.loads(member("blobs/sha256/" + digest.split(":", 1)[1]))
    index = json.loads(member("index.json"))
    manifest = blob(index["manifests"][0]["digest"])
    return blob(manifest["config"]["digest"])


def test_c_oci_config_linux_arm64_v8(rootlock, work, lock):
    oci = os.path.join(work, "gh.oci.tar")
    proc = run([rootlock, "build", lock[0], "-o", oci, "--format", "oci",
                "--cache-dir", CACHE_DIR])
    assert proc.returncode == 0, "(c) build --format oci" + show(proc)
    config = oci_config(oci)
    platform = (config.get("os"), config.get("architecture"), config.get("variant"))
    assert platform == ("linux", "arm64", "v8"), \
        f"(c) OCI platform {'/'.join(map(str, platform))}, expected linux/arm64/v8"


# -- b. the real pip, native aarch64 under qemu in the built image --------------------------------

def pip_in_image(idx, root):
    """The real pip's pins and wheel files, run natively for aarch64 inside the root."""
    base = ["unshare", "--mount", "--pid", "--fork", "--mount-proc=" + os.path.join(root, "proc"),
            "chroot", root, "env", "PIP_NO_CACHE_DIR=1", "PIP_DISABLE_PIP_VERSION_CHECK=1",
            "PIP_CONFIG_FILE=/dev/null", "PIP_NO_INPUT=1", "PATH=/usr/bin:/bin"]
    proc = cli_run(base + ["/usr/bin/python3", "-m", "venv", "/tmp/pip-referee"], timeout=600)
    if proc.returncode != 0:
        return None, None, proc.stderr[-800:]
    proc = cli_run(base + ["/tmp/pip-referee/bin/pip", "install", "--dry-run", "--quiet",
                           "--report", "/tmp/pip-report.json", "--ignore-installed",
                           "--only-binary=:all:", "--index-url", idx.url + "/simple",
                           "torch==2.8.0", *REQUIRES], timeout=600)
    if proc.returncode != 0:
        return None, None, proc.stderr[-800:]
    with open(os.path.join(root, "tmp/pip-report.json")) as f:
        report = json.load(f)["install"]
    got = {pip_like.canonical_name(i["metadata"]["name"]): i["metadata"]["version"]
           for i in report}
    files = sorted(i["download_info"]["url"].rsplit("/", 1)[-1].replace("%2B", "+")
                   for i in report)
    return got, files, ""


@pytest.fixture(scope="module")
def pip_result(work, idx, root):
    """(pins, wheel files, error) of the real pip in a copy of the arm64 image."""
    copy = os.path.join(work, "pip-root")
    shutil.copytree(root, copy, symlinks=True)
    try:
        return pip_in_image(idx, copy)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def test_b_real_pip_pins_the_same(lock, pip_result):
    got, _, err = pip_result
    assert got is not None, "(b) pip in the arm64 image: " + err
    ours = {pip_like.canonical_name(k): v for k, v in pins(lock[1]).items()}
    print(f"(b) the real pip (aarch64, under qemu) pins {len(got)} packages")
    assert got == ours, f"(b) pip pins differ: {sorted(set(got.items()) ^ set(ours.items()))}"


def test_b_real_pip_picks_the_same_files(lock, pip_result):
    _, files, err = pip_result
    assert files is not None, "(b) pip in the arm64 image: " + err
    wheels = wheel_names(lock[1])
    assert files == wheels, f"(b) pip's files differ: {sorted(set(files) ^ set(wheels))}"


# -- d. the referee ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def referee_run(rootlock, root):
    """The image's ELF objects, the emulated ld.so's listings and the disagreements."""
    paths = sorted(set(loader_rules.all_objects(root, "/usr") +
                       loader_rules.all_objects(root, "/opt")))
    t = time.monotonic()
    refs = referee.ld_so_list_many(root, paths, emulated=referee.emulated_loader(root))
    gots = referee.rootlock_ldd(rootlock, root, paths)
    diffs = referee.compare(refs, gots)
    print(f"(d) referee: {len(paths)} aarch64 objects, {len(paths) - len(diffs)} agree with the "
          f"emulated ld.so, {len(diffs)} disagree ({time.monotonic() - t:.0f}s)")
    return types.SimpleNamespace(paths=paths, refs=refs, diffs=diffs)


def test_d_referee_covers_the_image(referee_run):
    paths = referee_run.paths
    listed = sum(1 for r in referee_run.refs.values() if r.loaded)
    venv = sum(1 for p in paths if p.startswith("/opt/"))
    assert len(paths) > 500 and venv > 30 and listed > 300, \
        f"(d) too few objects: {len(paths)} ({venv} in the venv, {listed} listed); expected " \
        "over 500 (30 in the venv, 300 listed)"


def test_d_rootlock_ldd_agrees_with_emulated_ld_so(referee_run):
    diffs = referee_run.diffs
    assert not diffs, f"(d) rootlock ldd and the emulated ld.so disagree on {len(diffs)} " \
        "objects:\n" + "\n".join(f"  {path}: {'; '.join(items)}"
                                 for path, items in sorted(diffs.items())[:20])


# -- e. import torch -----------------------------------------------------------------------------

def real_import(root, modules="torch"):
    proc = run_in_chroot(root, ["/opt/venv/bin/python3", "-c",
                                f"import {modules}, platform; print(platform.machine())"])
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def test_e_import_torch_in_arm64_chroot(root):
    rc, out = real_import(root)
    print(f"(e) import torch in the arm64 chroot: {out.splitlines()[-1:]}")
    assert rc == 0 and out.splitlines()[-1:] == ["aarch64"], \
        f"(e) import torch: exit {rc}, {out}; expected it to print aarch64"


# -- f. an x86-64 libnccl.so.2 planted over the aarch64 one ---------------------------------------

@pytest.fixture(scope="module")
def planted(work, root):
    """(root copy, the planted file's path inside it)."""
    copy = os.path.join(work, "planted")
    shutil.copytree(root, copy, symlinks=True)
    target = os.path.join(copy, SITE.lstrip("/"), "nvidia/nccl/lib/libnccl.so.2")
    os.unlink(target)
    elf_stub.build_stubs([elf_stub.StubSpec(out=target, soname="libnccl.so.2",
                                            tag="planted x86-64 libnccl")])
    yield copy, "/" + os.path.relpath(target, copy)
    shutil.rmtree(copy, ignore_errors=True)


def test_f_check_names_libnccl_of_another_machine(rootlock, planted):
    copy, path = planted
    proc = run([rootlock, "check", "--root", copy, "--json", "/opt/venv"])
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    missing = [p for p in report.get("problems", []) if p.get("kind") == "missing-soname"]
    assert proc.returncode == 1 and [p["soname"] for p in missing] == ["libnccl.so.2"] \
        and [w["path"] for w in missing[0].get("wrong_machine", [])] == [path] \
        and "x86_64" in missing[0]["wrong_machine"][0]["machine"], \
        f"(f) planted x86-64 object: expected exit 1, libnccl.so.2 missing with {path} as " \
        f"x86_64 in wrong_machine: {missing}" + show(proc, 300)


def test_f_text_report_says_not_the_roots_machine(rootlock, planted):
    text = run([rootlock, "check", "--root", planted[0], "/opt/venv"]).stdout
    assert "not the root's machine" in text, \
        f"(f) the text report should say \"not the root's machine\": {text[-600:]}"


def test_f_real_import_fails_on_libnccl(planted):
    rc, out = real_import(planted[0])
    print("(f) an x86-64 libnccl.so.2: glibc fails on it too")
    assert rc != 0 and "libnccl.so.2" in out, \
        f"(f) the real import should fail on libnccl.so.2: exit {rc}, {out[-300:]}"


# -- i. the arm64 image as a tarball base --------------------------------------------------------

def test_i_tarball_base_reads_aarch64_picks_same_wheels(rootlock, work, idx, lock, image):
    path = image[0]
    with open(path + ".sha256") as f:
        digest = f.read().split()[0]
    recipe = os.path.join(work, "from-tarball.toml")
    text = RECIPE.format(mirror="", variant="", arch="", index=idx.url,
                         requires=json.dumps(REQUIRES))
    text = re.sub(r"^debian = .*$", f'tarball = "{path}"\nsha256 = "{digest}"', text,
                  flags=re.M)
    with open(recipe, "w") as f:
        f.write(text)
    out = os.path.join(work, "pylock.from-tarball.toml")
    proc = run([rootlock, "lock", recipe, "-o", out, "--cache-dir", CACHE_DIR])
    assert proc.returncode == 0, "(i) lock over the arm64 tarball" + show(proc)
    got = load(out)
    wheels = wheel_names(lock[1])
    print("(i) a tarball base: aarch64 read from its /bin/sh")
    assert got["tool"]["rootlock"]["target"]["arch"] == "aarch64" and \
        wheel_names(got) == wheels, \
        f"(i) target {got['tool']['rootlock']['target']} (expected aarch64), wheels differ " \
        f"from (b): {sorted(set(wheel_names(got)) ^ set(wheels))}"


# -- h. two architectures ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def multi(rootlock, work, recipe):
    """The two-architecture lock: (process, -o path, {arch: lock path})."""
    out = os.path.join(work, "multi", "pylock.gh.toml")
    os.makedirs(os.path.dirname(out))
    proc = run([rootlock, "lock", recipe("multi.toml", arch='["amd64", "arm64"]'), "-o", out,
                "--cache-dir", CACHE_DIR])
    locks = {a: os.path.join(work, "multi", f"pylock.gh-{a}.toml") for a in ("amd64", "arm64")}
    return proc, out, locks


@pytest.fixture(scope="module")
def multi_locks(multi):
    proc, _, locks = multi
    assert proc.returncode == 0 and all(map(os.path.exists, locks.values())), \
        "(h) lock of two architectures" + show(proc)
    return locks


def test_h_lock_writes_one_lock_per_architecture(multi):
    proc, out, locks = multi
    written = sorted(os.listdir(os.path.dirname(out)))
    assert proc.returncode == 0 and all(map(os.path.exists, locks.values())) and \
        not os.path.exists(out), \
        f"(h) lock of two architectures: expected pylock.gh-amd64.toml and " \
        f"pylock.gh-arm64.toml, not pylock.gh.toml: {written}" + show(proc)


def test_h_arm64_lock_pins_what_b_pinned(lock, multi_locks):
    arm = load(multi_locks["arm64"])
    assert wheel_names(arm) == wheel_names(lock[1]) and pins(arm) == pins(lock[1]), \
        f"(h) the arm64 lock pins other wheels than (b): " \
        f"{sorted(set(wheel_names(arm)) ^ set(wheel_names(lock[1])))}"


def test_h_amd64_lock_pins(multi_locks):
    amd = load(multi_locks["amd64"])
    assert pins(amd).get("numpy") == "2.2.6" and "app-cli" in pins(amd) and \
        not [w for w in wheel_names(amd) if "aarch64" in w], \
        f"(h) amd64 pins {pins(amd)}; expected numpy 2.2.6, app-cli, no aarch64 wheel"


@pytest.fixture(scope="module")
def multi_builds(rootlock, work, multi_locks):
    """{arch: (image path, build process)}."""
    out = {}
    for arch, path in multi_locks.items():
        image = os.path.join(work, "multi", f"gh-{arch}.tar.zst")
        out[arch] = image, run([rootlock, "build", path, "-o", image, "--cache-dir", CACHE_DIR])
    return out


@pytest.mark.parametrize("arch", ["amd64", "arm64"])
def test_h_build_each_architecture(multi_builds, arch):
    _, proc = multi_builds[arch]
    assert proc.returncode == 0 and arch in proc.stdout, \
        f"(h) build {arch}: expected exit 0 and {arch} named" + show(proc)


def test_h_diff_names_architecture_numpy_and_app_cli(rootlock, multi_locks):
    proc = run([rootlock, "diff", multi_locks["amd64"], multi_locks["arm64"]])
    text = proc.stdout
    assert proc.returncode == 1 and "arm64" in text and "2.1.3" in text and \
        "2.2.6" in text and "app-cli" in text, \
        f"(h) diff amd64 arm64 (exit {proc.returncode}): expected exit 1 naming arm64, numpy " \
        f"2.2.6 and 2.1.3 and app-cli:\n{text[-1500:]}"


# -- g. the demo's cleanup replayed on both images -----------------------------------------------

def replay_cleanup(rootlock, image_root, machine, scratch):
    """The demo's cleanup on a copy of the image: (check's exit code, the missing sonames)."""
    copy = os.path.join(scratch, "cleanup-" + machine)
    shutil.copytree(image_root, copy, symlinks=True)
    try:
        data = cuda_env.for_machine(cuda_env.load_data(), machine)
        info = {"root": copy, "venv": "/opt/venv", "site_packages": SITE,
                "site_packages_host": copy + SITE, "cache_tag": "cpython-311", "py_tag": "cp311",
                "stacks": ["torch-2.8.0-cu128"], "dists": {}, "objects": {},
                "install_order": []}
        cuda_env.install_twins(info, data)
        for twin in TWINS:
            pip_like.uninstall(info["site_packages_host"], twin)
        proc = run([rootlock, "check", "--root", copy, "--json", "/opt/venv"])
        report = json.loads(proc.stdout) if proc.stdout.strip() else {}
        names = sorted(p["soname"] for p in report.get("problems", [])
                       if p.get("kind") == "missing-soname")
        return proc.returncode, names
    finally:
        shutil.rmtree(copy, ignore_errors=True)


@pytest.fixture(scope="module")
def cleanup_arm64(rootlock, work, root):
    return replay_cleanup(rootlock, root, "aarch64", work)


@pytest.fixture(scope="module")
def cleanup_amd64(rootlock, work, multi_builds):
    image, proc = multi_builds["amd64"]
    assert proc.returncode == 0, "(h) build amd64" + show(proc)
    amd_root = extract(image, os.path.join(work, "root-amd64"))
    return replay_cleanup(rootlock, amd_root, "x86_64", work)


def test_g_arm64_cleanup_check_names_three_missing_sonames(cleanup_arm64):
    rc, names = cleanup_arm64
    print(f"(g) the cleanup replayed: {names} missing in one check")
    assert rc == 1 and len(names) == 3, \
        f"(g) arm64: check exit {rc}, missing {names}; expected exit 1 and three sonames"


def test_g_amd64_cleanup_names_the_same_sonames(cleanup_arm64, cleanup_amd64):
    rc, names = cleanup_amd64
    assert rc == 1 and names == cleanup_arm64[1], \
        f"(g) amd64: check exit {rc}, missing {names}; expected exit 1 and arm64's " \
        f"{cleanup_arm64[1]}"
