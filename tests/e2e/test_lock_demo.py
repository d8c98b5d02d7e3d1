"""End-to-end: `recipes/demo.toml` locks against the fixture index, as `make demo` does.

Usage: test_lock_demo.py ROOTLOCK

The demo recipe names a Debian bookworm base made with mmdebstrap (from the Debian archive, the
only network the demo uses) and the fixture index on 127.0.0.1:8765. The base is cached under
the test cache, so only the first run makes it. Checks: the lock is written with the torch
2.8.0+cu128 stack and numpy<2.3, its base is pinned per .deb (name, version, sha256, pool file), its target is
read from that base, a relock --offline gives the same bytes without a request, and --check
passes.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import urllib.parse

from fixtures import index_server, package_graph, pylock_check
from fixtures.debian_root import CACHE_DIR

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RECIPE = os.path.join(REPO, "recipes", "demo.toml")
DEMO_PORT = 8765


def installed_packages(status_text):
    """(name, version, architecture) of every installed package in a dpkg status file."""
    out = set()
    for paragraph in status_text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in paragraph.splitlines()
                      if ": " in line and not line.startswith(" "))
        if fields.get("Status", "").endswith(" installed"):
            out.add((fields["Package"], fields["Version"], fields["Architecture"]))
    return out


def image_os_layer(rootlock, lock, cache, work, server, expect):
    """The demo image's SBOM lists every package its dpkg database lists, with purls; freeze of
    the unpacked image gives the lock's .debs; a build from the frozen lock has the same base."""
    image = os.path.join(work, "demo.tar.zst")
    proc = subprocess.run([rootlock, "build", lock, "-o", image, "--cache-dir", cache],
                          capture_output=True, text=True, timeout=900)
    if not expect(proc.returncode == 0, f"build of the demo lock: {proc.stderr[-2000:]}"):
        return
    status = subprocess.run(["tar", "--zstd", "-xOf", image, "./var/lib/dpkg/status"],
                            capture_output=True, text=True).stdout
    dpkg = installed_packages(status)
    with open(image + ".cdx.json") as f:
        sbom = json.load(f)
    purls = {c["purl"] for c in sbom["components"] if c.get("purl", "").startswith("pkg:deb/")}
    wanted = {f"pkg:deb/debian/{urllib.parse.quote(n, safe='.-_~')}@"
              f"{urllib.parse.quote(v, safe='.-_~')}?arch={a}&distro=debian-12"
              for n, v, a in dpkg}
    expect(len(dpkg) > 100 and purls == wanted,
           f"SBOM .debs vs dpkg: {len(purls)} vs {len(dpkg)}, "
           f"differ {sorted(purls ^ wanted)[:4]}")
    print(f"(sbom) {len(purls)} Debian packages with purls, as dpkg lists them")
    rootfs = os.path.join(work, "rootfs")
    os.makedirs(rootfs)
    subprocess.run(["tar", "--zstd", "-xf", image, "-C", rootfs], check=True)
    frozen = os.path.join(work, "pylock.frozen.toml")
    proc = subprocess.run([rootlock, "freeze", "--root", rootfs, "/opt/venv", "--index",
                           server.url + "/simple", "--cache-dir", cache, "-o", frozen],
                          capture_output=True, text=True, timeout=600)
    if not expect(proc.returncode == 0, f"freeze of the demo image: {proc.stderr[-2000:]}"):
        return
    with open(lock, "rb") as f:
        locked = tomllib.load(f)["tool"]["rootlock"]["base"]["debs"]
    with open(frozen, "rb") as f:
        got = tomllib.load(f)["tool"]["rootlock"]["base"].get("debs", [])
    expect(got == locked, f"frozen .debs differ from the lock's: {len(got)} vs {len(locked)}")
    print(f"(freeze) {len(got)} .debs frozen from the image, as locked")
    rebuilt = os.path.join(work, "frozen.tar.zst")
    proc = subprocess.run([rootlock, "build", frozen, "-o", rebuilt, "--cache-dir", cache],
                          capture_output=True, text=True, timeout=900)
    if not expect(proc.returncode == 0, f"build of the frozen lock: {proc.stderr[-2000:]}"):
        return
    again = subprocess.run(["tar", "--zstd", "-xOf", rebuilt, "./var/lib/dpkg/status"],
                           capture_output=True, text=True).stdout
    # Names, not metadata: the frozen lock has its own SOURCE_DATE_EPOCH to clamp times to.
    listing = [subprocess.run(["tar", "--zstd", "-tf", path], capture_output=True,
                              text=True).stdout.splitlines() for path in (image, rebuilt)]
    base_of = [sorted(line for line in lines if not line.startswith("./opt/venv"))
               for lines in listing]
    expect(again == status and base_of[0] == base_of[1],
           f"the frozen lock's base differs: {len(set(base_of[0]) ^ set(base_of[1]))} members")
    print(f"(freeze) rebuilt from the frozen lock: the same {len(base_of[0])} base members")


def main(argv):
    rootlock = os.path.abspath(argv[1])
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL", what)
        return cond

    work = tempfile.mkdtemp(prefix="rootlock-demo-lock-")
    cache = os.path.join(CACHE_DIR, "lock-cache")
    out = os.path.join(work, "pylock.demo.toml")
    try:
        graph = package_graph.build_graph(os.path.join(work, "graph"))
        with index_server.IndexServer(graph, style="pypi", port=DEMO_PORT) as server:
            argv_lock = [rootlock, "lock", RECIPE, "-o", out, "--cache-dir", cache]
            proc = subprocess.run(argv_lock, capture_output=True, text=True, timeout=900)
            print(proc.stdout[-2000:], proc.stderr[-2000:])
            if not expect(proc.returncode == 0, f"lock of demo.toml: exit {proc.returncode}"):
                return 1
            try:
                pylock_check.check_pylock(out)
            except AssertionError as error:
                expect(False, f"independent PEP 751 reader: {error}")
            with open(out, "rb") as f:
                lock = tomllib.load(f)
            pins = {p["name"]: p["version"] for p in lock["packages"]}
            expect(pins.get("torch") == "2.8.0+cu128" and pins.get("numpy") == "2.2.6",
                   f"pins: torch {pins.get('torch')}, numpy {pins.get('numpy')}")
            tool = lock["tool"]["rootlock"]
            base = tool["base"]
            # The base is pinned per package: every .deb as the archive's signed index lists
            # it, and the cached base was assembled from exactly those (its dpkg database).
            debs = base.get("debs", [])
            expect(base["kind"] == "debian" and base["suite"] == "bookworm" and
                   "sha256" not in base and len(debs) > 100 and
                   all(len(d["sha256"]) == 64 and d["filename"].startswith("pool/main/")
                       for d in debs) and
                   [a["name"] for a in base["archives"]] == ["debian"],
                   f"base: {len(debs)} debs, archives {base.get('archives')}")
            names = {d["name"] for d in debs}
            expect({"libc6", "python3.11", "ca-certificates", "dpkg"} <= names,
                   f"base packages: {sorted(names)[:10]}...")
            expect(tool["target"]["glibc"] == "2.36" and tool["target"]["python"] == "3.11" and
                   tool["target"]["python-full"].startswith("3.11."),
                   f"target read from the base: {tool['target']}")
            expect(tool["closure-ok"] is True, "closure-ok is not true")
            first = open(out, "rb").read()
            before = server.request_count
            proc = subprocess.run(argv_lock + ["--offline"], capture_output=True, text=True)
            expect(proc.returncode == 0 and open(out, "rb").read() == first,
                   f"--offline relock: exit {proc.returncode} {proc.stderr}")
            expect(server.request_count == before, "--offline relock made requests")
            proc = subprocess.run([rootlock, "lock", RECIPE, "-o", out, "--check"],
                                  capture_output=True, text=True)
            expect(proc.returncode == 0, f"--check: {proc.returncode} {proc.stderr}")
            image_os_layer(rootlock, out, cache, work, server, expect)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} expectation(s) failed")
        return 1
    print("all expectations met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
