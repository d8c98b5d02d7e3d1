// dpkg's database: the status file's package entries (name, version, state, conffiles) and the
// per-package .md5sums lists, read strictly since a frozen root is only as good as these.
#include "debian/dpkg_status.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "debian/deb822.hpp"
#include "debian/deb_version.hpp"
#include "debian/text_checks.hpp"

namespace rootlock::debian {

namespace {

struct Located {
    InstalledPackage package;
    uint32_t line = 0;
};

// Reads one status paragraph; errors say "FILE:LINE: package \"NAME\": problem".
class StatusReader {
  public:
    StatusReader(const Paragraph& paragraph, const Field& name, const std::string& file_name)
        : m_paragraph(paragraph), m_name(name), m_file_name(file_name) {}

    util::Result<InstalledPackage> read() {
        InstalledPackage package;
        package.name = m_name.value;
        if (!is_package_name(package.name))
            return error(m_name.line, "not a valid package name");

        const Field* status = find("Status");
        if (status == nullptr)
            return error(m_paragraph.line, "no Status");
        if (split_blanks(status->value).size() != 3) {
            return error(status->line,
                         "Status " + util::quote(status->value) + " is not WANT FLAG STATE");
        }
        package.status = status->value;
        const bool installed = package.installed();

        if (const Field* version = find("Version")) {
            auto parsed = parse_deb_version(version->value);
            if (!parsed)
                return error(version->line, "Version " + parsed.error().text());
            package.version = version->value;
        } else if (installed) {
            return error(m_paragraph.line, "no Version");
        }
        if (const Field* architecture = find("Architecture")) {
            if (!is_architecture_name(architecture->value)) {
                return error(architecture->line, "Architecture " +
                                                     util::quote(architecture->value) +
                                                     " is not a valid architecture");
            }
            package.architecture = architecture->value;
        } else if (installed) {
            return error(m_paragraph.line, "no Architecture");
        }

        const Field* source_field = find("Source");
        auto source =
            source_of(source_field ? &source_field->value : nullptr, package.name, package.version);
        if (!source)
            return error(source_field->line, source.error().message);
        package.source = std::move(source->name);
        package.source_version = std::move(source->version);
        if (const Field* multi_arch = find("Multi-Arch")) {
            if (!is_multi_arch(multi_arch->value)) {
                return error(multi_arch->line, "Multi-Arch " + util::quote(multi_arch->value) +
                                                   " is not no, same, foreign or allowed");
            }
            package.multi_arch = multi_arch->value;
        }
        if (const Field* conffiles = find("Conffiles")) {
            auto status_ok = read_conffiles(*conffiles, package.conffiles);
            if (!status_ok)
                return status_ok.error();
        }
        return package;
    }

  private:
    util::Error error(uint32_t line, const std::string& problem) const {
        return util::make_error(m_file_name + ":" + std::to_string(line),
                                "package " + util::quote(m_name.value) + ": " + problem);
    }

    const Field* find(std::string_view name) const {
        for (const Field& field : m_paragraph.fields) {
            if (iequals(field.name, name))
                return &field;
        }
        return nullptr;
    }

    // " /etc/x.conf HASH [obsolete] [remove-on-upgrade]" lines; the path may hold blanks, so
    // words are taken from the end. HASH is an md5, or "newconffile" before the first configure.
    util::Status read_conffiles(const Field& field, std::vector<std::string>& paths) const {
        const auto lines = split_lines(field.value);
        for (size_t i = 0; i < lines.size(); ++i) {
            std::string_view rest = trim_blanks(lines[i]);
            if (rest.empty())
                continue;
            auto bad = [&] {
                return error(field.line + static_cast<uint32_t>(i),
                             "Conffiles line " + util::quote(lines[i]) + " is not \"/PATH HASH\"");
            };
            auto last_word = [&rest] {
                const size_t blank = rest.find_last_of(" \t");
                const std::string_view word =
                    blank == std::string_view::npos ? rest : rest.substr(blank + 1);
                rest = blank == std::string_view::npos ? std::string_view()
                                                       : trim_blanks(rest.substr(0, blank));
                return word;
            };
            std::string_view hash = last_word();
            for (int flags = 0; flags < 2 && (hash == "obsolete" || hash == "remove-on-upgrade");
                 ++flags)
                hash = last_word();
            if (hash != "newconffile" && !lowercase_hex(hash, 32))
                return bad();
            if (rest.empty() || rest.front() != '/')
                return bad();
            paths.emplace_back(rest);
        }
        return util::ok_status();
    }

    const Paragraph& m_paragraph;
    const Field& m_name;
    const std::string& m_file_name;
};

// md5sum's escaped form: a line that starts with '\' has "\\" and "\n" escapes in its name.
std::string unescape(std::string_view path) {
    std::string out;
    for (size_t i = 0; i < path.size(); ++i) {
        if (path[i] == '\\' && i + 1 < path.size()) {
            ++i;
            out.push_back(path[i] == 'n' ? '\n' : path[i]);
        } else {
            out.push_back(path[i]);
        }
    }
    return out;
}

}  // namespace

bool InstalledPackage::installed() const {
    const auto words = split_blanks(status);
    return !words.empty() && words.back() == "installed";
}

util::Result<std::vector<InstalledPackage>> parse_dpkg_status(std::string_view text,
                                                              const std::string& file_name) {
    ROOTLOCK_TRY(paragraphs, parse_deb822(text, file_name));
    std::vector<Located> found;
    for (const Paragraph& paragraph : paragraphs) {
        const Field* name = nullptr;
        for (const Field& field : paragraph.fields) {
            if (iequals(field.name, "Package"))
                name = &field;
        }
        if (name == nullptr)
            continue;
        ROOTLOCK_TRY(package, StatusReader(paragraph, *name, file_name).read());
        found.push_back(Located{std::move(package), paragraph.line});
    }
    auto key = [](const Located& entry) {
        return std::tie(entry.package.name, entry.package.architecture, entry.line);
    };
    std::sort(found.begin(), found.end(),
              [&](const Located& a, const Located& b) { return key(a) < key(b); });
    std::vector<InstalledPackage> packages;
    packages.reserve(found.size());
    for (size_t i = 0; i < found.size(); ++i) {
        const InstalledPackage& package = found[i].package;
        if (!packages.empty() && packages.back().name == package.name &&
            packages.back().architecture == package.architecture) {
            return util::make_error(file_name + ":" + std::to_string(found[i].line),
                                    "package " + util::quote(package.name) +
                                        " appears twice for architecture " +
                                        util::quote(package.architecture));
        }
        packages.push_back(std::move(found[i].package));
    }
    return packages;
}

util::Result<std::vector<Md5sumEntry>> parse_md5sums(std::string_view text,
                                                     const std::string& file_name) {
    std::vector<Md5sumEntry> entries;
    auto lines = split_lines(text);
    if (!lines.empty() && lines.back().empty())
        lines.pop_back();  // the final newline
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string_view line = lines[i];
        auto error = [&](const std::string& problem) {
            return util::make_error(file_name + ":" + std::to_string(i + 1), problem);
        };
        if (line.find('\0') != std::string_view::npos)
            return error("a NUL byte");
        const bool escaped = !line.empty() && line.front() == '\\';
        if (escaped)
            line.remove_prefix(1);
        const size_t blank = line.find(' ');
        const std::string_view digest = line.substr(0, blank);
        auto md5 = lowercase_hex(digest, 32);
        if (!md5)
            return error("digest " + util::quote(digest) + " is not 32 hex digits");
        std::string_view raw_path =
            blank == std::string_view::npos ? std::string_view() : line.substr(blank + 1);
        if (!raw_path.empty() && (raw_path.front() == ' ' || raw_path.front() == '*'))
            raw_path.remove_prefix(1);
        std::string path = escaped ? unescape(raw_path) : std::string(raw_path);
        if (path.empty() || path == "/")
            return error("no path after the digest");
        if (has_dot_dot(path))
            return error("path " + util::quote(path) + " has \"..\"");
        if (path.front() != '/')
            path.insert(0, 1, '/');
        entries.push_back(Md5sumEntry{std::move(*md5), std::move(path)});
    }
    return entries;
}

std::string info_stem(const InstalledPackage& package) {
    if (package.multi_arch == "same")
        return package.name + ":" + package.architecture;
    return package.name;
}

}  // namespace rootlock::debian
