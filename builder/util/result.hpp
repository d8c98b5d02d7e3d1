// Errors as values: Result<T> holds either a T or a located Error. g++ 12 has no std::expected,
// and the library never throws for bad input, so every fallible step returns one of these.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "util/quote.hpp"

namespace rootlock::util {

// Which kind of failure an Error is, so that the CLI can pick the exit code (2 for bad input,
// 3 for a network that failed) without parsing messages.
// input: bad input (exit 2); network: the network or a peer failed; io: a local read or write
// failed (a full disk, a read-only or impossible cache or output directory); integrity: bytes
// that are not the ones their digest names (a download, a cache entry under --offline). The last
// three exit 3 (exits_as_io): the input was right, the bytes that came for it were not.
enum class ErrorKind { input, network, io, integrity };

// What went wrong and where. `where` is a location such as "file:3:7" or "path@0x40";
// text() joins them the way every user-facing message does: "where: message".
struct Error {
    std::string where;
    std::string message;
    ErrorKind kind = ErrorKind::input;

    std::string text() const { return where.empty() ? message : where + ": " + message; }
};

// A location is one line whatever it names (a file name, a URL, a member of an archive: all may
// come from untrusted bytes), so its control bytes are written \xNN here, once for every caller.
// Messages are the caller's: parsers quote what they echo (quote.hpp); a few, such as a
// resolver's conflict, are several lines on purpose.
inline Error make_error(std::string where, std::string message) {
    return Error{is_one_line(where) ? std::move(where) : printable(where), std::move(message),
                 ErrorKind::input};
}

inline Error make_network_error(std::string where, std::string message) {
    return Error{is_one_line(where) ? std::move(where) : printable(where), std::move(message),
                 ErrorKind::network};
}

// A local file operation that failed: "PATH: the errno text".
inline Error make_io_error(std::string where, std::string message) {
    return Error{is_one_line(where) ? std::move(where) : printable(where), std::move(message),
                 ErrorKind::io};
}

// Bytes that do not match the digest they must have: "WHERE: sha256 mismatch: ...".
inline Error make_integrity_error(std::string where, std::string message) {
    return Error{is_one_line(where) ? std::move(where) : printable(where), std::move(message),
                 ErrorKind::integrity};
}

// Whether the failure was the machine's or the network's rather than the input's: exit 3.
inline bool exits_as_io(const Error& error) {
    return error.kind != ErrorKind::input;
}

// Unit stands in for "no value" so that Result<Unit> works like Result<T>.
struct Unit {};

template <class T>
class [[nodiscard]] Result {
  public:
    Result(T value) : m_state(std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Error error) : m_state(std::move(error)) {}  // NOLINT(google-explicit-constructor)

    bool ok() const { return std::holds_alternative<T>(m_state); }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<T>(m_state); }
    const T& value() const& { return std::get<T>(m_state); }
    T&& value() && { return std::get<T>(std::move(m_state)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<Error>(m_state); }

  private:
    std::variant<T, Error> m_state;
};

using Status = Result<Unit>;

inline Status ok_status() {
    return Status(Unit{});
}

}  // namespace rootlock::util

// Propagates an error from an expression yielding a Result: `ROOTLOCK_TRY(x, parse(y));`
#define ROOTLOCK_TRY(var, expr)      \
    auto var##_result = (expr);      \
    if (!var##_result.ok())          \
        return var##_result.error(); \
    auto& var = var##_result.value()
