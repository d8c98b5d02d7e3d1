// SHA-256 through OpenSSL's EVP interface (the only file that includes it for hashing), so that
// every hash in rootlock comes from one audited implementation.
#include "util/sha256.hpp"

#include "util/hex.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace rootlock::util {

struct Sha256::State {
    EVP_MD_CTX* context = nullptr;
    // update_from_file()'s, allocated on its first use and kept: a buffer allocated per call
    // would be fresh pages (and their faults) every time.
    std::vector<std::byte> read_buffer;
    ~State() { EVP_MD_CTX_free(context); }
};

Sha256::Sha256() : m_state(std::make_unique<State>()) {
    m_state->context = EVP_MD_CTX_new();
    if (m_state->context == nullptr ||
        EVP_DigestInit_ex(m_state->context, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL could not start a SHA-256 context");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const std::byte> bytes) {
    if (!bytes.empty())
        EVP_DigestUpdate(m_state->context, bytes.data(), bytes.size());
}

void Sha256::update(std::string_view bytes) {
    if (!bytes.empty())
        EVP_DigestUpdate(m_state->context, bytes.data(), bytes.size());
}

Status Sha256::update_from_file(int fd, uint64_t size, std::string_view name,
                                const std::function<void(std::span<const std::byte>)>& also) {
    // Large enough that the syscalls cost nothing, small enough to stay in the core's L2.
    constexpr size_t k_read_size = size_t{256} << 10;
    std::vector<std::byte>& buffer = m_state->read_buffer;
    if (buffer.empty())
        buffer.resize(k_read_size);
    uint64_t offset = 0;
    while (offset < size) {
        const size_t wanted = static_cast<size_t>(std::min<uint64_t>(buffer.size(), size - offset));
        const ssize_t got = ::pread(fd, buffer.data(), wanted, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return make_error(std::string(name), std::strerror(errno));
        if (got == 0)
            return make_error(std::string(name), "ends before " + std::to_string(size) + " bytes");
        EVP_DigestUpdate(m_state->context, buffer.data(), static_cast<size_t>(got));
        if (also)
            also(std::span<const std::byte>(buffer.data(), static_cast<size_t>(got)));
        offset += static_cast<uint64_t>(got);
    }
    return ok_status();
}

Sha256Digest Sha256::digest() const {
    // Finalising consumes a context, so finalise a copy and keep this one open.
    EVP_MD_CTX* copy = EVP_MD_CTX_new();
    if (copy == nullptr || EVP_MD_CTX_copy_ex(copy, m_state->context) != 1) {
        EVP_MD_CTX_free(copy);
        throw std::runtime_error("OpenSSL could not copy a SHA-256 context");
    }
    Sha256Digest out{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(copy, out.data(), &length);
    EVP_MD_CTX_free(copy);
    return out;
}

std::string Sha256::to_hex(const Sha256Digest& digest) {
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(64);
    for (unsigned char byte : digest) {
        out.push_back(k_digits[byte >> 4U]);
        out.push_back(k_digits[byte & 0xFU]);
    }
    return out;
}

std::string Sha256::to_base64url(const Sha256Digest& digest) {
    return util::to_base64url(
        std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string sha256_hex(std::string_view bytes) {
    Sha256 hasher;
    hasher.update(bytes);
    return hasher.hex_digest();
}

Result<Sha256Digest> sha256_file(const std::string& host_path) {
    int fd = ::open(host_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return make_error(host_path, std::strerror(errno));
    Sha256 hasher;
    std::vector<std::byte> buffer(size_t{1} << 20);
    for (;;) {
        ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int saved = errno;
            ::close(fd);
            return make_error(host_path, std::strerror(saved));
        }
        if (got == 0)
            break;
        hasher.update(std::span<const std::byte>(buffer.data(), static_cast<size_t>(got)));
    }
    ::close(fd);
    return hasher.digest();
}

bool is_sha256_hex(std::string_view text) {
    if (text.size() != 64)
        return false;
    for (char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

}  // namespace rootlock::util
