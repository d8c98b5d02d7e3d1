"""End-to-end: the driver gate on real drivers (issue 31): NVIDIA's real 470, 535 and 550
user-space drivers from Debian (fixtures/nvidia_host.py) against torch CUDA stacks of CUDA 12.4,
12.8 and 13.0 (fixtures/cuda_env.py; 12.4 is the 12.8 stack with its runtime wheel at 12.4.127).

`check --host-root` gives, per NVIDIA's minimum-driver table and minor-version compatibility
(gpu-containers.md 4.1; each expectation written out below, not computed by rootlock's table):
  - ok: the driver at least the runtime release's minimum;
  - driver-minor-version-compat (warning, exit 0): below it, at or above the major's floor
    (12.x: 525.60.13), naming both numbers;
  - driver-too-old (error, exit 1): below the floor (13.x needs 580.65.06).
"""
import copy
import json
import os

import pytest

from fixtures import cuda_env, nvidia_host
from fixtures.cli import run_rootlock
from fixtures.debian_root import copy_root

HOSTS = {"470": "470.256.02", "535": "535.261.03", "550": "550.163.01"}
STACKS = {"12.4": ("torch-2.8.0-cu128", "12.4.127"), "12.8": ("torch-2.8.0-cu128", None),
          "13.0": ("torch-2.9.1-cu130", None)}
# (host branch, CUDA) -> the verdict NVIDIA's table gives.
EXPECTED = {
    ("470", "12.4"): "driver-too-old", ("470", "12.8"): "driver-too-old",
    ("470", "13.0"): "driver-too-old",
    ("535", "12.4"): "driver-minor-version-compat", ("535", "12.8"): "driver-minor-version-compat",
    ("535", "13.0"): "driver-too-old",
    ("550", "12.4"): "ok", ("550", "12.8"): "driver-minor-version-compat",
    ("550", "13.0"): "driver-too-old",
}


@pytest.fixture(scope="module")
def hosts(scratch):
    made = {}
    for branch in HOSTS:
        if not nvidia_host.is_cached(branch) and not nvidia_host.archive_reachable():
            pytest.skip(f"driver branch {branch}: not cached and Debian's archive is unreachable")
        dest = os.path.join(scratch, "host-" + branch)
        nvidia_host.make_host(dest, branch=branch, layout="debian" if branch != "470" else "run")
        made[branch] = dest
    return made


@pytest.fixture(scope="module")
def roots(scratch):
    made = {}
    for cuda, (stack_id, runtime) in STACKS.items():
        data = copy.deepcopy(cuda_env.load_data())
        if runtime:
            stack = cuda_env.find_stack(data, stack_id)
            for dist in stack["dist"]:
                if dist["name"] == "nvidia-cuda-runtime-cu12":
                    dist["dist_info"] = dist["dist_info"].replace(dist["version"], runtime)
                    dist["version"] = runtime
        root = copy_root(scratch)
        cuda_env.build_cuda_env(root, stacks=(stack_id,), twins=False, data=data)
        made[cuda] = root
    return made


@pytest.mark.parametrize("branch,cuda", sorted(EXPECTED))
def test_driver_verdict(rootlock, hosts, roots, branch, cuda):
    proc = run_rootlock(rootlock, "check", "--root", roots[cuda], "--host-root", hosts[branch],
                        "--json", timeout=300)
    report = json.loads(proc.stdout)
    found = [p for p in report["problems"] if p["kind"].startswith("driver-")]
    verdict = found[0]["kind"] if found else "ok"
    print(f"CUDA {cuda} on {HOSTS[branch]}: {verdict}"
          f"{': ' + found[0].get('problem', '') if found else ''}")
    assert verdict == EXPECTED[(branch, cuda)], found
    assert len(found) <= 1, found
    if verdict == "driver-too-old":
        assert proc.returncode == 1
    else:
        assert proc.returncode == 0, report["problems"]
    if verdict == "driver-minor-version-compat":
        assert found[0]["cuda"] == cuda and found[0]["driver"] == HOSTS[branch]
        assert HOSTS[branch] in found[0]["problem"]
