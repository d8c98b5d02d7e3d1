// PEP 691 JSON project pages (with PEP 592 yanked, PEP 658/714 core metadata, PEP 700 size and
// upload time) read into ProjectPage, and the Content-Type choice between JSON and HTML.
#include <nlohmann/json.hpp>

#include "index/project_page.hpp"
#include "index/url.hpp"
#include "util/quote.hpp"

namespace rootlock::index {

namespace {

using Json = nlohmann::json;

// Nesting on a project page is four levels deep; anything far deeper is hostile, and refusing
// it before the parser runs keeps the parser's stack of open values small.
constexpr size_t k_max_json_depth = 64;

std::string lowercase(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

std::string trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    return std::string(text);
}

// The deepest nesting of arrays and objects, counted outside strings; a linear scan that
// stops as soon as the limit is passed.
bool nested_too_deep(std::string_view body) {
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > k_max_json_depth)
                return true;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return false;
}

// Reads one page, failing with "URL: PATH: problem" where PATH names the offending value.
class JsonPageReader {
  public:
    explicit JsonPageReader(const std::string& page_url) : m_url(page_url) {}

    util::Error fail(const std::string& path, const std::string& message) const {
        // The JSON path is part of the location: its keys come from the page, so make_error
        // escapes them.
        return util::make_error(path.empty() ? m_url : m_url + ": " + path, message);
    }

    util::Result<ProjectPage> read(const Json& root) {
        if (!root.is_object())
            return fail("", "expected a JSON object");
        ProjectPage page;
        auto meta = root.find("meta");
        if (meta == root.end())
            return fail("meta", "missing");
        if (!meta->is_object())
            return fail("meta", "expected an object");
        auto version = meta->find("api-version");
        if (version == meta->end())
            return fail("meta.api-version", "missing");
        if (!version->is_string())
            return fail("meta.api-version", "expected a string");
        page.api_version = version->get<std::string>();
        auto status = check_api_version(page.api_version);
        if (!status.ok())
            return status.error();

        auto name = root.find("name");
        if (name == root.end())
            return fail("name", "missing");
        if (!name->is_string())
            return fail("name", "expected a string");
        page.name = name->get<std::string>();

        auto files = root.find("files");
        if (files == root.end())
            return fail("files", "missing");
        if (!files->is_array())
            return fail("files", "expected an array");
        for (size_t i = 0; i < files->size(); ++i) {
            auto file = read_file((*files)[i], "files[" + std::to_string(i) + "]");
            if (!file.ok())
                return file.error();
            page.files.push_back(std::move(file).value());
        }
        return page;
    }

  private:
    // "1.x" only: a new major version may change what existing keys mean.
    util::Status check_api_version(const std::string& version) const {
        const size_t dot = version.find('.');
        const std::string_view major = std::string_view(version).substr(0, dot);
        const std::string_view minor = dot == std::string::npos
                                           ? std::string_view()
                                           : std::string_view(version).substr(dot + 1);
        auto all_digits = [](std::string_view text) {
            if (text.empty())
                return false;
            for (char c : text) {
                if (c < '0' || c > '9')
                    return false;
            }
            return true;
        };
        if (!all_digits(major) || !all_digits(minor))
            return fail("meta.api-version", "malformed version '" + util::printable(version) + "'");
        if (major.find_first_not_of('0') == std::string_view::npos ||
            major.substr(major.find_first_not_of('0')) != "1")
            return fail("", "unsupported simple API version " + version);
        return util::ok_status();
    }

    util::Result<std::map<std::string, std::string>> read_hashes(const Json& value,
                                                                 const std::string& path) const {
        if (!value.is_object())
            return fail(path, "expected an object");
        std::map<std::string, std::string> hashes;
        for (const auto& [key, digest] : value.items()) {
            const std::string algorithm = lowercase(key);
            const std::string digest_path = path + "." + key;
            if (!digest.is_string())
                return fail(digest_path, "expected a string");
            auto normalized = normalize_digest(algorithm, digest.get<std::string>());
            if (!normalized.ok())
                return fail(digest_path, normalized.error().message);
            hashes[algorithm] = std::move(normalized).value();
        }
        return hashes;
    }

    util::Result<DistributionFile> read_file(const Json& value, const std::string& path) const {
        if (!value.is_object())
            return fail(path, "expected an object");
        DistributionFile file;

        auto filename = value.find("filename");
        if (filename == value.end())
            return fail(path + ".filename", "missing");
        if (!filename->is_string())
            return fail(path + ".filename", "expected a string");
        file.filename = filename->get<std::string>();
        if (!is_plain_filename(file.filename))
            return fail(path + ".filename",
                        "not a plain file name '" + util::printable(file.filename) + "'");

        auto url = value.find("url");
        if (url == value.end())
            return fail(path + ".url", "missing");
        if (!url->is_string())
            return fail(path + ".url", "expected a string");
        auto resolved = resolve_url(m_url, url->get<std::string>());
        if (!resolved.ok())
            return fail(path + ".url", resolved.error().message);
        file.url = split_fragment(resolved.value()).first;

        auto hashes = value.find("hashes");
        if (hashes == value.end())
            return fail(path + ".hashes", "missing");
        auto read = read_hashes(*hashes, path + ".hashes");
        if (!read.ok())
            return read.error();
        file.hashes = std::move(read).value();

        auto requires_python = value.find("requires-python");
        if (requires_python != value.end() && !requires_python->is_null()) {
            if (!requires_python->is_string())
                return fail(path + ".requires-python", "expected a string or null");
            file.requires_python = requires_python->get<std::string>();
        }

        auto yanked = value.find("yanked");
        if (yanked != value.end()) {
            if (yanked->is_boolean()) {
                file.yanked = yanked->get<bool>();
            } else if (yanked->is_string()) {
                file.yanked = true;
                file.yanked_reason = yanked->get<std::string>();
            } else {
                return fail(path + ".yanked", "expected a boolean or a string");
            }
        }

        // PEP 714: servers send both names during the transition; the new one is authoritative.
        for (const char* key : {"core-metadata", "dist-info-metadata"}) {
            auto metadata = value.find(key);
            if (metadata == value.end())
                continue;
            const std::string metadata_path = path + "." + key;
            if (metadata->is_boolean()) {
                file.has_metadata = metadata->get<bool>();
            } else if (metadata->is_object()) {
                auto metadata_hashes = read_hashes(*metadata, metadata_path);
                if (!metadata_hashes.ok())
                    return metadata_hashes.error();
                file.has_metadata = true;
                file.metadata_hashes = std::move(metadata_hashes).value();
            } else {
                return fail(metadata_path, "expected a boolean or an object");
            }
            break;
        }

        auto size = value.find("size");
        if (size != value.end()) {
            if (!size->is_number_unsigned())
                return fail(path + ".size", "expected a non-negative integer");
            file.size = size->get<uint64_t>();
        }

        auto upload_time = value.find("upload-time");
        if (upload_time != value.end() && !upload_time->is_null()) {
            if (!upload_time->is_string())
                return fail(path + ".upload-time", "expected a string or null");
            file.upload_time = upload_time->get<std::string>();
        }
        return file;
    }

    const std::string& m_url;
};

}  // namespace

util::Result<PageFormat> page_format(std::string_view content_type, const std::string& url) {
    const std::string type = lowercase(trim(content_type.substr(0, content_type.find(';'))));
    if (type == "application/vnd.pypi.simple.v1+json")
        return PageFormat::json;
    if (type == "text/html" || type == "application/vnd.pypi.simple.v1+html")
        return PageFormat::html;
    return util::make_error(
        url, "unsupported index page type '" + util::printable(trim(content_type)) + "'");
}

util::Result<ProjectPage> parse_simple_json(std::string_view body, const std::string& page_url) {
    if (body.size() > k_max_page_bytes) {
        return util::make_error(page_url, "index page is " + std::to_string(body.size()) +
                                              " bytes, more than the 64 MiB limit");
    }
    if (nested_too_deep(body)) {
        return util::make_error(
            page_url, "JSON nested more than " + std::to_string(k_max_json_depth) + " levels deep");
    }
    // No exceptions: a body that is not JSON is bad input, not a bug.
    const Json root = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded())
        return util::make_error(page_url, "not valid JSON");
    return JsonPageReader(page_url).read(root);
}

}  // namespace rootlock::index
