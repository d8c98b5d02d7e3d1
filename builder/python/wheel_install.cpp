// pip's install layout for one wheel: scheme paths, entry-point wrappers, the "#!python" fix and
// the RECORD it writes, then the same plan placed into an OverlayTree next to a fresh venv.
#include "python/wheel_install.hpp"

#include "python/venv_scripts.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "fs/path_resolve.hpp"
#include "python/metadata.hpp"
#include "util/quote.hpp"
#include "util/sha256.hpp"

namespace rootlock::python {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
        text.remove_suffix(1);
    return text;
}

bool is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;  // Python identifiers may be non-ASCII
}

// "a.b.c" of identifiers (what distlib's entry-point pattern accepts on each side of ':').
bool is_dotted_name(std::string_view text) {
    if (text.empty() || text.front() == '.' || text.back() == '.')
        return false;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '.') {
            if (text[i + 1] == '.')
                return false;
        } else if (!is_word(text[i])) {
            return false;
        }
    }
    return true;
}

// A script's file name: distlib's name characters, and never "." or ".." (they would name bin
// itself or the venv).
bool is_script_name(std::string_view name) {
    if (name.empty() || name == "." || name == "..")
        return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return is_word(c) || c == '-' || c == '.' || c == '+'; });
}

// os.path.relpath(path, start) for canonical root-absolute paths, "/"-separated.
std::string relative_to(const std::string& path, const std::string& start) {
    auto parts = [](const std::string& text) {
        std::vector<std::string_view> out;
        std::string_view rest(text);
        while (!rest.empty()) {
            size_t slash = rest.find('/');
            std::string_view part = rest.substr(0, slash);
            if (!part.empty())
                out.push_back(part);
            if (slash == std::string_view::npos)
                break;
            rest.remove_prefix(slash + 1);
        }
        return out;
    };
    auto to = parts(path);
    auto from = parts(start);
    size_t common = 0;
    while (common < to.size() && common < from.size() && to[common] == from[common])
        ++common;
    std::string out;
    for (size_t i = common; i < from.size(); ++i)
        out += out.empty() ? ".." : "/..";
    for (size_t i = common; i < to.size(); ++i) {
        if (!out.empty())
            out += '/';
        out += to[i];
    }
    return out.empty() ? "." : out;
}

// One CSV field as Python's csv.writer (QUOTE_MINIMAL) writes it.
std::string csv_field(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos)
        return std::string(text);
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

std::string record_hash(std::string_view bytes) {
    util::Sha256 hasher;
    hasher.update(bytes);
    return "sha256=" + util::Sha256::to_base64url(hasher.digest());
}

// RECORD as pip writes it for `files` (RECORD itself excluded): the wheel's digests where the
// bytes are the wheel's (the scan checked them against its RECORD), fresh ones where install
// wrote the bytes. Rows sort by path, as pip's tuples do (not by the row text: ',' sorts after
// '+').
std::string record_text(const std::map<std::string, InstalledFile>& files, const std::string& site,
                        const std::string& record_path) {
    std::map<std::string, std::string> rows;
    for (const auto& [path, file] : files) {
        std::string digest = file.has_content || file.source == nullptr
                                 ? record_hash(file.content)
                                 : "sha256=" + file.source->sha256_base64;
        rows.emplace(relative_to(path, site), digest + "," + std::to_string(file.size));
    }
    rows.emplace(relative_to(record_path, site), ",");
    std::string record;
    for (const auto& [path, columns] : rows)
        record += csv_field(path) + "," + columns + "\r\n";
    return record;
}

InstalledFile generated(std::string path, std::string content, uint32_t mode) {
    InstalledFile file;
    file.path = std::move(path);
    file.size = content.size();
    file.content = std::move(content);
    file.has_content = true;
    file.mode = mode;
    return file;
}

}  // namespace

std::string python_major_minor(const InstallScheme& scheme) {
    const std::string& version = scheme.python_version;
    size_t first = version.find('.');
    if (first == std::string::npos)
        return version;
    return version.substr(0, version.find('.', first + 1));
}

std::string site_packages(const InstallScheme& scheme) {
    return fs::join(scheme.venv, "lib/python" + python_major_minor(scheme) + "/site-packages");
}

util::Result<std::string> installed_path(const WheelScan& scan, const WheelEntry& entry,
                                         const InstallScheme& scheme) {
    const std::string& path = entry.path;
    if (scan.data_dir.empty() || !starts_with(path, scan.data_dir + "/"))
        return fs::join(site_packages(scheme), path);
    std::string_view rest = std::string_view(path).substr(scan.data_dir.size() + 1);
    size_t slash = rest.find('/');
    std::string_view key = rest.substr(0, slash);
    std::string_view inner = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
    if (inner.empty())
        return util::make_error(path, "names no file inside its .data scheme");
    std::string root;
    if (key == "purelib" || key == "platlib") {
        root = site_packages(scheme);
    } else if (key == "scripts") {
        root = fs::join(scheme.venv, "bin");
    } else if (key == "headers") {
        // pip's venv scheme: include/site/pythonX.Y/NAME, NAME as the distribution spells it.
        auto metadata = parse_metadata(scan.metadata, scan.dist_info + "/METADATA");
        if (!metadata.ok())
            return metadata.error();
        root = fs::join(scheme.venv,
                        "include/site/python" + python_major_minor(scheme) + "/" + metadata->name);
    } else if (key == "data") {
        root = scheme.venv;
    } else {
        return util::make_error(path, fmt::format("unknown .data scheme '{}'", key));
    }
    // Scan already refused ".." and empty parts; this guards callers that built entries by hand.
    std::string joined = fs::join(root, inner);
    if (!starts_with(joined, root + "/"))
        return util::make_error(path, "escapes its .data scheme");
    return joined;
}

util::Result<std::vector<ConsoleScript>> parse_console_scripts(std::string_view text,
                                                               const std::string& name) {
    std::map<std::string, ConsoleScript> scripts;  // a later definition replaces an earlier one
    std::string group;
    size_t line_number = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view line = trim(text.substr(pos, end - pos));
        pos = end + 1;
        ++line_number;
        auto fail = [&](const std::string& message) {
            return util::make_error(fmt::format("{}:{}", name, line_number), message);
        };
        if (line.empty() || line.front() == '#' || line.front() == ';')
            continue;
        if (line.front() == '[') {
            if (line.back() != ']')
                return fail("unterminated section header");
            group = std::string(trim(line.substr(1, line.size() - 2)));
            continue;
        }
        if (group != "console_scripts" && group != "gui_scripts")
            continue;
        size_t equals = line.find('=');
        if (equals == std::string_view::npos)
            return fail("expected 'name = module:function'");
        ConsoleScript script;
        script.name = std::string(trim(line.substr(0, equals)));
        script.gui = group == "gui_scripts";
        std::string_view value = trim(line.substr(equals + 1));
        if (!is_script_name(script.name))
            return fail("'" + util::printable(script.name) + "' is not a script file name");
        if (size_t extras = value.find('['); extras != std::string_view::npos) {
            if (value.back() != ']')
                return fail("unterminated extras in '" + util::printable(value) + "'");
            value = trim(value.substr(0, extras));
        }
        size_t colon = value.find(':');
        if (colon == std::string_view::npos) {
            return fail("'" + util::printable(value) +
                        "' has no ':function' (a callable suffix is required)");
        }
        script.module = std::string(trim(value.substr(0, colon)));
        script.function = std::string(trim(value.substr(colon + 1)));
        if (!is_dotted_name(script.module) || !is_dotted_name(script.function))
            return fail("'" + util::printable(value) + "' is not module:function");
        std::string key = script.name;
        scripts.insert_or_assign(std::move(key), std::move(script));
    }
    std::vector<ConsoleScript> out;
    for (auto& [key, script] : scripts)
        out.push_back(std::move(script));
    return out;
}

std::string script_wrapper(const ConsoleScript& script, const std::string& python) {
    std::string import_name = script.function.substr(0, script.function.find('.'));
    return fmt::format(
        "#!{}\n"
        "# -*- coding: utf-8 -*-\n"
        "import re\n"
        "import sys\n"
        "from {} import {}\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit({}())\n",
        python, script.module, import_name, script.function);
}

util::Result<std::vector<InstalledFile>> install_plan(const WheelScan& scan,
                                                      const InstallScheme& scheme, bool requested,
                                                      const std::string& base_python) {
    (void)base_python;
    const std::string venv_python = fs::join(scheme.venv, "bin/python");
    const std::string site = site_packages(scheme);
    const std::string dist_info = fs::join(site, scan.dist_info);
    const std::string record_path = dist_info + "/RECORD";
    std::map<std::string, InstalledFile> files;
    auto add = [&](InstalledFile file) -> util::Status {
        std::string key = file.path;
        if (files.find(key) != files.end())
            return util::make_error(scan.filename.filename, "two files install to " + key);
        files.emplace(std::move(key), std::move(file));
        return util::ok_status();
    };

    for (const WheelEntry& entry : scan.entries) {
        if (entry.path == scan.dist_info + "/RECORD")
            continue;  // replaced by the RECORD written below
        auto path = installed_path(scan, entry, scheme);
        if (!path.ok())
            return util::make_error(scan.filename.filename, path.error().text());
        InstalledFile file;
        file.path = std::move(path).value();
        file.size = entry.size;
        file.mode = entry.executable ? 0755 : 0644;
        file.source = &entry;
        if (starts_with(entry.path, scan.dist_info + "/")) {
            const std::string_view name =
                std::string_view(entry.path).substr(scan.dist_info.size() + 1);
            const std::string* text = name == "METADATA"           ? &scan.metadata
                                      : name == "WHEEL"            ? &scan.wheel
                                      : name == "entry_points.txt" ? &scan.entry_points
                                                                   : nullptr;
            if (text != nullptr) {
                file.content = *text;
                file.has_content = true;
            }
        }
        if (entry.content) {
            file.content = *entry.content;  // held anyway: the tree can then read it
            file.has_content = true;
        }
        if (entry.content && starts_with(entry.path, scan.data_dir + "/scripts/") &&
            starts_with(*entry.content, "#!python")) {
            // pip's fix_script: the whole first line goes, arguments included.
            size_t newline = entry.content->find('\n');
            std::string rest =
                newline == std::string::npos ? std::string() : entry.content->substr(newline + 1);
            file.content = "#!" + venv_python + "\n" + rest;
            file.size = file.content.size();
            file.has_content = true;
        }
        if (auto status = add(std::move(file)); !status.ok())
            return status.error();
    }

    auto scripts = parse_console_scripts(
        scan.entry_points, scan.filename.filename + "/" + scan.dist_info + "/entry_points.txt");
    if (!scripts.ok())
        return scripts.error();
    for (const ConsoleScript& script : *scripts) {
        auto status = add(generated(fs::join(scheme.venv, "bin/" + script.name),
                                    script_wrapper(script, venv_python), 0755));
        if (!status.ok())
            return status.error();
    }
    for (auto status :
         {add(generated(dist_info + "/INSTALLER", std::string(k_installer_text), 0644)),
          requested ? add(generated(dist_info + "/REQUESTED", "", 0644)) : util::ok_status()}) {
        if (!status.ok())
            return status.error();
    }

    std::string record = record_text(files, site, record_path);
    if (auto status = add(generated(record_path, std::move(record), 0644)); !status.ok())
        return status.error();

    std::vector<InstalledFile> out;
    out.reserve(files.size());
    for (auto& [path, file] : files)
        out.push_back(std::move(file));
    return out;
}

util::Status add_compiled(std::vector<InstalledFile>& plan, const InstallScheme& scheme,
                          std::vector<std::pair<std::string, std::string>> pycs) {
    if (pycs.empty())
        return util::ok_status();
    const std::string site = site_packages(scheme);
    std::map<std::string, InstalledFile> files;
    std::string record_path;
    for (InstalledFile& file : plan) {
        const bool is_record = file.source == nullptr && file.path.ends_with(".dist-info/RECORD") &&
                               fs::dirname(fs::dirname(file.path)) == site;
        if (is_record)
            record_path = file.path;
        else
            files.emplace(file.path, std::move(file));
    }
    if (record_path.empty())
        return util::make_error(site, "an install plan without its RECORD (a bug)");
    for (auto& [path, bytes] : pycs) {
        if (!path.starts_with(site + "/"))
            return util::make_error(path, "a compiled file outside site-packages (a bug)");
        if (files.contains(path))
            return util::make_error(path, "the wheel already installs this file");
        files.emplace(path, generated(path, std::move(bytes), 0644));
    }
    std::string record = record_text(files, site, record_path);
    files.emplace(record_path, generated(record_path, std::move(record), 0644));
    plan.clear();
    for (auto& [path, file] : files)
        plan.push_back(std::move(file));
    return util::ok_status();
}

util::Status add_venv(fs::OverlayTree& tree, const InstallScheme& scheme,
                      const std::string& base_python) {
    const std::string version = python_major_minor(scheme);
    std::string home = fs::dirname(fs::normalize(base_python));
    std::string cfg = fmt::format("home = {}\ninclude-system-site-packages = false\nversion = {}\n",
                                  home, scheme.python_version);
    const std::string bin = fs::join(scheme.venv, "bin");
    std::vector<util::Result<std::string>> steps;
    steps.push_back(tree.add_dir(scheme.venv));
    steps.push_back(tree.add_file(fs::join(scheme.venv, "pyvenv.cfg"), std::move(cfg)));
    steps.push_back(tree.add_dir(bin));
    for (auto& script : activation_scripts(fs::normalize(scheme.venv)))
        steps.push_back(tree.add_file(bin + "/" + script.name, std::move(script.text)));
    steps.push_back(tree.add_symlink(bin + "/python", fs::normalize(base_python)));
    steps.push_back(tree.add_symlink(bin + "/python3", "python"));
    steps.push_back(tree.add_symlink(bin + "/python" + version, "python"));
    steps.push_back(tree.add_dir(fs::join(scheme.venv, "include")));
    steps.push_back(tree.add_dir(site_packages(scheme)));
    steps.push_back(tree.add_symlink(fs::join(scheme.venv, "lib64"), "lib"));
    for (const auto& step : steps) {
        if (!step.ok())
            return step.error();
    }
    return util::ok_status();
}

util::Status add_wheel(fs::OverlayTree& tree, const WheelScan& scan, const InstallScheme& scheme,
                       bool requested, const std::string& base_python,
                       std::vector<InstalledDeviceCode>* device_code) {
    auto plan = install_plan(scan, scheme, requested, base_python);
    if (!plan.ok())
        return plan.error();
    for (InstalledFile& file : *plan) {
        util::Result<std::string> added = std::string();
        if (file.has_content) {
            added = tree.add_file(file.path, std::move(file.content), file.mode);
        } else {
            fs::SizedFile sized;
            sized.size = file.size;
            sized.mode = file.mode;
            if (file.source != nullptr && file.source->elf)
                sized.elf = std::make_shared<const elf::ElfInfo>(*file.source->elf);
            if (file.source != nullptr)
                sized.elf_error = file.source->elf_error;
            added = tree.add_sized_file(file.path, std::move(sized));
        }
        if (!added.ok())
            return added.error();
        if (device_code != nullptr && file.source != nullptr && read_device_code(*file.source))
            device_code->push_back({*added, file.source});
    }
    return util::ok_status();
}

}  // namespace rootlock::python
