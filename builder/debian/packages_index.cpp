// Packages indexes: one BinaryPackage per paragraph, with every field rootlock relies on
// (pool path, size, SHA256, version) checked so that a bad index fails before any download.
#include "debian/packages_index.hpp"

#include <utility>

#include "debian/deb822.hpp"
#include "debian/deb_version.hpp"
#include "debian/text_checks.hpp"

namespace rootlock::debian {

namespace {

// Reads one paragraph's fields; errors say "FILE:LINE: package \"NAME\": problem".
class PackageReader {
  public:
    PackageReader(const Paragraph& paragraph, const std::string& file_name)
        : m_paragraph(paragraph), m_file_name(file_name) {}

    util::Result<BinaryPackage> read() {
        BinaryPackage package;
        const Field* name = find("Package");
        if (name == nullptr || name->value.empty()) {
            return util::make_error(at(m_paragraph.line), "a paragraph without Package");
        }
        m_name = name->value;
        if (!is_package_name(m_name))
            return error(name->line, "not a valid package name");
        package.name = m_name;

        ROOTLOCK_TRY(version, required("Version"));
        auto parsed = parse_deb_version(version->value);
        if (!parsed)
            return error(version->line, "Version " + parsed.error().text());
        package.version = version->value;

        ROOTLOCK_TRY(architecture, required("Architecture"));
        if (!is_architecture_name(architecture->value)) {
            return error(architecture->line, "Architecture " + util::quote(architecture->value) +
                                                 " is not a valid architecture");
        }
        package.architecture = architecture->value;

        ROOTLOCK_TRY(filename, required("Filename"));
        const std::string& path = filename->value;
        if (path.front() == '/')
            return error(filename->line, "Filename " + util::quote(path) + " is absolute");
        if (has_dot_dot(path))
            return error(filename->line, "Filename " + util::quote(path) + " has \"..\"");
        package.filename = path;

        ROOTLOCK_TRY(size, required("Size"));
        const auto bytes = parse_decimal(size->value);
        if (!bytes)
            return error(size->line, "Size " + util::quote(size->value) + " is not a number");
        package.size = *bytes;

        ROOTLOCK_TRY(sha256, required("SHA256"));
        auto hash = lowercase_hex(sha256->value, 64);
        if (!hash)
            return error(sha256->line,
                         "SHA256 " + util::quote(sha256->value) + " is not 64 hex digits");
        package.sha256 = std::move(*hash);

        const Field* source_field = find("Source");
        auto source =
            source_of(source_field ? &source_field->value : nullptr, package.name, package.version);
        if (!source)
            return error(source_field->line, source.error().message);
        package.source = std::move(source->name);
        package.source_version = std::move(source->version);

        if (const Field* essential = find("Essential")) {
            if (essential->value != "yes" && essential->value != "no") {
                return error(essential->line, "Essential " + util::quote(essential->value) +
                                                  " is neither yes nor no");
            }
            package.essential = essential->value == "yes";
        }
        if (const Field* multi_arch = find("Multi-Arch")) {
            if (!is_multi_arch(multi_arch->value)) {
                return error(multi_arch->line, "Multi-Arch " + util::quote(multi_arch->value) +
                                                   " is not no, same, foreign or allowed");
            }
            package.multi_arch = multi_arch->value;
        }
        package.priority = text_of("Priority");
        package.section = text_of("Section");
        package.depends = text_of("Depends");
        package.pre_depends = text_of("Pre-Depends");
        package.provides = text_of("Provides");
        return package;
    }

  private:
    std::string at(uint32_t line) const { return m_file_name + ":" + std::to_string(line); }

    util::Error error(uint32_t line, const std::string& problem) const {
        return util::make_error(at(line), "package " + util::quote(m_name) + ": " + problem);
    }

    const Field* find(std::string_view name) const {
        for (const Field& field : m_paragraph.fields) {
            if (iequals(field.name, name))
                return &field;
        }
        return nullptr;
    }

    // A field that must be present with a value; an empty one counts as missing.
    util::Result<const Field*> required(std::string_view name) const {
        const Field* field = find(name);
        if (field == nullptr || field->value.empty())
            return error(m_paragraph.line, "no " + std::string(name));
        return field;
    }

    std::string text_of(std::string_view name) const {
        const Field* field = find(name);
        return field == nullptr ? std::string() : field->value;
    }

    const Paragraph& m_paragraph;
    const std::string& m_file_name;
    std::string m_name;
};

}  // namespace

util::Result<std::vector<BinaryPackage>> parse_packages(std::string_view text,
                                                        const std::string& file_name) {
    ROOTLOCK_TRY(paragraphs, parse_deb822(text, file_name));
    std::vector<BinaryPackage> packages;
    packages.reserve(paragraphs.size());
    for (const Paragraph& paragraph : paragraphs) {
        ROOTLOCK_TRY(package, PackageReader(paragraph, file_name).read());
        packages.push_back(std::move(package));
    }
    return packages;
}

}  // namespace rootlock::debian
