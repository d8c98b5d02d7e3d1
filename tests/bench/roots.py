"""The roots the benchmarks run on, built once and cached like tests/fixtures/debian_root.py.

bench-torch-root: `mmdebstrap --variant=minbase --include=python3,python3-torch,python3-numpy,
python3-scipy bookworm`, the root /work/shared/BENCHMARKS.md measures (about 1.9 GB, ~1700 ELF
objects under /usr). It is cached under $ROOTLOCK_TEST_CACHE (default /var/cache/rootlock-test)
with a .complete marker, built under its own lock file so that a build (minutes) does not hold
up the tests' lock. Benchmarks never modify it.

bench-arm64-root: `mmdebstrap --variant=minbase --architectures=arm64 --include=python3
bookworm`, built the same way under qemu-user (about three minutes).
"""
import fcntl
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from fixtures.debian_root import CACHE_DIR, SOURCE_DATE_EPOCH  # noqa: E402

TORCH_INCLUDE = ["python3", "python3-torch", "python3-numpy", "python3-scipy"]
TORCH_ROOT_NAME = "bench-torch-root"
SUITE = "bookworm"


def torch_root(quiet=True):
    """Path of the cached torch root, building it once (a few minutes, downloads ~450 MB)."""
    return _cached_root(TORCH_ROOT_NAME, TORCH_INCLUDE, [], quiet)


def arm64_root(quiet=True):
    """Path of the cached arm64 minbase+python3 root, building it once (about three minutes
    under qemu-user: fixtures/emulation.py enables it)."""
    from fixtures import emulation
    emulation.enable("aarch64")
    return _cached_root(ARM64_ROOT_NAME, ["python3"], ["--architectures=arm64"], quiet)


ARM64_ROOT_NAME = "bench-arm64-root"


def _cached_root(name, include, options, quiet):
    os.makedirs(CACHE_DIR, exist_ok=True)
    root = os.path.join(CACHE_DIR, name)
    with open(os.path.join(CACHE_DIR, ".lock-" + name), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isfile(os.path.join(root, ".complete")):
            return root
        tmp = root + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        env = dict(os.environ, SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH)
        print(f"building {root} with mmdebstrap (once; a few minutes)", file=sys.stderr)
        subprocess.run(
            ["mmdebstrap"] + (["--quiet"] if quiet else []) +
            ["--variant=minbase", "--mode=root", "--include=" + ",".join(include)] + options +
            [SUITE, tmp],
            check=True, env=env)
        shutil.rmtree(root, ignore_errors=True)
        os.rename(tmp, root)
        open(os.path.join(root, ".complete"), "w").close()
        return root


ELF_MAGIC = b"\x7fELF"
ET_EXEC, ET_DYN = 2, 3


def elf_files(root, under="/usr"):
    """Every regular (non-symlink) file under ROOT/UNDER that is a loadable ELF object: the ELF
    magic, then e_type ET_EXEC or ET_DYN (relocatable .o files are never loaded; the torch
    root holds 25, gcc's crt*.o). Sorted paths inside the root. Hard links stay: 14 files of
    the torch root are second names of one inode (Mesa's dri drivers, perl)."""
    out = []
    top = os.path.join(root, under.lstrip("/"))
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in filenames:
            host = os.path.join(dirpath, name)
            try:
                if os.path.islink(host) or not os.path.isfile(host):
                    continue
                with open(host, "rb") as f:
                    head = f.read(18)
                if head[:4] != ELF_MAGIC or len(head) < 18:
                    continue
                byteorder = "little" if head[5] == 1 else "big"
                if int.from_bytes(head[16:18], byteorder) not in (ET_EXEC, ET_DYN):
                    continue
            except OSError:
                continue
            out.append("/" + os.path.relpath(host, root))
    return sorted(out)


if __name__ == "__main__":
    r = torch_root(quiet=False)
    print(r, len(elf_files(r)), "ELF objects under /usr")
