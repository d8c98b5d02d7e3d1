// The error texts every FileTree gives for the same failures, so that a message reads the same
// whether the root is a directory, a tarball or a test map ("PATH: not a regular file").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace rootlock::fs {

inline util::Error no_such_path(std::string_view path) {
    return util::make_error(std::string(path), "no such file or directory");
}

inline util::Error not_regular_file(std::string_view path) {
    return util::make_error(std::string(path), "not a regular file");
}

inline util::Error not_directory(std::string_view path) {
    return util::make_error(std::string(path), "not a directory");
}

inline util::Error not_symlink(std::string_view path) {
    return util::make_error(std::string(path), "not a symbolic link");
}

// read_file's refusal: the caller's limit protects memory from a root full of huge files.
util::Error file_too_large(std::string_view path, uint64_t size, uint64_t max_size);

// errno as fixed English text: strerror() follows LC_MESSAGES, and no locale reaches output.
std::string errno_text(int error_number);

}  // namespace rootlock::fs
