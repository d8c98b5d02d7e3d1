"""End-to-end: an arm64 image locked, built and checked on this x86-64 host (issue 15).

Usage: test_arm64.py ROOTLOCK

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
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

from fixtures import cuda_env, debian_archive as da, emulation, index_server, loader_rules
from fixtures import package_graph, pip_like, referee
from fixtures.debian_root import run_in_chroot
from fixtures.failures import Failures

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


class Ctx:
    pass


def run(argv, cwd=None, timeout=1200):
    env = dict(os.environ, TMPDIR=os.environ.get("ROOTLOCK_TEST_TMPDIR", "/dev/shm"))
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env)


def show(proc, limit=800):
    return f" (exit {proc.returncode}): {(proc.stderr or proc.stdout)[-limit:]}"


def write_recipe(c, name, variant="minbase", arch='"arm64"'):
    path = os.path.join(c.work, name)
    text = RECIPE.format(mirror=c.srv.mirror_url, variant=variant, arch=arch, index=c.idx.url,
                         requires=json.dumps(REQUIRES))
    if variant == "extract":
        # No maintainer script ran, so no ld.so.conf includes ld.so.conf.d: rootlock refuses
        # library-paths there (they would be ignored), rightly.
        text = re.sub(r"\[loader\]\n[^\n]*\n\n", "", text)
    with open(path, "w") as f:
        f.write(text)
    return path


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


def case_a(fail, c):
    """Without emulation: minbase refused in one line, extract locks."""
    recipe = write_recipe(c, "extract.toml", variant="extract")
    minbase = write_recipe(c, "noemu.toml")
    out = os.path.join(c.work, "pylock.noemu.toml")
    with emulation.disabled():
        proc = run([c.rl, "lock", minbase, "-o", out, "--cache-dir", c.fresh_cache])
        lines = proc.stderr.strip().splitlines()
        fail.expect(proc.returncode != 0 and len(lines) == 1 and "qemu-user-static" in lines[0]
                    and "update-binfmts --enable qemu-aarch64" in lines[0]
                    and not os.path.exists(out),
                    "(a) minbase without emulation: one line naming qemu-user-static" + show(proc))
        ext = os.path.join(c.work, "pylock.extract.toml")
        proc = run([c.rl, "lock", recipe, "-o", ext, "--cache-dir", c.fresh_cache])
    if fail.expect(proc.returncode == 0, "(a) extract without emulation locks" + show(proc)):
        lock = load(ext)
        tool = lock["tool"]["rootlock"]
        fail.expect(tool["target"]["arch"] == "aarch64" and
                    tool["base"].get("architecture") == "arm64",
                    f"(a) extract lock: target {tool['target']}, base arch "
                    f"{tool['base'].get('architecture')}")
    print("(a) without emulation: minbase refused in one line; extract locked")


def pip_in_image(c, root):
    """The real pip's pins and wheel files, run natively for aarch64 inside the root."""
    base = ["unshare", "--mount", "--pid", "--fork", "--mount-proc=" + os.path.join(root, "proc"),
            "chroot", root, "env", "PIP_NO_CACHE_DIR=1", "PIP_DISABLE_PIP_VERSION_CHECK=1",
            "PIP_CONFIG_FILE=/dev/null", "PIP_NO_INPUT=1", "PATH=/usr/bin:/bin"]
    proc = subprocess.run(base + ["/usr/bin/python3", "-m", "venv", "/tmp/pip-referee"],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return None, None, proc.stderr[-800:]
    proc = subprocess.run(base + ["/tmp/pip-referee/bin/pip", "install", "--dry-run", "--quiet",
                                  "--report", "/tmp/pip-report.json", "--ignore-installed",
                                  "--only-binary=:all:", "--index-url", c.idx.url + "/simple",
                                  "torch==2.8.0", *REQUIRES],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return None, None, proc.stderr[-800:]
    with open(os.path.join(root, "tmp/pip-report.json")) as f:
        report = json.load(f)["install"]
    got = {pip_like.canonical_name(i["metadata"]["name"]): i["metadata"]["version"]
           for i in report}
    files = sorted(i["download_info"]["url"].rsplit("/", 1)[-1].replace("%2B", "+")
                   for i in report)
    return got, files, ""


def case_b(fail, c):
    """The arm64 lock."""
    recipe = write_recipe(c, "gh.toml")
    c.lock = os.path.join(c.work, "pylock.gh.toml")
    t = time.monotonic()
    proc = run([c.rl, "lock", recipe, "-o", c.lock, "--cache-dir", CACHE_DIR])
    if not fail.expect(proc.returncode == 0, "(b) lock for arm64" + show(proc)):
        return False
    lock = load(c.lock)
    tool = lock["tool"]["rootlock"]
    base = tool["base"]
    fail.expect(tool["target"]["arch"] == "aarch64" and base.get("architecture") == "arm64",
                f"(b) target {tool['target']}, base architecture {base.get('architecture')}")
    archs = {d["architecture"] for d in base["debs"]}
    fail.expect(archs == {"arm64", "all"}, f"(b) .deb architectures {sorted(archs)}")
    fail.expect(any('platform_machine == "aarch64"' in e for e in lock.get("environments", [])),
                f"(b) environments {lock.get('environments')}")
    wheels = wheel_names(lock)
    fail.expect(wheels and not [w for w in wheels if "x86_64" in w] and
                all(w.endswith("_aarch64.whl") or w.endswith("-any.whl") for w in wheels),
                f"(b) wheels: {[w for w in wheels if 'aarch64' not in w]}")
    c.pins = pins(lock)
    fail.expect(c.pins.get("torch") == "2.8.0+cu128" and c.pins.get("numpy") == "2.1.3" and
                "app-cli" not in c.pins, f"(b) pins {c.pins}")
    c.wheels = wheels
    print(f"(b) locked for arm64 in {time.monotonic() - t:.0f}s: {len(c.pins)} packages, "
          f"{len(base['debs'])} .debs, {len(wheels)} aarch64/pure wheels")
    return True


def case_b_pip(fail, c):
    """pip, native aarch64 under qemu in the built image, resolves the same."""
    root = os.path.join(c.work, "pip-root")
    shutil.copytree(c.root, root, symlinks=True)
    got, files, err = pip_in_image(c, root)
    if fail.expect(got is not None, "(b) pip in the arm64 image: " + err):
        ours = {pip_like.canonical_name(k): v for k, v in c.pins.items()}
        fail.expect(got == ours, f"(b) pip pins {sorted(set(got.items()) ^ set(ours.items()))}")
        fail.expect(files == c.wheels,
                    f"(b) pip's files differ: {sorted(set(files) ^ set(c.wheels))}")
        print(f"(b) the real pip (aarch64, under qemu) pins the same {len(got)} packages, "
              "file for file")
    shutil.rmtree(root, ignore_errors=True)


def case_c(fail, c):
    image = os.path.join(c.work, "gh.tar.zst")
    proc = run([c.rl, "build", c.lock, "-o", image, "--cache-dir", CACHE_DIR])
    if not fail.expect(proc.returncode == 0, "(c) build" + show(proc)):
        return False
    fail.expect("arm64" in proc.stdout, f"(c) build output names arm64: {proc.stdout[-500:]}")
    with open(image + ".check.json") as f:
        fail.expect(json.load(f)["ok"] is True, "(c) the check report is not ok")
    c.root = extract(image, os.path.join(c.work, "root"))
    sh = os.path.realpath(os.path.join(c.root, "bin/sh"))
    if not sh.startswith(os.path.realpath(c.root)):  # an absolute link: inside the root
        sh = os.path.join(c.root, os.readlink(os.path.join(c.root, "bin/sh")).lstrip("/"))
    fail.expect(elf_machine(sh) == EM_AARCH64, f"(c) /bin/sh machine {elf_machine(sh)}")
    # [loader] library-paths: the ld.so.cache rootlock wrote, as the root's own ldconfig reads it.
    cache = run_in_chroot(c.root, ["/sbin/ldconfig", "-p"]).stdout
    entry = (f"libcudnn.so.9 (libc6,AArch64) => {SITE}/nvidia/cudnn/lib/libcudnn.so.9")
    fail.expect(entry in cache, f"(c) ldconfig -p lacks {entry!r}: {cache[:300]!r}")
    oci = os.path.join(c.work, "gh.oci.tar")
    proc = run([c.rl, "build", c.lock, "-o", oci, "--format", "oci", "--cache-dir", CACHE_DIR])
    if fail.expect(proc.returncode == 0, "(c) build --format oci" + show(proc)):
        config = oci_config(oci)
        fail.expect((config.get("os"), config.get("architecture"), config.get("variant")) ==
                    ("linux", "arm64", "v8"),
                    f"(c) OCI platform {config.get('os')}/{config.get('architecture')}/"
                    f"{config.get('variant')}")
    print("(c) built: /bin/sh is AArch64, the written ld.so.cache reads as AArch64 to the "
          "image's ldconfig, the OCI config is linux/arm64/v8")
    return True


def oci_config(archive):
    def member(name):
        return subprocess.run(["tar", "-xOf", archive, name], capture_output=True,
                              check=True).stdout

    def blob(digest):
        return json.loads(member("blobs/sha256/" + digest.split(":", 1)[1]))
    index = json.loads(member("index.json"))
    manifest = blob(index["manifests"][0]["digest"])
    return blob(manifest["config"]["digest"])


def case_d(fail, c):
    paths = sorted(set(loader_rules.all_objects(c.root, "/usr") +
                       loader_rules.all_objects(c.root, "/opt")))
    t = time.monotonic()
    refs = referee.ld_so_list_many(c.root, paths, emulated=referee.emulated_loader(c.root))
    gots = referee.rootlock_ldd(c.rl, c.root, paths)
    diffs = referee.compare(refs, gots)
    listed = sum(1 for r in refs.values() if r.loaded)
    venv = sum(1 for p in paths if p.startswith("/opt/"))
    fail.expect(len(paths) > 500 and venv > 30 and listed > 300,
                f"(d) too few objects: {len(paths)} ({venv} in the venv, {listed} listed)")
    for path, items in sorted(diffs.items())[:20]:
        fail.expect(False, f"(d) {path}: {'; '.join(items)}")
    print(f"(d) referee: {len(paths)} aarch64 objects ({venv} in the venv), "
          f"{len(paths) - len(diffs)} agree with the emulated ld.so, {len(diffs)} disagree "
          f"({time.monotonic() - t:.0f}s)")


def real_import(root, modules="torch"):
    proc = run_in_chroot(root, ["/opt/venv/bin/python3", "-c",
                                f"import {modules}, platform; print(platform.machine())"])
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def case_e(fail, c):
    rc, out = real_import(c.root)
    fail.expect(rc == 0 and out.splitlines()[-1:] == ["aarch64"], f"(e) import torch: {out}")
    print(f"(e) import torch in the arm64 chroot: {out.splitlines()[-1:]}")


def case_f(fail, c):
    root = os.path.join(c.work, "planted")
    shutil.copytree(c.root, root, symlinks=True)
    try:
        target = os.path.join(root, SITE.lstrip("/"), "nvidia/nccl/lib/libnccl.so.2")
        os.unlink(target)
        from fixtures import elf_stub
        elf_stub.build_stubs([elf_stub.StubSpec(out=target, soname="libnccl.so.2",
                                                tag="planted x86-64 libnccl")])
        proc = run([c.rl, "check", "--root", root, "--json", "/opt/venv"])
        report = json.loads(proc.stdout) if proc.stdout.strip() else {}
        missing = [p for p in report.get("problems", []) if p.get("kind") == "missing-soname"]
        planted = "/" + os.path.relpath(target, root)
        fail.expect(proc.returncode == 1 and [p["soname"] for p in missing] == ["libnccl.so.2"]
                    and [w["path"] for w in missing[0].get("wrong_machine", [])] == [planted]
                    and "x86_64" in missing[0]["wrong_machine"][0]["machine"],
                    f"(f) planted x86-64 object: {missing}" + show(proc, 300))
        text = run([c.rl, "check", "--root", root, "/opt/venv"]).stdout
        fail.expect("not the root's machine" in text, f"(f) text report: {text[-600:]}")
        rc, out = real_import(root)
        fail.expect(rc != 0 and "libnccl.so.2" in out, f"(f) glibc: {out[-300:]}")
        print("(f) an x86-64 libnccl.so.2: named as another machine; glibc fails on it too")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def replay_cleanup(fail, label, rl, image_root, machine, scratch):
    """The demo's cleanup on a copy of the image: the missing sonames one check names."""
    root = os.path.join(scratch, "cleanup-" + machine)
    shutil.copytree(image_root, root, symlinks=True)
    try:
        data = cuda_env.for_machine(cuda_env.load_data(), machine)
        info = {"root": root, "venv": "/opt/venv", "site_packages": SITE,
                "site_packages_host": root + SITE, "cache_tag": "cpython-311", "py_tag": "cp311",
                "stacks": ["torch-2.8.0-cu128"], "dists": {}, "objects": {},
                "install_order": []}
        cuda_env.install_twins(info, data)
        for twin in TWINS:
            pip_like.uninstall(info["site_packages_host"], twin)
        proc = run([rl, "check", "--root", root, "--json", "/opt/venv"])
        report = json.loads(proc.stdout) if proc.stdout.strip() else {}
        names = sorted(p["soname"] for p in report.get("problems", [])
                       if p.get("kind") == "missing-soname")
        fail.expect(proc.returncode == 1, f"(g) {label}: check exit {proc.returncode}")
        return names
    finally:
        shutil.rmtree(root, ignore_errors=True)


def case_h(fail, c):
    recipe = write_recipe(c, "multi.toml", arch='["amd64", "arm64"]')
    out = os.path.join(c.work, "multi", "pylock.gh.toml")
    os.makedirs(os.path.dirname(out))
    proc = run([c.rl, "lock", recipe, "-o", out, "--cache-dir", CACHE_DIR])
    locks = {a: os.path.join(c.work, "multi", f"pylock.gh-{a}.toml") for a in ("amd64", "arm64")}
    if not fail.expect(proc.returncode == 0 and all(map(os.path.exists, locks.values())) and
                       not os.path.exists(out),
                       f"(h) lock of two architectures: {sorted(os.listdir(os.path.dirname(out)))}"
                       + show(proc)):
        return None
    arm = load(locks["arm64"])
    fail.expect(wheel_names(arm) == c.wheels and pins(arm) == c.pins,
                "(h) the arm64 lock pins other wheels than (b)")
    amd = load(locks["amd64"])
    fail.expect(pins(amd).get("numpy") == "2.2.6" and "app-cli" in pins(amd) and
                not [w for w in wheel_names(amd) if "aarch64" in w],
                f"(h) amd64 pins {pins(amd)}")
    images = {}
    for arch, lock in locks.items():
        image = os.path.join(c.work, "multi", f"gh-{arch}.tar.zst")
        proc = run([c.rl, "build", lock, "-o", image, "--cache-dir", CACHE_DIR])
        if fail.expect(proc.returncode == 0 and arch in proc.stdout, f"(h) build {arch}"
                       + show(proc)):
            images[arch] = image
    proc = run([c.rl, "diff", locks["amd64"], locks["arm64"]])
    text = proc.stdout
    fail.expect(proc.returncode == 1 and "arm64" in text and "2.1.3" in text and
                "2.2.6" in text and "app-cli" in text,
                f"(h) diff amd64 arm64 (exit {proc.returncode}):\n{text[-1500:]}")
    print(f"(h) two locks, {len(images)} images; diff names the architecture, numpy "
          "2.2.6 -> 2.1.3 and app-cli")
    return images.get("amd64")


def case_i(fail, c):
    """A tarball base tells its architecture by its /bin/sh: the arm64 image as a base."""
    image = os.path.join(c.work, "gh.tar.zst")
    with open(image + ".sha256") as f:
        digest = f.read().split()[0]
    recipe = os.path.join(c.work, "from-tarball.toml")
    text = RECIPE.format(mirror="", variant="", arch="", index=c.idx.url,
                         requires=json.dumps(REQUIRES))
    text = re.sub(r"^debian = .*$", f'tarball = "{image}"\nsha256 = "{digest}"', text,
                  flags=re.M)
    with open(recipe, "w") as f:
        f.write(text)
    out = os.path.join(c.work, "pylock.from-tarball.toml")
    proc = run([c.rl, "lock", recipe, "-o", out, "--cache-dir", CACHE_DIR])
    if fail.expect(proc.returncode == 0, "(i) lock over the arm64 tarball" + show(proc)):
        lock = load(out)
        fail.expect(lock["tool"]["rootlock"]["target"]["arch"] == "aarch64" and
                    wheel_names(lock) == c.wheels,
                    f"(i) target {lock['tool']['rootlock']['target']}, wheels differ: "
                    f"{sorted(set(wheel_names(lock)) ^ set(c.wheels))}")
        print("(i) a tarball base: aarch64 read from its /bin/sh, the same aarch64 wheels")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    fail = Failures()
    start = time.monotonic()
    c = Ctx()
    c.rl = os.path.abspath(argv[1])
    c.work = tempfile.mkdtemp(prefix="rootlock-arm64-",
                              dir=os.environ.get("ROOTLOCK_TEST_TMPDIR", "/dev/shm"))
    c.fresh_cache = os.path.join(c.work, "cache-fresh")
    archive = None
    try:
        qemu = emulation.enable("aarch64")
        print(f"emulation: {qemu}, binfmt_misc qemu-aarch64 enabled")
        archive = da.demo_archive(ARCHIVE_DIR, architectures=("amd64", "arm64"))
        graph = package_graph.build_graph(os.path.join(c.work, "graph"),
                                          machines=("x86_64", "aarch64"))
        print(f"archive {archive.suite_architectures()}, index of {len(graph.files)} wheels "
              f"({time.monotonic() - start:.0f}s)")
        with serve(da.ArchiveServer, archive, ARCHIVE_PORT) as c.srv, \
                serve(index_server.IndexServer, graph, INDEX_PORT) as c.idx:
            shutil.copy(archive.keyring, os.path.join(c.work, "keyring.gpg"))
            case_a(fail, c)
            if case_b(fail, c) and case_c(fail, c):
                case_b_pip(fail, c)
                case_d(fail, c)
                case_e(fail, c)
                case_f(fail, c)
                case_i(fail, c)
                amd64_image = case_h(fail, c)
                arm = replay_cleanup(fail, "arm64", c.rl, c.root, "aarch64", c.work)
                fail.expect(len(arm) == 3, f"(g) arm64 cleanup: missing {arm}")
                if amd64_image:
                    amd_root = extract(amd64_image, os.path.join(c.work, "root-amd64"))
                    amd = replay_cleanup(fail, "amd64", c.rl, amd_root, "x86_64", c.work)
                    fail.expect(amd == arm, f"(g) missing sonames: amd64 {amd}, arm64 {arm}")
                print(f"(g) the cleanup replayed: {arm} missing in one check")
    except emulation.EmulationError as error:
        fail.expect(False, f"emulation: {error}")
    finally:
        if archive is not None:
            archive.close()
        shutil.rmtree(c.work, ignore_errors=True)
    print(f"{len(fail.items)} failures" if fail.items else "all expectations met",
          f"({time.monotonic() - start:.0f}s)")
    return 1 if fail.items else 0


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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
