// Golden outputs of the three lock diff renderings (text with and without colour, JSON, Markdown)
// for a pair touching every group, a cu12 -> cu13 move with a rebuilt artifact, a Debian base's
// point release with a security update and a rebuilt .deb, and an equal pair.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "diff/lock_diff.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;

namespace {

const std::string k_sha_a = "aaaa1111" + std::string(56, 'a');
const std::string k_sha_b = "bbbb2222" + std::string(56, 'b');

pylock::LockPackage package(const std::string& name, const std::string& version,
                            const std::string& index = "https://pypi.org/simple",
                            const std::string& sha = k_sha_a) {
    pylock::LockPackage p;
    p.name = name;
    p.version = version;
    p.index = index;
    pylock::LockWheel wheel;
    wheel.name = name + "-" + version + "-py3-none-any.whl";
    wheel.url = "https://files.example/" + wheel.name;
    wheel.hashes["sha256"] = sha;
    p.wheels.push_back(wheel);
    return p;
}

pylock::LockPackage with_sonames(pylock::LockPackage p, std::vector<std::string> provides,
                                 std::vector<std::string> needs = {},
                                 std::vector<std::string> needs_versions = {}) {
    p.rootlock = pylock::PackageRootlockData{std::move(provides),       std::move(needs), false,
                                             std::move(needs_versions), std::nullopt,     {}};
    return p;
}

pylock::LockPackage wheel_named(pylock::LockPackage p, const std::string& platform) {
    p.wheels[0].name = p.name + "-" + p.version + "-cp311-cp311-" + platform + "_x86_64.whl";
    return p;
}

pylock::Lock lock_with(std::vector<pylock::LockPackage> packages, pylock::LockTarget target,
                       std::string base_sha, std::vector<std::string> requirements) {
    pylock::Lock lock;
    lock.packages = std::move(packages);
    pylock::LockRootlockData data;
    data.target = std::move(target);
    data.base.kind = "tarball";
    data.base.url = "https://example.org/base.tar.zst";
    data.base.sha256 = std::move(base_sha);
    data.requirements = std::move(requirements);
    lock.rootlock = data;
    return lock;
}

// torch and the nvidia set move from CUDA 12 to 13; filelock is rebuilt under the same name.
diff::LockDiff changed_pair() {
    const std::string cu128 = "https://download.pytorch.org/whl/cu128";
    const std::string cu130 = "https://download.pytorch.org/whl/cu130";
    const pylock::Lock before = lock_with(
        {with_sonames(package("torch", "2.8.0+cu128", cu128), {"libtorch.so"},
                      {"libcudart.so.12", "libnccl.so.2"}, {"GLIBCXX_3.4.19", "GLIBC_2.17"}),
         with_sonames(package("nvidia-cuda-runtime-cu12", "12.8.90", cu128), {"libcudart.so.12"}),
         with_sonames(package("nvidia-nccl-cu12", "2.27.3", cu128), {"libnccl.so.2"}),
         package("filelock", "3.18.0"), package("numpy", "2.2.6"), package("pillow", "11.3.0"),
         wheel_named(package("pyyaml", "6.0.2"), "manylinux_2_17"), package("six", "1.17.0"),
         package("sympy", "1.14.0")},
        pylock::LockTarget{
            "3.11", "3.11.2", "2.36", "x86_64", "12.8", "570.133.07", "2.8.0+cu128", {}},
        k_sha_a, {"torch==2.8.0", "numpy"});
    const pylock::Lock after = lock_with(
        {with_sonames(package("torch", "2.9.1+cu130", cu130), {"libtorch.so"},
                      {"libcudart.so.13", "libnccl.so.2"}, {"GLIBCXX_3.4.29", "GLIBC_2.28"}),
         with_sonames(package("nvidia-cuda-runtime", "13.0.96", cu130), {"libcudart.so.13"}),
         with_sonames(package("nvidia-nccl-cu13", "2.28.3", cu130), {"libnccl.so.2"}),
         package("filelock", "3.18.0", "https://pypi.org/simple", k_sha_b),
         package("numpy", "2.3.1"), package("pillow", "11.3.0", "https://mirror.example/simple"),
         wheel_named(package("pyyaml", "6.0.2", "https://pypi.org/simple", k_sha_b),
                     "manylinux_2_28"),
         package("sympy", "1.13.3"), package("typing-extensions", "4.14.1")},
        pylock::LockTarget{
            "3.11", "3.11.9", "2.36", "x86_64", "13.0", "580.65.06", "2.9.1+cu130", {}},
        k_sha_b, {"torch==2.9.1", "numpy"});
    return diff::diff_locks(before, after);
}

pylock::LockDebArchive archive(const std::string& name, const std::string& url,
                               const std::string& suite, const std::string& date) {
    pylock::LockDebArchive a;
    a.name = name;
    a.url = url;
    a.suite = suite;
    a.components = {"main"};
    a.date = date;
    return a;
}

pylock::LockDeb deb(const std::string& name, const std::string& version,
                    const std::string& architecture, const std::string& archive_name,
                    const std::string& sha = k_sha_a) {
    pylock::LockDeb d;
    d.name = name;
    d.version = version;
    d.architecture = architecture;
    d.archive = archive_name;
    d.component = "main";
    d.filename = "pool/main/" + name.substr(0, 1) + "/" + name + "/" + name + "_" + version + "_" +
                 architecture + ".deb";
    d.size = 1000;
    d.sha256 = sha;
    return d;
}

pylock::Lock on_debian(std::vector<pylock::LockDebArchive> archives,
                       std::vector<pylock::LockDeb> debs) {
    pylock::Lock lock = lock_with(
        {}, pylock::LockTarget{"3.11", "3.11.2", "2.36", "x86_64", "", "", "", {}}, "", {"numpy"});
    pylock::LockBase& base = lock.rootlock->base;
    base = pylock::LockBase{};
    base.kind = "debian";
    base.suite = "bookworm";
    base.mirror = "http://deb.debian.org/debian";
    base.variant = "minbase";
    base.archives = std::move(archives);
    base.debs = std::move(debs);
    return lock;
}

// A relock a month later: a point release (base-files), a security update (libc6), a rebuilt
// .deb in the security archive (libssl3), one folded back into the mirror (tzdata), a downgrade
// (libgnutls30), one added and one removed; the Release dates changed too, and mean nothing.
diff::LockDiff debian_pair() {
    const std::string mirror = "http://deb.debian.org/debian";
    const std::string security = "http://deb.debian.org/debian-security";
    const pylock::Lock before =
        on_debian({archive("debian", mirror, "bookworm", "1759000000"),
                   archive("security", security, "bookworm-security", "1759000100")},
                  {deb("base-files", "12.4+deb12u11", "amd64", "debian"),
                   deb("libc6", "2.36-9+deb12u10", "amd64", "debian"),
                   deb("libgnutls30", "3.7.9-2+deb12u5", "amd64", "security"),
                   deb("libold", "0.9-3", "amd64", "debian"),
                   deb("libssl3", "3.0.17-1~deb12u2", "amd64", "security", k_sha_a),
                   deb("tzdata", "2025b-0+deb12u1", "all", "security"),
                   deb("zlib1g", "1:1.2.13.dfsg-1", "amd64", "debian")});
    pylock::LockDebArchive snapshotted = archive("debian", mirror, "bookworm", "1762077600");
    snapshotted.snapshot = "https://snapshot.debian.org/archive/debian/20251102T100000Z";
    const pylock::Lock after =
        on_debian({snapshotted, archive("security", security, "bookworm-security", "1762077700"),
                   archive("updates", mirror, "bookworm-updates", "1762077800")},
                  {deb("base-files", "12.4+deb12u12", "amd64", "debian"),
                   deb("libc6", "2.36-9+deb12u13", "amd64", "security"),
                   deb("libfoo", "1.0-1", "amd64", "debian"),
                   deb("libgnutls30", "3.7.9-2+deb12u4", "amd64", "debian"),
                   deb("libssl3", "3.0.17-1~deb12u2", "amd64", "security", k_sha_b),
                   deb("tzdata", "2025b-0+deb12u1", "all", "debian"),
                   deb("zlib1g", "1:1.2.13.dfsg-1", "amd64", "debian")});
    return diff::diff_locks(before, after);
}

diff::LockDiff equal_pair() {
    const pylock::Lock lock = lock_with(
        {package("numpy", "2.2.6")},
        pylock::LockTarget{"3.11", "3.11.2", "2.36", "x86_64", "12.8", "570.133.07", "", {}},
        k_sha_a, {"numpy"});
    return diff::diff_locks(lock, lock);
}

const std::string k_text = R"(target
  ~ python 3.11.2 -> 3.11.9
  ~ cuda-major 12 -> 13
  ~ driver 570.133.07 -> 580.65.06
base
  ~ sha256 aaaa1111... -> bbbb2222...
torch
  ~ torch build 2.8.0+cu128 -> 2.9.1+cu130
  ~ torch 2.8.0+cu128 -> 2.9.1+cu130 (upgraded)
nvidia
  + nvidia-cuda-runtime 13.0.96
  - nvidia-cuda-runtime-cu12 12.8.90
  - nvidia-nccl-cu12 2.27.3
  + nvidia-nccl-cu13 2.28.3
packages
  ! filelock 3.18.0: rebuilt: sha256 aaaa1111... -> bbbb2222... (same version, different artifact)
  ~ numpy 2.2.6 -> 2.3.1 (upgraded)
  ~ pillow 11.3.0: index https://pypi.org/simple -> https://mirror.example/simple (index-moved)
  ~ pyyaml 6.0.2: wheel pyyaml-6.0.2-cp311-cp311-manylinux_2_17_x86_64.whl -> pyyaml-6.0.2-cp311-cp311-manylinux_2_28_x86_64.whl (wheel-changed)
  - six 1.17.0
  ~ sympy 1.14.0 -> 1.13.3 (downgraded)
  + typing-extensions 4.14.1
sonames
  - provides libcudart.so.12 (nvidia-cuda-runtime-cu12)
  - needs libcudart.so.12 (torch)
  + provides libcudart.so.13 (nvidia-cuda-runtime)
  + needs libcudart.so.13 (torch)
  ~ libnccl.so.2: nvidia-nccl-cu12 -> nvidia-nccl-cu13 (provider moved)
  ~ highest GLIBC_ needed: GLIBC_2.17 -> GLIBC_2.28
  ~ highest GLIBCXX_ needed: GLIBCXX_3.4.19 -> GLIBCXX_3.4.29
  + CUDA 13 in the closure
  - CUDA 12 in the closure
recipe
  ~ requirements: + torch==2.9.1; - torch==2.8.0
)";

const std::string k_debian_text = R"(base
  ~ archive debian snapshot (none) -> https://snapshot.debian.org/archive/debian/20251102T100000Z
  ~ archive updates (none) -> http://deb.debian.org/debian bookworm-updates main
debian
  ~ base-files 12.4+deb12u11 -> 12.4+deb12u12 (amd64) from bookworm
  ~ libc6 2.36-9+deb12u10 -> 2.36-9+deb12u13 (amd64) bookworm -> bookworm-security [security]
  + libfoo 1.0-1 (amd64) from bookworm
  ~ libgnutls30 3.7.9-2+deb12u5 -> 3.7.9-2+deb12u4 (amd64) bookworm-security -> bookworm [downgraded]
  - libold 0.9-3 (amd64) from bookworm
  ! libssl3 3.0.17-1~deb12u2 (amd64) from bookworm-security: rebuilt: sha256 aaaa1111... -> bbbb2222... (same version, different artifact) [security]
  ~ tzdata 2025b-0+deb12u1 (all): archive security -> debian (moved)
)";

}  // namespace

TEST_SUITE("rootlock::diff") {
    TEST_CASE("the text rendering of a pair touching every group, without colour") {
        CHECK(diff::render_diff_text(changed_pair(), false) == k_text);
    }

    TEST_CASE("the text rendering with colour: green added, red removed, yellow changed") {
        const std::string expected =
            "target\n"
            "  \x1b[33m~ python 3.11.2 -> 3.11.9\x1b[0m\n"
            "  \x1b[33m~ cuda-major 12 -> 13\x1b[0m\n"
            "  \x1b[33m~ driver 570.133.07 -> 580.65.06\x1b[0m\n"
            "base\n"
            "  \x1b[33m~ sha256 aaaa1111... -> bbbb2222...\x1b[0m\n"
            "torch\n"
            "  \x1b[33m~ torch build 2.8.0+cu128 -> 2.9.1+cu130\x1b[0m\n"
            "  \x1b[33m~ torch 2.8.0+cu128 -> 2.9.1+cu130 (upgraded)\x1b[0m\n"
            "nvidia\n"
            "  \x1b[32m+ nvidia-cuda-runtime 13.0.96\x1b[0m\n"
            "  \x1b[31m- nvidia-cuda-runtime-cu12 12.8.90\x1b[0m\n"
            "  \x1b[31m- nvidia-nccl-cu12 2.27.3\x1b[0m\n"
            "  \x1b[32m+ nvidia-nccl-cu13 2.28.3\x1b[0m\n"
            "packages\n"
            "  \x1b[1;31m! filelock 3.18.0: rebuilt: sha256 aaaa1111... -> bbbb2222... (same "
            "version, different artifact)\x1b[0m\n"
            "  \x1b[33m~ numpy 2.2.6 -> 2.3.1 (upgraded)\x1b[0m\n"
            "  \x1b[33m~ pillow 11.3.0: index https://pypi.org/simple -> "
            "https://mirror.example/simple (index-moved)\x1b[0m\n"
            "  \x1b[33m~ pyyaml 6.0.2: wheel pyyaml-6.0.2-cp311-cp311-manylinux_2_17_x86_64.whl -> "
            "pyyaml-6.0.2-cp311-cp311-manylinux_2_28_x86_64.whl (wheel-changed)\x1b[0m\n"
            "  \x1b[31m- six 1.17.0\x1b[0m\n"
            "  \x1b[33m~ sympy 1.14.0 -> 1.13.3 (downgraded)\x1b[0m\n"
            "  \x1b[32m+ typing-extensions 4.14.1\x1b[0m\n"
            "sonames\n"
            "  \x1b[31m- provides libcudart.so.12 (nvidia-cuda-runtime-cu12)\x1b[0m\n"
            "  \x1b[31m- needs libcudart.so.12 (torch)\x1b[0m\n"
            "  \x1b[32m+ provides libcudart.so.13 (nvidia-cuda-runtime)\x1b[0m\n"
            "  \x1b[32m+ needs libcudart.so.13 (torch)\x1b[0m\n"
            "  \x1b[33m~ libnccl.so.2: nvidia-nccl-cu12 -> nvidia-nccl-cu13 (provider "
            "moved)\x1b[0m\n"
            "  \x1b[33m~ highest GLIBC_ needed: GLIBC_2.17 -> GLIBC_2.28\x1b[0m\n"
            "  \x1b[33m~ highest GLIBCXX_ needed: GLIBCXX_3.4.19 -> GLIBCXX_3.4.29\x1b[0m\n"
            "  \x1b[32m+ CUDA 13 in the closure\x1b[0m\n"
            "  \x1b[31m- CUDA 12 in the closure\x1b[0m\n"
            "recipe\n"
            "  \x1b[33m~ requirements: + torch==2.9.1; - torch==2.8.0\x1b[0m\n";
        CHECK(diff::render_diff_text(changed_pair(), true) == expected);
    }

    TEST_CASE("the JSON rendering has the documented shape, full digests and nulls") {
        const std::string expected = R"({
  "same": false,
  "target": [
    {
      "field": "python",
      "before": "3.11.2",
      "after": "3.11.9"
    },
    {
      "field": "cuda-major",
      "before": "12",
      "after": "13"
    },
    {
      "field": "driver",
      "before": "570.133.07",
      "after": "580.65.06"
    },
    {
      "field": "torch",
      "before": "2.8.0+cu128",
      "after": "2.9.1+cu130"
    }
  ],
  "base": [
    {
      "field": "sha256",
      "before": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "after": "bbbb2222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    }
  ],
  "debian": [],
  "torch": [
    {
      "name": "torch",
      "before": "2.8.0+cu128",
      "after": "2.9.1+cu130",
      "changes": [
        "upgraded"
      ],
      "index": {
        "before": "https://download.pytorch.org/whl/cu128",
        "after": "https://download.pytorch.org/whl/cu130"
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "wheels",
        "after": "wheels"
      },
      "source_fields": []
    }
  ],
  "nvidia": [
    {
      "name": "nvidia-cuda-runtime",
      "before": null,
      "after": "13.0.96",
      "changes": [
        "added"
      ],
      "index": {
        "before": "",
        "after": "https://download.pytorch.org/whl/cu130"
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "",
        "after": "wheels"
      },
      "source_fields": []
    },
    {
      "name": "nvidia-cuda-runtime-cu12",
      "before": "12.8.90",
      "after": null,
      "changes": [
        "removed"
      ],
      "index": {
        "before": "https://download.pytorch.org/whl/cu128",
        "after": ""
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "wheels",
        "after": ""
      },
      "source_fields": []
    },
    {
      "name": "nvidia-nccl-cu12",
      "before": "2.27.3",
      "after": null,
      "changes": [
        "removed"
      ],
      "index": {
        "before": "https://download.pytorch.org/whl/cu128",
        "after": ""
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "wheels",
        "after": ""
      },
      "source_fields": []
    },
    {
      "name": "nvidia-nccl-cu13",
      "before": null,
      "after": "2.28.3",
      "changes": [
        "added"
      ],
      "index": {
        "before": "",
        "after": "https://download.pytorch.org/whl/cu130"
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "",
        "after": "wheels"
      },
      "source_fields": []
    }
  ],
  "packages": [
    {
      "name": "filelock",
      "before": "3.18.0",
      "after": "3.18.0",
      "changes": [
        "rebuilt"
      ],
      "index": {
        "before": "https://pypi.org/simple",
        "after": "https://pypi.org/simple"
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [
        {
          "wheel": "filelock-3.18.0-py3-none-any.whl",
          "algorithm": "sha256",
          "before": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          "after": "bbbb2222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
          "kind": "wheel"
        }
      ],
      "source": {
        "before": "wheels",
        "after": "wheels"
      },
      "source_fields": []
    },
    {
      "name": "numpy",
      "before": "2.2.6",
      "after": "2.3.1",
      "changes": [
        "upgraded"
      ],
      "index": {
        "before": "https://pypi.org/simple",
        "after": "https://pypi.org/simple"
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "wheels",
        "after": "wheels"
      },
      "source_fields": []
    },
    {
      "name": "pillow",
      "before": "11.3.0",
      "after": "11.3.0",
      "changes": [
        "index-moved"
      ],
      "index": {
        "before": "https://pypi.org/simple",
        "after": "https://mirror.example/simple"
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "wheels",
        "after": "wheels"
      },
      "source_fields": []
    },
    {
      "name": "pyyaml",
      "before": "6.0.2",
      "after": "6.0.2",
      "changes": [
        "wheel-changed"
      ],
      "index": {
        "before": "https://pypi.org/simple",
        "after": "https://pypi.org/simple"
      },
      "wheels": {
        "removed": [
          "pyyaml-6.0.2-cp311-cp311-manylinux_2_17_x86_64.whl"
        ],
        "added": [
          "pyyaml-6.0.2-cp311-cp311-manylinux_2_28_x86_64.whl"
        ]
      },
      "rebuilt": [],
      "source": {
        "before": "wheels",
        "after": "wheels"
      },
      "source_fields": []
    },
    {
      "name": "six",
      "before": "1.17.0",
      "after": null,
      "changes": [
        "removed"
      ],
      "index": {
        "before": "https://pypi.org/simple",
        "after": ""
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "wheels",
        "after": ""
      },
      "source_fields": []
    },
    {
      "name": "sympy",
      "before": "1.14.0",
      "after": "1.13.3",
      "changes": [
        "downgraded"
      ],
      "index": {
        "before": "https://pypi.org/simple",
        "after": "https://pypi.org/simple"
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "wheels",
        "after": "wheels"
      },
      "source_fields": []
    },
    {
      "name": "typing-extensions",
      "before": null,
      "after": "4.14.1",
      "changes": [
        "added"
      ],
      "index": {
        "before": "",
        "after": "https://pypi.org/simple"
      },
      "wheels": {
        "removed": [],
        "added": []
      },
      "rebuilt": [],
      "source": {
        "before": "",
        "after": "wheels"
      },
      "source_fields": []
    }
  ],
  "sonames": {
    "changes": [
      {
        "soname": "libcudart.so.12",
        "change": "provided-removed",
        "before": [
          "nvidia-cuda-runtime-cu12"
        ],
        "after": []
      },
      {
        "soname": "libcudart.so.12",
        "change": "needed-removed",
        "before": [
          "torch"
        ],
        "after": []
      },
      {
        "soname": "libcudart.so.13",
        "change": "provided-added",
        "before": [],
        "after": [
          "nvidia-cuda-runtime"
        ]
      },
      {
        "soname": "libcudart.so.13",
        "change": "needed-added",
        "before": [],
        "after": [
          "torch"
        ]
      },
      {
        "soname": "libnccl.so.2",
        "change": "provider-moved",
        "before": [
          "nvidia-nccl-cu12"
        ],
        "after": [
          "nvidia-nccl-cu13"
        ]
      }
    ],
    "glibc": {
      "before": "GLIBC_2.17",
      "after": "GLIBC_2.28"
    },
    "glibcxx": {
      "before": "GLIBCXX_3.4.19",
      "after": "GLIBCXX_3.4.29"
    },
    "cuda_majors_added": [
      13
    ],
    "cuda_majors_removed": [
      12
    ]
  },
  "gpu_architectures": [],
  "recipe": [
    {
      "field": "requirements",
      "added": [
        "torch==2.9.1"
      ],
      "removed": [
        "torch==2.8.0"
      ],
      "changed": []
    }
  ]
}
)";
        CHECK(diff::render_diff_json(changed_pair()) == expected);
    }

    TEST_CASE("the Markdown rendering puts a warning line and bold rows on rebuilt artifacts") {
        const std::string expected = R"(### Lock changes

> **Warning:** filelock 3.18.0 was rebuilt under the same version: sha256 aaaa1111... -> bbbb2222...

#### target

| field | before | after |
|---|---|---|
| python | 3.11.2 | 3.11.9 |
| cuda-major | 12 | 13 |
| driver | 570.133.07 | 580.65.06 |

#### base

| field | before | after |
|---|---|---|
| sha256 | aaaa1111... | bbbb2222... |

#### torch

| package | before | after | change |
|---|---|---|---|
| torch (build) | 2.8.0+cu128 | 2.9.1+cu130 | changed |
| torch | 2.8.0+cu128 | 2.9.1+cu130 | upgraded |

#### nvidia

| package | before | after | change |
|---|---|---|---|
| nvidia-cuda-runtime |  | 13.0.96 | added |
| nvidia-cuda-runtime-cu12 | 12.8.90 |  | removed |
| nvidia-nccl-cu12 | 2.27.3 |  | removed |
| nvidia-nccl-cu13 |  | 2.28.3 | added |

#### packages

| package | before | after | change |
|---|---|---|---|
| **filelock** | **3.18.0** | **3.18.0** | **rebuilt: sha256 aaaa1111... -> bbbb2222...** |
| numpy | 2.2.6 | 2.3.1 | upgraded |
| pillow | 11.3.0 | 11.3.0 | index-moved (https://pypi.org/simple -> https://mirror.example/simple) |
| pyyaml | 6.0.2 | 6.0.2 | wheel-changed (pyyaml-6.0.2-cp311-cp311-manylinux_2_17_x86_64.whl -> pyyaml-6.0.2-cp311-cp311-manylinux_2_28_x86_64.whl) |
| six | 1.17.0 |  | removed |
| sympy | 1.14.0 | 1.13.3 | downgraded |
| typing-extensions |  | 4.14.1 | added |

#### sonames

| soname | before | after | change |
|---|---|---|---|
| libcudart.so.12 | nvidia-cuda-runtime-cu12 |  | provided-removed |
| libcudart.so.12 | torch |  | needed-removed |
| libcudart.so.13 |  | nvidia-cuda-runtime | provided-added |
| libcudart.so.13 |  | torch | needed-added |
| libnccl.so.2 | nvidia-nccl-cu12 | nvidia-nccl-cu13 | provider-moved |
| highest GLIBC_ needed | GLIBC_2.17 | GLIBC_2.28 | changed |
| highest GLIBCXX_ needed | GLIBCXX_3.4.19 | GLIBCXX_3.4.29 | changed |
| CUDA 13 in the closure | no | yes | added |
| CUDA 12 in the closure | yes | no | removed |

#### recipe

| field | added | removed | changed |
|---|---|---|---|
| requirements | torch==2.9.1 | torch==2.8.0 |  |
)";
        CHECK(diff::render_diff_markdown(changed_pair()) == expected);
    }

    TEST_CASE("the text rendering of a Debian base: one line per .deb, flags at the end") {
        CHECK(diff::render_diff_text(debian_pair(), false) == k_debian_text);
    }

    TEST_CASE("the text rendering of a Debian base with colour: downgrades in bold") {
        const std::string expected =
            "base\n"
            "  \x1b[33m~ archive debian snapshot (none) -> "
            "https://snapshot.debian.org/archive/debian/20251102T100000Z\x1b[0m\n"
            "  \x1b[33m~ archive updates (none) -> http://deb.debian.org/debian bookworm-updates "
            "main\x1b[0m\n"
            "debian\n"
            "  \x1b[33m~ base-files 12.4+deb12u11 -> 12.4+deb12u12 (amd64) from bookworm\x1b[0m\n"
            "  \x1b[33m~ libc6 2.36-9+deb12u10 -> 2.36-9+deb12u13 (amd64) bookworm -> "
            "bookworm-security [security]\x1b[0m\n"
            "  \x1b[32m+ libfoo 1.0-1 (amd64) from bookworm\x1b[0m\n"
            "  \x1b[1;33m~ libgnutls30 3.7.9-2+deb12u5 -> 3.7.9-2+deb12u4 (amd64) "
            "bookworm-security -> bookworm [downgraded]\x1b[0m\n"
            "  \x1b[31m- libold 0.9-3 (amd64) from bookworm\x1b[0m\n"
            "  \x1b[1;31m! libssl3 3.0.17-1~deb12u2 (amd64) from bookworm-security: rebuilt: "
            "sha256 aaaa1111... -> bbbb2222... (same version, different artifact) "
            "[security]\x1b[0m\n"
            "  \x1b[33m~ tzdata 2025b-0+deb12u1 (all): archive security -> debian (moved)\x1b[0m\n";
        CHECK(diff::render_diff_text(debian_pair(), true) == expected);
    }

    TEST_CASE("the JSON rendering of a Debian base: every .deb field on both sides") {
        const std::string expected = R"({
  "same": false,
  "target": [],
  "base": [
    {
      "field": "archive debian snapshot",
      "before": "",
      "after": "https://snapshot.debian.org/archive/debian/20251102T100000Z"
    },
    {
      "field": "archive updates",
      "before": "",
      "after": "http://deb.debian.org/debian bookworm-updates main"
    }
  ],
  "debian": [
    {
      "name": "base-files",
      "architecture": "amd64",
      "change": "upgraded",
      "before": "12.4+deb12u11",
      "after": "12.4+deb12u12",
      "archive_before": "debian",
      "archive_after": "debian",
      "suite_before": "bookworm",
      "suite_after": "bookworm",
      "security": false,
      "filename_before": "pool/main/b/base-files/base-files_12.4+deb12u11_amd64.deb",
      "filename_after": "pool/main/b/base-files/base-files_12.4+deb12u12_amd64.deb",
      "sha256_before": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "sha256_after": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    },
    {
      "name": "libc6",
      "architecture": "amd64",
      "change": "upgraded",
      "before": "2.36-9+deb12u10",
      "after": "2.36-9+deb12u13",
      "archive_before": "debian",
      "archive_after": "security",
      "suite_before": "bookworm",
      "suite_after": "bookworm-security",
      "security": true,
      "filename_before": "pool/main/l/libc6/libc6_2.36-9+deb12u10_amd64.deb",
      "filename_after": "pool/main/l/libc6/libc6_2.36-9+deb12u13_amd64.deb",
      "sha256_before": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "sha256_after": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    },
    {
      "name": "libfoo",
      "architecture": "amd64",
      "change": "added",
      "before": null,
      "after": "1.0-1",
      "archive_before": "",
      "archive_after": "debian",
      "suite_before": "",
      "suite_after": "bookworm",
      "security": false,
      "filename_before": "",
      "filename_after": "pool/main/l/libfoo/libfoo_1.0-1_amd64.deb",
      "sha256_before": "",
      "sha256_after": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    },
    {
      "name": "libgnutls30",
      "architecture": "amd64",
      "change": "downgraded",
      "before": "3.7.9-2+deb12u5",
      "after": "3.7.9-2+deb12u4",
      "archive_before": "security",
      "archive_after": "debian",
      "suite_before": "bookworm-security",
      "suite_after": "bookworm",
      "security": false,
      "filename_before": "pool/main/l/libgnutls30/libgnutls30_3.7.9-2+deb12u5_amd64.deb",
      "filename_after": "pool/main/l/libgnutls30/libgnutls30_3.7.9-2+deb12u4_amd64.deb",
      "sha256_before": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "sha256_after": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    },
    {
      "name": "libold",
      "architecture": "amd64",
      "change": "removed",
      "before": "0.9-3",
      "after": null,
      "archive_before": "debian",
      "archive_after": "",
      "suite_before": "bookworm",
      "suite_after": "",
      "security": false,
      "filename_before": "pool/main/l/libold/libold_0.9-3_amd64.deb",
      "filename_after": "",
      "sha256_before": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "sha256_after": ""
    },
    {
      "name": "libssl3",
      "architecture": "amd64",
      "change": "rebuilt",
      "before": "3.0.17-1~deb12u2",
      "after": "3.0.17-1~deb12u2",
      "archive_before": "security",
      "archive_after": "security",
      "suite_before": "bookworm-security",
      "suite_after": "bookworm-security",
      "security": true,
      "filename_before": "pool/main/l/libssl3/libssl3_3.0.17-1~deb12u2_amd64.deb",
      "filename_after": "pool/main/l/libssl3/libssl3_3.0.17-1~deb12u2_amd64.deb",
      "sha256_before": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "sha256_after": "bbbb2222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    },
    {
      "name": "tzdata",
      "architecture": "all",
      "change": "moved",
      "before": "2025b-0+deb12u1",
      "after": "2025b-0+deb12u1",
      "archive_before": "security",
      "archive_after": "debian",
      "suite_before": "bookworm-security",
      "suite_after": "bookworm",
      "security": false,
      "filename_before": "pool/main/t/tzdata/tzdata_2025b-0+deb12u1_all.deb",
      "filename_after": "pool/main/t/tzdata/tzdata_2025b-0+deb12u1_all.deb",
      "sha256_before": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "sha256_after": "aaaa1111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    }
  ],
  "torch": [],
  "nvidia": [],
  "packages": [],
  "sonames": {
    "changes": [],
    "glibc": null,
    "glibcxx": null,
    "cuda_majors_added": [],
    "cuda_majors_removed": []
  },
  "gpu_architectures": [],
  "recipe": []
}
)";
        CHECK(diff::render_diff_json(debian_pair()) == expected);
    }

    TEST_CASE("the Markdown rendering of a Debian base: a table, the rebuilt .deb warned of") {
        const std::string expected = R"(### Lock changes

> **Warning:** libssl3 3.0.17-1\~deb12u2 (amd64) was rebuilt under the same version: sha256 aaaa1111... -> bbbb2222...

#### base

| field | before | after |
|---|---|---|
| archive debian snapshot | (none) | https://snapshot.debian.org/archive/debian/20251102T100000Z |
| archive updates | (none) | http://deb.debian.org/debian bookworm-updates main |

#### debian

| package | architecture | before | after | suite | change |
|---|---|---|---|---|---|
| base-files | amd64 | 12.4+deb12u11 | 12.4+deb12u12 | bookworm | upgraded |
| libc6 | amd64 | 2.36-9+deb12u10 | 2.36-9+deb12u13 | bookworm -> bookworm-security | upgraded [security] |
| libfoo | amd64 |  | 1.0-1 | bookworm | added |
| libgnutls30 | amd64 | 3.7.9-2+deb12u5 | 3.7.9-2+deb12u4 | bookworm-security -> bookworm | downgraded |
| libold | amd64 | 0.9-3 |  | bookworm | removed |
| **libssl3** | **amd64** | **3.0.17-1\~deb12u2** | **3.0.17-1\~deb12u2** | **bookworm-security** | **rebuilt: sha256 aaaa1111... -> bbbb2222... [security]** |
| tzdata | all | 2025b-0+deb12u1 | 2025b-0+deb12u1 | bookworm-security -> bookworm | moved (archive security -> debian) |
)";
        CHECK(diff::render_diff_markdown(debian_pair()) == expected);
    }

    TEST_CASE("an equal pair renders as one line, one sentence and an empty JSON shape") {
        const diff::LockDiff diff = equal_pair();
        REQUIRE(diff.same());
        CHECK(diff::render_diff_text(diff, false) == "no difference in meaning\n");
        CHECK(diff::render_diff_text(diff, true) == "no difference in meaning\n");
        CHECK(diff::render_diff_markdown(diff) ==
              "### Lock changes\n\nThe two locks do not differ in meaning.\n");
        const std::string expected = R"({
  "same": true,
  "target": [],
  "base": [],
  "debian": [],
  "torch": [],
  "nvidia": [],
  "packages": [],
  "sonames": {
    "changes": [],
    "glibc": null,
    "glibcxx": null,
    "cuda_majors_added": [],
    "cuda_majors_removed": []
  },
  "gpu_architectures": [],
  "recipe": []
}
)";
        CHECK(diff::render_diff_json(diff) == expected);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
