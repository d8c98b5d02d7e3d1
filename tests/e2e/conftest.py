"""pytest's view of the end-to-end tests: the binary under test and the shared session fixtures.

Run one file, one case or all of them:

    /usr/bin/python3 -m pytest tests/e2e/test_why.py --rootlock build/rootlock
    /usr/bin/python3 -m pytest tests/e2e -k "why and unknown"

ctest runs each file as a test of its own (two at a time), so a session here is one file under
ctest and every file when pytest is run over the folder. What is expensive to make (the Debian
root, archives, images) is cached under /var/cache/rootlock-test by the fixture modules, so a
session fixture only pays for it the first time on a machine.
"""
import os
import shutil
import sys
import tempfile
import warnings

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(TESTS)
# `from fixtures import ...` in every test file.
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)


def pytest_addoption(parser):
    parser.addoption("--rootlock", default=os.environ.get("ROOTLOCK_BIN",
                                                          os.path.join(REPO, "build", "rootlock")),
                     help="the rootlock executable under test (default: build/rootlock)")


@pytest.fixture(scope="session")
def rootlock(pytestconfig):
    """The absolute path of the rootlock executable under test."""
    path = os.path.abspath(pytestconfig.getoption("--rootlock"))
    if not os.access(path, os.X_OK):
        pytest.exit(f"no rootlock executable at {path} (build it, or pass --rootlock PATH)", 2)
    return path


@pytest.fixture(scope="session", autouse=True)
def _needs_root():
    # chroot, mmdebstrap, mounts and LXC all need it; saying so once beats 200 odd failures.
    if os.geteuid() != 0:
        pytest.exit("the end-to-end tests run as root (chroot, mmdebstrap, LXC)", 2)


@pytest.fixture(scope="module")
def scratch():
    """A scratch folder for one test module, removed afterwards (kept with ROOTLOCK_KEEP=1).

    Not pytest's tmp_path: roots made here are chrooted into and served over HTTP, and a short
    path under /tmp keeps the messages readable.
    """
    path = tempfile.mkdtemp(prefix="rootlock-e2e-")
    yield path
    if os.environ.get("ROOTLOCK_KEEP") == "1":
        print(f"kept {path}")
    else:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def fixture_index(scratch):
    """The generated fixture index (fixtures/package_graph.py) served pypi-style on 127.0.0.1 for
    one test module: a lock or a build with a fresh cache fetches from it."""
    from fixtures import index_server, package_graph
    graph = package_graph.build_graph(os.path.join(scratch, "graph"))
    with index_server.IndexServer(graph, style="pypi") as srv:
        yield srv


@pytest.fixture(scope="session")
def debian_root():
    """The cached Debian 12 root (read-only: take a copy with debian_root.copy_root)."""
    from fixtures import debian_root as module
    return module.debian_root()


class KnownGap(UserWarning):
    """rootlock's model knowingly differs from the real loader, outside a case's aim."""


@pytest.fixture
def gap():
    """gap(cond, what): a known difference is a warning, a failure with ROOTLOCK_GAPS_FAIL=1."""
    def record(cond, what):
        if not cond:
            if os.environ.get("ROOTLOCK_GAPS_FAIL") == "1":
                pytest.fail("known gap: " + what)
            warnings.warn(KnownGap(what))
        return cond
    return record
