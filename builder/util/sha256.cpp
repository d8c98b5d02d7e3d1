// SHA-256 through OpenSSL's EVP interface (the only file that includes it for hashing), so that
// every hash in rootlock comes from one audited implementation.
#include "util/sha256.hpp"

#include "util/hex.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace rootlock::util {

struct Sha256::State {
    EVP_MD_CTX* context = nullptr;
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
