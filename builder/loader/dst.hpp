// Dynamic string tokens and search-path lists: $ORIGIN, $LIB and $PLATFORM expanded the way
// glibc's expand_dynamic_string_token does, and DT_RPATH/DT_RUNPATH/LD_LIBRARY_PATH split into
// directories (empty elements mean the working directory, which is "/" for rootlock).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loader/target.hpp"

namespace rootlock::loader {

struct DstContext {
    std::optional<std::string> origin;  // directory of the object carrying the tag
    const Target* target = nullptr;
};

struct ExpandedPath {
    std::string path;
    // Set when the element used a token rootlock cannot know statically ($PLATFORM with no
    // --platform, $ORIGIN of an object without a known directory): glibc drops such elements.
    std::string unknown_token;
};

// Expands the tokens of one element. When a token cannot be known, unknown_token names it.
ExpandedPath expand_dst(std::string_view element, const DstContext& context);

// Splits a colon-separated list (LD_LIBRARY_PATH also allows ';') into elements.
std::vector<std::string> split_path_list(std::string_view list, bool allow_semicolon = false);

// The directory glibc takes as $ORIGIN for an object opened under `name`: everything before
// the last slash, unnormalised ("/a/b/../c/libx.so" gives "/a/b/../c").
std::string origin_of(std::string_view name);

}  // namespace rootlock::loader
