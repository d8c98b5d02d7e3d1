"""End-to-end: `rootlock freeze` names the environment's own Python, not the root's.

The root is this machine's own / (its /usr/bin/python3.N, whose version dpkg records: 3.11.2 on
Debian 12). Beside it, in a temporary directory, a prefix laid out as pyenv's and python.org's
`make install` lay one out: bin/python3.N (a copy of the root's real ELF interpreter, so its own
embedded strings still say the root's version), bin/python3 -> python3.N, include/python3.N/
patchlevel.h claiming another micro version (CPython's own text), and lib/python3.N/site-packages
with two distributions that real pip installs from wheels built here (pip_like when there is no
pip). Then, each `freeze --no-debian` (the root's dpkg files are not what is tested):
  a. the prefix: exit 0, `python-full` is the header's version, and stderr has the one note
     "the environment's Python X (…/patchlevel.h) is not the root's /usr/bin/python3.N Y";
  b. the same prefix without its headers, as a conda prefix with a conda-meta record: its version;
  c. neither: `python-full` is empty (the root's would be wrong), with a note that says so;
  d. a venv made by the root's own `python3 -m venv`: the root's version, and no note.
"""
import os
import re
import shutil
import sys
import tomllib
from collections import namedtuple

import pytest

from fixtures import pip_like, wheel_builder
from fixtures.cli import run

PATCHLEVEL = """\
/* Python version identification scheme.

   When the major/minor version number changes, update them here.
*/
#define PY_RELEASE_LEVEL_ALPHA  0xA
#define PY_RELEASE_LEVEL_FINAL  0xF     /* Serial should be 0 here */

/* Version parsed out into numeric values */
/*--start constants--*/
#define PY_MAJOR_VERSION        3
#define PY_MINOR_VERSION        {minor}
#define PY_MICRO_VERSION        {micro}
#define PY_RELEASE_LEVEL        PY_RELEASE_LEVEL_FINAL
#define PY_RELEASE_SERIAL       0

/* Version as a string */
#define PY_VERSION              "3.{minor}.{micro}"
/*--end constants--*/
"""


Wheel = namedtuple("Wheel", "path name version files")


def root_python():
    """The root's interpreter (/usr/bin/python3.N) and the version dpkg records for it."""
    interpreter = os.path.realpath("/usr/bin/python3")
    minor = os.path.basename(interpreter)[len("python"):]
    proc = run(["dpkg-query", "-W", "-f", "${Version}", "python" + minor], timeout=300)
    full = re.match(r"^(?:\d+:)?(\d+\.\d+\.\d+)", proc.stdout) if proc.returncode == 0 else None
    return interpreter, minor, (full.group(1) if full else "")


def install(site_packages, wheels):
    """Real pip when this Python has it; else pip_like (the same layout, checked against pip)."""
    has_pip = run([sys.executable, "-m", "pip", "--version"], timeout=300).returncode == 0
    if has_pip:
        proc = run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                    "--no-compile", "--disable-pip-version-check", "--target", site_packages,
                    *[w.path for w in wheels]], timeout=300)
        if proc.returncode == 0:
            return "pip"
        print(f"pip failed, using pip_like: {proc.stderr.strip()[:300]}")
    for w in wheels:
        pip_like.install(site_packages, pip_like.simple_dist(w.name, w.version, dict(w.files)))
    return "pip_like"


def make_prefix(work, interpreter, minor, wheels):
    prefix = os.path.join(work, "prefix")
    os.makedirs(os.path.join(prefix, "bin"))
    shutil.copy2(interpreter, os.path.join(prefix, "bin", "python" + minor))
    os.symlink("python" + minor, os.path.join(prefix, "bin", "python3"))
    site = os.path.join(prefix, "lib", "python" + minor, "site-packages")
    os.makedirs(site)
    return prefix, site, install(site, wheels)


def freeze(rootlock, prefix, out):
    proc = run([rootlock, "freeze", prefix, "--no-debian", "-o", out], timeout=300)
    target = {}
    if proc.returncode == 0:
        with open(out, "rb") as f:
            target = tomllib.load(f)["tool"]["rootlock"]["target"]
    notes = [ln for ln in proc.stderr.splitlines() if ln.startswith("note:")]
    return proc, target, notes


@pytest.fixture(scope="module")
def python():
    """(interpreter, minor, the root's full version, the prefix's own full version)."""
    interpreter, minor, root_full = root_python()
    if not root_full:
        pytest.skip(f"dpkg names no version for {interpreter}")
    micro = int(root_full.split(".")[2])
    own_full = f"3.{minor.split('.')[1]}.{micro + 5}"  # any other release of the same minor
    return interpreter, minor, root_full, own_full


@pytest.fixture(scope="module")
def installed_prefix(scratch, python):
    """The prefix with its two distributions installed; each case takes a copy of it."""
    interpreter, minor, root_full, own_full = python
    wheels_dir = os.path.join(scratch, "wheels")
    os.makedirs(wheels_dir)
    specs = [wheel_builder.WheelSpec("six", "1.17.0", {"six.py": b"__version__ = '1.17.0'\n"}),
             wheel_builder.WheelSpec("idna", "3.10", {"idna/__init__.py": b"",
                                                      "idna/core.py": b"def encode(): pass\n"})]
    wheels = [Wheel(wheel_builder.build_wheel(s, wheels_dir).path, s.name, s.version,
                    s.files) for s in specs]
    prefix, _, installer = make_prefix(scratch, interpreter, minor, wheels)
    print(f"root: {interpreter} {root_full}; prefix {prefix} claims {own_full} "
          f"(installed by {installer})")
    return prefix


@pytest.fixture
def prefix(installed_prefix, tmp_path):
    """A copy of the installed prefix for one case to add to."""
    copy = str(tmp_path / "prefix")
    shutil.copytree(installed_prefix, copy, symlinks=True)
    return copy


def test_a_prefix_headers_give_its_own_version_and_a_note(rootlock, python, prefix, tmp_path):
    interpreter, minor, root_full, own_full = python
    header_dir = os.path.join(prefix, "include", "python" + minor)
    os.makedirs(header_dir)
    with open(os.path.join(header_dir, "patchlevel.h"), "w") as f:
        f.write(PATCHLEVEL.format(minor=minor.split(".")[1], micro=own_full.split(".")[2]))
    proc, target, notes = freeze(rootlock, prefix, str(tmp_path / "a.toml"))
    expected = (f"note: the environment's Python {own_full} ({header_dir}/patchlevel.h) is "
                f"not the root's {interpreter} {root_full}")
    assert proc.returncode == 0 and target.get("python-full") == own_full and \
        target.get("python") == minor and expected in notes and \
        "froze 2 distributions" in proc.stderr, \
        f"exit {proc.returncode}: {target} {proc.stderr}"
    print(f"(a) python-full {target.get('python-full')!r}; {notes}")


def test_b_conda_meta_record_gives_its_version(rootlock, python, prefix, tmp_path):
    own_full = python[3]
    # No headers, a conda-meta record.
    os.makedirs(os.path.join(prefix, "conda-meta"))
    record = f"python-{own_full}-h955ad1f_0.json"
    for name in ("python-dateutil-2.9.0-pyhd8ed1ab_0.json", record):
        with open(os.path.join(prefix, "conda-meta", name), "w") as f:
            f.write("{}\n")
    proc, target, notes = freeze(rootlock, prefix, str(tmp_path / "b.toml"))
    assert proc.returncode == 0 and target.get("python-full") == own_full and \
        any(record in n for n in notes), f"exit {proc.returncode}: {target} {proc.stderr}"
    print(f"(b) python-full {target.get('python-full')!r} from conda-meta")


def test_c_nothing_names_the_version_empty_never_the_roots(rootlock, prefix, tmp_path):
    proc, target, notes = freeze(rootlock, prefix, str(tmp_path / "c.toml"))
    assert proc.returncode == 0 and target.get("python-full") == "" and \
        any("names no full version" in n for n in notes), \
        f"exit {proc.returncode}: {target} {proc.stderr}"
    print(f"(c) python-full {target.get('python-full')!r}; {notes}")


def test_d_venv_of_the_roots_python_its_version_no_note(rootlock, python, tmp_path):
    interpreter, _, root_full, _ = python
    venv = str(tmp_path / "venv")
    made = run([interpreter, "-m", "venv", "--without-pip", venv], timeout=300)
    if made.returncode != 0:
        pytest.skip(f"{interpreter} -m venv failed: {made.stderr.strip()[:200]}")
    proc, target, notes = freeze(rootlock, venv, str(tmp_path / "d.toml"))
    assert proc.returncode == 0 and target.get("python-full") == root_full and \
        not any("is not the root's" in n or "full version" in n for n in notes), \
        f"exit {proc.returncode}: {target} {proc.stderr}"
    print(f"(d) venv of the root's Python: python-full {target.get('python-full')!r}")
