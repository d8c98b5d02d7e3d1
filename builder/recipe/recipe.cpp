// The recipe parser: toml++ reads the text, then each table is walked against its allowed keys
// and types, values are checked, and the tables are checked against each other; every problem
// found is collected and reported at once, each at the position of the offending key or value.
#include "recipe/recipe.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>

#include "gpu/compute_capability.hpp"
#include "python/metadata.hpp"
#include "recipe/recipe_reader.hpp"
#include "recipe/recipe_validate.hpp"
#include "util/quote.hpp"

namespace rootlock::recipe {

namespace {

using detail::Collector;
using detail::Position;
using detail::position_of;
using detail::quoted;
using detail::TableReader;
using detail::type_phrase;
using detail::where_text;

// Positions and parsed values that the cross-table checks need.
struct Anchors {
    std::optional<CudaVersion> torch_cuda;
    std::optional<int> driver_major;
    Position driver_at;
    std::vector<Position> index_url_at;  // parallel to Recipe::indexes
};

bool is_debian_package(std::string_view name) {
    if (name.size() < 2 ||
        !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
    });
}

// A path as a message shows it: control characters escaped, so that the message stays one line.
std::string escaped(std::string_view text) {
    static constexpr char k_hex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (byte < 0x20 || byte == 0x7f) {
            out += "\\u00";
            out += k_hex[byte >> 4];
            out += k_hex[byte & 0xf];
        } else {
            out += c;
        }
    }
    return out;
}

std::string shown(std::string_view text) {
    return "\"" + escaped(text) + "\"";
}

const char* const k_kebab_rule =
    "is not kebab-case (lowercase letters and digits joined by single hyphens)";

void read_image(TableReader& r, ImageSection& image) {
    r.check_keys({"name", "output", "entrypoint", "cmd"});
    Position at;
    if (auto name = r.string("name", true, &at)) {
        if (!is_kebab_case(*name))
            r.out().add(at, "image.name " + quoted(*name) + " " + k_kebab_rule);
        image.name = *name;
    }
    if (auto output = r.string("output", false, &at)) {
        if (!has_image_suffix(*output))
            r.out().add(at, "image.output " + quoted(*output) +
                                " does not end in .tar.zst, .tar.xz, .tar.gz or .tar");
        image.output = *output;
    } else if (!image.name.empty()) {
        image.output = "images/" + image.name + ".tar.zst";
    }
    using Field = std::pair<const char*, std::vector<std::string>*>;
    for (auto [key, field] : {Field{"entrypoint", &image.entrypoint}, Field{"cmd", &image.cmd}}) {
        for (auto& [argument, argument_at] : r.strings(key))
            field->push_back(std::move(argument));
        if (const toml::array* array = r.table().get_as<toml::array>(key);
            array != nullptr && array->empty())
            r.out().add(*array, std::string("image.") + key +
                                    " is empty (leave it out for the base's default)");
    }
}

// "name" or "name=version": a package apt may resolve, or one pinned to a version.
bool is_debian_include(std::string_view text) {
    const size_t equals = text.find('=');
    if (equals == std::string_view::npos)
        return is_debian_package(text);
    const std::string_view version = text.substr(equals + 1);
    return is_debian_package(text.substr(0, equals)) && !version.empty() &&
           (version[0] >= '0' && version[0] <= '9') &&
           std::all_of(version.begin(), version.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '+' || c == '-' || c == '.' || c == '~' || c == ':';
           });
}

void read_components(TableReader& r, const std::string& label, std::vector<std::string>& out) {
    if (!r.has("components"))
        return;
    out.clear();
    for (auto& [component, at] : r.strings("components")) {
        if (component.empty() || component.find_first_of(" \t\n\"'") != std::string::npos ||
            component.find("..") != std::string::npos || component.front() == '/')
            r.out().add(
                at, label + ".components " + quoted(component) + " is not an archive component");
        out.push_back(component);
    }
    if (out.empty())
        r.out().add(r.position(), label + ".components is empty");
}

void read_keyring_and_snapshot(TableReader& r, const std::string& label, std::string& keyring,
                               std::string& snapshot) {
    Position at;
    if (auto value = r.string("keyring", false, &at)) {
        if (value->empty())
            r.out().add(at, label + ".keyring is empty");
        keyring = *value;
    }
    if (auto value = r.string("snapshot", false, &at)) {
        if (!is_index_url(*value))
            r.out().add(at, label + ".snapshot " + quoted(*value) +
                                " does not start with http://, https:// or file://");
        snapshot = *value;
        while (!snapshot.empty() && snapshot.back() == '/')
            snapshot.pop_back();
    }
}

void read_debian_archives(TableReader& r, DebianBase& debian) {
    const toml::node* node = r.table().get("archives");
    if (node == nullptr)
        return;
    const auto* array = node->as_array();
    if (array == nullptr) {
        r.out().add(*node, "base.debian.archives: expected an array of tables, found " +
                               type_phrase(node->type()));
        return;
    }
    for (std::size_t i = 0; i < array->size(); ++i) {
        const toml::node& element = *array->get(i);
        const auto* table = element.as_table();
        const std::string label = "base.debian.archives[" + std::to_string(i) + "]";
        if (table == nullptr) {
            r.out().add(element,
                        label + ": expected a table, found " + type_phrase(element.type()));
            continue;
        }
        TableReader reader(*table, label, label, r.out());
        reader.check_keys({"name", "url", "suite", "components", "keyring", "snapshot"});
        DebianArchive archive;
        Position at;
        if (auto name = reader.string("name", true, &at)) {
            if (!is_kebab_case(*name))
                r.out().add(at, label + ".name " + quoted(*name) + " is not kebab-case");
            for (const auto& other : debian.archives) {
                if (other.name == *name)
                    r.out().add(at, "duplicate archive name " + quoted(*name));
            }
            archive.name = *name;
        }
        if (auto url = reader.string("url", true, &at)) {
            if (!is_index_url(*url))
                r.out().add(at, label + ".url " + quoted(*url) +
                                    " does not start with http://, https:// or file://");
            archive.url = *url;
            while (!archive.url.empty() && archive.url.back() == '/')
                archive.url.pop_back();
        }
        if (auto suite = reader.string("suite", true, &at)) {
            if (!is_kebab_case(*suite))
                r.out().add(at, label + ".suite " + quoted(*suite) + " is not a Debian suite name");
            archive.suite = *suite;
        }
        read_components(reader, label, archive.components);
        read_keyring_and_snapshot(reader, label, archive.keyring, archive.snapshot);
        debian.archives.push_back(std::move(archive));
    }
}

void check_architecture(Collector& out, Position at, const std::string& arch) {
    if (!is_debian_architecture(arch))
        out.add(at, "base.debian.arch " + quoted(arch) +
                        " is not a Debian architecture with manylinux wheels (amd64, arm64, i386, "
                        "ppc64el, s390x, armhf, armel)");
}

// `arch`: one architecture, or a non-empty array of distinct ones (one lock each).
void read_architectures(TableReader& r, DebianBase& debian) {
    const toml::node* node = r.table().get("arch");
    if (node == nullptr)
        return;
    if (const auto* value = node->as_string()) {
        check_architecture(r.out(), position_of(node->source()), value->get());
        debian.architecture = value->get();
        debian.architectures = {value->get()};
        return;
    }
    const auto* array = node->as_array();
    if (array == nullptr) {
        r.out().add(*node, "base.debian.arch: expected a string or an array of strings, found " +
                               type_phrase(node->type()));
        return;
    }
    if (array->empty()) {
        r.out().add(*node, "base.debian.arch is empty (leave it out for amd64)");
        return;
    }
    std::vector<std::string> architectures;
    for (std::size_t i = 0; i < array->size(); ++i) {
        const toml::node& element = *array->get(i);
        const auto* value = element.as_string();
        if (value == nullptr) {
            r.out().add(element, "base.debian.arch[" + std::to_string(i) +
                                     "]: expected a string, found " + type_phrase(element.type()));
            continue;
        }
        const Position at = position_of(element.source());
        check_architecture(r.out(), at, value->get());
        if (std::find(architectures.begin(), architectures.end(), value->get()) !=
            architectures.end())
            r.out().add(at, "base.debian.arch " + quoted(value->get()) + " is listed twice");
        else
            architectures.push_back(value->get());
    }
    if (!architectures.empty()) {
        debian.architecture = architectures.front();
        debian.architectures = std::move(architectures);
    }
}

void read_debian(TableReader& r, DebianBase& debian) {
    r.check_keys({"suite", "mirror", "variant", "arch", "include", "components", "keyring",
                  "snapshot", "archives"});
    Position at;
    if (auto suite = r.string("suite", true, &at)) {
        if (!is_kebab_case(*suite))
            r.out().add(at, "base.debian.suite " + quoted(*suite) + " is not a Debian suite name");
        debian.suite = *suite;
    }
    if (auto mirror = r.string("mirror", false, &at)) {
        if (!is_index_url(*mirror))
            r.out().add(at, "base.debian.mirror " + quoted(*mirror) +
                                " does not start with http://, https:// or file://");
        debian.mirror = *mirror;
    }
    if (auto variant = r.string("variant", false, &at)) {
        if (!is_debian_variant(*variant))
            r.out().add(at, "base.debian.variant " + quoted(*variant) +
                                " is not an mmdebstrap variant (extract, custom, essential, apt, "
                                "required, minbase, buildd, important, debootstrap, standard)");
        debian.variant = *variant;
    }
    read_architectures(r, debian);
    for (auto& [package, package_at] : r.strings("include")) {
        if (!is_debian_include(package))
            r.out().add(package_at, "base.debian.include " + quoted(package) +
                                        " is neither a Debian package name nor NAME=VERSION");
        debian.include.push_back(package);
    }
    read_components(r, "base.debian", debian.components);
    read_keyring_and_snapshot(r, "base.debian", debian.keyring, debian.snapshot);
    read_debian_archives(r, debian);
}

void read_base(TableReader& r, BaseSection& base) {
    r.check_keys({"tarball", "sha256", "debian"});
    const bool has_tarball = r.has("tarball");
    const bool has_debian = r.has("debian");
    if (has_tarball && has_debian)
        r.out().add(r.position(), "[base] sets both tarball and debian; choose one");
    if (!has_tarball && !has_debian)
        r.out().add(r.position(), "[base] needs either tarball (with sha256) or debian");
    Position at;
    if (has_tarball) {
        if (auto tarball = r.string("tarball", true, &at)) {
            if (tarball->empty())
                r.out().add(at, "base.tarball is empty");
            else if (tarball->find("://") != std::string::npos && !is_index_url(*tarball))
                r.out().add(at, "base.tarball " + quoted(*tarball) +
                                    " is neither a path nor an http://, https:// or file:// URL");
            base.tarball = *tarball;
        }
        if (auto sha256 = r.string("sha256", true, &at)) {
            if (!is_sha256_hex(*sha256))
                r.out().add(at, "base.sha256 " + quoted(*sha256) + " is not 64 hexadecimal digits");
            std::transform(sha256->begin(), sha256->end(), sha256->begin(), [](char c) {
                return (c >= 'A' && c <= 'F') ? static_cast<char>(c - 'A' + 'a') : c;
            });
            base.sha256 = *sha256;
        }
    } else if (const toml::node* sha256 = r.table().get("sha256")) {
        r.out().add(*sha256, "base.sha256 belongs to a tarball base");
    }
    if (has_debian) {
        if (const toml::table* table = r.subtable("debian", true)) {
            TableReader debian_reader(*table, "base.debian", "base.debian", r.out());
            base.debian = DebianBase{};
            read_debian(debian_reader, *base.debian);
        }
    }
}

void read_python(TableReader& r, PythonSection& python) {
    r.check_keys({"version", "venv", "compile-bytecode"});
    Position at;
    python.compile_bytecode = r.boolean("compile-bytecode").value_or(false);
    if (auto version = r.string("version", true, &at)) {
        if (!is_python_version(*version))
            r.out().add(at, "python.version " + quoted(*version) + " is not of the form 3.N");
        python.version = *version;
    }
    if (auto venv = r.string("venv", false, &at)) {
        if (venv->empty() || venv->front() != '/')
            r.out().add(at, "python.venv " + quoted(*venv) + " is not an absolute path");
        python.venv = *venv;
    }
}

void read_torch(TableReader& r, TorchSection& torch, Anchors& anchors) {
    r.check_keys({"version", "cuda"});
    Position at;
    if (auto version = r.string("version", true, &at)) {
        if (version->find('+') != std::string::npos)
            r.out().add(at, "torch.version " + quoted(*version) +
                                " carries a local version; torch.cuda selects the build");
        else if (!is_release_version(*version))
            r.out().add(at, "torch.version " + quoted(*version) +
                                " is not a release version such as 2.8.0");
        torch.version = *version;
    }
    if (auto cuda = r.string("cuda", true, &at)) {
        const auto parsed = parse_cuda_version(*cuda);
        if (!parsed)
            r.out().add(at, "torch.cuda " + quoted(*cuda) +
                                " is not of the form MAJOR.MINOR, such as 12.8");
        else if (!minimum_driver(parsed->major))
            r.out().add(at, "torch.cuda " + quoted(*cuda) + " names CUDA " +
                                std::to_string(parsed->major) +
                                ", which rootlock does not know (it knows 11, 12 and 13)");
        else
            anchors.torch_cuda = parsed;
        torch.cuda = *cuda;
    }
}

void read_cuda(TableReader& r, CudaSection& cuda, Anchors& anchors) {
    r.check_keys({"driver", "gpus"});
    std::set<gpu::ComputeCapability> seen;
    for (auto& [text, gpu_at] : r.strings("gpus")) {
        auto capability = gpu::parse_compute_capability(text);
        if (!capability.ok()) {
            r.out().add(gpu_at, "cuda.gpus: " + capability.error().message);
        } else if (!seen.insert(*capability).second) {
            r.out().add(gpu_at, "cuda.gpus names " + quoted(text) + " twice");
        } else {
            cuda.gpus.push_back(text);
        }
    }
    Position at;
    if (auto driver = r.string("driver", true, &at)) {
        anchors.driver_major = parse_driver_major(*driver);
        anchors.driver_at = at;
        if (!anchors.driver_major)
            r.out().add(at, "cuda.driver " + quoted(*driver) +
                                " is not a driver version such as 570.133.07");
        cuda.driver = *driver;
    }
}

void read_index(TableReader& r, IndexSection& index, Position& url_at) {
    r.check_keys({"name", "url", "packages"});
    Position at;
    if (auto name = r.string("name", true, &at)) {
        if (!is_kebab_case(*name))
            r.out().add(at, "index.name " + quoted(*name) + " " + k_kebab_rule);
        index.name = *name;
    }
    if (auto url = r.string("url", true, &url_at)) {
        if (!is_index_url(*url))
            r.out().add(url_at, "index.url " + quoted(*url) +
                                    " does not start with http://, https:// or file://");
        index.url = *url;
    }
    for (auto& [pattern, pattern_at] : r.strings("packages")) {
        if (!is_package_pattern(pattern))
            r.out().add(pattern_at, "index.packages " + quoted(pattern) +
                                        " is not a project name pattern (letters, digits, '-', "
                                        "'_', '.' and '*')");
        index.packages.push_back(python::normalize_name(pattern));
    }
}

void read_indexes(const toml::node& node, Collector& out, Recipe& recipe, Anchors& anchors) {
    const auto* array = node.as_array();
    if (array == nullptr) {
        out.add(node, "index: expected an array of tables ([[index]]), found " +
                          type_phrase(node.type()));
        return;
    }
    std::map<std::string, Position> first_name;        // name -> where
    std::map<std::string, std::string> pattern_owner;  // pattern -> index
    for (std::size_t i = 0; i < array->size(); ++i) {
        const toml::node& element = *array->get(i);
        const auto* table = element.as_table();
        if (table == nullptr) {
            out.add(element, "index[" + std::to_string(i) + "]: expected a table, found " +
                                 type_phrase(element.type()));
            continue;
        }
        TableReader reader(*table, "index", "[[index]]", out);
        IndexSection index;
        Position url_at = reader.position();
        read_index(reader, index, url_at);
        if (!index.name.empty()) {
            const auto [it, inserted] = first_name.emplace(index.name, reader.position());
            if (!inserted)
                out.add(reader.position(), "duplicate index name " + quoted(index.name) +
                                               " (first defined at " +
                                               where_text(out.file(), it->second) + ")");
        }
        for (const auto& pattern : index.packages) {
            const auto [it, inserted] = pattern_owner.emplace(pattern, index.name);
            if (!inserted && it->second != index.name)
                out.add(reader.position(), "package pattern " + quoted(pattern) +
                                               " is pinned to index " + quoted(it->second) +
                                               " and to index " + quoted(index.name));
        }
        recipe.indexes.push_back(std::move(index));
        anchors.index_url_at.push_back(url_at);
    }
}

void read_packages(TableReader& r, Recipe& recipe) {
    r.check_keys({"requires"});
    for (auto& [requirement, at] : r.strings("requires")) {
        if (requirement.find_first_not_of(" \t") == std::string::npos)
            r.out().add(at, "packages.requires has an empty requirement");
        recipe.requirements.push_back(requirement);
    }
}

void read_environment(TableReader& r, Recipe& recipe) {
    for (const auto& [key, node] : r.table()) {
        const std::string name(key.str());
        if (!is_env_name(name))
            r.out().add(position_of(key.source()),
                        "environment key " + quoted(name) + " is not a variable name");
        if (const auto* value = node.as_string())
            recipe.environment.emplace_back(name, value->get());
        else
            r.out().add(node, "environment." + name + ": expected a string, found " +
                                  type_phrase(node.type()));
    }
    std::sort(recipe.environment.begin(), recipe.environment.end());
}

void read_host(TableReader& r, Recipe& recipe) {
    r.check_keys({"provides"});
    for (auto& [soname, at] : r.strings("provides")) {
        if (!is_soname(soname))
            r.out().add(at,
                        "host.provides " + quoted(soname) + " is not a soname such as libfoo.so.1");
        recipe.host_provides.push_back(soname);
    }
}

void read_loader(TableReader& r, Recipe& recipe) {
    r.check_keys({"library-paths"});
    std::set<std::string> seen;
    for (auto& [path, at] : r.strings("library-paths")) {
        if (const auto problem = library_path_problem(path))
            r.out().add(at, "loader.library-paths " + shown(path) + " " + *problem);
        else if (!seen.insert(path).second)
            r.out().add(at, "loader.library-paths " + shown(path) + " is listed twice");
        recipe.library_paths.push_back(std::move(path));
    }
}

void read_files(TableReader& r, Recipe& recipe) {
    std::map<std::string, Position> valid;  // path -> where its key is
    for (const auto& [key, node] : r.table()) {
        const std::string path(key.str());
        const Position at = position_of(key.source());
        if (const auto problem = file_path_problem(path))
            r.out().add(at, "files " + shown(path) + " " + *problem);
        else
            valid.emplace(path, at);
        if (const auto* value = node.as_string())
            recipe.files.emplace_back(path, value->get());
        else
            r.out().add(node, "files." + escaped(path) + ": expected a string, found " +
                                  type_phrase(node.type()));
    }
    std::sort(recipe.files.begin(), recipe.files.end());
    // A tree cannot hold "/a" as a file and as the directory of "/a/b".
    for (const auto& [path, at] : valid) {
        for (std::size_t slash = path.find('/', 1); slash != std::string::npos;
             slash = path.find('/', slash + 1)) {
            const std::string parent = path.substr(0, slash);
            if (valid.count(parent) != 0) {
                r.out().add(at, "files " + shown(path) + " is under " + shown(parent) +
                                    ", which [files] writes as a file");
                break;
            }
        }
    }
}

// The checks across tables: the driver against the CUDA major, index URLs against the torch
// build.
void check_agreement(const Recipe& recipe, const Anchors& anchors, Position torch_at,
                     Collector& out) {
    if (recipe.torch && !recipe.cuda)
        out.add(torch_at, "[torch] needs a [cuda] table with the host driver version");
    if (!anchors.torch_cuda)
        return;
    const CudaVersion cuda = *anchors.torch_cuda;
    const int minimum = minimum_driver(cuda.major).value_or(0);
    if (anchors.driver_major && *anchors.driver_major < minimum)
        out.add(anchors.driver_at, "cuda.driver " + quoted(recipe.cuda->driver) +
                                       " is too old for torch.cuda " + quoted(recipe.torch->cuda) +
                                       ": CUDA " + std::to_string(cuda.major) + " needs driver " +
                                       std::to_string(minimum) + " or newer");
    const std::string wanted = cuda_tag(cuda);
    for (std::size_t i = 0; i < recipe.indexes.size(); ++i) {
        const auto tag = cuda_tag_in_url(recipe.indexes[i].url);
        if (tag && *tag != wanted)
            out.add(anchors.index_url_at[i], "index " + quoted(recipe.indexes[i].name) +
                                                 " serves " + *tag + " builds, but torch.cuda " +
                                                 quoted(recipe.torch->cuda) + " needs " + wanted);
    }
}

}  // namespace

RecipeParse parse_recipe_all(std::string_view text, const std::string& file_name) {
    Collector out(file_name);
    toml::table root;
    try {
        root = toml::parse(text, file_name);
    } catch (const toml::parse_error& error) {
        out.add(position_of(error.source()), util::printable(error.description()));
        return RecipeParse{std::nullopt, out.finish()};
    }

    Recipe recipe;
    Anchors anchors;
    TableReader top(root, "", "the recipe", out);
    top.check_keys({"image", "base", "python", "torch", "cuda", "index", "packages", "environment",
                    "host", "loader", "files"});
    if (const toml::table* table = top.subtable("image", true)) {
        TableReader reader(*table, "image", "[image]", out);
        read_image(reader, recipe.image);
    }
    if (const toml::table* table = top.subtable("base", true)) {
        TableReader reader(*table, "base", "[base]", out);
        read_base(reader, recipe.base);
    }
    if (const toml::table* table = top.subtable("python", true)) {
        TableReader reader(*table, "python", "[python]", out);
        read_python(reader, recipe.python);
    }
    Position torch_at;
    if (const toml::table* table = top.subtable("torch", false)) {
        TableReader reader(*table, "torch", "[torch]", out);
        torch_at = reader.position();
        recipe.torch = TorchSection{};
        read_torch(reader, *recipe.torch, anchors);
    }
    if (const toml::table* table = top.subtable("cuda", false)) {
        TableReader reader(*table, "cuda", "[cuda]", out);
        recipe.cuda = CudaSection{};
        read_cuda(reader, *recipe.cuda, anchors);
    }
    if (const toml::node* node = root.get("index"))
        read_indexes(*node, out, recipe, anchors);
    if (const toml::table* table = top.subtable("packages", false)) {
        TableReader reader(*table, "packages", "[packages]", out);
        read_packages(reader, recipe);
    }
    if (const toml::table* table = top.subtable("environment", false)) {
        TableReader reader(*table, "environment", "[environment]", out);
        read_environment(reader, recipe);
    }
    if (const toml::table* table = top.subtable("host", false)) {
        TableReader reader(*table, "host", "[host]", out);
        read_host(reader, recipe);
    }
    if (const toml::table* table = top.subtable("loader", false)) {
        TableReader reader(*table, "loader", "[loader]", out);
        read_loader(reader, recipe);
    }
    if (const toml::table* table = top.subtable("files", false)) {
        TableReader reader(*table, "files", "[files]", out);
        read_files(reader, recipe);
    }
    check_agreement(recipe, anchors, torch_at, out);

    if (!out.empty())
        return RecipeParse{std::nullopt, out.finish()};
    return RecipeParse{std::move(recipe), {}};
}

util::Result<Recipe> parse_recipe(std::string_view text, const std::string& file_name) {
    RecipeParse parsed = parse_recipe_all(text, file_name);
    if (parsed.errors.empty())
        return std::move(*parsed.recipe);
    util::Error first = parsed.errors.front();
    for (std::size_t i = 1; i < parsed.errors.size(); ++i)
        first.message += "\n" + parsed.errors[i].text();
    return first;
}

RecipeParse parse_recipe_file(const std::string& path) {
    constexpr std::size_t k_max_size = 1 << 20;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return RecipeParse{std::nullopt, {util::make_error(path, "cannot open the recipe")}};
    std::string text;
    char buffer[4096];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > k_max_size)
            return RecipeParse{std::nullopt,
                               {util::make_error(path, "the recipe is larger than 1 MiB")}};
    }
    if (in.bad())
        return RecipeParse{std::nullopt, {util::make_error(path, "cannot read the recipe")}};
    return parse_recipe_all(text, path);
}

}  // namespace rootlock::recipe
