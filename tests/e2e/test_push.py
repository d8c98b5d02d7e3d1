"""End-to-end: `rootlock push` into a real registry (Debian's docker-registry, distribution 2.8,
htpasswd auth) on 127.0.0.1, checked by skopeo and by the registry's own access log.

Usage: test_push.py ROOTLOCK

Two images from the fixture index (web-router 1.0.0 and 1.2.0, so they differ in one
pure-Python package), built as an OCI archive and an OCI layout; credentials in an auth file
named by $REGISTRY_AUTH_FILE, as `podman login` writes it. Then:
  a. push of the archive: exit 0, every blob uploaded once (the registry's log counts the same),
     `skopeo inspect` of the pushed tag finds rootlock's manifest digest; the SBOM's artifact
     manifest is pushed and listed under the referrers fallback tag sha256-<digest hex>;
  b. the same push again uploads nothing (every blob found by HEAD);
  c. the other image (the layout) under another tag uploads exactly one layer: the venv's;
  d. the first image pushed to another repository mounts every blob, uploading none;
  e. wrong credentials, no credentials, and HTTPS to a plain-HTTP registry: one line, exit 3;
     a malformed reference: one line, exit 2;
  f. through a proxy that drops the first upload's connection mid-body, the push is retried
     and lands the same digest;
  g. a registry with token auth (a token service signing RS256 JWTs that the registry trusts):
     the push gets a Bearer token for repository:NAME:pull,push with the Basic credentials, and
     `--mount-from` another repository asks for that one's pull scope too; a wrong password is
     refused by the token service: one line, exit 3;
  h. `check docker://HOST/demo:v1` pulls the image into the cache and reports what `check` of
     the archive reports; a second check downloads no blob; `diff` of the two pushed tags says
     exactly web-router 1.0.0 -> 1.2.0.
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from fixtures import index_server, package_graph
from fixtures.debian_root import base_tarball
from fixtures.failures import Failures
from fixtures.registry import DroppingProxy, Registry

USER, PASSWORD = "alice", "secret"


def write_recipe(path, index_url, base, requires):
    base_path, base_sha = base
    with open(path, "w") as f:
        f.write(f'[image]\nname = "pushtest"\n\n'
                f'[base]\ntarball = "{base_path}"\nsha256 = "{base_sha}"\n\n'
                '[python]\nversion = "3.11"\n\n'
                '[torch]\nversion = "2.8.0"\ncuda = "12.8"\n\n[cuda]\ndriver = "570.133.07"\n\n'
                f'[[index]]\nname = "fixture"\nurl = "{index_url}"\n\n'
                f'[packages]\nrequires = {json.dumps(requires)}\n')
    return path


def run(argv, env=None, timeout=900):
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)


def push(rootlock, image, reference, cache, env, extra=()):
    proc = run([rootlock, "push", image, reference, "--insecure", "--json", "--cache-dir", cache,
                *extra], env=env)
    try:
        return proc.returncode, json.loads(proc.stdout), proc.stderr
    except json.JSONDecodeError:
        return proc.returncode, None, proc.stdout + proc.stderr


def remote_digest(reference):
    """The manifest digest skopeo reads from the registry."""
    proc = run(["skopeo", "inspect", "--raw", "--tls-verify=false", "--creds",
                f"{USER}:{PASSWORD}", f"docker://{reference}"])
    if proc.returncode != 0:
        return None, proc.stderr
    return "sha256:" + hashlib.sha256(proc.stdout.encode()).hexdigest(), ""


def one_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) == 1


def main(argv):
    rootlock = os.path.abspath(argv[1])
    fail = Failures()
    for tool in ("skopeo", "docker-registry", "htpasswd"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed (make test installs it)")
            return 1
    work = tempfile.mkdtemp(prefix="rootlock-push-")
    try:
        graph = package_graph.build_graph(os.path.join(work, "graph"))
        base = base_tarball()
        cache = os.path.join(work, "cache")
        images = {}
        with index_server.IndexServer(graph, style="pypi") as server:
            for version, output in (("1.0.0", "a.oci.tar"), ("1.2.0", "b.oci")):
                recipe = write_recipe(os.path.join(work, f"push-{version}.toml"),
                                      server.simple_url, base, ["app-cli", f"web-router=={version}"])
                lock = os.path.join(work, f"pylock.push-{version}.toml")
                proc = run([rootlock, "lock", recipe, "-o", lock, "--cache-dir", cache])
                if not fail.expect(proc.returncode == 0, f"lock {version}: {proc.stderr}"):
                    return 1
                image = os.path.join(work, output)
                proc = run([rootlock, "build", lock, "-o", image, "--cache-dir", cache, "--json"])
                if not fail.expect(proc.returncode == 0, f"build {version}: {proc.stderr}"):
                    return 1
                images[version] = (image, json.loads(proc.stdout)["manifest"])

        auth_file = os.path.join(work, "auth.json")
        token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROOTLOCK_REGISTRY")}
        env["HOME"] = os.path.join(work, "home")
        env["REGISTRY_AUTH_FILE"] = auth_file
        env.pop("XDG_RUNTIME_DIR", None)
        push_cache = os.path.join(work, "push-cache")
        with Registry(os.path.join(work, "registry"), {USER: PASSWORD}) as registry:
            with open(auth_file, "w") as f:
                json.dump({"auths": {registry.host: {"auth": token}}}, f)
            image_a, digest_a = images["1.0.0"]
            image_b, digest_b = images["1.2.0"]

            # (a) the first push uploads every blob once.
            rc, out, err = push(rootlock, image_a, f"{registry.host}/demo:v1", push_cache, env)
            if not fail.expect(rc == 0 and out, f"(a) push: exit {rc}: {err}"):
                return 1
            blobs = len(out["blobs"])
            fail.expect(out["digest"] == digest_a and out["uploaded"] == blobs and
                        out["skipped"] == 0, f"(a) summary {out}")
            fail.expect(len(registry.uploads("demo")) == blobs,
                        f"(a) the registry completed {len(registry.uploads('demo'))} uploads, "
                        f"rootlock says {blobs}")
            remote, err = remote_digest(f"{registry.host}/demo:v1")
            fail.expect(remote == digest_a, f"(a) skopeo sees {remote}, not {digest_a}: {err}")
            # The SBOM artifact: pushed by digest, listed under the referrers fallback tag
            # (distribution 2.8 has no referrers API).
            tag = "sha256-" + digest_a[7:]
            fail.expect(len(out["artifacts"]) == 1 and out.get("referrers_tag") == tag,
                        f"(a) artifacts {out['artifacts']}, tag {out.get('referrers_tag')}")
            proc = run(["skopeo", "inspect", "--raw", "--tls-verify=false", "--creds",
                        f"{USER}:{PASSWORD}", f"docker://{registry.host}/demo:{tag}"])
            referrers = json.loads(proc.stdout) if proc.returncode == 0 else {}
            fail.expect([m.get("digest") for m in referrers.get("manifests", [])] ==
                        out["artifacts"] and referrers["manifests"][0].get("artifactType") ==
                        "application/vnd.cyclonedx+json", f"(a) referrers index: {referrers} "
                        f"{proc.stderr}")
            print(f"(a) {blobs} blobs, {out['bytes_uploaded']} bytes, {out['requests']} requests")

            # (b) again: nothing to send.
            rc, out, err = push(rootlock, image_a, f"{registry.host}/demo:v1", push_cache, env)
            fail.expect(rc == 0 and out and out["uploaded"] == 0 and out["skipped"] == blobs,
                        f"(b) second push: exit {rc}: {err} {out}")
            fail.expect(len(registry.uploads("demo")) == blobs, "(b) the registry got uploads")

            # (c) one package changed: one layer (and the config, and the SBOM) uploaded.
            rc, out, err = push(rootlock, image_b, f"{registry.host}/demo:v2", push_cache, env)
            if fail.expect(rc == 0 and out, f"(c) push: exit {rc}: {err}"):
                layers = [b for b in out["blobs"] if b["outcome"] == "uploaded" and
                          "image.layer" in b["media_type"]]
                fail.expect(len(layers) == 1, f"(c) uploaded layers: {layers}")
                fail.expect(len(registry.uploads("demo")) == blobs + out["uploaded"],
                            "(c) the registry's count differs from rootlock's")
                remote, err = remote_digest(f"{registry.host}/demo:v2")
                fail.expect(remote == digest_b, f"(c) skopeo sees {remote}: {err}")
                print(f"(c) {out['uploaded']} blobs uploaded ({len(layers)} layer), "
                      f"{out['skipped']} already there")

            # (d) another repository: everything mounted.
            rc, out, err = push(rootlock, image_a, f"docker://{registry.host}/other:v1",
                                push_cache, env)
            if fail.expect(rc == 0 and out, f"(d) push: exit {rc}: {err}"):
                fail.expect(out["mounted"] == blobs and out["uploaded"] == 0,
                            f"(d) summary {out}")
                fail.expect(len(registry.uploads("other")) == 0 and
                            len(registry.mounts("other")) == blobs,
                            f"(d) registry: {len(registry.uploads('other'))} uploads, "
                            f"{len(registry.mounts('other'))} mounts")
                remote, err = remote_digest(f"{registry.host}/other:v1")
                fail.expect(remote == digest_a, f"(d) skopeo sees {remote}: {err}")

            # (h) check and diff read the registry's images.
            pull_env = dict(env, ROOTLOCK_CACHE_DIR=os.path.join(work, "pull-cache"))
            local = run([rootlock, "check", "--root", image_a, "--json"], env=pull_env)
            remote = run([rootlock, "check", "--insecure", "--root",
                          f"docker://{registry.host}/demo:v1", "--json"], env=pull_env)
            gets = lambda: len([1 for m, t, s in registry.access_lines()
                                if m == "GET" and "/blobs/sha256:" in t and s == 200])
            if fail.expect(remote.returncode == local.returncode and remote.stdout,
                           f"(h) check docker://: exit {remote.returncode}: {remote.stderr}"):
                a, b = json.loads(local.stdout), json.loads(remote.stdout)
                a.pop("root", None)
                b.pop("root", None)
                fail.expect(a == b, "(h) the registry image's report differs from the archive's")
            pulled = gets()
            again = run([rootlock, "check", "--insecure", "--root",
                         f"docker://{registry.host}/demo:v1", "--json"], env=pull_env)
            fail.expect(again.returncode == remote.returncode and gets() == pulled,
                        f"(h) a second check fetched {gets() - pulled} blobs again")
            proc = run([rootlock, "diff", "--insecure", f"docker://{registry.host}/demo:v1",
                        f"docker://{registry.host}/demo:v2", "--json"], env=pull_env)
            if fail.expect(proc.returncode == 1, f"(h) diff: exit {proc.returncode}: "
                                                 f"{proc.stderr}"):
                changes = json.loads(proc.stdout)
                text = json.dumps(changes)
                fail.expect("web-router" in text and "1.2.0" in text and "app-cli" not in text,
                            f"(h) diff: {text[:400]}")
            print(f"(h) check of the pushed image: {pulled} blobs pulled once, report equal")

            # (e) refusals: one line each.
            uploads_before_refusals = len(registry.uploads("demo"))
            wrong = dict(env, ROOTLOCK_REGISTRY_USERNAME=USER, ROOTLOCK_REGISTRY_PASSWORD="nope")
            proc = run([rootlock, "push", image_a, f"{registry.host}/demo:v3", "--insecure"],
                       env=wrong)
            fail.expect(proc.returncode == 3 and one_line(proc.stderr) and
                        "refused the credentials from ROOTLOCK_REGISTRY_USERNAME" in proc.stderr,
                        f"(e) wrong password: exit {proc.returncode}: {proc.stderr!r}")
            nobody = dict(env)
            nobody.pop("REGISTRY_AUTH_FILE")
            proc = run([rootlock, "push", image_a, f"{registry.host}/demo:v3", "--insecure"],
                       env=nobody)
            fail.expect(proc.returncode == 3 and one_line(proc.stderr) and
                        "none were found" in proc.stderr,
                        f"(e) no credentials: exit {proc.returncode}: {proc.stderr!r}")
            proc = run([rootlock, "push", image_a, f"{registry.host}/demo:v3", "--retries", "0"],
                       env=env)
            fail.expect(proc.returncode == 3 and one_line(proc.stderr),
                        f"(e) HTTPS to plain HTTP: exit {proc.returncode}: {proc.stderr!r}")
            proc = run([rootlock, "push", image_a, "demo:v3"], env=env)
            fail.expect(proc.returncode == 2 and one_line(proc.stderr) and
                        "name the registry first" in proc.stderr,
                        f"(e) no host: exit {proc.returncode}: {proc.stderr!r}")
            fail.expect(len(registry.uploads("demo")) == uploads_before_refusals,
                        "(e) a refused push uploaded something")

            # (f) a connection dropped mid-upload is retried.
            proxy = DroppingProxy(registry.port)
            with open(auth_file, "w") as f:
                json.dump({"auths": {registry.host: {"auth": token},
                                     proxy.host: {"auth": token}}}, f)
            try:
                rc, out, err = push(rootlock, image_a, f"{proxy.host}/flaky:v1",
                                    os.path.join(work, "flaky-cache"), env,
                                    ["--chunk-size", "16"])
                fail.expect(proxy.dropped == 1, "(f) the proxy dropped nothing")
                fail.expect(rc == 0 and out and out["uploaded"] == blobs,
                            f"(f) push through the proxy: exit {rc}: {err} {out}")
                remote, err = remote_digest(f"{registry.host}/flaky:v1")
                fail.expect(remote == digest_a, f"(f) skopeo sees {remote}: {err}")
                starts = [t for m, t, s in registry.access_lines()
                          if m == "POST" and t.startswith("/v2/flaky/blobs/uploads/")]
                print(f"(f) one connection dropped; {len(starts)} upload sessions for "
                      f"{blobs} blobs")
            finally:
                proxy.close()

        # (g) token auth.
        with Registry(os.path.join(work, "token-registry"), {USER: PASSWORD},
                      token_auth=True) as registry:
            with open(auth_file, "w") as f:
                json.dump({"auths": {registry.host: {"auth": token}}}, f)
            rc, out, err = push(rootlock, image_a, f"{registry.host}/demo:v1",
                                os.path.join(work, "token-cache"), env)
            if fail.expect(rc == 0 and out, f"(g) push: exit {rc}: {err}"):
                remote, err = remote_digest(f"{registry.host}/demo:v1")
                fail.expect(remote == digest_a, f"(g) skopeo sees {remote}: {err}")
                scopes = [r for r in registry.token_service.requests
                          if "scope=repository%3Ademo%3Apull%2Cpush" in r]
                fail.expect(scopes, f"(g) token requests: {registry.token_service.requests}")
            rc, out, err = push(rootlock, image_a, f"{registry.host}/copy:v1",
                                os.path.join(work, "token-cache-2"), env,
                                ["--mount-from", "demo"])
            if fail.expect(rc == 0 and out, f"(g) mount push: exit {rc}: {err}"):
                fail.expect(out["mounted"] == blobs and len(registry.mounts("copy")) == blobs,
                            f"(g) mounted {out['mounted']} of {blobs}")
                fail.expect(any("scope=repository%3Ademo%3Apull" in r and
                                "repository%3Acopy%3Apull%2Cpush" in r
                                for r in registry.token_service.requests),
                            f"(g) no token for both scopes: {registry.token_service.requests}")
            wrong = dict(env, ROOTLOCK_REGISTRY_USERNAME=USER, ROOTLOCK_REGISTRY_PASSWORD="nope")
            proc = run([rootlock, "push", image_a, f"{registry.host}/demo:v2", "--insecure"],
                       env=wrong)
            fail.expect(proc.returncode == 3 and one_line(proc.stderr) and
                        "token service refused the credentials" in proc.stderr,
                        f"(g) wrong password: exit {proc.returncode}: {proc.stderr!r}")
            print(f"(g) token auth: {len(registry.token_service.requests)} token requests")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fail.items:
        print(f"{len(fail.items)} expectation(s) failed")
        return 1
    print("all expectations met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
