// The pylock reader: toml++ parses, then the tables are walked into the model. Foreign locks are
// welcome (unknown keys are skipped), but [tool.rootlock] is ours and is checked strictly.
#include <toml++/toml.h>

#include <algorithm>
#include <sstream>

#include "gpu/compute_capability.hpp"
#include "pylock/pylock.hpp"
#include "pylock/toml_emit.hpp"
#include "python/metadata.hpp"
#include "recipe/recipe_reader.hpp"
#include "util/atomic_file.hpp"
#include "util/quote.hpp"

namespace rootlock::pylock {

namespace {

struct Position {
    uint32_t line = 1;
    uint32_t column = 1;
};

Position position_of(const toml::source_region& region) {
    if (region.begin.line == 0)
        return Position{};
    return Position{region.begin.line, region.begin.column};
}

std::string quoted(std::string_view text) {
    return toml_string(text);
}

using recipe::detail::type_phrase;  // one spelling of TOML types for every reader

struct Problem {
    Position at;
    std::string message;
};

// A table being read and its path in messages ("" for the document, "packages[2].wheels[0]").
struct View {
    const toml::table& table;
    std::string path;

    std::string key_path(std::string_view key) const {
        return path.empty() ? std::string(key) : path + "." + std::string(key);
    }
};

class Reader {
  public:
    Reader(std::string_view text, const std::string& file) : m_text(text), m_file(file) {}

    void add(Position at, std::string message) {
        m_problems.push_back(Problem{at, std::move(message)});
    }
    void add(const toml::node& node, std::string message) {
        add(position_of(node.source()), std::move(message));
    }

    // The problem nearest the start of the file; the first one found among equals.
    std::optional<util::Error> first() const {
        if (m_problems.empty())
            return std::nullopt;
        const auto earliest = std::min_element(
            m_problems.begin(), m_problems.end(), [](const Problem& a, const Problem& b) {
                return std::tie(a.at.line, a.at.column) < std::tie(b.at.line, b.at.column);
            });
        return located(earliest->at, earliest->message);
    }

    util::Error located(Position at, const std::string& message) const {
        return util::make_error(
            m_file + ":" + std::to_string(at.line) + ":" + std::to_string(at.column), message);
    }

    const toml::node* get(const View& view, std::string_view key, bool required) {
        const toml::node* node = view.table.get(key);
        if (node == nullptr && required) {
            const std::string owner = view.path.empty() ? "" : view.path + " is ";
            add(position_of(view.table.source()), owner + "missing required key " + quoted(key));
        }
        return node;
    }

    void wrong_type(const View& view, std::string_view key, const toml::node& node,
                    std::string_view expected) {
        add(node, view.key_path(key) + ": expected " + std::string(expected) + ", found " +
                      type_phrase(node.type()));
    }

    std::optional<std::string> string(const View& view, std::string_view key, bool required) {
        const toml::node* node = get(view, key, required);
        if (node == nullptr)
            return std::nullopt;
        if (const auto* value = node->as_string())
            return value->get();
        wrong_type(view, key, *node, "a string");
        return std::nullopt;
    }

    std::optional<bool> boolean(const View& view, std::string_view key, bool required) {
        const toml::node* node = get(view, key, required);
        if (node == nullptr)
            return std::nullopt;
        if (const auto* value = node->as_boolean())
            return value->get();
        wrong_type(view, key, *node, "a boolean");
        return std::nullopt;
    }

    // A count or size: an integer that is not negative.
    std::optional<uint64_t> count(const View& view, std::string_view key, bool required) {
        const toml::node* node = get(view, key, required);
        if (node == nullptr)
            return std::nullopt;
        const auto* value = node->as_integer();
        if (value == nullptr) {
            wrong_type(view, key, *node, "an integer");
            return std::nullopt;
        }
        if (value->get() < 0) {
            add(*node, view.key_path(key) + " " + std::to_string(value->get()) + " is negative");
            return std::nullopt;
        }
        return static_cast<uint64_t>(value->get());
    }

    std::vector<std::string> strings(const View& view, std::string_view key, bool required) {
        std::vector<std::string> values;
        const toml::node* node = get(view, key, required);
        if (node == nullptr)
            return values;
        const auto* array = node->as_array();
        if (array == nullptr) {
            wrong_type(view, key, *node, "an array of strings");
            return values;
        }
        for (std::size_t i = 0; i < array->size(); ++i) {
            const toml::node& element = *array->get(i);
            if (const auto* value = element.as_string()) {
                values.push_back(value->get());
            } else {
                add(element, view.key_path(key) + "[" + std::to_string(i) +
                                 "]: expected a string, found " + type_phrase(element.type()));
            }
        }
        return values;
    }

    const toml::table* table(const View& view, std::string_view key, bool required) {
        const toml::node* node = get(view, key, required);
        if (node == nullptr)
            return nullptr;
        if (const auto* value = node->as_table())
            return value;
        wrong_type(view, key, *node, "a table");
        return nullptr;
    }

    // The tables of an array of tables, with their paths; other elements are reported.
    std::vector<View> tables(const View& view, std::string_view key, bool required) {
        std::vector<View> views;
        const toml::node* node = get(view, key, required);
        if (node == nullptr)
            return views;
        const auto* array = node->as_array();
        if (array == nullptr) {
            wrong_type(view, key, *node, "an array of tables");
            return views;
        }
        for (std::size_t i = 0; i < array->size(); ++i) {
            const toml::node& element = *array->get(i);
            const std::string path = view.key_path(key) + "[" + std::to_string(i) + "]";
            if (const auto* value = element.as_table()) {
                views.push_back(View{*value, path});
            } else {
                add(element, path + ": expected a table, found " + type_phrase(element.type()));
            }
        }
        return views;
    }

    void check_keys(const View& view, const std::vector<std::string_view>& allowed) {
        for (const auto& [key, node] : view.table) {
            if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end())
                add(position_of(key.source()),
                    "unknown key " + quoted(key.str()) + " in " + view.path);
        }
    }

    // The date-time as written in the file: the index's RFC 3339 text is kept verbatim, which
    // toml++'s parsed fields cannot give back (trailing zeros of a fraction, 'z' for 'Z').
    std::optional<std::string> date_time(const View& view, std::string_view key) {
        const toml::node* node = get(view, key, false);
        if (node == nullptr)
            return std::nullopt;
        const auto* value = node->as_date_time();
        if (value == nullptr) {
            wrong_type(view, key, *node, "a date-time");
            return std::nullopt;
        }
        const std::string written = source_text(node->source());
        if (is_toml_date_time(written))
            return written;
        std::ostringstream formatted;
        formatted << *value;
        return formatted.str();
    }

    // An artifact with `hashes = {}`: refused by the strict reader, a warning for the lenient
    // one; kept apart from the problems so that every such artifact can be named at once.
    void add_empty_hashes(Position at, std::string artifact) {
        m_empty_hashes.push_back(Problem{at, std::move(artifact)});
    }
    const std::vector<Problem>& empty_hashes() const { return m_empty_hashes; }

  private:
    // The text of a one-line region; toml++ counts columns in code points, not bytes.
    std::string source_text(const toml::source_region& region) const {
        if (region.begin.line == 0 || region.begin.line != region.end.line ||
            region.end.column <= region.begin.column)
            return "";
        std::size_t offset = 0;
        for (uint32_t line = 1; line < region.begin.line; ++line) {
            offset = m_text.find('\n', offset);
            if (offset == std::string_view::npos)
                return "";
            ++offset;
        }
        for (uint32_t column = 1; column < region.begin.column; ++column) {
            if (offset >= m_text.size())
                return "";
            ++offset;
            while (offset < m_text.size() &&
                   (static_cast<uint8_t>(m_text[offset]) & 0xC0u) == 0x80u)
                ++offset;
        }
        const std::size_t length = region.end.column - region.begin.column;
        if (offset > m_text.size())
            return "";
        return std::string(m_text.substr(offset, length));
    }

    std::string_view m_text;
    const std::string& m_file;
    std::vector<Problem> m_problems;
    std::vector<Problem> m_empty_hashes;
};

// Hex lengths of the digests whose size is known; other algorithms are kept unchecked.
std::optional<std::size_t> hex_length(std::string_view algorithm) {
    if (algorithm == "sha256")
        return 64;
    if (algorithm == "sha384")
        return 96;
    if (algorithm == "sha512")
        return 128;
    return std::nullopt;
}

// The last segment of a URL or path, without query or fragment: what names an artifact that
// has no name key.
std::string last_segment(std::string_view where) {
    where = where.substr(0, where.find_first_of("?#"));
    if (const std::size_t slash = where.find_last_of('/'); slash != std::string_view::npos)
        where = where.substr(slash + 1);
    return std::string(where);
}

// An artifact's `hashes`; the position of an empty table, which the caller names.
std::optional<Position> read_hashes(Reader& r, const View& view,
                                    std::map<std::string, std::string>& out) {
    const toml::table* hashes = r.table(view, "hashes", true);
    if (hashes == nullptr)
        return std::nullopt;
    const View hashes_view{*hashes, view.key_path("hashes")};
    if (hashes->empty())
        return position_of(hashes->source());
    for (const auto& [key, node] : *hashes) {
        const std::string algorithm(key.str());
        const auto digest = r.string(hashes_view, algorithm, false);
        if (!digest)
            continue;
        const auto length = hex_length(algorithm);
        if (length && !is_lower_hex(*digest, *length)) {
            r.add(node, hashes_view.key_path(algorithm) + " " + quoted(*digest) + " is not " +
                            std::to_string(*length) + " lowercase hex digits");
            continue;
        }
        out.emplace(algorithm, *digest);
    }
    return std::nullopt;
}

// PEP 751 asks every file source for url or path.
void require_url_or_path(Reader& r, const View& view) {
    if (!view.table.contains("url") && !view.table.contains("path"))
        r.add(position_of(view.table.source()), view.path + " has neither \"url\" nor \"path\"");
}

// "foo 1.0: wheel foo-1.0-py3-none-any.whl", for the messages about one artifact.
std::string artifact_phrase(const LockPackage& package, std::string_view kind,
                            const std::string& name, const std::string& url,
                            const std::string& path) {
    const std::string who =
        package.version.empty() ? package.name : package.name + " " + package.version;
    std::string what = name.empty() ? last_segment(url.empty() ? path : url) : name;
    return who + ": " + std::string(kind) + (what.empty() ? "" : " " + what);
}

LockWheel read_wheel(Reader& r, const View& view, const LockPackage& package) {
    LockWheel wheel;
    wheel.name = r.string(view, "name", false).value_or("");
    wheel.upload_time = r.date_time(view, "upload-time");
    wheel.url = r.string(view, "url", false).value_or("");
    wheel.path = r.string(view, "path", false).value_or("");
    require_url_or_path(r, view);
    wheel.size = r.count(view, "size", false);
    if (auto empty = read_hashes(r, view, wheel.hashes))
        r.add_empty_hashes(*empty,
                           artifact_phrase(package, "wheel", wheel.name, wheel.url, wheel.path));
    return wheel;
}

// [packages.sdist] (`kind` "sdist") or [packages.archive] ("archive").
LockArchive read_archive(Reader& r, const View& view, const LockPackage& package,
                         std::string_view kind) {
    LockArchive archive;
    if (kind == "sdist")
        archive.name = r.string(view, "name", false).value_or("");
    archive.upload_time = r.date_time(view, "upload-time");
    archive.url = r.string(view, "url", false).value_or("");
    archive.path = r.string(view, "path", false).value_or("");
    require_url_or_path(r, view);
    archive.size = r.count(view, "size", false);
    if (kind == "archive")
        archive.subdirectory = r.string(view, "subdirectory", false);
    if (auto empty = read_hashes(r, view, archive.hashes))
        r.add_empty_hashes(*empty,
                           artifact_phrase(package, kind, archive.name, archive.url, archive.path));
    return archive;
}

LockVcs read_vcs(Reader& r, const View& view) {
    LockVcs vcs;
    vcs.type = r.string(view, "type", true).value_or("");
    vcs.url = r.string(view, "url", false).value_or("");
    vcs.path = r.string(view, "path", false).value_or("");
    require_url_or_path(r, view);
    vcs.requested_revision = r.string(view, "requested-revision", false);
    vcs.commit_id = r.string(view, "commit-id", true).value_or("");
    vcs.subdirectory = r.string(view, "subdirectory", false);
    return vcs;
}

LockDirectory read_directory(Reader& r, const View& view) {
    LockDirectory directory;
    directory.path = r.string(view, "path", true).value_or("");
    directory.editable = r.boolean(view, "editable", false);
    directory.subdirectory = r.string(view, "subdirectory", false);
    return directory;
}

// PEP 751: vcs, directory and archive exclude each other and sdist and wheels.
void check_one_source(Reader& r, const View& view) {
    std::vector<std::string_view> present;
    for (std::string_view key : {"vcs", "directory", "archive"}) {
        if (view.table.contains(key))
            present.push_back(key);
    }
    if (present.empty())
        return;
    for (std::string_view key : {"sdist", "wheels"}) {
        if (view.table.contains(key))
            present.push_back(key);
    }
    if (present.size() > 1)
        r.add(*view.table.get(present[1]),
              view.path + " has both " + quoted(present[0]) + " and " + quoted(present[1]) +
                  " (PEP 751: vcs, directory and archive each exclude every other source)");
}

PackageRootlockData read_package_tool(Reader& r, const View& view) {
    r.check_keys(view,
                 {"provides", "needs", "requested", "needs-versions", "yanked", "architectures"});
    PackageRootlockData data;
    data.provides = r.strings(view, "provides", false);
    data.needs = r.strings(view, "needs", false);
    data.requested = r.boolean(view, "requested", false).value_or(false);
    data.needs_versions = r.strings(view, "needs-versions", false);
    data.architectures = r.strings(view, "architectures", false);
    for (const std::string& name : data.architectures) {
        if (auto parsed = gpu::parse_sm_name(name); !parsed.ok()) {
            r.add(*view.table.get("architectures"),
                  view.path + ".architectures: " + parsed.error().message);
        }
    }
    // PEP 592's two spellings, as the simple API's "yanked": a reason, or a boolean.
    if (const toml::node* yanked = r.get(view, "yanked", false)) {
        if (const auto* reason = yanked->as_string())
            data.yanked = reason->get();
        else if (const auto* flag = yanked->as_boolean())
            data.yanked = flag->get() ? std::optional<std::string>("") : std::nullopt;
        else
            r.wrong_type(view, "yanked", *yanked, "a boolean or a string");
    }
    return data;
}

LockPackage read_package(Reader& r, const View& view) {
    LockPackage package;
    if (auto name = r.string(view, "name", true)) {
        const std::string normalized = python::normalize_name(*name);
        if (name->empty())
            r.add(*view.table.get("name"), view.key_path("name") + " is empty");
        else if (*name != normalized)
            r.add(*view.table.get("name"),
                  view.key_path("name") + " " + quoted(*name) +
                      " is not normalized (PEP 503: " + quoted(normalized) + ")");
        package.name = *name;
    }
    package.version = r.string(view, "version", false).value_or("");
    package.marker = r.string(view, "marker", false);
    package.requires_python = r.string(view, "requires-python", false);
    for (const View& entry : r.tables(view, "dependencies", false)) {
        PackageDependency dependency;
        dependency.name = r.string(entry, "name", true).value_or("");
        dependency.version = r.string(entry, "version", false);
        package.dependencies.push_back(std::move(dependency));
    }
    package.index = r.string(view, "index", false).value_or("");
    check_one_source(r, view);
    if (const toml::table* vcs = r.table(view, "vcs", false))
        package.vcs = read_vcs(r, View{*vcs, view.key_path("vcs")});
    if (const toml::table* directory = r.table(view, "directory", false))
        package.directory = read_directory(r, View{*directory, view.key_path("directory")});
    if (const toml::table* archive = r.table(view, "archive", false))
        package.archive =
            read_archive(r, View{*archive, view.key_path("archive")}, package, "archive");
    if (const toml::table* sdist = r.table(view, "sdist", false))
        package.sdist = read_archive(r, View{*sdist, view.key_path("sdist")}, package, "sdist");
    for (const View& entry : r.tables(view, "wheels", false))
        package.wheels.push_back(read_wheel(r, entry, package));
    if (const toml::table* tool = r.table(view, "tool", false)) {
        const View tool_view{*tool, view.key_path("tool")};
        if (const toml::table* ours = r.table(tool_view, "rootlock", false))
            package.rootlock = read_package_tool(r, View{*ours, tool_view.key_path("rootlock")});
    }
    return package;
}

void read_target(Reader& r, const View& view, LockTarget& target) {
    r.check_keys(view,
                 {"python", "python-full", "glibc", "arch", "cuda", "driver", "torch", "gpus"});
    target.python = r.string(view, "python", true).value_or("");
    target.python_full = r.string(view, "python-full", false).value_or("");
    target.glibc = r.string(view, "glibc", true).value_or("");
    target.arch = r.string(view, "arch", true).value_or("");
    target.cuda = r.string(view, "cuda", false).value_or("");
    target.driver = r.string(view, "driver", false).value_or("");
    target.torch = r.string(view, "torch", false).value_or("");
    target.gpus = r.strings(view, "gpus", false);
    for (const std::string& text : target.gpus) {
        if (auto parsed = gpu::parse_compute_capability(text); !parsed.ok())
            r.add(*view.table.get("gpus"), view.path + ".gpus: " + parsed.error().message);
    }
}

void read_base(Reader& r, const View& view, LockBase& base) {
    r.check_keys(view, {"kind", "url", "path", "sha256", "size", "suite", "mirror", "variant",
                        "architecture", "include", "archives", "debs"});
    if (auto kind = r.string(view, "kind", true)) {
        if (*kind != "tarball" && *kind != "debian")
            r.add(*view.table.get("kind"), view.key_path("kind") + " " + quoted(*kind) +
                                               " is neither \"tarball\" nor \"debian\"");
        base.kind = *kind;
    }
    base.url = r.string(view, "url", false).value_or("");
    base.path = r.string(view, "path", false).value_or("");
    if (auto sha256 = r.string(view, "sha256", false)) {
        if (!is_lower_hex(*sha256, 64))
            r.add(*view.table.get("sha256"), view.key_path("sha256") + " " + quoted(*sha256) +
                                                 " is not 64 lowercase hex digits");
        base.sha256 = *sha256;
    }
    base.size = r.count(view, "size", false);
    base.suite = r.string(view, "suite", false).value_or("");
    base.mirror = r.string(view, "mirror", false).value_or("");
    base.variant = r.string(view, "variant", false).value_or("");
    base.architecture = r.string(view, "architecture", false).value_or("");
    base.include = r.strings(view, "include", false);
    for (const View& entry : r.tables(view, "archives", false)) {
        r.check_keys(entry, {"name", "url", "suite", "components", "date", "snapshot", "keyring",
                             "keyring-sha256"});
        LockDebArchive archive;
        archive.name = r.string(entry, "name", true).value_or("");
        archive.url = r.string(entry, "url", true).value_or("");
        archive.suite = r.string(entry, "suite", true).value_or("");
        archive.components = r.strings(entry, "components", true);
        archive.date = r.string(entry, "date", true).value_or("");
        archive.snapshot = r.string(entry, "snapshot", false).value_or("");
        archive.keyring = r.string(entry, "keyring", false).value_or("");
        archive.keyring_sha256 = r.string(entry, "keyring-sha256", false).value_or("");
        base.archives.push_back(std::move(archive));
    }
    for (const View& entry : r.tables(view, "debs", false)) {
        r.check_keys(entry, {"name", "version", "architecture", "archive", "component", "filename",
                             "size", "sha256", "source", "source-version"});
        LockDeb deb;
        deb.name = r.string(entry, "name", true).value_or("");
        deb.version = r.string(entry, "version", true).value_or("");
        deb.architecture = r.string(entry, "architecture", true).value_or("");
        deb.archive = r.string(entry, "archive", true).value_or("");
        deb.component = r.string(entry, "component", true).value_or("");
        deb.filename = r.string(entry, "filename", true).value_or("");
        deb.size = r.count(entry, "size", true).value_or(0);
        if (auto sha256 = r.string(entry, "sha256", true)) {
            if (!is_lower_hex(*sha256, 64))
                r.add(*entry.table.get("sha256"), entry.key_path("sha256") + " " + quoted(*sha256) +
                                                      " is not 64 lowercase hex digits");
            deb.sha256 = *sha256;
        }
        if (deb.filename.find("..") != std::string::npos ||
            (!deb.filename.empty() && deb.filename.front() == '/'))
            r.add(*entry.table.get("filename"), entry.key_path("filename") + " " +
                                                    quoted(deb.filename) +
                                                    " leaves the archive root");
        bool known = false;
        for (const auto& archive : base.archives)
            known = known || archive.name == deb.archive;
        if (!known && !deb.archive.empty())
            r.add(*entry.table.get("archive"), entry.key_path("archive") + " " +
                                                   quoted(deb.archive) +
                                                   " names no archive of the base");
        deb.source = r.string(entry, "source", false).value_or("");
        deb.source_version = r.string(entry, "source-version", false).value_or("");
        base.debs.push_back(std::move(deb));
    }
}

LockRootlockData read_tool(Reader& r, const View& view) {
    r.check_keys(view, {"frozen-from",       "recipe",        "recipe-sha256",
                        "image-name",        "output",        "venv",
                        "source-date-epoch", "requirements",  "environment",
                        "host-provides",     "library-paths", "files",
                        "compile-bytecode",  "closure-ok",    "closure-objects",
                        "problems",          "target",        "base",
                        "indexes",           "entrypoint",    "cmd"});
    LockRootlockData data;
    // A frozen lock describes a live environment: no recipe made it, no base is known.
    data.frozen_from = r.string(view, "frozen-from", false).value_or("");
    const bool frozen = !data.frozen_from.empty();
    data.recipe = r.string(view, "recipe", !frozen).value_or("");
    if (auto digest = r.string(view, "recipe-sha256", !frozen)) {
        if (!is_lower_hex(*digest, 64))
            r.add(*view.table.get("recipe-sha256"), view.key_path("recipe-sha256") + " " +
                                                        quoted(*digest) +
                                                        " is not 64 lowercase hex digits");
        data.recipe_sha256 = *digest;
    }
    data.image_name = r.string(view, "image-name", false).value_or("");
    data.output = r.string(view, "output", false).value_or("");
    data.venv = r.string(view, "venv", false).value_or("");
    data.source_date_epoch = r.count(view, "source-date-epoch", true).value_or(0);
    data.requirements = r.strings(view, "requirements", false);
    for (const View& entry : r.tables(view, "environment", false)) {
        r.check_keys(entry, {"name", "value"});
        auto name = r.string(entry, "name", true);
        auto value = r.string(entry, "value", true);
        data.environment.emplace_back(name.value_or(""), value.value_or(""));
    }
    data.host_provides = r.strings(view, "host-provides", false);
    data.library_paths = r.strings(view, "library-paths", false);
    data.compile_bytecode = r.boolean(view, "compile-bytecode", false).value_or(false);
    data.entrypoint = r.strings(view, "entrypoint", false);
    data.cmd = r.strings(view, "cmd", false);
    for (const View& entry : r.tables(view, "files", false)) {
        r.check_keys(entry, {"path", "content"});
        auto path = r.string(entry, "path", true);
        auto content = r.string(entry, "content", true);
        data.files.emplace_back(path.value_or(""), content.value_or(""));
    }
    data.closure_ok = r.boolean(view, "closure-ok", false).value_or(true);
    data.closure_objects = r.count(view, "closure-objects", false).value_or(0);
    for (const View& entry : r.tables(view, "problems", false)) {
        r.check_keys(entry, {"kind", "subject", "message"});
        LockProblem problem;
        problem.kind = r.string(entry, "kind", true).value_or("");
        problem.subject = r.string(entry, "subject", true).value_or("");
        problem.message = r.string(entry, "message", true).value_or("");
        data.problems.push_back(std::move(problem));
    }
    if (const toml::table* target = r.table(view, "target", true))
        read_target(r, View{*target, view.key_path("target")}, data.target);
    if (const toml::table* base = r.table(view, "base", !frozen))
        read_base(r, View{*base, view.key_path("base")}, data.base);
    for (const View& entry : r.tables(view, "indexes", false)) {
        r.check_keys(entry, {"name", "url", "packages"});
        LockIndex index;
        index.name = r.string(entry, "name", true).value_or("");
        index.url = r.string(entry, "url", true).value_or("");
        index.packages = r.strings(entry, "packages", false);
        data.indexes.push_back(std::move(index));
    }
    return data;
}

// PEP 751: installers must refuse a major version they do not know; a newer minor is fine.
void check_lock_version(Reader& r, const toml::node& node, const std::string& version) {
    const std::size_t dot = version.find('.');
    const auto digits = [](std::string_view text) {
        return !text.empty() &&
               std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (dot == std::string::npos || !digits(version.substr(0, dot)) ||
        !digits(version.substr(dot + 1))) {
        r.add(node, "lock-version " + quoted(version) + " is not of the form MAJOR.MINOR");
        return;
    }
    std::string_view major = std::string_view(version).substr(0, dot);
    while (major.size() > 1 && major.front() == '0')
        major.remove_prefix(1);
    if (major != "1")
        r.add(node, "unsupported lock-version " + version + ": this rootlock reads 1.x");
}

}  // namespace

namespace {

util::Result<LenientLock> read_any(std::string_view text, const std::string& file_name,
                                   bool lenient) {
    Reader r(text, file_name);
    toml::table root;
    try {
        root = toml::parse(text, std::string_view(file_name));
    } catch (const toml::parse_error& error) {
        return r.located(position_of(error.source()), util::printable(error.description()));
    }

    const View top{root, ""};
    Lock lock;
    if (auto version = r.string(top, "lock-version", true)) {
        check_lock_version(r, *root.get("lock-version"), *version);
        lock.lock_version = *version;
    }
    lock.environments = r.strings(top, "environments", false);
    lock.requires_python = r.string(top, "requires-python", false);
    if (auto created_by = r.string(top, "created-by", true))
        lock.created_by = *created_by;
    for (const View& entry : r.tables(top, "packages", true))
        lock.packages.push_back(read_package(r, entry));
    if (const toml::table* tool = r.table(top, "tool", false)) {
        const View tool_view{*tool, "tool"};
        if (const toml::table* ours = r.table(tool_view, "rootlock", false))
            lock.rootlock = read_tool(r, View{*ours, "tool.rootlock"});
    }
    if (auto error = r.first())
        return *error;
    const auto& empty = r.empty_hashes();
    const auto at = [](const Position& p) {
        return std::to_string(p.line) + ":" + std::to_string(p.column);
    };
    LenientLock out;
    if (!lenient && !empty.empty()) {
        std::string list;
        for (const Problem& problem : empty)
            list += (list.empty() ? "" : ", ") + problem.message + " (" + at(problem.at) + ")";
        const std::string count =
            empty.size() == 1 ? "1 artifact has" : std::to_string(empty.size()) + " artifacts have";
        return r.located(empty.front().at,
                         count +
                             " an empty hashes table (PEP 751 requires a hash, and an "
                             "unverified file is not installed): " +
                             list);
    }
    for (const Problem& problem : empty)
        out.warnings.push_back(r.located(problem.at, problem.message +
                                                         " has an empty hashes table (PEP 751 "
                                                         "requires a hash; it cannot be verified)")
                                   .text());
    out.lock = std::move(lock);
    return out;
}

}  // namespace

util::Result<Lock> read_pylock(std::string_view text, const std::string& file_name) {
    ROOTLOCK_TRY(read, read_any(text, file_name, false));
    return std::move(read.lock);
}

util::Result<LenientLock> read_pylock_lenient(std::string_view text, const std::string& file_name) {
    return read_any(text, file_name, true);
}

util::Result<Lock> read_pylock_file(const std::string& path) {
    ROOTLOCK_TRY(text, util::read_host_file(path));
    return read_pylock(text, path);
}

util::Result<LenientLock> read_pylock_file_lenient(const std::string& path) {
    ROOTLOCK_TRY(text, util::read_host_file(path));
    return read_pylock_lenient(text, path);
}

}  // namespace rootlock::pylock
