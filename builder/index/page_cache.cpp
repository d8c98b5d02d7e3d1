// The page cache's files: one small JSON document per page, sealed with its digest
// (util/sealed_text), so that a page changed on disk is found and fetched again; read leniently
// once whole (an unknown shape is a miss) and written through a temp file and a rename so a
// crash never leaves half a page.
#include "index/page_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "util/cache_damage.hpp"
#include "util/hex.hpp"
#include "util/leftovers.hpp"
#include "util/sealed_text.hpp"
#include "util/sha256.hpp"

namespace rootlock::index {

namespace {

constexpr int k_format_version = 1;
constexpr size_t k_max_file_size = size_t{512} << 20;

util::Error errno_error(const std::string& path) {
    return util::make_io_error(path, std::strerror(errno));
}

// Reads the whole file; nullopt when it does not exist.
util::Result<std::optional<std::string>> read_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return std::optional<std::string>();
        return errno_error(path);
    }
    std::string text;
    char buffer[65536];
    while (true) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int saved = errno;
            ::close(fd);
            return util::make_io_error(path, std::strerror(saved));
        }
        if (n == 0)
            break;
        text.append(buffer, static_cast<size_t>(n));
        if (text.size() > k_max_file_size)
            break;  // no real page is this big: read as a corrupt file
    }
    ::close(fd);
    return std::optional<std::string>(std::move(text));
}

const std::string* string_field(const nlohmann::json& object, const char* name) {
    auto it = object.find(name);
    if (it == object.end() || !it->is_string())
        return nullptr;
    return it->get_ptr<const std::string*>();
}

// The page in `text`, or nullopt for anything that is not a page written for `key`.
std::optional<CachedPage> parse_page(std::string_view text, const std::string& key) {
    auto json = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                      /*allow_exceptions=*/false);
    if (!json.is_object())
        return std::nullopt;
    auto version = json.find("version");
    if (version == json.end() || !version->is_number_integer() ||
        version->get<int64_t>() != k_format_version)
        return std::nullopt;
    const std::string* stored_key = string_field(json, "key");
    if (stored_key == nullptr || *stored_key != key)
        return std::nullopt;
    CachedPage page;
    const std::string* fields[] = {string_field(json, "url"), string_field(json, "content_type"),
                                   string_field(json, "etag"), string_field(json, "last_modified")};
    for (const std::string* field : fields) {
        if (field == nullptr)
            return std::nullopt;
    }
    page.url = *fields[0];
    page.content_type = *fields[1];
    page.etag = *fields[2];
    page.last_modified = *fields[3];
    const std::string* body = string_field(json, "body");
    const std::string* body_hex = string_field(json, "body_hex");
    if ((body == nullptr) == (body_hex == nullptr))
        return std::nullopt;
    if (body != nullptr) {
        page.body = *body;
    } else {
        auto decoded = util::from_hex(*body_hex);
        if (!decoded)
            return std::nullopt;
        page.body = std::move(*decoded);
    }
    return page;
}

// nlohmann refuses to write strings that are not UTF-8 (a type_error, caught here). The body
// comes unchecked from the network, so it falls back to hex; validators that are not UTF-8 make
// the page uncacheable (nullopt) rather than altered.
std::optional<std::string> serialise(const std::string& key, const CachedPage& page) {
    nlohmann::json json = {{"version", k_format_version},
                           {"key", key},
                           {"url", page.url},
                           {"content_type", page.content_type},
                           {"etag", page.etag},
                           {"last_modified", page.last_modified},
                           {"body", page.body}};
    try {
        return util::seal_text(json.dump());
    } catch (const nlohmann::json::type_error&) {
    }
    json.erase("body");
    json["body_hex"] = util::to_hex(page.body);
    try {
        return util::seal_text(json.dump());
    } catch (const nlohmann::json::type_error&) {
        return std::nullopt;
    }
}

}  // namespace

PageCache::PageCache(std::string root) : m_root(std::move(root)) {
    while (m_root.size() > 1 && m_root.back() == '/')
        m_root.pop_back();
    util::remove_dead_leftovers(m_root + "/pages", ".tmp-");  // of runs killed while writing
}

std::string PageCache::path_for(const std::string& key) const {
    return m_root + "/pages/" + util::sha256_hex(key) + ".json";
}

util::Result<std::optional<CachedPage>> PageCache::get(const std::string& key) const {
    std::string path = path_for(key);
    auto text = read_file(path);
    if (!text)
        return text.error();
    if (!text->has_value())
        return std::optional<CachedPage>();
    const std::string& stored = **text;
    if (!stored.empty() && stored.front() == '{')
        return std::optional<CachedPage>();  // an earlier version's page: fetched again
    auto content = util::unseal_text(stored);
    if (!content) {
        if (auto refused = util::discard_damaged(
                path, "damaged: its content does not match the digest it was written with",
                m_offline, "fetch it again"))
            return *refused;
        return std::optional<CachedPage>();
    }
    return parse_page(*content, key);
}

util::Status PageCache::put(const std::string& key, const CachedPage& page) {
    std::string dir = m_root + "/pages";
    std::error_code failure;
    std::filesystem::create_directories(dir, failure);
    if (failure)
        return util::make_error(dir, failure.message());
    auto text = serialise(key, page);
    if (!text)
        return util::make_error(path_for(key), "page headers are not UTF-8");

    std::string pattern = dir + "/.tmp-" + std::to_string(::getpid()) + "-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    int fd = ::mkostemp(buffer.data(), O_CLOEXEC);
    if (fd < 0)
        return errno_error(pattern);
    std::string temp(buffer.data());
    auto fail = [&](int saved) {
        ::close(fd);
        ::unlink(temp.c_str());
        return util::make_io_error(temp, std::strerror(saved));
    };
    size_t done = 0;
    while (done < text->size()) {
        ssize_t n = ::write(fd, text->data() + done, text->size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return fail(errno);
        }
        done += static_cast<size_t>(n);
    }
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0)
        return fail(errno);
    if (::close(fd) != 0) {
        int saved = errno;
        ::unlink(temp.c_str());
        return util::make_io_error(temp, std::strerror(saved));
    }
    std::string path = path_for(key);
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        int saved = errno;
        ::unlink(temp.c_str());
        return util::make_io_error(path, std::strerror(saved));
    }
    return util::ok_status();
}

}  // namespace rootlock::index
