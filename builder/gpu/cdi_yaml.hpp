// A CDI spec's YAML as a bounded tree of our own and typed, located reads of it: yaml-cpp is
// used in cdi_yaml.cpp alone, and every limit against hostile text is applied here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::gpu::cdi {

struct YamlNode {
    enum class Kind : uint8_t { null, scalar, sequence, mapping };
    Kind kind = Kind::null;
    bool plain = false;             // a scalar written without quotes (only those can be numbers)
    uint32_t line = 0, column = 0;  // 1-based
    std::string tag;                // "" unless given explicitly ("tag:yaml.org,2002:str")
    std::string value;              // a scalar's text
    // A sequence's items; a mapping's keys and values, alternating. An alias is the index of
    // the node it names, so a tree may share nodes and even hold a cycle.
    std::vector<uint32_t> children;
};

struct YamlTree {
    std::vector<YamlNode> nodes;
    uint32_t root = 0;
};

// A real spec is some 10 to 100 KB (a mount per driver file), 7 levels deep, a few thousand
// nodes; these bounds leave room and stop hostile text before it costs memory or stack.
inline constexpr size_t k_max_text = 16u << 20;
inline constexpr size_t k_max_depth = 32;
inline constexpr uint32_t k_max_nodes = 100000;
// Nodes read, counting a node once per alias that reaches it: a spec without aliases reads at
// most the nodes its text holds, so only an alias bomb reaches this.
inline constexpr uint32_t k_max_visits = 100000;
// Bytes of strings copied out: without aliases less than the text (an escape such as \L grows
// 2 bytes to 3 at most), so again only aliases reach it.
inline constexpr size_t k_max_copied_bytes = 64u << 20;

// Untrusted text in a message: quoted, at most 128 bytes of it.
std::string shown(std::string_view text);

// The first document of `text` (the reference's decoder, too, reads only the first), after the
// text's size, bytes (UTF-8, no control byte but tab and line ends), nesting and node count are
// checked; yaml-cpp's exceptions become errors "NAME:LINE:COL: YAML: ...".
util::Result<YamlTree> load_yaml_tree(std::string_view text, std::string_view name);

// Reads as Go's strict decoder takes YAML into typed fields. A field written as null is absent;
// a quoted scalar is a string, never a number. A `field` or `what` is a name of the caller's,
// shown unquoted: never text from the input.
class TreeReader {
  public:
    TreeReader(const YamlTree& tree, std::string_view name) : m_tree(tree), m_name(name) {}

    util::Error error(const YamlNode& node, std::string message) const;
    util::Result<const YamlNode*> root() { return visit(m_tree.root); }

    // A mapping's values by their index in `known` (nullptr: absent or null); an unknown or
    // repeated key, or one that is not a string, is refused, naming `what`.
    util::Result<std::vector<const YamlNode*>> fields(const YamlNode& map, std::string_view what,
                                                      std::span<const std::string_view> known);
    util::Result<std::string> text(const YamlNode& node, std::string_view field);
    // text(), or "" for a field that is absent (a nullptr from fields()).
    util::Result<std::string> optional_text(const YamlNode* node, std::string_view field) {
        return node == nullptr ? std::string() : text(*node, field);
    }
    // Go's strconv.ParseInt(text, 0, 64) after yaml.v2 drops '_': a sign, then 0x hex, 0o or a
    // leading 0 octal (YAML 1.1: 0644 is 420), 0b binary, or decimal; within [min, max].
    util::Result<int64_t> integer(const YamlNode& node, std::string_view field, int64_t min,
                                  int64_t max);
    // yaml.v2's booleans (YAML 1.1: yes, on, y, ... too).
    util::Result<bool> boolean(const YamlNode& node, std::string_view field);
    util::Result<std::vector<const YamlNode*>> items(const YamlNode& node, std::string_view field);
    util::Result<std::vector<std::string>> strings(const YamlNode& node, std::string_view field);
    util::Result<std::map<std::string, std::string>> string_map(const YamlNode& node,
                                                                std::string_view field);

  private:
    util::Result<const YamlNode*> visit(uint32_t index);

    const YamlTree& m_tree;
    std::string m_name;
    uint32_t m_visits = 0;
    size_t m_copied = 0;
};

}  // namespace rootlock::gpu::cdi
