"""End-to-end: `rootlock push` into a real registry (Debian's docker-registry, distribution 2.8,
htpasswd auth) on 127.0.0.1, checked by skopeo and by the registry's own access log.

Two images from the fixture index (web-router 1.0.0 and 1.2.0, so they differ in one
pure-Python package), built as an OCI archive and an OCI layout; credentials in an auth file
named by $REGISTRY_AUTH_FILE, as `podman login` writes it. The registries, the images and each
push that later cases build on are module fixtures; a push's counts are taken from the
registry's log just before and after it, so a case reads the same numbers whatever ran first.
Then:
  a. push of the archive: exit 0, every blob uploaded once (the registry's log counts the same),
     `skopeo inspect` of the pushed tag finds rootlock's manifest digest; the SBOM's artifact
     manifest is pushed and listed under the referrers fallback tag sha256-<digest hex>;
  b. the same push again uploads nothing (every blob found by HEAD);
  c. the other image (the layout) under another tag uploads exactly one layer: the venv's;
  d. the first image pushed to another repository mounts every blob, uploading none;
  e. wrong credentials, no credentials, and HTTPS to a plain-HTTP registry: one line, exit 3;
     a malformed reference: one line, exit 2; none of them uploads anything;
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

import pytest

from fixtures import index_server, package_graph
from fixtures.cli import run, run_rootlock
from fixtures.debian_root import base_tarball
from fixtures.recipes import tarball_recipe
from fixtures.registry import DroppingProxy, Registry

USER, PASSWORD = "alice", "secret"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


def write_recipe(path, index_url, base, requires):
    return tarball_recipe(path, "pushtest", index_url, base, requires)


def push(rootlock, image, reference, cache, env, extra=()):
    """(exit, JSON summary or None, stderr) of `rootlock push --insecure --json`."""
    proc = run_rootlock(rootlock, "push", image, reference, "--insecure", "--json",
                        "--cache-dir", cache, *extra, env=env)
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


def auth_env(scratch, name, hosts):
    """os.environ for a push: no ROOTLOCK_REGISTRY_*, a HOME of its own, and an auth file (its
    own, `name`) with the Basic credentials for each of `hosts`."""
    auth_file = os.path.join(scratch, name)
    with open(auth_file, "w") as f:
        json.dump({"auths": {host: {"auth": BASIC} for host in hosts}}, f)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOTLOCK_REGISTRY")}
    env["HOME"] = os.path.join(scratch, "home")
    env["REGISTRY_AUTH_FILE"] = auth_file
    env.pop("XDG_RUNTIME_DIR", None)
    return env


class Pushed:
    """One push: its exit, summary and stderr, and the registry's upload count for the
    repository just before and just after it."""

    def __init__(self, result, before, after):
        self.rc, self.out, self.err = result
        self.before, self.after = before, after

    @property
    def blobs(self):
        return len(self.out["blobs"])


def counted_push(registry, repository, *args, **kwargs):
    before = len(registry.uploads(repository))
    result = push(*args, **kwargs)
    return Pushed(result, before, len(registry.uploads(repository)))


@pytest.fixture(scope="module", autouse=True)
def tools():
    missing = [t for t in ("skopeo", "docker-registry", "htpasswd") if not shutil.which(t)]
    assert not missing, f"{missing} not installed (make test installs them)"


@pytest.fixture(scope="module")
def images(rootlock, scratch):
    """{"1.0.0": (a.oci.tar, manifest digest), "1.2.0": (b.oci, manifest digest)}."""
    graph = package_graph.build_graph(os.path.join(scratch, "graph"))
    base = base_tarball()
    cache = os.path.join(scratch, "cache")
    out = {}
    with index_server.IndexServer(graph, style="pypi") as server:
        for version, output in (("1.0.0", "a.oci.tar"), ("1.2.0", "b.oci")):
            recipe = write_recipe(os.path.join(scratch, f"push-{version}.toml"),
                                  server.simple_url, base, ["app-cli", f"web-router=={version}"])
            lock = os.path.join(scratch, f"pylock.push-{version}.toml")
            proc = run_rootlock(rootlock, "lock", recipe, "-o", lock, "--cache-dir", cache)
            assert proc.returncode == 0, f"lock {version}: {proc.stderr}"
            image = os.path.join(scratch, output)
            proc = run_rootlock(rootlock, "build", lock, "-o", image, "--cache-dir", cache,
                                "--json")
            assert proc.returncode == 0, f"build {version}: {proc.stderr}"
            out[version] = (image, json.loads(proc.stdout)["manifest"])
    return out


@pytest.fixture(scope="module")
def image_a(images):
    return images["1.0.0"]


@pytest.fixture(scope="module")
def image_b(images):
    return images["1.2.0"]


# The htpasswd registry and the pushes later cases build on.

@pytest.fixture(scope="module")
def registry(scratch):
    with Registry(os.path.join(scratch, "registry"), {USER: PASSWORD}) as reg:
        yield reg


@pytest.fixture(scope="module")
def env(scratch, registry):
    return auth_env(scratch, "auth.json", [registry.host])


@pytest.fixture(scope="module")
def push_cache(scratch):
    return os.path.join(scratch, "push-cache")


@pytest.fixture(scope="module")
def first_push(rootlock, registry, env, push_cache, image_a):
    """The archive pushed as demo:v1."""
    pushed = counted_push(registry, "demo", rootlock, image_a[0], f"{registry.host}/demo:v1",
                          push_cache, env)
    assert pushed.rc == 0 and pushed.out, f"push of demo:v1: exit {pushed.rc}: {pushed.err}"
    out = pushed.out
    print(f"(a) {pushed.blobs} blobs, {out['bytes_uploaded']} bytes, {out['requests']} requests")
    return pushed


def test_a_first_push_uploads_every_blob(first_push, image_a):
    out = first_push.out
    assert out["digest"] == image_a[1] and out["uploaded"] == first_push.blobs and \
        out["skipped"] == 0, \
        f"expected digest {image_a[1]}, all {first_push.blobs} blobs uploaded, none skipped: " \
        f"{out}"


def test_a_registry_log_counts_the_same_uploads(first_push):
    completed = first_push.after - first_push.before
    assert completed == first_push.blobs, \
        f"the registry completed {completed} uploads, rootlock says {first_push.blobs}"


def test_a_skopeo_sees_the_manifest_digest(registry, first_push, image_a):
    remote, err = remote_digest(f"{registry.host}/demo:v1")
    assert remote == image_a[1], f"skopeo sees {remote}, not {image_a[1]}: {err}"


def test_a_sbom_artifact_pushed_under_the_referrers_tag(first_push, image_a):
    # Pushed by digest, listed under the referrers fallback tag (distribution 2.8 has no
    # referrers API).
    out = first_push.out
    tag = "sha256-" + image_a[1][7:]
    assert len(out["artifacts"]) == 1 and out.get("referrers_tag") == tag, \
        f"expected one artifact under {tag}: artifacts {out['artifacts']}, " \
        f"tag {out.get('referrers_tag')}"


def test_a_referrers_tag_lists_the_cyclonedx_artifact(registry, first_push, image_a):
    tag = "sha256-" + image_a[1][7:]
    proc = run(["skopeo", "inspect", "--raw", "--tls-verify=false", "--creds",
                f"{USER}:{PASSWORD}", f"docker://{registry.host}/demo:{tag}"])
    referrers = json.loads(proc.stdout) if proc.returncode == 0 else {}
    listed = referrers.get("manifests", [])
    assert [m.get("digest") for m in listed] == first_push.out["artifacts"] and \
        listed[0].get("artifactType") == "application/vnd.cyclonedx+json", \
        f"the referrers index should list {first_push.out['artifacts']} as CycloneDX: " \
        f"{referrers} {proc.stderr}"


# (b) again: nothing to send.

@pytest.fixture(scope="module")
def second_push(rootlock, registry, env, push_cache, image_a, first_push):
    return counted_push(registry, "demo", rootlock, image_a[0], f"{registry.host}/demo:v1",
                        push_cache, env)


def test_b_second_push_skips_every_blob(first_push, second_push):
    out = second_push.out
    assert second_push.rc == 0 and out and out["uploaded"] == 0 and \
        out["skipped"] == first_push.blobs, \
        f"second push: expected 0 uploaded, {first_push.blobs} skipped; exit {second_push.rc}: " \
        f"{second_push.err} {out}"


def test_b_registry_got_no_upload(second_push):
    assert second_push.after == second_push.before, \
        f"the registry completed {second_push.after - second_push.before} uploads"


# (c) one package changed: one layer (and the config, and the SBOM) uploaded.

@pytest.fixture(scope="module")
def v2_push(rootlock, registry, env, push_cache, image_b, first_push):
    """The layout (web-router 1.2.0) pushed as demo:v2, after demo:v1."""
    pushed = counted_push(registry, "demo", rootlock, image_b[0], f"{registry.host}/demo:v2",
                          push_cache, env)
    assert pushed.rc == 0 and pushed.out, f"push of demo:v2: exit {pushed.rc}: {pushed.err}"
    print(f"(c) {pushed.out['uploaded']} blobs uploaded, {pushed.out['skipped']} already there")
    return pushed


def test_c_one_layer_uploaded(v2_push):
    layers = [b for b in v2_push.out["blobs"] if b["outcome"] == "uploaded" and
              "image.layer" in b["media_type"]]
    assert len(layers) == 1, f"expected one uploaded layer: {layers}"


def test_c_registry_count_is_rootlocks(v2_push):
    completed = v2_push.after - v2_push.before
    assert completed == v2_push.out["uploaded"], \
        f"the registry completed {completed} uploads, rootlock says {v2_push.out['uploaded']}"


def test_c_skopeo_sees_the_second_digest(registry, v2_push, image_b):
    remote, err = remote_digest(f"{registry.host}/demo:v2")
    assert remote == image_b[1], f"skopeo sees {remote}, not {image_b[1]}: {err}"


# (d) another repository: everything mounted.

@pytest.fixture(scope="module")
def other_push(rootlock, registry, env, push_cache, image_a, first_push):
    pushed = counted_push(registry, "other", rootlock, image_a[0],
                          f"docker://{registry.host}/other:v1", push_cache, env)
    assert pushed.rc == 0 and pushed.out, f"push of other:v1: exit {pushed.rc}: {pushed.err}"
    return pushed


def test_d_every_blob_mounted_none_uploaded(first_push, other_push):
    out = other_push.out
    assert out["mounted"] == first_push.blobs and out["uploaded"] == 0, \
        f"expected {first_push.blobs} mounted, 0 uploaded: {out}"


def test_d_registry_log_mounts_not_uploads(registry, first_push, other_push):
    uploads, mounts = len(registry.uploads("other")), len(registry.mounts("other"))
    assert uploads == 0 and mounts == first_push.blobs, \
        f"registry: {uploads} uploads, {mounts} mounts; expected 0 and {first_push.blobs}"


def test_d_skopeo_sees_the_first_digest(registry, other_push, image_a):
    remote, err = remote_digest(f"{registry.host}/other:v1")
    assert remote == image_a[1], f"skopeo sees {remote}, not {image_a[1]}: {err}"


# (h) check and diff read the registry's images.

@pytest.fixture(scope="module")
def pull_env(scratch, env):
    return dict(env, ROOTLOCK_CACHE_DIR=os.path.join(scratch, "pull-cache"))


def blob_gets(registry):
    return len([1 for m, t, s in registry.access_lines()
                if m == "GET" and "/blobs/sha256:" in t and s == 200])


@pytest.fixture(scope="module")
def remote_check(rootlock, registry, pull_env, image_a, first_push):
    """(check of the archive, check of docker://.../demo:v1): the first pulls it into the cache."""
    local = run_rootlock(rootlock, "check", "--root", image_a[0], "--json", env=pull_env)
    before = blob_gets(registry)
    remote = run_rootlock(rootlock, "check", "--insecure", "--root",
                          f"docker://{registry.host}/demo:v1", "--json", env=pull_env)
    print(f"(h) check of the pushed image: {blob_gets(registry) - before} blobs pulled")
    return local, remote


def test_h_check_docker_reports_as_the_archive(remote_check):
    local, remote = remote_check
    assert remote.returncode == local.returncode and remote.stdout, \
        f"check docker://: exit {remote.returncode} (the archive's {local.returncode}): " \
        f"{remote.stderr}"
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    a.pop("root", None)
    b.pop("root", None)
    assert a == b, f"the registry image's report differs from the archive's: {a} / {b}"


def test_h_second_check_downloads_no_blob(rootlock, registry, pull_env, remote_check):
    pulled = blob_gets(registry)
    again = run_rootlock(rootlock, "check", "--insecure", "--root",
                         f"docker://{registry.host}/demo:v1", "--json", env=pull_env)
    assert again.returncode == remote_check[1].returncode and blob_gets(registry) == pulled, \
        f"a second check: exit {again.returncode}, fetched {blob_gets(registry) - pulled} " \
        f"blobs again: {again.stderr}"


def test_h_diff_of_the_two_tags_is_web_router(rootlock, registry, pull_env, first_push,
                                              v2_push):
    proc = run_rootlock(rootlock, "diff", "--insecure", f"docker://{registry.host}/demo:v1",
                        f"docker://{registry.host}/demo:v2", "--json", env=pull_env)
    assert proc.returncode == 1, f"diff: expected exit 1, got {proc.returncode}: {proc.stderr}"
    text = json.dumps(json.loads(proc.stdout))
    assert "web-router" in text and "1.2.0" in text and "app-cli" not in text, \
        f"diff: expected web-router 1.2.0 and nothing of app-cli: {text[:400]}"


# (e) refusals: one line each, nothing uploaded.

def wrong_password(env):
    return dict(env, ROOTLOCK_REGISTRY_USERNAME=USER, ROOTLOCK_REGISTRY_PASSWORD="nope")


def no_auth_file(env):
    return {k: v for k, v in env.items() if k != "REGISTRY_AUTH_FILE"}


REFUSALS = {
    # id: (env, reference under the registry or None for a bare one, extra, exit, message)
    "wrong-password": (wrong_password, "demo:v3", ["--insecure"], 3,
                       "refused the credentials from ROOTLOCK_REGISTRY_USERNAME"),
    "no-credentials": (no_auth_file, "demo:v3", ["--insecure"], 3, "none were found"),
    "https-to-plain-http": (dict, "demo:v3", ["--retries", "0"], 3, ""),
    "no-registry-host": (dict, None, [], 2, "name the registry first"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_e_refused_push_one_line_nothing_uploaded(rootlock, registry, env, image_a, case):
    make_env, reference, extra, code, message = REFUSALS[case]
    reference = f"{registry.host}/{reference}" if reference else "demo:v3"
    before = len(registry.uploads("demo"))
    proc = run_rootlock(rootlock, "push", image_a[0], reference, *extra, env=make_env(env))
    assert proc.returncode == code and one_line(proc.stderr) and message in proc.stderr, \
        f"{case}: expected exit {code} and one line with {message!r}, got exit " \
        f"{proc.returncode}: {proc.stderr!r}"
    uploaded = len(registry.uploads("demo")) - before
    assert uploaded == 0, f"{case}: a refused push uploaded {uploaded} blobs"


# (f) a connection dropped mid-upload is retried.

@pytest.fixture(scope="module")
def flaky_push(rootlock, scratch, registry, image_a):
    """(blobs the proxy dropped, exit, summary, stderr) of a push to flaky:v1 via the proxy."""
    proxy = DroppingProxy(registry.port)
    try:
        flaky_env = auth_env(scratch, "auth-flaky.json", [registry.host, proxy.host])
        rc, out, err = push(rootlock, image_a[0], f"{proxy.host}/flaky:v1",
                            os.path.join(scratch, "flaky-cache"), flaky_env,
                            ["--chunk-size", "16"])
        starts = [t for m, t, s in registry.access_lines()
                  if m == "POST" and t.startswith("/v2/flaky/blobs/uploads/")]
        print(f"(f) {proxy.dropped} connection dropped; {len(starts)} upload sessions for "
              f"{len((out or {}).get('blobs', []))} blobs")
        return proxy.dropped, rc, out, err
    finally:
        proxy.close()


def test_f_the_proxy_dropped_one_upload(flaky_push):
    assert flaky_push[0] == 1, f"the proxy should drop one upload, dropped {flaky_push[0]}"


def test_f_push_retried_every_blob_uploaded(flaky_push):
    _, rc, out, err = flaky_push
    assert rc == 0 and out and out["uploaded"] == len(out["blobs"]), \
        f"push through the proxy: expected exit 0 and every blob uploaded, got exit {rc}: " \
        f"{err} {out}"


def test_f_skopeo_sees_the_digest(registry, flaky_push, image_a):
    remote, err = remote_digest(f"{registry.host}/flaky:v1")
    assert remote == image_a[1], f"skopeo sees {remote}, not {image_a[1]}: {err}"


# (g) token auth.

@pytest.fixture(scope="module")
def token_registry(scratch):
    with Registry(os.path.join(scratch, "token-registry"), {USER: PASSWORD},
                  token_auth=True) as reg:
        yield reg


@pytest.fixture(scope="module")
def token_env(scratch, token_registry):
    return auth_env(scratch, "auth-token.json", [token_registry.host])


def token_push(rootlock, registry, image, reference, cache, env, extra=()):
    """(exit, summary, stderr, the token requests made during the push)."""
    before = len(registry.token_service.requests)
    rc, out, err = push(rootlock, image, f"{registry.host}/{reference}", cache, env, extra)
    return rc, out, err, registry.token_service.requests[before:]


@pytest.fixture(scope="module")
def token_demo(rootlock, scratch, token_registry, token_env, image_a):
    result = token_push(rootlock, token_registry, image_a[0], "demo:v1",
                        os.path.join(scratch, "token-cache"), token_env)
    assert result[0] == 0 and result[1], f"push with token auth: exit {result[0]}: {result[2]}"
    print(f"(g) token auth: {len(result[3])} token requests")
    return result


def test_g_push_with_a_token_lands_the_digest(token_registry, token_demo, image_a):
    remote, err = remote_digest(f"{token_registry.host}/demo:v1")
    assert remote == image_a[1], f"skopeo sees {remote}, not {image_a[1]}: {err}"


def test_g_token_asked_for_pull_push_of_the_repository(token_demo):
    requests = token_demo[3]
    assert any("scope=repository%3Ademo%3Apull%2Cpush" in r for r in requests), \
        f"no token request for repository:demo:pull,push: {requests}"


@pytest.fixture(scope="module")
def token_copy(rootlock, scratch, token_registry, token_env, image_a, token_demo):
    """image_a pushed as copy:v1 with --mount-from demo, after demo:v1."""
    result = token_push(rootlock, token_registry, image_a[0], "copy:v1",
                        os.path.join(scratch, "token-cache-2"), token_env,
                        ["--mount-from", "demo"])
    assert result[0] == 0 and result[1], f"mount push: exit {result[0]}: {result[2]}"
    return result


def test_g_mount_from_mounts_every_blob(token_registry, token_demo, token_copy):
    blobs = len(token_demo[1]["blobs"])
    mounted, logged = token_copy[1]["mounted"], len(token_registry.mounts("copy"))
    assert mounted == blobs and logged == blobs, \
        f"expected {blobs} blobs mounted: rootlock says {mounted}, the registry logged {logged}"


def test_g_mount_from_asks_for_both_scopes(token_copy):
    requests = token_copy[3]
    assert any("scope=repository%3Ademo%3Apull" in r and "repository%3Acopy%3Apull%2Cpush" in r
               for r in requests), f"no token for both scopes: {requests}"


def test_g_wrong_password_refused_by_the_token_service(rootlock, token_registry, token_env,
                                                       image_a):
    proc = run_rootlock(rootlock, "push", image_a[0], f"{token_registry.host}/demo:v2",
                        "--insecure", env=wrong_password(token_env))
    assert proc.returncode == 3 and one_line(proc.stderr) and \
        "token service refused the credentials" in proc.stderr, \
        f"wrong password: expected exit 3 and one line 'token service refused the " \
        f"credentials', got exit {proc.returncode}: {proc.stderr!r}"


# (j) a push killed with kill -9 at points spread over it, then a normal one: the tag lands the
# image's digest and nothing of the dead process is left in the cache.

@pytest.mark.parametrize("after", [0.05, 0.2, 0.5, 1.0])
def test_j_a_push_killed_anywhere_then_a_clean_one(rootlock, scratch, registry, env, image_a,
                                                   after):
    cache = os.path.join(scratch, f"kill-cache-{after}")
    reference = f"{registry.host}/killed:v{int(after * 100)}"
    child = subprocess.Popen([rootlock, "push", image_a[0], reference, "--insecure",
                              "--cache-dir", cache, "--chunk-size", "1"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        child.wait(timeout=after)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    rc, out, err = push(rootlock, image_a[0], reference, cache, env)
    assert rc == 0 and out and out["digest"] == image_a[1], f"exit {rc}: {err} {out}"
    remote, err = remote_digest(reference)
    assert remote == image_a[1], f"skopeo sees {remote}, not {image_a[1]}: {err}"
    left = [os.path.join(d, f) for d, _, files in os.walk(cache) for f in files
            if f"-{child.pid}" in f]
    assert not left, left


# (k) a pull whose blob download is cut mid-body resumes, and the check reads the same image.

def test_k_a_pull_cut_mid_blob_is_fetched_again(rootlock, scratch, registry, env, first_push,
                                                remote_check):
    proxy = DroppingProxy(registry.port, pattern=rb"^GET /v2/[^ ]*/blobs/sha256:", after=4096,
                          response=True)
    try:
        cut_env = dict(auth_env(scratch, "auth-cut.json", [registry.host, proxy.host]),
                       ROOTLOCK_CACHE_DIR=os.path.join(scratch, "cut-pull-cache"))
        proc = run_rootlock(rootlock, "check", "--insecure", "--root",
                            f"docker://{proxy.host}/demo:v1", "--json", env=cut_env)
    finally:
        proxy.close()
    assert proxy.dropped == 1, "the proxy should cut one blob download"
    local = remote_check[0]
    assert proc.returncode == local.returncode and proc.stdout, \
        f"check through the cutting proxy: exit {proc.returncode}: {proc.stderr}"
    a, b = json.loads(local.stdout), json.loads(proc.stdout)
    a.pop("root", None)
    b.pop("root", None)
    assert a == b, "the image read after the cut is the one pushed"
