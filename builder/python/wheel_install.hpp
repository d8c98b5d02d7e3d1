// Installing a scanned wheel into a venv the way pip 24 does, as pure functions: where each
// entry lands, the console-script wrappers, the rewritten "#!python" scripts and the new RECORD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fs/overlay_tree.hpp"
#include "python/wheel_scan.hpp"
#include "util/result.hpp"

namespace rootlock::python {

struct InstallScheme {
    std::string venv;            // "/opt/venv" (root-absolute)
    std::string python_version;  // "3.11", or "3.11.2" when the patch level is known
};

// "3.11" from the scheme's python_version.
std::string python_major_minor(const InstallScheme& scheme);
// VENV/lib/pythonX.Y/site-packages: purelib and platlib are one directory in a venv (no lib64
// split; lib64 is a symlink to lib).
std::string site_packages(const InstallScheme& scheme);

// Where a wheel entry lands (root-absolute): top-level paths and NAME.data/purelib|platlib/P go
// to site-packages; NAME.data/scripts/P to VENV/bin/P; NAME.data/headers/P to
// VENV/include/site/pythonX.Y/<METADATA Name>/P; NAME.data/data/P to VENV/P. Errors: "PATH:
// unknown .data scheme 'S'" and "PATH: names no file inside its .data scheme".
util::Result<std::string> installed_path(const WheelScan& scan, const WheelEntry& entry,
                                         const InstallScheme& scheme);

// One [console_scripts] or [gui_scripts] entry point of entry_points.txt.
struct ConsoleScript {
    std::string name;      // the file name in VENV/bin
    std::string module;    // "torch.distributed.run"
    std::string function;  // "main", or "a.b" (a dotted attribute)
    bool gui = false;      // written the same way on Linux
};

// Parses entry_points.txt as importlib.metadata does ("[group]" headers, "name = value" lines,
// '#' and ';' comments) and returns the scripts of both groups, sorted by name. Errors:
// "NAME:LINE: problem", e.g. a value without ":function" (pip's MissingCallableSuffix) or a
// script name that is not a plain file name.
util::Result<std::vector<ConsoleScript>> parse_console_scripts(std::string_view text,
                                                               const std::string& name);

// The wrapper pip's ScriptMaker writes, with "#!PYTHON" as its first line.
std::string script_wrapper(const ConsoleScript& script, const std::string& python);

// What installing writes besides the wheel's own files: INSTALLER holds "rootlock\n" (honest
// about who installed it; pip's uninstall does not read it).
inline constexpr std::string_view k_installer_text = "rootlock\n";

struct InstalledFile {
    std::string path;     // root-absolute
    std::string content;  // when has_content: generated, rewritten, or held by the scan
    bool has_content = false;
    uint64_t size = 0;
    uint32_t mode = 0644;
    const WheelEntry* source = nullptr;  // the wheel entry it comes from; nullptr if generated
};

// Every file pip would write for `scan` into the venv of `scheme`, sorted by path:
// - each wheel entry (0755 when stored executable, else 0644, as pip extracts them), the
//   dist-info texts (METADATA, WHEEL, entry_points.txt) with content;
// - NAME.data/scripts files whose first line starts with "#!python" get that whole line
//   replaced by "#!VENV/bin/python" (pip's fix_script), so their content is held;
// - console_scripts and gui_scripts wrappers in VENV/bin, mode 0755;
// - DIST.dist-info/INSTALLER, REQUESTED (empty, only when `requested`), and RECORD (0644).
// RECORD is written as pip writes it: one row per file above, paths relative to site-packages
// ("../../../bin/x"), "sha256=" digests and sizes (RECORD's own row without them), rows
// sorted bytewise, CSV quoting as Python's csv module, "\r\n" line ends. No .pyc files are
// compiled here (pip compiles by default; a build asked for them adds them with add_compiled).
// `base_python` is accepted for interface symmetry with add_venv and is not written anywhere.
util::Result<std::vector<InstalledFile>> install_plan(const WheelScan& scan,
                                                      const InstallScheme& scheme, bool requested,
                                                      const std::string& base_python);

// pip's compile step after install_plan: each `pycs` entry (root-absolute path under
// site-packages -> the .pyc bytes) joins the plan as a generated 0644 file, and the plan's
// RECORD is rewritten to list them with their digests, as pip records the files it compiled.
// The plan stays sorted by path. Errors: a path the wheel already installs.
util::Status add_compiled(std::vector<InstalledFile>& plan, const InstallScheme& scheme,
                          std::vector<std::pair<std::string, std::string>> pycs);

// Adds an empty venv as `python -m venv --without-pip` makes it: VENV/pyvenv.cfg (home =
// dirname(base_python), include-system-site-packages = false, version = the scheme's version),
// bin/python -> base_python, bin/python3 and bin/pythonX.Y -> python, include/,
// lib/pythonX.Y/site-packages/, and lib64 -> lib.
util::Status add_venv(fs::OverlayTree& tree, const InstallScheme& scheme,
                      const std::string& base_python);

// An installed ELF object of a wheel whose device code was read (architectures empty when it
// holds none), at the canonical path it got.
struct InstalledDeviceCode {
    std::string path;
    const WheelEntry* entry = nullptr;  // points into the scan given to add_wheel
};

// Adds the files of install_plan(scan, ...) to `tree`: held content as small files, the rest
// with their size and pre-parsed ELF metadata only (the overlay holds no bytes, so each object
// whose device code the scan read is also appended to `device_code`, when given, for the
// coverage check).
util::Status add_wheel(fs::OverlayTree& tree, const WheelScan& scan, const InstallScheme& scheme,
                       bool requested, const std::string& base_python,
                       std::vector<InstalledDeviceCode>* device_code = nullptr);

}  // namespace rootlock::python
