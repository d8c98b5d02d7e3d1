// Python environments inside a root: where their site-packages are, which interpreter runs them,
// and the distributions installed there (METADATA, RECORD), for the integrity checks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_tree.hpp"
#include "python/record.hpp"
#include "util/result.hpp"

namespace rootlock::python {

// pyvenv.cfg as site.py reads it: "key = value" lines, keys case-insensitive, anything else
// ignored (site.py never fails on this file, so neither do we).
struct PyvenvConfig {
    std::string home;     // the directory of the base interpreter, root-absolute
    std::string version;  // "version", else virtualenv's "version_info"; may be empty
    bool include_system_site_packages = false;
};

PyvenvConfig parse_pyvenv_cfg(std::string_view text);

// One installed .dist-info. Legacy .egg-info directories are not read: they have no RECORD
// (pip cannot uninstall them either), so none of the file checks could use them.
struct Distribution {
    std::string name;          // PEP 503 normalised: "nvidia-cudnn-cu13"
    std::string display_name;  // as METADATA spells it: "nvidia_cudnn_cu13"
    std::string version;
    std::string dist_info_path;  // canonical, root-absolute
    std::string installer;       // first line of INSTALLER ("pip", "uv"); empty when absent
    bool has_record = false;     // false when RECORD is missing or unreadable
    std::vector<RecordEntry> record;
    // record[i].path joined to site-packages and normalised lexically (RECORD may hold
    // "../../../bin/x"); parallel to `record`.
    std::vector<std::string> installed_paths;
    std::vector<std::string> requires_dist;
    std::optional<std::string> requires_python;
};

struct PythonEnvironment {
    std::string prefix;         // "/opt/venv", "/usr", "/usr/local"
    std::string site_packages;  // canonical, root-absolute
    std::string version;        // "3.11"; empty when nothing in the root says which
    bool is_venv = false;       // pyvenv.cfg at the prefix
    std::optional<PyvenvConfig> pyvenv;
    // Debian's /usr/lib/python3/dist-packages: its files belong to dpkg, and its RECORDs list
    // build-time paths ("../scripts/pip") that were never installed.
    bool managed_by_distro = false;
    std::optional<std::string> interpreter;   // canonical path of the python that runs it
    std::vector<Distribution> distributions;  // sorted by name, then dist_info_path
    // Located texts for what is broken but does not stop the scan ("PATH: problem"): a
    // missing or malformed METADATA or RECORD, a venv whose interpreter is gone.
    std::vector<std::string> problems;
};

// Finds the environments at or under `paths` (root-absolute; "/" is the whole root), sorted by
// site_packages and each listed once. Fast by design: the usual system locations
// (/usr/lib/python3*, /usr/local/lib/python3*, lib64 too) are probed directly, and each given
// path is walked only k_environment_search_depth levels deep, never into site-packages,
// __pycache__, symlinked directories, or (unless named) /proc, /sys, /dev, /run, /usr/share,
// /usr/include, /usr/src. A given path inside a site-packages finds that environment alone.
// Fails only for a given path that does not exist.
inline constexpr int k_environment_search_depth = 6;
util::Result<std::vector<PythonEnvironment>> find_environments(
    const fs::FileTree& tree, const std::vector<std::string>& paths);

// Reads one environment at `site_packages` (canonical), with its distributions.
PythonEnvironment read_environment(const fs::FileTree& tree, const std::string& site_packages);

// The distribution called `name` in any spelling PEP 503 folds together; nullptr when absent.
const Distribution* find_distribution(const PythonEnvironment& environment, std::string_view name);

}  // namespace rootlock::python
