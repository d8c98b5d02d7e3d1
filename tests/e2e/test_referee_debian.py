"""End-to-end differential: rootlock ldd against the real ld.so, object by object, on whole trees.

Three trees, each listed by the real ld.so inside the chroot (fixtures/referee.py: trace mode,
as Debian's ldd, batched) and by `rootlock ldd --root ROOT --json --hwcaps <this CPU's levels>`:
  1. every ELF object of a real Debian 12 root: regular files under /usr whose first 4 bytes
     are \\x7fELF (the merged-/usr symlinks /lib, /lib64, /bin, /sbin are not walked again; a
     top-level directory that is not a symlink would be);
  2. every ELF object of the loader-rule fixtures (fixtures/loader_rules.py) under /opt/rules;
  3. every ELF object of the CUDA stub environment (fixtures/cuda_env.py).
Each object is the main program, as `ld.so FILE` makes it; the lists must be equal, in order.
How the outcomes that are not a list compare (see fixtures/referee.py):
  - "statically linked" (no DT_NEEDED: static-pie ld.so and ldconfig, leaf libraries):
    rootlock must give an empty list;
  - a fatal ld.so error (exit 127, e.g. "invalid ELF header", "file too short"): rootlock must
    report a problem for that file (or reject it with exit 2); lists are not compared;
  - "version `V' not found": rootlock must report missing-version V, and no other.
Each tree is a case (`test_rootlock_ldd_agrees_with_ld_so[debian]`, ...); it prints how many
objects it compared, and a disagreement fails it with every disagreement listed.
"""
import collections
import os
import time

import pytest

from fixtures import cuda_env, loader_rules, referee
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


def cuda_paths(root):
    """Build the CUDA stub environment in root; its ELF paths."""
    info = cuda_env.build_cuda_env(root)
    return sorted(info.get("objects") or loader_rules.all_objects(root, cuda_env.VENV))


def rules_paths(root):
    loader_rules.build_all(root)
    return loader_rules.all_objects(root)


TREES = {"debian": debian_objects, "loader-rules": rules_paths, "cuda-env": cuda_paths}


@pytest.mark.parametrize("tree", list(TREES))
def test_rootlock_ldd_agrees_with_ld_so(rootlock, scratch, tree):
    root = copy_root(scratch)
    hwcaps, _ = referee.ld_so_hwcaps(root)
    print(f"glibc-hwcaps levels of this CPU (given to rootlock): {hwcaps}")
    paths = TREES[tree](root)
    start = time.monotonic()
    refs = referee.ld_so_list_many(root, paths)
    args = ["--hwcaps", ",".join(hwcaps)] if hwcaps else []
    gots = referee.rootlock_ldd(rootlock, root, paths, args)
    diffs = referee.compare(refs, gots)
    print(f"{tree}: {len(paths)} objects ({summarise(refs)}); compared with rootlock: "
          f"{len(paths) - len(diffs)} agree, {len(diffs)} disagree, "
          f"{time.monotonic() - start:.1f}s")
    listed = [f"{path}: {item}" for path, items in sorted(diffs.items()) for item in items]
    assert not diffs, f"{len(diffs)} of {len(paths)} objects disagree:\n" + "\n".join(listed)
