"""End-to-end: `recipes/demo.toml` locks against the fixture index, as `make demo` does.

The demo recipe names a Debian bookworm base made with mmdebstrap (from the Debian archive, the
only network the demo uses) and the fixture index on 127.0.0.1:8765. The base is cached under
the test cache, so only the first run makes it. Checks: the lock is written with the torch
2.8.0+cu128 stack and numpy<2.3, its base is pinned per .deb (name, version, sha256, pool
file), its target is read from that base, a relock --offline gives the same bytes without a
request, and --check passes. The image it builds: its SBOM lists every package its dpkg
database lists, with purls; freeze of the unpacked image gives the lock's .debs; a build from
the frozen lock has the same base. The same image with its apt sources rewritten as Debian's own
container images write them (deb822, /etc/apt/sources.list.d/debian.sources, the archive key
armoured inside the entry, a deb-src and a disabled stanza beside it) freezes to the same .debs.
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import tomllib
import urllib.parse

import pytest

from fixtures import index_server, package_graph, pylock_check
from fixtures.cli import run, run_rootlock
from fixtures.debian_root import CACHE_DIR

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RECIPE = os.path.join(REPO, "recipes", "demo.toml")
DEMO_PORT = 8765
CACHE = os.path.join(CACHE_DIR, "lock-cache")


def installed_packages(status_text):
    """(name, version, architecture) of every installed package in a dpkg status file."""
    out = set()
    for paragraph in status_text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in paragraph.splitlines()
                      if ": " in line and not line.startswith(" "))
        if fields.get("Status", "").endswith(" installed"):
            out.add((fields["Package"], fields["Version"], fields["Architecture"]))
    return out


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def server(scratch):
    """The fixture index on the port the demo recipe names."""
    graph = package_graph.build_graph(os.path.join(scratch, "graph"))
    with index_server.IndexServer(graph, style="pypi", port=DEMO_PORT) as server:
        yield server


def lock_argv(rootlock, out):
    return [rootlock, "lock", RECIPE, "-o", out, "--cache-dir", CACHE]


@pytest.fixture(scope="module")
def demo_lock(rootlock, scratch, server):
    """pylock.demo.toml, as `make demo` locks it."""
    out = os.path.join(scratch, "pylock.demo.toml")
    proc = run(lock_argv(rootlock, out))
    print(proc.stdout[-2000:], proc.stderr[-2000:])
    assert proc.returncode == 0, \
        f"lock of demo.toml: exit {proc.returncode}: {proc.stderr[-2000:]}"
    return out


def test_lock_passes_the_independent_pep751_reader(demo_lock):
    try:
        pylock_check.check_pylock(demo_lock)
    except AssertionError as error:
        pytest.fail(f"independent PEP 751 reader: {error}")


def test_lock_pins_torch_cu128_and_numpy_below_2_3(demo_lock):
    pins = {p["name"]: p["version"] for p in load(demo_lock)["packages"]}
    assert pins.get("torch") == "2.8.0+cu128" and pins.get("numpy") == "2.2.6", \
        f"pins: torch {pins.get('torch')}, numpy {pins.get('numpy')}"


def test_base_pinned_per_deb(demo_lock):
    # The base is pinned per package: every .deb as the archive's signed index lists it, and
    # the cached base was assembled from exactly those (its dpkg database).
    base = load(demo_lock)["tool"]["rootlock"]["base"]
    debs = base.get("debs", [])
    assert base["kind"] == "debian" and base["suite"] == "bookworm" and \
        "sha256" not in base and len(debs) > 100 and \
        all(len(d["sha256"]) == 64 and d["filename"].startswith("pool/main/") for d in debs) and \
        [a["name"] for a in base["archives"]] == ["debian"], \
        f"base: {len(debs)} debs, archives {base.get('archives')}"
    names = {d["name"] for d in debs}
    assert {"libc6", "python3.11", "ca-certificates", "dpkg"} <= names, \
        f"base packages: {sorted(names)[:10]}..."


def test_target_read_from_the_base(demo_lock):
    target = load(demo_lock)["tool"]["rootlock"]["target"]
    assert target["glibc"] == "2.36" and target["python"] == "3.11" and \
        target["python-full"].startswith("3.11."), f"target read from the base: {target}"


def test_closure_ok(demo_lock):
    tool = load(demo_lock)["tool"]["rootlock"]
    assert tool["closure-ok"] is True, f"closure-ok is {tool['closure-ok']!r}"


def test_offline_relock_same_bytes_no_request(rootlock, scratch, server, demo_lock):
    # On a copy, so that the lock the other cases read stays the one `lock` wrote.
    again = os.path.join(scratch, "pylock.offline.toml")
    shutil.copy(demo_lock, again)
    before = server.request_count
    proc = run(lock_argv(rootlock, again) + ["--offline"])
    assert proc.returncode == 0 and read_bytes(again) == read_bytes(demo_lock), \
        f"--offline relock: exit {proc.returncode} {proc.stderr}"
    assert server.request_count == before, \
        f"--offline relock made {server.request_count - before} requests"


def test_lock_check_passes(rootlock, demo_lock):
    proc = run_rootlock(rootlock, "lock", RECIPE, "-o", demo_lock, "--check")
    assert proc.returncode == 0, f"--check: {proc.returncode} {proc.stderr}"


@pytest.fixture(scope="module")
def demo_image(rootlock, scratch, demo_lock):
    image = os.path.join(scratch, "demo.tar.zst")
    proc = run_rootlock(rootlock, "build", demo_lock, "-o", image, "--cache-dir", CACHE)
    assert proc.returncode == 0, f"build of the demo lock: {proc.stderr[-2000:]}"
    return image


def dpkg_status(image):
    return run(["tar", "--zstd", "-xOf", image, "./var/lib/dpkg/status"]).stdout


def test_sbom_lists_every_dpkg_package_with_purls(demo_image):
    dpkg = installed_packages(dpkg_status(demo_image))
    with open(demo_image + ".cdx.json") as f:
        sbom = json.load(f)
    purls = {c["purl"] for c in sbom["components"] if c.get("purl", "").startswith("pkg:deb/")}
    wanted = {f"pkg:deb/debian/{urllib.parse.quote(n, safe='.-_~')}@"
              f"{urllib.parse.quote(v, safe='.-_~')}?arch={a}&distro=debian-12"
              for n, v, a in dpkg}
    assert len(dpkg) > 100 and purls == wanted, \
        f"SBOM .debs vs dpkg: {len(purls)} vs {len(dpkg)}, differ {sorted(purls ^ wanted)[:4]}"
    print(f"(sbom) {len(purls)} Debian packages with purls, as dpkg lists them")


@pytest.fixture(scope="module")
def frozen_lock(rootlock, scratch, server, demo_image):
    """freeze of the unpacked demo image."""
    rootfs = os.path.join(scratch, "rootfs")
    os.makedirs(rootfs)
    subprocess.run(["tar", "--zstd", "-xf", demo_image, "-C", rootfs], check=True)
    frozen = os.path.join(scratch, "pylock.frozen.toml")
    proc = run_rootlock(rootlock, "freeze", "--root", rootfs, "/opt/venv", "--index",
                        server.url + "/simple", "--cache-dir", CACHE, "-o", frozen, timeout=600)
    assert proc.returncode == 0, f"freeze of the demo image: {proc.stderr[-2000:]}"
    return frozen


def test_freeze_of_the_image_gives_the_locked_debs(demo_lock, frozen_lock):
    locked = load(demo_lock)["tool"]["rootlock"]["base"]["debs"]
    got = load(frozen_lock)["tool"]["rootlock"]["base"].get("debs", [])
    assert got == locked, f"frozen .debs differ from the lock's: {len(got)} vs {len(locked)}"
    print(f"(freeze) {len(got)} .debs frozen from the image, as locked")


def crc24(data):
    """OpenPGP's armour checksum (RFC 4880 section 6.1)."""
    crc = 0xB704CE
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def armoured_key(packets):
    body = base64.b64encode(packets).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    checksum = base64.b64encode(crc24(packets).to_bytes(3, "big")).decode()
    return ["-----BEGIN PGP PUBLIC KEY BLOCK-----", ""] + lines + \
        ["=" + checksum, "-----END PGP PUBLIC KEY BLOCK-----"]


def test_freeze_reads_deb822_sources_with_an_armoured_key(rootlock, scratch, demo_lock,
                                                          frozen_lock):
    rootfs = os.path.join(scratch, "rootfs")  # unpacked by frozen_lock
    copy = os.path.join(scratch, "rootfs-deb822")
    subprocess.run(["cp", "-al", rootfs, copy], check=True)  # only /etc/apt changes: new files
    one_line = os.path.join(copy, "etc", "apt", "sources.list")
    with open(one_line) as f:
        entries = [line.split() for line in f if line.startswith("deb ")]
    os.unlink(one_line)
    assert entries and all("[" not in words[1] for words in entries), \
        f"the demo image's sources name Debian's archive with its default key: {entries}"
    keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
    with open(keyring, "rb") as f:
        packets = f.read()
    key_field = "Signed-By:\n" + "".join(f" {line or '.'}\n" for line in armoured_key(packets))
    stanzas = ["Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
               "Components: main\n",
               "Enabled: no\nTypes: deb\nURIs: http://unreachable.invalid/debian\n"
               "Suites: bookworm\nComponents: main\n"]
    for words in entries:
        stanzas.append(f"Types: deb\nURIs: {words[1]}\nSuites: {words[2]}\n"
                       f"Components: {' '.join(words[3:])}\n" + key_field)
    parts = os.path.join(copy, "etc", "apt", "sources.list.d")
    os.makedirs(parts, exist_ok=True)
    with open(os.path.join(parts, "debian.sources"), "w") as f:
        f.write("\n".join(stanzas))
    frozen = os.path.join(scratch, "pylock.frozen-deb822.toml")
    proc = run_rootlock(rootlock, "freeze", "--root", copy, "/opt/venv", "--cache-dir", CACHE,
                        "-o", frozen, timeout=600)
    assert proc.returncode == 0, f"freeze of the deb822 image: {proc.stderr[-2000:]}"
    base = load(frozen)["tool"]["rootlock"]["base"]
    assert base.get("debs", []) == load(demo_lock)["tool"]["rootlock"]["base"]["debs"]
    archive = base["archives"][0]
    assert archive["keyring-sha256"] == hashlib.sha256(packets).hexdigest(), \
        f"the armoured key is read back to the keyring's own packets: {archive}"
    assert archive["keyring"] == "/etc/apt/sources.list.d/debian.sources:" + \
        str(1 + sum(s.count("\n") + 1 for s in stanzas[:2])), archive
    print(f"(freeze) {len(base['debs'])} .debs frozen from deb822 sources with an armoured key")


def test_build_of_the_frozen_lock_has_the_same_base(rootlock, scratch, demo_image, frozen_lock):
    rebuilt = os.path.join(scratch, "frozen.tar.zst")
    proc = run_rootlock(rootlock, "build", frozen_lock, "-o", rebuilt, "--cache-dir", CACHE)
    assert proc.returncode == 0, f"build of the frozen lock: {proc.stderr[-2000:]}"
    # Names, not metadata: the frozen lock has its own SOURCE_DATE_EPOCH to clamp times to.
    listing = [run(["tar", "--zstd", "-tf", path]).stdout.splitlines()
               for path in (demo_image, rebuilt)]
    base_of = [sorted(line for line in lines if not line.startswith("./opt/venv"))
               for lines in listing]
    assert dpkg_status(rebuilt) == dpkg_status(demo_image) and base_of[0] == base_of[1], \
        f"the frozen lock's base differs: {len(set(base_of[0]) ^ set(base_of[1]))} members"
    print(f"(freeze) rebuilt from the frozen lock: the same {len(base_of[0])} base members")
