// JSON as text for every output and cache: nlohmann's dump() throws on a string that is not
// UTF-8, and file names in a root, archive members and index pages need not be. Such bytes are
// written as U+FFFD instead, so a Latin-1 file name never turns a report into a crash.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rootlock::util {

// Any basic_json: nlohmann::json and the ordered_json that keeps documented key orders.
template <class Json>
std::string json_text(const Json& value, int indent = -1) {
    return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace rootlock::util
