"""End-to-end: `rootlock check --root TARBALL` checks a rootfs tarball without extracting it.

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
import tarfile

import pytest

from fixtures import cuda_env, pip_like
from fixtures.cli import run, run_rootlock
from fixtures.debian_root import copy_root

HOST_SH = os.path.realpath("/bin/sh")
# A relative link climbing far above the root: the host would resolve it to its own libc.
ESCAPING_LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
ESCAPE_TARGET = "../../../../../../../../../../lib/x86_64-linux-gnu/libc.so.6"
TWINS = ["nvidia-cudnn-cu13", "nvidia-cusparselt-cu13", "nvidia-nccl-cu13", "nvidia-nvshmem-cu13"]


def check(rootlock, root, paths=("/opt/venv",)):
    proc = run_rootlock(rootlock, "check", "--json", "--root", root, *paths, timeout=600)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"no JSON from rootlock (exit {proc.returncode}): {proc.stderr}")
    report.pop("root", None)
    return proc.returncode, report


def pack(root, out):
    # GNU tar as users make rootfs tarballs; numeric owners, zstd. Other tests hard-link the
    # same cached files meanwhile, which changes their ctime: tar then warns and exits 1.
    proc = run(["tar", "--zstd", "--numeric-owner", "--warning=no-file-changed",
                "-C", root, "-cf", out, "."])
    assert proc.returncode in (0, 1) and not proc.stderr.strip(), \
        f"tar failed ({proc.returncode}): {proc.stderr}"
    print(f"packed {os.path.getsize(out) // 1024} KiB")
    return out


def compare(rootlock, root, tarball, label):
    rc_dir, dir_report = check(rootlock, root)
    rc_tar, tar_report = check(rootlock, tarball)
    same = rc_dir == rc_tar and dir_report == tar_report
    print(f"{label}: directory exit {rc_dir}, tarball exit {rc_tar}, "
          f"{dir_report['objects']} objects, {len(dir_report['problems'])} problems: "
          f"{'same report' if same else 'DIFFERENT'}")
    assert same, (f"{label}: directory exit {rc_dir}, tarball exit {rc_tar}\n"
                  f"directory: {json.dumps(dir_report, indent=1)[:3000]}\n"
                  f"tarball: {json.dumps(tar_report, indent=1)[:3000]}")


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


@pytest.fixture(scope="module")
def cuda_root(scratch):
    """The CUDA fixture env (cu13 twins installed) in a copy of the Debian root: its info."""
    return cuda_env.build_cuda_env(copy_root(scratch))


@pytest.fixture(scope="module")
def cleaned_root(scratch, cuda_root):
    """cuda_root with the cu13 twins uninstalled as pip does (a hard-linked copy: pip_like
    only removes and renames, so cuda_root keeps its files)."""
    root = os.path.join(scratch, "cleaned")
    subprocess.run(["cp", "-al", cuda_root["root"], root], check=True)
    for twin in TWINS:
        pip_like.uninstall(os.path.join(root, cuda_root["site_packages"].lstrip("/")), twin)
    return root


def test_intact_tarball_report_equals_directory(rootlock, scratch, cuda_root):
    tarball = pack(cuda_root["root"], os.path.join(scratch, "intact.tar.zst"))
    compare(rootlock, cuda_root["root"], tarball, "intact")


def test_after_cleanup_tarball_report_equals_directory(rootlock, scratch, cleaned_root):
    tarball = pack(cleaned_root, os.path.join(scratch, "cleaned.tar.zst"))
    compare(rootlock, cleaned_root, tarball, "after the cleanup")


@pytest.fixture(scope="module")
def hostile_report(rootlock, scratch):
    hostile = os.path.join(scratch, "hostile.tar")
    hostile_tarball(hostile)
    rc, report = check(rootlock, hostile, paths=())
    unsafe = sorted(p["path"] for p in report["problems"] if p["kind"] == "unsafe-path")
    print(f"hostile: exit {rc}, unsafe paths {unsafe}")
    return rc, report, unsafe


@pytest.mark.parametrize("entry", ["../evil", "/abs/file", "/etc/escape", ESCAPING_LIBC],
                         ids=["dotdot", "absolute", "escaping-link", "escaping-libc-link"])
def test_hostile_tarball_entry_reported_unsafe(hostile_report, entry):
    _, _, unsafe = hostile_report
    assert any(entry in path for path in unsafe), f"{entry} not reported: unsafe paths {unsafe}"


def test_hostile_tarball_exit_1_not_ok(hostile_report):
    rc, report, _ = hostile_report
    assert rc == 1 and not report["ok"], f"exit {rc}, ok {report['ok']}"


def test_hostile_tarball_escaping_link_not_followed(hostile_report):
    _, report, _ = hostile_report
    assert "libc.so.6" in missing_sonames(report), \
        f"libc.so.6 was found through an escaping link: {report}"


def test_hostile_directory_escaping_link_not_followed(rootlock, scratch):
    unpacked = os.path.join(scratch, "hostile-dir")
    hostile_directory(unpacked)
    rc, report = check(rootlock, unpacked, paths=())
    print(f"hostile directory: exit {rc}, missing {missing_sonames(report)}")
    assert rc == 1 and "libc.so.6" in missing_sonames(report), \
        f"the escaping link was followed: exit {rc}, {report}"
