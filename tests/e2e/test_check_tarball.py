"""End-to-end: `rootlock check --root TARBALL` checks a rootfs tarball without extracting it.

Usage: test_check_tarball.py ROOTLOCK

1. The Debian root with the CUDA fixture env, packed as .tar.zst: check of the tarball gives the
   same report (objects, problems, notes) as check of the directory, before and after the cu13
   twins are uninstalled.
2. A tarball with a `../` entry, an absolute entry and a symlink escaping the root: each is
   reported as unsafe-path, exit 1, and nothing outside the root is read (the escaping link
   points at a host file that would otherwise be found).
"""
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

from fixtures import cuda_env, pip_like
from fixtures.debian_root import copy_root

HOST_SH = os.path.realpath("/bin/sh")
# A relative link climbing far above the root: the host would resolve it to its own libc.
ESCAPING_LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
ESCAPE_TARGET = "../../../../../../../../../../lib/x86_64-linux-gnu/libc.so.6"
TWINS = ["nvidia-cudnn-cu13", "nvidia-cusparselt-cu13", "nvidia-nccl-cu13", "nvidia-nvshmem-cu13"]


def check(rootlock, root, paths=("/opt/venv",)):
    proc = subprocess.run([rootlock, "check", "--json", "--root", root, *paths],
                          capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        sys.exit(f"no JSON from rootlock (exit {proc.returncode}): {proc.stderr}")
    report.pop("root", None)
    return proc.returncode, report


def pack(root, out):
    # GNU tar as users make rootfs tarballs; numeric owners, zstd. Other tests hard-link the
    # same cached files meanwhile, which changes their ctime: tar then warns and exits 1.
    proc = subprocess.run(["tar", "--zstd", "--numeric-owner", "--warning=no-file-changed",
                           "-C", root, "-cf", out, "."], capture_output=True, text=True)
    if proc.returncode not in (0, 1) or proc.stderr.strip():
        sys.exit(f"tar failed ({proc.returncode}): {proc.stderr}")


def compare(rootlock, root, tarball, label, failures):
    rc_dir, dir_report = check(rootlock, root)
    rc_tar, tar_report = check(rootlock, tarball)
    same = rc_dir == rc_tar and dir_report == tar_report
    print(f"{label}: directory exit {rc_dir}, tarball exit {rc_tar}, "
          f"{dir_report['objects']} objects, {len(dir_report['problems'])} problems: "
          f"{'same report' if same else 'DIFFERENT'}")
    if not same:
        failures.append(label)
        print(json.dumps(dir_report, indent=1)[:3000])
        print(json.dumps(tar_report, indent=1)[:3000])


def hostile_tarball(path):
    """A small root with one program, plus entries a safe reader must refuse."""
    with tarfile.open(path, "w") as tar:
        def add_file(name, data, mode=0o644):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))

        def add_link(name, target):
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)

        add_file("bin/sh", open(HOST_SH, "rb").read(), 0o755)
        add_file("../evil", b"outside")
        add_file("/abs/file", b"absolute")
        add_link("etc/escape", "../../../../etc/passwd")
        add_link(ESCAPING_LIBC[1:], ESCAPE_TARGET)


def hostile_directory(root):
    """The same trap unpacked: followed by the host, the link would reach the host's libc."""
    os.makedirs(os.path.join(root, "bin"))
    shutil.copy(HOST_SH, os.path.join(root, "bin", "sh"))
    link = os.path.join(root, ESCAPING_LIBC[1:])
    os.makedirs(os.path.dirname(link))
    os.symlink(ESCAPE_TARGET, link)
    assert os.path.exists(link), "the host follows the escaping link"


def missing_sonames(report):
    return sorted(p["soname"] for p in report["problems"] if p["kind"] == "missing-soname")


def main(argv):
    rootlock = os.path.abspath(argv[1])
    failures = []
    scratch = tempfile.mkdtemp(prefix="rootlock-tar-")
    try:
        root = copy_root(scratch)
        info = cuda_env.build_cuda_env(root)
        tarball = os.path.join(scratch, "root.tar.zst")
        pack(root, tarball)
        print(f"packed {os.path.getsize(tarball) // 1024} KiB")
        compare(rootlock, root, tarball, "intact", failures)
        for twin in TWINS:
            pip_like.uninstall(info["site_packages_host"], twin)
        os.unlink(tarball)
        pack(root, tarball)
        compare(rootlock, root, tarball, "after the cleanup", failures)

        hostile = os.path.join(scratch, "hostile.tar")
        hostile_tarball(hostile)
        rc, report = check(rootlock, hostile, paths=())
        unsafe = sorted(p["path"] for p in report["problems"] if p["kind"] == "unsafe-path")
        print(f"hostile: exit {rc}, unsafe paths {unsafe}")
        for expected in ("../evil", "/abs/file", "/etc/escape", ESCAPING_LIBC):
            if not any(expected in path for path in unsafe):
                failures.append(f"hostile: {expected} not reported")
        if rc != 1 or report["ok"]:
            failures.append(f"hostile: exit {rc}, ok {report['ok']}")
        if "libc.so.6" not in missing_sonames(report):
            failures.append(f"hostile: libc.so.6 was found through an escaping link: {report}")

        unpacked = os.path.join(scratch, "hostile-dir")
        hostile_directory(unpacked)
        rc, report = check(rootlock, unpacked, paths=())
        print(f"hostile directory: exit {rc}, missing {missing_sonames(report)}")
        if rc != 1 or "libc.so.6" not in missing_sonames(report):
            failures.append(f"hostile directory: the escaping link was followed: {report}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
