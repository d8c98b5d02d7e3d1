"""End-to-end differential: rootlock ldd against the real ld.so, object by object, on whole trees.

Usage: test_referee_debian.py ROOTLOCK   (or --referee-only: run and summarise ld.so only)

Three trees, each listed by the real ld.so inside the chroot (fixtures/referee.py: trace mode,
as Debian's ldd, batched) and by `rootlock ldd --root ROOT --json --hwcaps <this CPU's levels>`:
  1. every ELF object of a real Debian 12 root: regular files under /usr whose first 4 bytes
     are \\x7fELF (the merged-/usr symlinks /lib, /lib64, /bin, /sbin are not walked again; a
     top-level directory that is not a symlink would be);
  2. every ELF object of the loader-rule fixtures (fixtures/loader_rules.py) under /opt/rules;
  3. every ELF object of the CUDA stub environment (fixtures/cuda_env.py), when it exists.
Each object is the main program, as `ld.so FILE` makes it; the lists must be equal, in order.
How the outcomes that are not a list compare (see fixtures/referee.py):
  - "statically linked" (no DT_NEEDED: static-pie ld.so and ldconfig, leaf libraries):
    rootlock must give an empty list;
  - a fatal ld.so error (exit 127, e.g. "invalid ELF header", "file too short"): rootlock must
    report a problem for that file (or reject it with exit 2); lists are not compared;
  - "version `V' not found": rootlock must report missing-version V, and no other.
Prints how many objects it compared per tree and every disagreement; exit 1 on any.
"""
import collections
import os
import sys
import time

from fixtures import loader_rules, referee
from fixtures.debian_root import copy_root

SKIP_TOP = {"proc", "sys", "dev", "run", "tmp"}


def debian_objects(root):
    """Root-relative paths of ELF regular files under /usr and any real (non-symlink) top-level
    directory named lib*, bin or sbin; sorted."""
    tops = ["usr"] + sorted(d for d in os.listdir(root)
                            if (d.startswith("lib") or d in ("bin", "sbin"))
                            and not os.path.islink(os.path.join(root, d)))
    found = []
    for top in tops:
        found += loader_rules.all_objects(root, "/" + top)
    return sorted(set(found))


def summarise(refs):
    kinds = collections.Counter()
    for listing in refs.values():
        if listing.fatal is not None:
            kinds["fatal"] += 1
        elif listing.static:
            kinds["statically linked"] += 1
        else:
            kinds["listed"] += 1
        if any(p is None for _, p in listing.loaded):
            kinds["with not-found entries"] += 1
        if listing.version_errors:
            kinds["with version errors"] += 1
    return ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))


def differential(label, rootlock, root, paths, hwcaps, failures):
    start = time.monotonic()
    refs = referee.ld_so_list_many(root, paths)
    line = f"{label}: {len(paths)} objects ({summarise(refs)})"
    if rootlock is None:
        print(f"{line}; ld.so only, {time.monotonic() - start:.1f}s")
        return
    args = ["--hwcaps", ",".join(hwcaps)] if hwcaps else []
    gots = referee.rootlock_ldd(rootlock, root, paths, args)
    diffs = referee.compare(refs, gots)
    print(f"{line}; compared with rootlock: {len(paths) - len(diffs)} agree, "
          f"{len(diffs)} disagree, {time.monotonic() - start:.1f}s")
    for path, items in sorted(diffs.items()):
        for item in items:
            failures.append(f"[{label}] {path}: {item}")


def cuda_paths(root):
    """Build the CUDA stub environment in root; its ELF paths, or None when the module is absent."""
    try:
        from fixtures import cuda_env
    except ImportError:
        return None
    info = cuda_env.build_cuda_env(root)
    return sorted(info.get("objects") or loader_rules.all_objects(root, cuda_env.VENV))


def main(argv):
    rootlock = None if argv[1] == "--referee-only" else os.path.abspath(argv[1])
    failures, roots = [], []
    try:
        root = copy_root()
        roots.append(root)
        hwcaps, _ = referee.ld_so_hwcaps(root)
        print(f"glibc-hwcaps levels of this CPU (given to rootlock): {hwcaps}")
        differential("debian", rootlock, root, debian_objects(root), hwcaps, failures)
        rules_root = copy_root()
        roots.append(rules_root)
        loader_rules.build_all(rules_root)
        differential("loader-rules", rootlock, rules_root,
                     loader_rules.all_objects(rules_root), hwcaps, failures)
        cuda_root = copy_root()
        roots.append(cuda_root)
        paths = cuda_paths(cuda_root)
        if paths is None:
            print("cuda-env: fixtures/cuda_env.py not present, skipped")
        else:
            differential("cuda-env", rootlock, cuda_root, paths, hwcaps, failures)
    finally:
        for r in roots:
            loader_rules.remove(r)
    for f in failures:
        print("DISAGREE " + f)
    print(f"{len(failures)} disagreement(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
