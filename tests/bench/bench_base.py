#!/usr/bin/env python3
"""`make bench`: the Debian base from pinned .debs, beside mmdebstrap alone on the same set.

    python3 tests/bench/bench_base.py build/rootlock [--runs 1]

The input: the demo base (minbase + python3, python3-venv, ca-certificates, about 126 .debs)
served by tests/fixtures/debian_archive.py on 127.0.0.1 as a signed archive. One recipe with no
Python packages is locked against it, then timed on the same machine, in one run:

  rootlock lock (cold)     InRelease verified, Packages fetched by signed hash, apt's answer
                           (mmdebstrap --simulate), every .deb pinned, then the base assembled;
  rootlock build (cold)    an empty cache: every .deb fetched and verified, the local
                           repository, mmdebstrap over it, the dpkg database compared, the image;
  rootlock build (warm)    .debs in the cache, the assembled base not (it is removed first);
  rootlock build (cached)  everything cached: only the image is written;
  mmdebstrap               `mmdebstrap --variant=minbase --include=... bookworm OUT MIRROR` from
                           the same loopback mirror: what a user would run, unpinned.

Wall time is the median of --runs runs, peak RSS from /usr/bin/time. Not a test: it never fails
on a figure.
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from fixtures import debian_archive  # noqa: E402

sys.path.insert(0, HERE)
from bench_build import median_of as median  # noqa: E402  (one timer for every bench)

DATE = "Mon, 02 Nov 2026 10:00:00 UTC"


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("rootlock")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv[1:])
    rootlock = os.path.abspath(args.rootlock)
    work = tempfile.mkdtemp(prefix="rootlock-bench-base-")
    try:
        archive = debian_archive.demo_archive(os.path.join(work, "archive"), date=DATE,
                                              updates=())
        with debian_archive.ArchiveServer(archive) as server:
            recipe = os.path.join(work, "bench.toml")
            include = list(debian_archive.DEMO_INCLUDE)
            with open(recipe, "w") as f:
                f.write(f"""[image]
name = "bench-base"
output = "bench-base.tar.zst"
[base]
debian = {{ suite = "bookworm", mirror = "{server.mirror_url}", variant = "minbase", include = {include!r}, keyring = "{archive.keyring}" }}
[python]
version = "3.11"
[[index]]
name = "none"
url = "http://127.0.0.1:9/simple"
[packages]
requires = []
""".replace("'", '"'))
            lock = os.path.join(work, "pylock.bench-base.toml")
            cache = os.path.join(work, "cache")
            image = os.path.join(work, "bench-base.tar.zst")

            def empty_cache():
                shutil.rmtree(cache, ignore_errors=True)

            def drop_base():
                shutil.rmtree(os.path.join(cache, "bases"), ignore_errors=True)

            rows = []
            rows.append(("rootlock lock (cold)",) + median(
                args.runs, [rootlock, "lock", recipe, "-o", lock, "--cache-dir", cache],
                empty_cache))
            rows.append(("rootlock build (cold cache)",) + median(
                args.runs, [rootlock, "build", lock, "-o", image, "--cache-dir", cache],
                empty_cache))
            rows.append(("rootlock build (.debs cached)",) + median(
                args.runs, [rootlock, "build", lock, "-o", image, "--cache-dir", cache],
                drop_base))
            rows.append(("rootlock build (base cached)",) + median(
                args.runs, [rootlock, "build", lock, "-o", image, "--cache-dir", cache]))
            out = os.path.join(work, "mmdebstrap.tar")
            rows.append(("mmdebstrap alone",) + median(
                args.runs,
                # As rootlock runs it: _apt cannot read a keyring under a private temp dir.
                ["mmdebstrap", "--quiet", '--aptopt=APT::Sandbox::User "root"',
                 "--variant=minbase", "--include=" + ",".join(include),
                 f"--keyring={archive.keyring}", "bookworm", out, server.mirror_url]))
        peer = rows[-1][1]
        print(f"{'':32} {'wall s':>8} {'x mmdebstrap':>13} {'peak MB':>9}")
        for name, took, rss in rows:
            print(f"{name:32} {took:8.1f} {took / peer:13.2f} {rss:9.0f}")
        print("(the cold lock runs mmdebstrap --simulate and then assembles the base once; the"
              " cold build fetches every .deb over loopback)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
