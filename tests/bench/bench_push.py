#!/usr/bin/env python3
"""`make bench`: what `rootlock push` costs beside `skopeo copy` of the same OCI archive to the
same registry (Debian's docker-registry on 127.0.0.1, htpasswd auth, plain HTTP).

    python3 tests/bench/bench_push.py build/rootlock [--runs 3]

The image: the demo's (lockfiles/pylock.demo.toml, after `make demo`), else the fixture
index's torch 2.8.0+cu128 stack over the cached Debian base, built once as an .oci.tar. Rows:

  cold   a registry with nothing: every blob uploaded (a fresh registry for each run, so that
         neither tool can mount from an earlier run);
  warm   the same push again: every blob already there (HEAD only), the manifest put again.

Wall time is the median of --runs runs (whole process), peak RSS from /usr/bin/time. Not a
test: it never fails on a figure.
"""
import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests"))

from fixtures import index_server, package_graph  # noqa: E402
from fixtures.debian_root import base_tarball  # noqa: E402
from fixtures.registry import Registry  # noqa: E402

GNU_TIME = "/usr/bin/time"
USER, PASSWORD = "bench", "bench-password"


def timed(argv, env):
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        started = time.monotonic()
        proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", out.name, *argv], capture_output=True,
                              text=True, env=env)
        took = time.monotonic() - started
        lines = [line for line in out.read().splitlines() if line.strip().isdigit()]
    if proc.returncode != 0:
        sys.exit(f"{argv[:3]} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return took, (int(lines[-1]) / 1024 if lines else float("nan"))


def fixture_image(rootlock, work):
    graph = package_graph.build_graph(os.path.join(work, "graph"))
    base_path, base_sha = base_tarball()
    recipe = os.path.join(work, "bench.toml")
    cache = os.path.join(work, "cache")
    with index_server.IndexServer(graph, style="pypi") as server:
        with open(recipe, "w") as f:
            f.write(f'[image]\nname = "pushbench"\n\n[base]\ntarball = "{base_path}"\n'
                    f'sha256 = "{base_sha}"\n\n[python]\nversion = "3.11"\n\n'
                    '[torch]\nversion = "2.8.0"\ncuda = "12.8"\n\n[cuda]\ndriver = "570.133.07"\n\n'
                    f'[[index]]\nname = "fixture"\nurl = "{server.simple_url}"\n\n'
                    '[packages]\nrequires = ["app-cli", "web-router==1.0.0"]\n')
        lock = os.path.join(work, "pylock.pushbench.toml")
        subprocess.run([rootlock, "lock", recipe, "-o", lock, "--cache-dir", cache], check=True,
                       capture_output=True)
        image = os.path.join(work, "pushbench.oci.tar")
        subprocess.run([rootlock, "build", lock, "-o", image, "--cache-dir", cache], check=True,
                       capture_output=True)
    return image, "the fixture torch 2.8.0+cu128 stack over the cached Debian base"


def demo_image(rootlock, work):
    lock = os.path.join(REPO, "lockfiles", "pylock.demo.toml")
    if not os.path.isfile(lock):
        return None
    image = os.path.join(work, "demo.oci.tar")
    proc = subprocess.run([rootlock, "build", lock, "-o", image, "--offline"],
                          capture_output=True, text=True)
    return (image, "the demo image (lockfiles/pylock.demo.toml)") if proc.returncode == 0 else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rootlock")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rootlock = os.path.abspath(args.rootlock)
    for tool in ("skopeo", "docker-registry", "htpasswd"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed (make test installs it)")
    work = tempfile.mkdtemp(prefix="rootlock-bench-push-")
    try:
        image, what = demo_image(rootlock, work) or fixture_image(rootlock, work)
        size = os.path.getsize(image)
        auth = os.path.join(work, "auth.json")
        env = dict(os.environ, REGISTRY_AUTH_FILE=auth)
        rows = {}
        for run in range(args.runs):
            with Registry(os.path.join(work, f"registry-{run}"), {USER: PASSWORD}) as registry:
                token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
                with open(auth, "w") as f:
                    json.dump({"auths": {registry.host: {"auth": token}}}, f)
                commands = {
                    "rootlock push": [rootlock, "push", image, f"{registry.host}/r:v1",
                                      "--insecure", "--cache-dir", os.path.join(work, f"c{run}")],
                    "skopeo copy": ["skopeo", "copy", "--quiet", "--dest-tls-verify=false",
                                    "--dest-authfile", auth, f"oci-archive:{image}",
                                    f"docker://{registry.host}/s:v1"],
                }
                for name, argv in commands.items():
                    for kind in ("cold", "warm"):
                        rows.setdefault((name, kind), []).append(timed(argv, env))
        print(f"push of {what}: {size / 1e6:.1f} MB archive, {args.runs} runs each, median")
        print(f"{'tool':<16} {'row':<6} {'wall s':>8} {'peak MB':>8}  rootlock/skopeo")
        for kind in ("cold", "warm"):
            medians = {name: statistics.median(t for t, _ in rows[(name, kind)])
                       for name in ("rootlock push", "skopeo copy")}
            ratio = medians["rootlock push"] / medians["skopeo copy"]
            for name in ("rootlock push", "skopeo copy"):
                peak = max(m for _, m in rows[(name, kind)])
                print(f"{name:<16} {kind:<6} {medians[name]:>8.2f} {peak:>8.1f}  "
                      + (f"{ratio:.2f}x" if name == "rootlock push" else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
