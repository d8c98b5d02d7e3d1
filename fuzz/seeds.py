#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets: OUT/corpus/<target>/ for every fuzz/fuzz_*.cpp.

Seeds are made while this runs, never committed: real ELF objects compiled with gcc, real
ld.so.cache files (this machine's and one ldconfig writes for the compiled objects), real wheels
from tests/fixtures/wheel_builder.py, PEP 503 and PEP 691 pages served by
tests/fixtures/index_server.py on 127.0.0.1, this machine's dpkg status, md5sums, Packages and
InRelease files, the recipes/ and lockfiles/ texts, tar files in every format Python's tarfile
writes, and hand-written edge cases for the small grammars. A source that this machine lacks is
skipped with a note; every target gets at least one seed.

usage: seeds.py OUT_DIR
"""
import glob
import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests"))

from fixtures import index_server, package_graph, wheel_builder  # noqa: E402

# Text seeds are cut to this: run.py's -max_len for text targets.
TEXT_MAX = 16384


class Corpus:
    def __init__(self, out):
        self.out = out
        self.counts = {}

    def add(self, target, data):
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        folder = os.path.join(self.out, "corpus", target)
        os.makedirs(folder, exist_ok=True)
        name = hashlib.sha1(data).hexdigest()
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        self.counts[target] = self.counts.get(target, 0) + 1


def note(text):
    print(f"seeds.py: {text}", file=sys.stderr)


def run(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, **kw)


# -- ELF ------------------------------------------------------------------------------------

BASE_C = "int base_one(void) { return 1; }\nint base_two(void) { return 2; }\nint base_data = 3;\n"
BASE_MAP = "BASE_1.0 { global: base_one; local: *; };\nBASE_2.0 { global: base_two; base_data; } BASE_1.0;\n"
USER_C = ("extern int base_one(void); extern int base_two(void); extern int base_data;\n"
          "int user(void) { return base_one() + base_two() + base_data; }\n"
          "__thread int user_tls; int user_weak(void) __attribute__((weak));\n")
MAIN_C = "extern int user(void);\nint main(void) { return user(); }\n"


def elf_objects(work):
    """(name, bytes) of small real objects: a versioned library, one needing it with
    RUNPATH and BIND_NOW, an executable with PT_INTERP and RPATH, stripped and single-segment
    variants, a relocatable object."""
    def src(name, text):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    cc = ["gcc", "-Os", "-g0", "-fPIC"]
    base_map = src("base.map", BASE_MAP)
    libbase = os.path.join(work, "libbase.so.1")
    run(cc + ["-shared", "-Wl,-soname,libbase.so.1", f"-Wl,--version-script={base_map}",
              src("base.c", BASE_C), "-o", libbase])
    os.symlink("libbase.so.1", os.path.join(work, "libbase.so"))
    libuser = os.path.join(work, "libuser.so")
    run(cc + ["-shared", "-Wl,-soname,libuser.so", "-Wl,--enable-new-dtags",
              "-Wl,-rpath,$ORIGIN/../lib:/opt/x", "-Wl,-z,now", src("user.c", USER_C),
              f"-L{work}", "-lbase", "-o", libuser])
    exe = os.path.join(work, "main")
    run(cc + ["-Wl,--disable-new-dtags", f"-Wl,-rpath,{work}", src("main.c", MAIN_C),
              f"-L{work}", "-luser", "-lbase", "-o", exe])
    compact = os.path.join(work, "libcompact.so")
    run(cc + ["-shared", "-Wl,-z,noseparate-code", "-Wl,--hash-style=both",
              "-Wl,-soname,libcompact.so.2", src("compact.c", BASE_C), "-o", compact])
    obj = os.path.join(work, "base.o")
    run(cc + ["-c", os.path.join(work, "base.c"), "-o", obj])
    out = []
    for path in (libbase, libuser, exe, compact, obj):
        with open(path, "rb") as f:
            out.append((os.path.basename(path), f.read()))
        stripped = path + ".stripped"
        run(["strip", "--strip-all", path, "-o", stripped])
        with open(stripped, "rb") as f:
            out.append((os.path.basename(stripped), f.read()))
    try:  # a 32-bit object when the multilib toolchain is there
        lib32 = os.path.join(work, "lib32.so")
        run(["gcc", "-m32", "-Os", "-shared", "-fPIC", "-Wl,-soname,lib32.so",
             os.path.join(work, "base.c"), "-o", lib32])
        with open(lib32, "rb") as f:
            out.append(("lib32.so", f.read()))
    except (subprocess.CalledProcessError, OSError):
        note("no gcc -m32: no ELF32 seed")
    return out


def add_elf(corpus, work):
    objects = elf_objects(work)
    for _, data in objects:
        corpus.add("elf", data)
        corpus.add("elf_stream", data)
    # The ld.so.cache ldconfig writes for the directory holding them, plus this machine's.
    conf = os.path.join(work, "ld.so.conf")
    with open(conf, "w") as f:
        f.write(work + "\n")
    cache = os.path.join(work, "ld.so.cache")
    try:
        run(["ldconfig", "-X", "-f", conf, "-C", cache])
        with open(cache, "rb") as f:
            corpus.add("ld_so_cache", f.read())
    except (subprocess.CalledProcessError, OSError) as e:
        note(f"ldconfig -C failed ({e}): no small ld.so.cache seed")
    if os.path.isfile("/etc/ld.so.cache"):
        with open("/etc/ld.so.cache", "rb") as f:
            corpus.add("ld_so_cache", f.read())
    return objects


# -- ld.so.conf -----------------------------------------------------------------------------

SEPARATOR = "\n----\n"


def add_ld_so_conf(corpus):
    parts = []
    if os.path.isfile("/etc/ld.so.conf"):
        with open("/etc/ld.so.conf") as f:
            parts.append(f.read())
        for path in sorted(glob.glob("/etc/ld.so.conf.d/*.conf")):
            with open(path) as f:
                parts.append(f.read())
        corpus.add("ld_so_conf", SEPARATOR.join(parts))
    corpus.add("ld_so_conf", SEPARATOR.join([
        "include /etc/ld.so.conf.d/*.conf\n/usr/local/lib\n",
        "# multiarch\n/usr/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu=ELF\n",
        "include 2.conf\nhwcap 0 nosegneg\nrelative/dir\n/opt/cuda/lib64/  \n"]))
    corpus.add("ld_so_conf", "include /etc/ld.so.conf\n")  # a cycle
    corpus.add("ld_so_conf", "include /etc/ld.so.conf.d/[0-9]*.conf /etc/ld.so.conf.d/?.conf"
               + SEPARATOR + "/a\\*b\ninclude\n" + SEPARATOR + "include /lib/../etc/*.conf\n")


# -- wheels, RECORD, METADATA, entry points, file names -------------------------------------

def wheel_specs(objects):
    pure = package_graph.pure
    so = dict(objects)["libuser.so"]
    return [
        pure("demo-pkg", "1.2.0", requires=("numpy>=1.26; python_version >= '3.10'",
                                            "requests[socks] (>=2.31)"),
             requires_python=">=3.9", extras=("gpu",), summary="a demo"),
        wheel_builder.WheelSpec(
            name="Torch_Like", version="2.8.0+cu128",
            files={"torch_like/__init__.py": b"", "torch_like/lib/libuser.so": so},
            tags=("cp312-cp312-manylinux_2_28_x86_64", "cp312-cp312-manylinux2014_x86_64"),
            requires_dist=('nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux" and '
                           'platform_machine == "x86_64"', "triton==3.4.0; extra == 'triton'"),
            entry_points={"console_scripts": {"torchrun": "torch_like.run:main",
                                              "tl-gui": "torch_like.gui:App.start [gui]"},
                          "gui_scripts": {"tl-win": "torch_like.win:main"}},
            scripts={"tl-shell": b"#!python\nprint('x')\n"}, data={"share/x.txt": b"x\n"},
            executable=frozenset({"torch_like/lib/libuser.so"}), root_is_purelib=False,
            dist_info="torch_like-2.8.0+cu128.dist-info", metadata_version="2.4"),
        pure("ZZ.odd_name", "0.1rc2", tags=("py2.py3-none-any",)),
    ]


def add_wheels(corpus, objects):
    for spec in wheel_specs(objects):
        data = wheel_builder.wheel_bytes(spec)
        corpus.add("zip_index", data)
        corpus.add("wheel_filename", wheel_builder.wheel_filename(spec))
        corpus.add("metadata", wheel_builder.metadata_text(spec))
        if spec.entry_points:
            corpus.add("entry_points", wheel_builder.entry_points_text(spec))
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            record = [n for n in zf.namelist() if n.endswith(".dist-info/RECORD")][0]
            corpus.add("record", zf.read(record))
        # The same members stored, and with ZIP64 records forced.
        for zip64 in (False, True):
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", allowZip64=True) as zf:
                for path, content in wheel_builder.members(spec):
                    info = zipfile.ZipInfo(path, date_time=wheel_builder.ZIP_EPOCH)
                    info.external_attr = 0o100644 << 16
                    info.create_system = 3
                    with zf.open(info, "w", force_zip64=zip64) as member:
                        member.write(content)
            corpus.add("zip_index", buf.getvalue())
    # Debian's own dist-info directories (dh-python writes hex RECORD digests).
    for info in sorted(glob.glob("/usr/lib/python3/dist-packages/*.dist-info"))[:8]:
        for name, target in (("METADATA", "metadata"), ("RECORD", "record"),
                             ("entry_points.txt", "entry_points")):
            path = os.path.join(info, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    corpus.add(target, f.read()[:TEXT_MAX])
    corpus.add("record", '"quoted,path",sha256=' + "0" * 64 + ',3\r\nx,"",\n"multi\nline",,\n')
    corpus.add("entry_points", "[console_scripts]\n# c\n; c\na = b.c:d.e [x]\n[other]\nz=y\n")
    for name in ("torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "pkg-1.0-1build-py2.py3-none-linux_x86_64.macosx_11_0_arm64.whl",
                 "a-1-py3-none-any.whl", "bad%zz-1-py3-none-any.whl"):
        corpus.add("wheel_filename", name)


def add_pyvenv(corpus, work):
    venv = os.path.join(work, "venv")
    try:
        run([sys.executable, "-m", "venv", "--without-pip", venv])
        with open(os.path.join(venv, "pyvenv.cfg"), "rb") as f:
            corpus.add("pyvenv_cfg", f.read())
    except (subprocess.CalledProcessError, OSError):
        note("python3 -m venv failed: pyvenv.cfg seeds are hand-written only")
    corpus.add("pyvenv_cfg", "home = /usr/bin\nINCLUDE-system-site-packages = TRUE\n"
               "version_info = 3.12.3.final.0\nvirtualenv = 20.25\nno equals sign\n= empty key\n")


PEP440 = ["2.8.0", "v1!2.0rc1.post2.dev3+cu128.7", "1.0-1", "1.0a", "1.0.POST", "1.0_beta-3",
          "  0.9.9  ", ">=2.8.0,<3", "~=1.4.5", "==1.0.*", "!=2.0.post1.*", "===weird",
          ">=1.0.0a1, <= 2.0+local", "==2.8.0+cu128", "<3.13,>=3.9,!=3.10.*", "1.0.dev456",
          "1.2.3.4.5.6.7.8.9.10", "18446744073709551615"]
PEP508 = ["torch==2.8.0", "requests[security,socks] (>=2.8.1,==2.8.*) ; python_version < '2.7'",
          'name@ https://example.org/a.whl#sha256=00 ; os_name == "posix"',
          "nvidia-cudnn-cu12==9.10.2.21; platform_system == 'Linux' and platform_machine == "
          "'x86_64'", "a; (extra == 'GPU_Support' or implementation_name != \"pypy\") and "
          "'linux' in sys_platform", "b >= 1; platform_release >= '5' and python_full_version "
          "~= '3.12.0'", "python_version > \"3.8\"", "extra == 'test'", "c; ((((os_name=='a'))))"]


def add_small_grammars(corpus):
    for text in PEP440:
        corpus.add("pep440", text)
    for text in PEP508:
        corpus.add("pep508", text)
    urls = [("https://download.pytorch.org/whl/cu128/torch/", "../../files/torch-2.8.0%2Bcu128"
             "-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=" + "ab" * 32),
            ("http://a/b/c/d;p?q", "../../../g"), ("http://a/b/c/d;p?q", "g;x=1/./y#s/../x"),
            ("http://a/b/c/d;p?q", "//g?y#egg=x&SHA512=" + "C" * 128),
            ("file:///simple/", "http:g"), ("https://h", "?q#md5=" + "0" * 32),
            ("https://h/a/", "%2e%2e/b#sha256=short")]
    for base, ref in urls:
        corpus.add("url", f"{base}\n{ref}")


# -- recipes and locks ----------------------------------------------------------------------

def add_texts(corpus):
    for path in sorted(glob.glob(os.path.join(REPO, "recipes", "*.toml"))):
        with open(path, "rb") as f:
            corpus.add("recipe", f.read())
    locks = sorted(glob.glob(os.path.join(REPO, "lockfiles", "*.toml")))
    locks += sorted(glob.glob(os.path.join(REPO, "tests", "**", "pylock*.toml"), recursive=True))
    for path in locks:
        with open(path, "rb") as f:
            corpus.add("pylock", f.read()[:65536])
    if not locks:
        note("no pylock.*.toml in the tree (make demo writes one): hand-written seed only")
    corpus.add("pylock", 'lock-version = "1.0"\ncreated-by = "rootlock"\nrequires-python = '
               '"==3.12.*"\nenvironments = [\'sys_platform == "linux"\']\n\n[[packages]]\n'
               'name = "torch"\nversion = "2.8.0"\n\n[[packages.wheels]]\nname = "torch-2.8.0-'
               'cp312-cp312-manylinux_2_28_x86_64.whl"\nurl = "https://h/torch.whl"\nsize = 1\n'
               'hashes = {sha256 = "' + "0" * 64 + '"}\n')


# -- index pages ----------------------------------------------------------------------------

def add_index_pages(corpus, work, objects):
    files = []
    for rank, spec in enumerate(wheel_specs(objects)):
        built = wheel_builder.build_wheel(spec, work)
        project = package_graph.pip_like.canonical_name(spec.name)
        files.append(package_graph.IndexFile(
            project=project, name=spec.name, version=spec.version, filename=built.filename,
            path=built.path, sha256=built.sha256, size=built.size, metadata=built.metadata,
            requires_python=spec.requires_python or "",
            yanked="broken <build> & \"quoted\"" if rank == 1 else False,
            hash_listed=rank != 2, upload_time=f"2024-01-0{rank + 1}T00:00:00.000000Z"))
    graph = package_graph.Graph(root=work, stacks=(), files=files, rebuilt={})
    accepts = {"json": index_server.JSON_V1, "html": index_server.TEXT_HTML}
    for style in index_server.STYLES:
        with index_server.IndexServer(graph, style=style,
                                      unhashed_metadata={files[0].project}) as server:
            for f in files:
                for kind, accept in accepts.items():
                    request = urllib.request.Request(f"{server.simple_url}{f.project}/",
                                                     headers={"Accept": accept})
                    with urllib.request.urlopen(request, timeout=30) as response:
                        body = response.read()
                        ctype = response.headers.get("Content-Type", "")
                    corpus.add("simple_json" if "json" in ctype else "simple_html", body)
    corpus.add("simple_html", '<html><base href="https://other/x/"><!-- <a href="no"> -->'
               '<A HREF=\'../f/a-1-py3-none-any.whl#sha256=' + "A" * 64 + '\' data-core-metadata='
               'true data-requires-python="&gt;=3.9">a</A><a href="b-1.tar.gz#md5=00">b</a>'
               '<a href=c-1-py3-none-any.whl data-yanked>c</a><a href="')


# -- tar ------------------------------------------------------------------------------------

def add_tars(corpus):
    for fmt in (tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
            def add(name, kind=tarfile.REGTYPE, data=b"", **kw):
                info = tarfile.TarInfo(name)
                info.type = kind
                info.size = len(data)
                info.mtime = 1700000000
                info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
                for key, value in kw.items():
                    setattr(info, key, value)
                tar.addfile(info, io.BytesIO(data) if data else None)
            add("./", tarfile.DIRTYPE)
            add("./usr/lib/", tarfile.DIRTYPE)
            add("./usr/lib/libx.so.1", data=b"\x7fELF" + b"\0" * 60)
            add("./usr/lib/libx.so", tarfile.SYMTYPE, linkname="libx.so.1")
            add("./usr/lib/libx-hard.so.1", tarfile.LNKTYPE, linkname="./usr/lib/libx.so.1")
            add("./dev/null", tarfile.CHRTYPE, devmajor=1, devminor=3)
            add("./run/fifo", tarfile.FIFOTYPE)
            if fmt != tarfile.USTAR_FORMAT:
                add("./usr/share/" + "long-directory-name/" * 8 + "file.txt", data=b"long\n",
                    uid=70000000, gid=2 ** 21 + 1)
            if fmt == tarfile.PAX_FORMAT:
                add("./usr/bin/ping", data=b"#!/bin/sh\n",
                    pax_headers={"SCHILY.xattr.security.capability": "\x01\x00\x00\x02",
                                 "mtime": "1700000000.123456789"})
        corpus.add("tar_index", buf.getvalue())


# -- Debian ---------------------------------------------------------------------------------

def paragraphs(text, limit):
    """The first paragraphs of a deb822 text that fit in `limit` bytes."""
    out, size = [], 0
    for block in text.split("\n\n"):
        if size + len(block) + 2 > limit:
            break
        out.append(block)
        size += len(block) + 2
    return "\n\n".join(out) + "\n"


def add_debian(corpus):
    status = ""
    if os.path.isfile("/var/lib/dpkg/status"):
        with open("/var/lib/dpkg/status", errors="surrogateescape") as f:
            status = f.read()
        for start in (0, len(status) // 3, 2 * len(status) // 3):
            cut = status.find("\n\n", start)
            chunk = paragraphs(status[cut + 2 if start else 0:], TEXT_MAX)
            corpus.add("dpkg_status", chunk)
            corpus.add("deb822", chunk)
    versions = []
    for line in status.splitlines():
        if line.startswith("Version: "):
            versions.append(line[len("Version: "):])
    versions = sorted(set(versions))[:40] + ["1:2.3~rc1+dfsg-4ubuntu0.1", "0~", "1.0-", "a1.0"]
    for a, b in zip(versions, versions[1:] + versions[:1]):
        corpus.add("deb_version", f"{a}\n{b}")
    for path in sorted(glob.glob("/var/lib/dpkg/info/*.md5sums"))[:6]:
        with open(path, "rb") as f:
            corpus.add("md5sums", f.read()[:TEXT_MAX])
    corpus.add("md5sums", "d41d8cd98f00b204e9800998ecf8427e *usr/share/doc/x\n"
               "D41D8CD98F00B204E9800998ECF8427E usr/bin/../etc/y\n")
    # apt sources: the first line picks the syntax (fuzz_apt_sources.cpp).
    corpus.add("apt_sources", "deb822\nTypes: deb deb-src\nURIs: http://deb.debian.org/debian/\n"
               "Suites: bookworm bookworm-updates\nComponents: main contrib\nSigned-By: "
               "/usr/share/keyrings/debian-archive-keyring.gpg\n\nEnabled: no\nTypes: deb\n"
               "URIs: https://r.example/x86_64/\nSuites: /\n")
    corpus.add("apt_sources", "deb822\nTypes: deb\nURIs: https://v.example\nSuites: s\n"
               "Components: main\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n"
               " mDMEZQ==\n -----END PGP PUBLIC KEY BLOCK-----\n")
    corpus.add("apt_sources", "list\n# comment\ndeb [arch=amd64 signed-by=/k.gpg] "
               "http://deb.debian.org/debian bookworm main\ndeb https://flat.example ./\n"
               "deb-src http://x y z\n")
    corpus.add("apt_sources", "armour\n-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: c\n\n"
               "mDMEZQ\n=abcd\n-----END PGP PUBLIC KEY BLOCK-----\n")
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))[:2]:
        with open(path, errors="surrogateescape") as f:
            corpus.add("apt_sources", "deb822\n" + f.read()[:TEXT_MAX])
    # Frames: real zstd frames and gzip members (what a cache file holds), and plain text.
    sample = b"rootlock frame " * 64
    for tool in (["zstd", "-q", "-c", "-3"], ["gzip", "-n", "-c"]):
        try:
            corpus.add("frame_codec", subprocess.run(tool, input=sample, capture_output=True,
                                                     check=True).stdout)
        except (subprocess.CalledProcessError, OSError):
            pass
    corpus.add("frame_codec", sample)
    lists = "/var/lib/apt/lists"
    for path in sorted(glob.glob(f"{lists}/*_Packages*"))[:2]:
        try:
            text = run(["/usr/lib/apt/apt-helper", "cat-file", path]).stdout.decode(
                "utf-8", "surrogateescape")
        except (subprocess.CalledProcessError, OSError):
            continue
        corpus.add("packages_index", paragraphs(text, TEXT_MAX))
        corpus.add("deb822", paragraphs(text, 4096))
    for path in sorted(glob.glob(f"{lists}/*_InRelease")):
        with open(path, errors="surrogateescape") as f:
            signed = f.read()
        body = signed.split("\n\n", 1)[-1].split("-----BEGIN PGP SIGNATURE-----")[0]
        # Keep the header and a few SHA256 lines: the full list is 100+ KiB.
        head, _, tail = body.partition("SHA256:\n")
        sha = "".join(line + "\n" for line in tail.splitlines()[:40]
                      if line.startswith(" "))
        for text in (head + "SHA256:\n" + sha, head):
            corpus.add("release", text[:TEXT_MAX])
            corpus.add("deb822", text[:TEXT_MAX])
    corpus.add("release", "Origin: Debian\nSuite: stable\nCodename: bookworm\nDate: Sat, 09 Nov "
               "2024 10:13:41 UTC\nValid-Until: Sat, 16 Nov 2024 10:13:41 +0000\nArchitectures: "
               "amd64 arm64\nComponents: main\nAcquire-By-Hash: yes\nSHA256:\n " + "a" * 64 +
               " 123 main/binary-amd64/Packages\n " + "b" * 64 + " 0 ../escape\n")
    try:
        sim = run(["apt-get", "-s", "-o", "Debug::NoLocking=1", "--reinstall", "install",
                   "coreutils", "dpkg", "libc6"]).stdout.decode("utf-8", "surrogateescape")
        corpus.add("apt_simulation", sim)
    except (subprocess.CalledProcessError, OSError):
        note("apt-get -s failed: apt simulation seeds are hand-written only")
    corpus.add("apt_simulation", "NOTE: simulation\nInst libc6 [2.36-9] (2.36-9+deb12u9 Debian:12.9/"
               "stable [amd64])\nInst base-files (12.4+deb12u9 Debian:12.9/stable, Debian-Security:"
               "12/stable-security [amd64])\nConf libc6 (2.36-9+deb12u9 Debian:12.9/stable [amd64])"
               "\nInst tzdata (2024b-0+deb12u1 Debian:12.9/stable [all])\n")


# -- the wheel-scan cache -------------------------------------------------------------------

def scan_json():
    """A schema-2 scan cache document (the shape scan_to_json writes) with one ELF entry."""
    elf = {"class": 2, "byte_order": 1, "os_abi": 0, "type": 3, "machine": 62,
           "has_dynamic": True, "interpreter": "", "soname": "libcusparse.so.12",
           "needed": ["libnvJitLink.so.12"], "rpath": None,
           "runpath": ["$ORIGIN", "$ORIGIN/../../nvjitlink/lib"], "flags": 8, "flags_1": 1,
           "version_needs": [{"file": "libnvJitLink.so.12",
                              "versions": [["libnvJitLink.so.12", 108182194, 2, False]]}],
           "version_defs": [{"name": "libcusparse.so.12", "index": 1, "flags": 1,
                             "hash": 123, "parents": []}],
           "symbols_read": True, "relocations_read": True,
           "symbols": [["__nvJitLinkComplete_12_4", "libnvJitLink.so.12", False, False, 1, 2,
                        True], ["rootlock_stub_tag", "", True, False, 1, 1, False]]}
    entry = {"size": 13272, "mode": 493, "executable": True,
             "sha256": "V8KDUAI0b8eVlIOAxv0CYJKowDNF-s34bwt4Lpcqk3U"}
    return json.dumps({
        "schema": 2, "wheel_sha256": "0" * 64, "wheel_size": 1180,
        "filename": "nvidia_cusparse_cu12-12.5.8.93-py3-none-manylinux2014_x86_64.whl",
        "dist_info": "nvidia_cusparse_cu12-12.5.8.93.dist-info",
        "data_dir": "nvidia_cusparse_cu12-12.5.8.93.data",
        "metadata": "Metadata-Version: 2.1\nName: nvidia-cusparse-cu12\nVersion: 12.5.8.93\n",
        "wheel": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "record": "a,,\n", "entry_points": "[console_scripts]\nx = y:z\n",
        "entries": [dict(entry, path="nvidia/cusparse/lib/libcusparse.so.12", elf=elf,
                         elf_error="", content_hex=None),
                    dict(entry, path="nvidia_cusparse_cu12-12.5.8.93.data/scripts/x", elf=None,
                         elf_error="x@0x0: truncated", content_hex="2321707974686f6e0a")],
        "provides": ["libcusparse.so.12"], "needs": ["libnvJitLink.so.12"]})


def add_scan_cache(corpus):
    corpus.add("wheel_scan_json", scan_json())
    # Sealed cache files (fuzz_sealed_text.cpp): a whole one, and one whose content changed.
    content = scan_json()
    sealed = "rootlock-sealed sha256:" + hashlib.sha256(content.encode()).hexdigest() + "\n"
    corpus.add("sealed_text", sealed + content)
    corpus.add("sealed_text", sealed + content[:-1] + "x")
    corpus.add("sealed_text", "rootlock-sealed sha256:")
    # Real cache files, where rootlock has run on this machine (the smallest few).
    cache = os.path.expanduser("~/.cache/rootlock/scans")
    found = sorted(glob.glob(f"{cache}/*/*/*.json"), key=os.path.getsize)[:6]
    for path in found:
        with open(path, "rb") as f:
            corpus.add("wheel_scan_json", f.read()[:65536])


# -- OCI documents --------------------------------------------------------------------------

def add_oci(corpus):
    def desc(media, digest_char, size, extra=""):
        return ('{"mediaType":"' + media + '","digest":"sha256:' + digest_char * 64 +
                '","size":' + str(size) + extra + '}')
    manifest_type = "application/vnd.oci.image.manifest.v1+json"
    ref = ',"annotations":{"org.opencontainers.image.ref.name":"app"}'
    sbom = ',"artifactType":"application/vnd.cyclonedx+json"'
    corpus.add("oci_index", '{"schemaVersion":2,"manifests":[' + desc(manifest_type, "a", 900, ref)
               + "," + desc(manifest_type, "b", 400, sbom) + "]}")
    corpus.add("oci_index", '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1'
               '+json","manifests":[' +
               desc(manifest_type, "c", 10, ',"platform":{"architecture":"arm64","os":"linux",'
                    '"variant":"v8"}') + "," +
               desc(manifest_type, "d", 10, ',"platform":{"architecture":"amd64","os":"linux"}')
               + "," + desc(manifest_type, "e", 10, ',"platform":{"architecture":"unknown",'
                            '"os":"unknown"}') + "]}")
    corpus.add("oci_index", '{"schemaVersion":2,"mediaType":"' + manifest_type + '","config":' +
               desc("application/vnd.oci.image.config.v1+json", "1", 300) + ',"layers":[' +
               desc("application/vnd.oci.image.layer.v1.tar+gzip", "2", 1000) + "," +
               desc("application/vnd.oci.image.layer.v1.tar+zstd", "3", 2000) + '],"subject":'
               + desc(manifest_type, "4", 5) + '}')
    corpus.add("oci_index", '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/opt/'
               'venv/bin:/usr/bin","VIRTUAL_ENV=/opt/venv"],"WorkingDir":"/","Labels":{'
               '"org.rootlock.recipe":"demo"}},"rootfs":{"type":"layers","diff_ids":[]}}')
    corpus.add("oci_index", '{"schemaVersion":2,"manifests":[{"mediaType":"x","digest":"md5:0",'
               '"size":-1}]}')
    for path in sorted(glob.glob(os.path.join(REPO, "tests", "**", "*.oci", "index.json"),
                                 recursive=True))[:4]:
        with open(path, "rb") as f:
            corpus.add("oci_index", f.read()[:16384])


# -- CDI specs -------------------------------------------------------------------------------

def add_cdi_specs(corpus):
    """Specs as nvidia-ctk writes them (Go's YAML layout, its test fixture's shape, a real
    host's mounts and hooks), the same as JSON, and the fields other vendors use."""
    lib = "/usr/lib/x86_64-linux-gnu"
    driver = "570.133.20"

    def device(name, nodes):
        return {"name": name, "containerEdits": {"deviceNodes": [{"path": n} for n in nodes]}}

    def mount(path, extra=()):
        return {"hostPath": path, "containerPath": path,
                "options": ["ro", "nosuid", "nodev", "bind"] + list(extra)}

    def hook(*args):
        return {"hookName": "createContainer", "path": "/usr/bin/nvidia-cdi-hook",
                "args": ["nvidia-cdi-hook"] + list(args), "env": ["NVIDIA_CTK_DEBUG=false"]}

    host = {
        "cdiVersion": "0.6.0", "kind": "nvidia.com/gpu",
        "devices": [device("0", ["/dev/nvidia0", "/dev/dri/card1", "/dev/dri/renderD128"]),
                    device("GPU-6cf00fa7-59e2-16d4-6c69-fd3ff1ac6f4e", ["/dev/nvidia0"]),
                    device("all", ["/dev/nvidia0"])],
        "containerEdits": {
            "env": ["NVIDIA_VISIBLE_DEVICES=void", f"NVIDIA_CTK_LIBCUDA_DIR={lib}"],
            "deviceNodes": [{"path": p} for p in ["/dev/nvidia-modeset", "/dev/nvidia-uvm",
                                                  "/dev/nvidia-uvm-tools", "/dev/nvidiactl"]],
            "hooks": [hook("create-symlinks", "--link", f"libcuda.so.1::{lib}/libcuda.so"),
                      hook("enable-cuda-compat", f"--host-driver-version={driver}"),
                      hook("update-ldcache", "--folder", lib)],
            "mounts": [mount("/run/nvidia-persistenced/socket", ["noexec"]),
                       mount("/usr/bin/nvidia-smi")] +
                      [mount(f"{lib}/{name}.so.{driver}")
                       for name in ["libcuda", "libnvidia-ml", "libnvidia-ptxjitcompiler"]] +
                      [mount(f"/lib/firmware/nvidia/{driver}/gsp_tu10x.bin")]}}

    def go_yaml(value, indent=0):
        """Block YAML in nvidia-ctk's manner: four-space indents, list items indented under
        their key, strings that would read as numbers quoted."""
        pad = " " * indent
        if isinstance(value, dict):
            lines = []
            for key, item in value.items():
                if isinstance(item, (dict, list)):
                    lines.append(f"{pad}{key}:\n{go_yaml(item, indent + 4)}")
                else:
                    lines.append(f"{pad}{key}: {go_yaml(item)}")
            return "\n".join(lines)
        if isinstance(value, list):
            items = []
            for item in value:
                if isinstance(item, (dict, list)):
                    items.append(f"{pad}- {go_yaml(item, indent + 2)[indent + 2:]}")
                else:
                    items.append(f"{pad}- {go_yaml(item)}")
            return "\n".join(items)
        if isinstance(value, int):
            return str(value)
        return f'"{value}"' if value.isdigit() else value

    corpus.add("cdi_spec", "---\n" + go_yaml(host) + "\n")
    corpus.add("cdi_spec", json.dumps(host, separators=(",", ":")))
    corpus.add("cdi_spec", json.dumps(host, indent=2))
    fixture = {
        "cdiVersion": "0.5.0", "kind": "example.com/device",
        "devices": [{"name": n, "containerEdits": {"deviceNodes": [
            {"path": "/dev/nvidia0", "hostPath": "/drv/dev/nvidia0"}]}} for n in ["0", "all"]],
        "containerEdits": {"deviceNodes": [{"path": "/dev/nvidiactl",
                                            "hostPath": "/drv/dev/nvidiactl"}],
                           "hooks": [hook("update-ldcache", "--folder", "/lib/x86_64-linux-gnu")],
                           "mounts": [{"hostPath": "/drv/lib/libcuda.so.999.88.77",
                                       "containerPath": "/lib/libcuda.so.999.88.77",
                                       "options": ["ro", "nosuid", "nodev", "rbind",
                                                   "rprivate"]}]}}
    corpus.add("cdi_spec", "---\n" + go_yaml(fixture) + "\n")
    every_field = {
        "cdiVersion": "1.1.0", "kind": "vendor.example/nic.v2",
        "annotations": {"cdi.k8s.io/owner": "x"},
        "devices": [{"name": "mig:1", "annotations": {"a": "b"}, "containerEdits": {
            "deviceNodes": [{"path": "/dev/x", "type": "c", "major": 195, "minor": 255,
                             "fileMode": 438, "permissions": "rw", "uid": 0, "gid": 44}],
            "netDevices": [{"hostInterfaceName": "eth1", "name": "net0"}],
            "intelRdt": {"closID": "gpu", "schemata": ["L3:0=ff"], "enableMonitoring": True},
            "additionalGids": [44, 0]}}],
        "containerEdits": {"mounts": [{"hostPath": "tmpfs", "containerPath": "/scratch",
                                       "type": "tmpfs", "options": ["nosuid"]}],
                           "hooks": [{"hookName": "poststop", "path": "/bin/true",
                                      "timeout": 5}]}}
    corpus.add("cdi_spec", json.dumps(every_field))
    corpus.add("cdi_spec", "cdiVersion: v0.7.0\nkind: a.b/c\ndevices:\n- name: d0\n"
               "  containerEdits: &e {env: [A=1], deviceNodes: [{path: /dev/d, major: 0x10, "
               "fileMode: 0644}]}\n- name: d1\n  containerEdits: *e\n"
               "containerEdits: {additionalGids: [1_000]}\n")
    corpus.add("cdi_spec", "cdiVersion: 0.3.0\nkind: a.b/c\ndevices: [{name: x, "
               "containerEdits: {mounts: [{hostPath: /a, containerPath: /b, type: bind}]}}]\n")


# -- registries ---------------------------------------------------------------------------

def add_registry_texts(corpus):
    for text in ["127.0.0.1:5000/demo", "docker://localhost/a/b:v1", "[::1]:5000/x__y:t",
                 "h.org/a@sha256:" + "a" * 64, "h.org/a:t@sha256:" + "0" * 64, "demo:v1"]:
        corpus.add("image_reference", text)
    for text in ['Bearer realm="https://auth.example/token",service="reg",'
                 'scope="repository:team/app:pull,push"', 'Basic realm="Registry \\"R\\""',
                 "BEARER Realm=http://h:1/t , Service=s", 'Basic realm="a", Bearer realm="b"']:
        corpus.add("auth_challenge", text)
    auth = "YWxpY2U6c2VjcmV0"  # alice:secret
    for scope, text in [("127.0.0.1:5000/team/app",
                         '{"auths": {"https://127.0.0.1:5000/v1/": {"auth": "%s"}, '
                         '"127.0.0.1:5000/team": {"auth": "%s"}}}' % (auth, auth)),
                        ("h.org/x", '{"auths": {"h.org": {"username": "u", "password": "p", '
                         '"identitytoken": "t"}}, "credsStore": "pass"}'),
                        ("h.org/x", '{"auths": {"h.org": {}}, "credHelpers": {"h.org": "x"}}')]:
        corpus.add("auth_json", f"{scope}\n{text}")


# -- fatbins and the CUDA compat note -------------------------------------------------------

FATBIN_MAGIC = 0xBA55ED50
CUDA_LIB64 = "/usr/local/cuda-13.0/lib64"
COMPAT_575 = (b'{"format":1,"CUDA version":"12.9","driver":[535,550,560,565,570,575],'
              b'"device":[1,2,7,8,9,10,11,12,13,14]}\0')


def fatbin_container(entries):
    """A fatbin container of (kind, sm, flags, header_size, payload) entries (nvcc 13.0's layout:
    gpu-containers.md 5.2; flags 0x100000 arch-specific, 0x200000 family, 0x8000 ZSTD)."""
    body = b""
    for kind, sm, flags, header_size, payload in entries:
        ptx = kind == 1  # 24: PTX ISA minor and major (9.0); cubins carry 8 and 1 there
        head = (struct.pack("<HHII", kind, 0x0101, header_size, payload) + bytes(12) +
                struct.pack("<HHI", 0 if ptx else 8, 9 if ptx else 1, sm) + bytes(8) +
                struct.pack("<QQQ", flags, 0, payload * 3 if flags & 0xa000 else 0))
        body += head.ljust(header_size, b"\0") + bytes([0x5a]) * payload
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def section_elf(sections, elf32=False, big=False):
    """A minimal ET_DYN object: ELF header, the (name, type, bytes, align) sections, .shstrtab
    and the section header table; no program headers."""
    e = ">" if big else "<"
    word = "I" if elf32 else "Q"
    ehsize, shentsize = (52, 40) if elf32 else (64, 64)
    names = b"\0"
    name_at = []
    for name, _, _, _ in sections + [(".shstrtab", 3, b"", 1)]:
        name_at.append(len(names))
        names += name.encode() + b"\0"
    data = bytearray(ehsize)
    offsets = []
    for _, _, body, align in sections:
        data += bytes(-len(data) % align)
        offsets.append(len(data))
        data += body
    strtab_at = len(data)
    data += names
    data += bytes(-len(data) % 8)
    shoff = len(data)
    rows = [(0, 0, 0, 0, 0)] + [(name_at[i], t, offsets[i], len(b), a)
                                for i, (_, t, b, a) in enumerate(sections)]
    rows.append((name_at[-1], 3, strtab_at, len(names), 1))
    for name, kind, offset, size, align in rows:
        fmt = e + ("IIIIIIIIII" if elf32 else "IIQQQQIIQQ")
        data += struct.pack(fmt, name, kind, 0, 0, offset, size, 0, 0, align, 0)
    ident = b"\x7fELF" + bytes([1 if elf32 else 2, 2 if big else 1, 1]) + bytes(9)
    header = ident + struct.pack(e + "HHI" + word * 3 + "IHHHHHH", 3, 3 if elf32 else 62, 1, 0,
                                 0, shoff, 0, ehsize, 32 if elf32 else 56, 0, shentsize,
                                 len(rows), len(rows) - 1)
    data[:ehsize] = header
    return bytes(data)


def elf_note_bytes(owner, kind, desc, big=False, declared=None):
    name = owner.encode() + b"\0"
    head = struct.pack(">III" if big else "<III", len(name),
                       len(desc) if declared is None else declared, kind)
    return head + name + bytes(-len(name) % 4) + desc + bytes(-len(desc) % 4)


def read_section(path, wanted):
    """The bytes of section `wanted` of a little-endian ELF64 file, or None."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return None
        shoff, = struct.unpack_from("<Q", head, 0x28)
        shnum, strndx = struct.unpack_from("<HH", head, 0x3c)
        f.seek(shoff)
        table = f.read(64 * shnum)
        rows = [struct.unpack_from("<IIQQQQIIQQ", table, 64 * i) for i in range(shnum)]
        f.seek(rows[strndx][4])
        strings = f.read(rows[strndx][5])
        for row in rows:
            if strings[row[0]:strings.index(b"\0", row[0])].decode() == wanted:
                f.seek(row[4])
                return f.read(row[5])
    return None


def leading_containers(section, limit):
    """The leading containers of a real fatbin section, within `limit` bytes: whole ones, then
    the entries of the next one that fit, its size rewritten to hold just them."""
    out = b""
    pos = 0
    while pos + 16 <= len(section):
        magic, version, header, size = struct.unpack_from("<IHHQ", section, pos)
        if magic != FATBIN_MAGIC or header < 16:
            break
        if len(out) + header + size <= limit:
            out += section[pos:pos + header + size]
            pos += header + size
            continue
        entries = b""
        at = pos + header
        while at + 16 <= pos + header + size:
            entry_header, padded = struct.unpack_from("<II", section, at + 4)
            if len(out) + header + len(entries) + entry_header + padded > limit:
                break
            entries += section[at:at + entry_header + padded]
            at += entry_header + padded
        if entries:
            out += struct.pack("<IHHQ", magic, version, 16, len(entries)) + entries
        break
    return out


def add_fatbin(corpus, work):
    """ELF objects with .nv_fatbin (and __nv_relfatbin, and the compat note) built here; real
    sections of CUDA 13's libraries and of nvcc-built ones rewrapped small; those cut to 64 KiB."""
    text = (".text", 1, bytes(32), 16)
    cubins = fatbin_container([(2, 75, 0x11, 64, 24), (2, 86, 0x8011, 64, 16),
                               (1, 86, 0x8011, 80, 16)])
    variants = fatbin_container([(2, 90, 0x100011, 64, 8), (1, 100, 0x208011, 80, 8),
                                 (2, 100, 0x1002011, 112, 8), (0x40, 0, 0x11, 64, 8)])
    compat = (".note.cuda.fwd_compatibility", 7,
              elf_note_bytes("NVIDIA Corporation", 0, COMPAT_575), 4)
    orin = elf_note_bytes("NVIDIA Corporation", 0, b'{"format":1,"CUDA version":"13.2"}\0\0\0\0\0',
                          declared=41)[:71]
    made = [
        [text, (".nv_fatbin", 1, cubins + variants, 8)],
        [text, (".nv_fatbin", 1, cubins + bytes(8) + fatbin_container([]) + bytes(16), 8),
         ("__nv_relfatbin", 1, variants, 8)],
        [text, compat],
        [text, (".note.cuda.fwd_compatibility", 7, orin, 4), (".nv_fatbin", 1, variants, 8)],
    ]
    for sections in made:
        corpus.add("fatbin", section_elf(sections))
    corpus.add("fatbin", section_elf(made[0], elf32=True, big=True))
    real = []  # (path, whether to add its first 64 KiB too)
    for lib in ("libcufft.so.12", "libcudnn_cnn.so.9", "libcurand.so.10", "libnccl.so.2"):
        path = os.path.join(CUDA_LIB64, lib)
        if os.path.isfile(path):
            real.append((path, False))
    from fixtures import fatbin_libs
    if fatbin_libs.available():
        for name in ("mixed", "arch-specific", "family", "compressed-lz4"):
            case = fatbin_libs.CASES[name]
            try:
                real.append((fatbin_libs.build(os.path.join(work, "nvcc"), name, case.gencode,
                                               case.compress, case.compress_mode, case.extra),
                             True))
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                note(f"nvcc could not build the {name} fatbin seed: {e}")
    else:
        note(f"{fatbin_libs.unavailable_reason()}: no nvcc-built fatbin seed")
    for path, cut in real:
        sections = [text]
        for name in (".nv_fatbin", "__nv_relfatbin"):
            body = read_section(path, name)
            if body:
                sections.append((name, 1, leading_containers(body, 24 * 1024), 8))
        corpus.add("fatbin", section_elf(sections))
        if cut:  # the ELF header and the start of the object: the section table is not in it
            with open(path, "rb") as f:
                corpus.add("fatbin", f.read(64 * 1024))


# -- NVIDIA GPU hosts ---------------------------------------------------------------------

def add_gpu_texts(corpus):
    """The driver's /proc and /sys files and nvidia-smi's CSV as real hosts write them
    (shared/domain/gpu-containers.md 4.3); the first byte picks the harness's parser."""
    uuid = "GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab"
    for text in ["570.124.06\n", "575.57.08", "570.26\n"]:
        corpus.add("driver_files", "0" + text)
    for text in ["NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release "
                 "Build  (dvs-builder@U16-I3-B03-4-3)  Tue Mar 11 19:18:36 UTC 2025\n"
                 "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n",
                 "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.261.03  Wed Jul 30 06:55:26 "
                 "UTC 2025\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1) \n",
                 "NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.163.01  Tue Apr  8 "
                 "12:42:25 UTC 2025\n"]:
        corpus.add("driver_files", "1" + text)
    corpus.add("driver_files", "2Character devices:\n  1 mem\n  4 /dev/vc/0\n  4 tty\n"
               "195 nvidia-frontend\n226 drm\n236 nvidia-caps\n237 nvidia-uvm\n\n"
               "Block devices:\n  7 loop\n259 blkext\n")
    if os.path.isfile("/proc/devices"):
        with open("/proc/devices") as f:
            corpus.add("driver_files", "2" + f.read()[:TEXT_MAX])
    corpus.add("driver_files", "3Model: \t\t NVIDIA GeForce RTX 3090\nIRQ:   \t\t 156\n"
               "GPU UUID: \t " + uuid + "\nVideo BIOS: \t 94.02.42.00.a9\nBus Type: \t PCIe\n"
               "DMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\nBus Location: \t "
               "0000:01:00.0\nDevice Minor: \t 0\nGPU Excluded:\t No\n")
    corpus.add("driver_files", "4470.256.02\n470.256.2")
    corpus.add("driver_files", "40000:af:1f.7\n580")
    for model in ["NVIDIA GeForce RTX 3090", "Tesla V100-SXM2-16GB", "NVIDIA H100 80GB HBM3",
                  "NVIDIA A100-SXM4-80GB", "Quadro RTX 5000", "NVIDIA RTX 6000 Ada Generation",
                  "NVIDIA GeForce RTX 4090 D", "Orin (nvgpu)", "NVIDIA TITAN X (Pascal)"]:
        corpus.add("gpu_table", "0" + model)
    for text in ["8.6", "12.0", "10.3"]:
        corpus.add("gpu_table", "1" + text)
    for text in ["sm_86", "sm_90a", "sm_100f", "compute_120"]:
        corpus.add("gpu_table", "2" + text)
    corpus.add("gpu_table", "30, " + uuid + ", NVIDIA GeForce RTX 3090, 00000000:01:00.0, 8.6, "
               "570.124.06\n1, GPU-e1924eea-b9bb-d537-39f2-b345087fa145, Tesla T4, "
               "00000000:AF:00.0, [N/A], 570.124.06\n")
    for cuda, driver in [("12.8", "535.261.03"), ("13.0", "570.124.06"), ("12.10", "575.57.08"),
                         ("14.0", "580.65.06")]:
        corpus.add("gpu_table", f"4{cuda}\n{driver}")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    shutil.rmtree(os.path.join(out, "corpus"), ignore_errors=True)
    corpus = Corpus(out)
    with tempfile.TemporaryDirectory(prefix="rootlock-seeds-") as work:
        elf_dir = os.path.join(work, "elf")
        os.makedirs(elf_dir)
        objects = add_elf(corpus, elf_dir)
        add_ld_so_conf(corpus)
        add_wheels(corpus, objects)
        add_pyvenv(corpus, work)
        add_small_grammars(corpus)
        add_texts(corpus)
        pages = os.path.join(work, "pages")
        os.makedirs(pages)
        add_index_pages(corpus, pages, objects)
        add_tars(corpus)
        add_debian(corpus)
        add_scan_cache(corpus)
        add_oci(corpus)
        add_registry_texts(corpus)
        add_cdi_specs(corpus)
        add_gpu_texts(corpus)
        add_fatbin(corpus, work)
    targets = sorted(os.path.basename(p)[len("fuzz_"):-len(".cpp")]
                     for p in glob.glob(os.path.join(REPO, "fuzz", "fuzz_*.cpp")))
    missing = [t for t in targets if t not in corpus.counts]
    for target in missing:
        corpus.add(target, "")
    print("seeds: " + ", ".join(f"{t} {corpus.counts.get(t, 0)}" for t in targets))
    if missing:
        note(f"targets with no generated seed (an empty input stands in): {missing}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
