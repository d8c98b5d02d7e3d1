#!/usr/bin/env python3
"""`make bench`: what `rootlock build` costs beside the routes a user would otherwise take.

    python3 tests/bench/bench_build.py build/rootlock [--gb 2.0] [--runs 2]

The input: four fixture wheels holding --gb GB of shared objects (real ELF objects from gcc,
padded with data that deflates about 3:1 like real CUDA libraries; deflate level 6), generated
once and cached under $ROOTLOCK_TEST_CACHE/bench-wheels. They are served by the loopback index
and locked over the cached Debian base tarball; then, in one run, on the same wheels:

  rootlock build      the lock into a .tar.zst image (base + venv; closure checked, pct's rules,
                      SBOM): wheels and base in the cache, the frame cache empty (a full build);
  one package changed the lock with bench-app 1.1.0 instead of 1.0.0 (a small pure-Python
                      package), built over the image of the first lock: every frame that holds
                      no bench-app member comes from the frame cache (incremental);
  nothing changed     the second lock built again over its own untouched image: the same frames,
                      so the image is kept (reading the base, the wheels' indexes, the check,
                      planning the frames; nothing written but the files beside it);
  on XFS (reflink)    the three rows above once more on an XFS made with reflink=1 in a loop
                      file (fixtures/reflink_fs; root and xfsprogs, else skipped, as with
                      --no-reflink): there the rebuild clones the cached frames' blocks into
                      the image instead of writing them (this machine's own disk is ext4);
  write floor         the image's own bytes (read from memory) copied to a new file past the page
                      cache and synced (dd oflag=direct conv=fsync), then renamed over the
                      image (freeing the old one's blocks): what writing a new image of that
                      size durably costs on this disk, which a rebuild that changes any frame
                      pays whatever else it saves;
  sha256 alone        openssl dgst -sha256 of the image, read from memory: what every build
                      pays on any filesystem for IMAGE.sha256, which covers every byte;
  pip route           python3 -m venv --without-pip, pip install --no-index --no-deps
                      --no-compile of the wheels into it, then tar --sort=name --mtime=@0
                      --numeric-owner | zstd -T2 -3 (the venv only: no base, no checks);
  floor               unzip -p of every wheel piped to zstd -T2 -3 (bytes only, no tar at all);
  cache verify        `rootlock cache verify` of the bench's cache (every wheel, the base, the
                      frames and pages checked against their digests), beside sha256sum of every
                      file in it (what a user would otherwise run), in MB/s;
  zstd alone          zstd -T2 -3 of the image's own tar, decompressed beforehand: what
                      compressing those bytes costs on this machine with nothing else to do, the
                      part of the build no inflater or writer can remove.

With --baseline OTHER_ROOTLOCK (an earlier build of rootlock), its three rows are measured too,
on the same cache and wheels, for a before-and-after of a change (issue 32 measured with it
what checking every cached frame and base costs a warm build).

Wall time is the median of --runs runs; peak RSS from /usr/bin/time (for the pipelines, the
largest process). Not a test: it never fails on a figure.
"""
import argparse
import dataclasses
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)

from fixtures import elf_stub, index_server, package_graph, reflink_fs, wheel_builder  # noqa: E402
from fixtures.debian_root import CACHE_DIR, base_tarball  # noqa: E402

GNU_TIME = "/usr/bin/time"
WHEELS = 4
FILES_PER_WHEEL = 4
CHUNK = 1 << 16
LAYOUT_VERSION = "1"
APP = "bench-app"
APP_VERSIONS = ("1.0.0", "1.1.0")


def padding(size, seed):
    """Bytes that deflate about 3:1: one random 64 KiB block in three, zeros in between."""
    rng = random.Random(seed)
    out = bytearray()
    index = 0
    while len(out) < size:
        out += rng.randbytes(CHUNK) if index % 3 == 0 else bytes(CHUNK)
        index += 1
    return bytes(out[:size])


def make_wheels(total_bytes, out_dir):
    """The bench wheels (cached): [(project, version, path)]."""
    per_file = total_bytes // (WHEELS * FILES_PER_WHEEL)
    key = hashlib.sha256(f"{LAYOUT_VERSION}:{total_bytes}".encode()).hexdigest()[:16]
    cache = os.path.join(CACHE_DIR, "bench-wheels", key)
    done = os.path.join(cache, ".complete")
    if not os.path.isfile(done):
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        scratch = tempfile.mkdtemp(prefix="rootlock-bench-stubs-")
        specs = [elf_stub.StubSpec(out=os.path.join(scratch, f"libbench{w}_{f}.so"),
                                   soname=f"libbench{w}_{f}.so", tag=f"bench {w} {f}")
                 for w in range(WHEELS) for f in range(FILES_PER_WHEEL)]
        elf_stub.build_stubs(specs)
        for w in range(WHEELS):
            name = f"bench-cuda-{w}"
            files = {f"bench_cuda_{w}/__init__.py": b""}
            for f in range(FILES_PER_WHEEL):
                with open(os.path.join(scratch, f"libbench{w}_{f}.so"), "rb") as lib:
                    head = lib.read()
                files[f"bench_cuda_{w}/lib/libbench{w}_{f}.so"] = head + padding(
                    per_file - len(head), seed=w * 100 + f)
            spec = wheel_builder.WheelSpec(
                name=name, version="1.0.0", files=files,
                tags=("py3-none-manylinux_2_17_x86_64",), root_is_purelib=False,
                executable=frozenset(k for k in files if k.endswith(".so")))
            wheel_builder.build_wheel(spec, cache)
        shutil.rmtree(scratch, ignore_errors=True)
        open(done, "w").close()
    out = []
    for name in sorted(os.listdir(cache)):
        if name.endswith(".whl"):
            shutil.copy(os.path.join(cache, name), os.path.join(out_dir, name))
            out.append(os.path.join(out_dir, name))
    return out


def make_app_wheels(out_dir):
    """{version: path}: the package a user bumps between two builds, a few hundred KB of Python."""
    out = {}
    for version in APP_VERSIONS:
        files = {f"bench_app/mod{i}.py": (f"VERSION = {version!r}\n" + f"x{i} = {i}\n" * 2000)
                 .encode() for i in range(40)}
        files["bench_app/__init__.py"] = f"__version__ = {version!r}\n".encode()
        spec = wheel_builder.WheelSpec(name=APP, version=version, files=files)
        wheel_builder.build_wheel(spec, out_dir)
        out[version] = os.path.join(out_dir, wheel_builder.wheel_filename(spec))
    return out


def graph_of(paths, root):
    files = []
    for rank, path in enumerate(paths):
        with open(path, "rb") as f:
            data = f.read()
        with zipfile.ZipFile(path) as z:
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            metadata = z.read(meta)
        base = os.path.basename(path)
        project, version = base.split("-")[0].replace("_", "-"), base.split("-")[1]
        files.append(package_graph.IndexFile(
            project=project, name=project, version=version, filename=base, path=path,
            sha256=hashlib.sha256(data).hexdigest(), size=len(data), metadata=metadata,
            requires_python=None, yanked=False, hash_listed=True,
            upload_time=f"2024-01-0{rank + 1}T00:00:00.000000Z"))
    return package_graph.Graph(root=root, stacks=(), files=files, rebuilt={})


def timed(argv):
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        started = time.monotonic()
        proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", out.name, *argv],
                              capture_output=True, text=True)
        took = time.monotonic() - started
        lines = [line for line in out.read().splitlines() if line.strip().isdigit()]
    if proc.returncode != 0:
        sys.exit(f"{argv[:3]} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return took, (int(lines[-1]) / 1024 if lines else float("nan"))


def median_of(runs, argv, prepare=None):
    times, rss = [], 0.0
    for _ in range(runs):
        if prepare:
            prepare()
        took, peak = timed(argv)
        times.append(took)
        rss = max(rss, peak)
    return statistics.median(times), rss


@dataclasses.dataclass
class RootlockRows:
    image: str
    build: float
    build_rss: float
    changed: float
    changed_rss: float
    same: float
    same_rss: float
    frame_counts: dict


def rootlock_rows(rootlock, runs, work, cache, first, second):
    """The three rootlock rows, the image and frame cache in `work` and `cache`: a full build
    (empty frame cache), the one-package rebuild over the first lock's image (warm), and the
    rebuild of the same lock over its own image (kept)."""
    image = os.path.join(work, "out", "bench.tar.zst")

    def build_of(lock):
        return [rootlock, "build", lock, "-o", image, "--cache-dir", cache, "--offline"]

    def no_frames():
        shutil.rmtree(os.path.join(cache, "frames"), ignore_errors=True)

    def first_built():
        subprocess.run(build_of(first), capture_output=True, check=True)

    build, build_rss = median_of(runs, build_of(first), prepare=no_frames)
    changed, changed_rss = median_of(runs, build_of(second), prepare=first_built)
    first_built()  # once more, untimed, for the frame counts of the same rebuild
    frames = subprocess.run(build_of(second) + ["--json"], capture_output=True, text=True)
    frame_counts = json.loads(frames.stdout).get("frames", {}) if frames.returncode == 0 else {}
    same, same_rss = median_of(runs, build_of(second))
    return RootlockRows(image, build, build_rss, changed, changed_rss, same, same_rss,
                        frame_counts)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("rootlock")
    parser.add_argument("--gb", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--baseline", help="an earlier rootlock binary: its rows too")
    parser.add_argument("--no-reflink", dest="reflink", action="store_false",
                        help="skip the rows on an XFS loop file (they need root and xfsprogs)")
    args = parser.parse_args(argv[1:])
    rootlock = os.path.abspath(args.rootlock)
    work = tempfile.mkdtemp(prefix="rootlock-bench-build-")
    try:
        wheel_dir = os.path.join(work, "wheels")
        os.makedirs(wheel_dir)
        started = time.monotonic()
        wheels = make_wheels(int(args.gb * 1e9), wheel_dir)
        print(f"{len(wheels)} wheels, {sum(os.path.getsize(w) for w in wheels) / 1e6:.0f} MB "
              f"compressed, {args.gb:.1f} GB of objects (ready in {time.monotonic() - started:.0f} s)")
        base_path, base_sha = base_tarball()
        apps = make_app_wheels(wheel_dir)
        graph = graph_of(wheels + list(apps.values()), wheel_dir)
        cache = os.path.join(work, "cache")
        locks = {}
        with index_server.IndexServer(graph, style="pypi") as server:
            for version in APP_VERSIONS:
                recipe = os.path.join(work, f"bench-{version}.toml")
                names = sorted({f.project for f in graph.files} - {APP}) + [f"{APP}=={version}"]
                with open(recipe, "w") as f:
                    f.write(f'[image]\nname = "bench"\n\n[base]\ntarball = "{base_path}"\n'
                            f'sha256 = "{base_sha}"\n\n[python]\nversion = "3.11"\n\n'
                            f'[[index]]\nname = "bench"\nurl = "{server.simple_url}"\n\n'
                            f'[packages]\nrequires = {names!r}\n'.replace("'", '"'))
                locks[version] = os.path.join(work, f"pylock.bench-{version}.toml")
                proc = subprocess.run([rootlock, "lock", recipe, "-o", locks[version],
                                       "--cache-dir", cache], capture_output=True, text=True)
                if proc.returncode != 0:
                    sys.exit(f"lock failed: {proc.stderr}")
                # Wheels and base into the cache while the index is up (an uncompressed image:
                # no frames); every timed build below runs --offline.
                fetch = [rootlock, "build", locks[version], "-o", os.path.join(work, "fetch.tar"),
                         "--cache-dir", cache]
                if subprocess.run(fetch, capture_output=True).returncode != 0:
                    sys.exit("fetching the wheels failed")
        first, second = (locks[v] for v in APP_VERSIONS)
        here = rootlock_rows(rootlock, args.runs, work, cache, first, second)
        before = None
        if args.baseline:
            baseline = os.path.abspath(args.baseline)
            # Its own caches' formats warmed first (an earlier version may keep scans elsewhere).
            subprocess.run([baseline, "build", first, "-o", os.path.join(work, "fetch.tar"),
                            "--cache-dir", cache, "--offline"], capture_output=True, check=True)
            before = rootlock_rows(baseline, args.runs, work, cache, first, second)
            here = rootlock_rows(rootlock, args.runs, work, cache, first, second)  # same state
        image = here.image
        image_size = os.path.getsize(image)
        reflink = None
        if args.reflink:
            try:
                with reflink_fs.xfs_scratch() as mount:
                    moved = os.path.join(mount, "cache")
                    subprocess.run(["cp", "-a", cache, moved], check=True)
                    reflink = rootlock_rows(rootlock, args.runs, mount, moved, first, second)
            except (RuntimeError, subprocess.CalledProcessError) as error:
                print(f"(no rows on a filesystem that shares blocks: {error})")
        copy = image + ".copy"

        def image_cached():  # the copy's source read from memory: only the writing is timed
            subprocess.run(["cat", image], stdout=subprocess.DEVNULL, check=True)

        cache_bytes = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(cache)
                          for f in fs if os.path.isfile(os.path.join(d, f)))
        verify, verify_rss = median_of(args.runs, [rootlock, "cache", "verify", "--cache-dir",
                                                   cache])
        sha256sum, sha256sum_rss = median_of(args.runs, [
            "bash", "-c", f"find {cache} -type f -print0 | xargs -0 sha256sum > /dev/null"])
        # The demo's cache too, where `make demo` left one (the default cache directory).
        demo_cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                  os.path.expanduser("~/.cache"), "rootlock")
        demo_verify = None
        if os.path.isdir(os.path.join(demo_cache, "blobs")):
            demo_bytes = sum(os.path.getsize(os.path.join(d, f))
                             for d, _, fs in os.walk(demo_cache) for f in fs
                             if os.path.isfile(os.path.join(d, f)))
            seconds, _ = median_of(args.runs, [rootlock, "cache", "verify", "--cache-dir",
                                               demo_cache])
            demo_verify = (demo_bytes, seconds)
        write_floor, _ = median_of(args.runs, [
            "bash", "-c", f"set -e; dd if={image} of={copy} bs=64M oflag=direct conv=fsync "
                          f"status=none; mv -f {copy} {image}"], prepare=image_cached)
        digest_floor, _ = median_of(args.runs, ["openssl", "dgst", "-sha256", image],
                                    prepare=image_cached)

        venv = os.path.join(work, "venv")
        pip_out = os.path.join(work, "pip.tar.zst")
        pip_route = ("set -e; rm -rf {v}; /usr/bin/python3 -m venv --without-pip {v}; "
                     "/usr/bin/python3 -m pip --python {v}/bin/python install --quiet --no-index "
                     "--no-deps --no-compile {w}; tar --sort=name --mtime=@0 --owner=0 --group=0 "
                     "--numeric-owner -C {v} -cf - . | zstd -T2 -3 -q -f -o {o}").format(
                         v=venv, w=" ".join(wheels + [apps[APP_VERSIONS[0]]]), o=pip_out)
        pip, pip_rss = median_of(args.runs, ["bash", "-c", pip_route])
        floor_out = os.path.join(work, "floor.zst")
        floor_cmd = "set -e; for w in {w}; do unzip -p \"$w\"; done | zstd -T2 -3 -q -f -o {o}".format(
            w=" ".join(wheels), o=floor_out)
        floor, floor_rss = median_of(args.runs, ["bash", "-c", floor_cmd])
        plain = os.path.join(work, "image.tar")
        subprocess.run(["zstd", "-d", "-q", "-f", image, "-o", plain], check=True)
        alone, alone_rss = median_of(args.runs, ["zstd", "-T2", "-3", "-q", "-f", plain, "-o",
                                                 os.path.join(work, "alone.tar.zst")])
    finally:
        if os.environ.get("ROOTLOCK_KEEP") == "1":
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    build = here.build
    print(f"{'':56} {'wall':>9} {'peak RSS':>10}")
    rows = [(f"rootlock build ({image_size / 1e6:.0f} MB image, base included)", build,
             here.build_rss),
            ("rootlock build, one package changed (warm)", here.changed, here.changed_rss),
            ("rootlock build, nothing changed (image kept)", here.same, here.same_rss)]
    if reflink:
        rows += [("  on XFS (reflink): rootlock build", reflink.build, reflink.build_rss),
                 ("  on XFS (reflink): one package changed (warm)", reflink.changed,
                  reflink.changed_rss),
                 ("  on XFS (reflink): nothing changed (image kept)", reflink.same,
                  reflink.same_rss)]
    if before:
        rows += [("  baseline: rootlock build", before.build, before.build_rss),
                 ("  baseline: one package changed (warm)", before.changed, before.changed_rss),
                 ("  baseline: nothing changed (image kept)", before.same, before.same_rss)]
    rows += [("write floor: dd oflag=direct conv=fsync + mv", write_floor, float("nan")),
             ("sha256 of the image alone (openssl dgst)", digest_floor, float("nan")),
             (f"rootlock cache verify ({cache_bytes / 1e6:.0f} MB cache)", verify, verify_rss),
             ("  find | xargs sha256sum of the same cache", sha256sum, sha256sum_rss),
             ("venv + pip install + tar | zstd -T2", pip, pip_rss),
             ("floor: unzip -p | zstd -T2", floor, floor_rss),
             ("zstd -T2 -3 of the image's tar alone", alone, alone_rss)]
    for name, seconds, rss in rows:
        print(f"{name:56} {seconds:8.2f}s {rss:8.1f}MB")
    for where, rows_of in (("here", here), ("on XFS (reflink)", reflink)):
        if rows_of is None:
            continue
        counts = rows_of.frame_counts
        print(f"{where}: one package changed / full build = "
              f"{100 * rows_of.changed / rows_of.build:.0f}% (aim < 15%); "
              f"{counts.get('reused', '?')} of {counts.get('written', '?')} frames from the cache, "
              f"{counts.get('cloned', 0)} of them cloned (blocks shared, not written)")
    if demo_verify:
        print(f"cache verify of the demo's cache ({demo_verify[0] / 1e6:.0f} MB): "
              f"{demo_verify[0] / 1e6 / demo_verify[1]:.0f} MB/s")
    print(f"cache verify: {cache_bytes / 1e6 / verify:.0f} MB/s; sha256sum: "
          f"{cache_bytes / 1e6 / sha256sum:.0f} MB/s (ratio {verify / sha256sum:.2f}x)")
    print(f"write floor / full build = {100 * write_floor / build:.0f}%: a rebuild that writes "
          f"a new {image_size / 1e6:.0f} MB image pays at least this on this disk, unless the "
          f"filesystem shares the unchanged frames' blocks (XFS, btrfs)")
    print(f"sha256 of the image / full build = {100 * digest_floor / build:.0f}%: a rebuild pays "
          f"this on any filesystem, since IMAGE.sha256 covers every byte")
    print(f"pip route / rootlock = {pip / build:.1f}x (aim >= 2x); rootlock / floor = "
          f"{build / floor:.2f}x (aim <= 1.5x); rootlock peak RSS {here.build_rss:.0f} MB "
          f"(aim < 256 MB)")
    print(f"pip route / compression alone = {pip / alone:.1f}x: the most any builder that "
          f"compresses the same bytes at the same level could reach here")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
