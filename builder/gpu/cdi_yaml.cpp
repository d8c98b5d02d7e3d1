// CDI spec text as a YamlTree (the only user of yaml-cpp: its events become a bounded tree of
// our own, its exceptions located errors) and the typed reads of that tree; see cdi_yaml.hpp.
#include "gpu/cdi_yaml.hpp"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/emitterstyle.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/quote.hpp"

// The module is compiled as one unit: these helpers live in a namespace no other file uses.
namespace rootlock::gpu::cdi_yaml {
namespace {

using cdi::YamlNode;
using cdi::YamlTree;
using util::Result;

constexpr std::string_view k_str_tag = "tag:yaml.org,2002:str";
constexpr std::string_view k_int_tag = "tag:yaml.org,2002:int";
constexpr std::string_view k_bool_tag = "tag:yaml.org,2002:bool";

// A scalar Go's decoder takes into a string field: untagged, quoted or plain, or !!str.
bool cdi_string_node(const YamlNode& node) {
    return node.kind == YamlNode::Kind::scalar && (node.tag.empty() || node.tag == k_str_tag);
}

std::string at(std::string_view name, size_t line, size_t column) {
    return std::string(name) + ":" + std::to_string(line) + ":" + std::to_string(column);
}

// Only UTF-8 text without control bytes (tab and line ends aside) reaches yaml-cpp: YAML allows
// no other, and yaml-cpp would otherwise guess UTF-16 from NUL bytes or read one as the end.
util::Status check_bytes(std::string_view text, std::string_view name) {
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < text.size();) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte == '\n') {
            ++line;
            line_start = ++i;
            continue;
        }
        if (byte < 0x80) {
            if ((byte < 0x20 && byte != '\t' && byte != '\r') || byte == 0x7f) {
                static const char k_hex[] = "0123456789abcdef";
                return util::make_error(at(name, line, i - line_start + 1),
                                        std::string("control byte 0x") + k_hex[byte >> 4] +
                                            k_hex[byte & 0xf] + " in YAML text");
            }
            ++i;
            continue;
        }
        // A well-formed sequence: no overlong form, no surrogate, nothing past U+10FFFF.
        const size_t length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc2 ? 2 : 0;
        bool valid = length != 0 && byte <= 0xf4 && i + length <= text.size();
        for (size_t k = 1; valid && k < length; ++k)
            valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
        if (valid && length >= 3) {
            const auto second = static_cast<unsigned char>(text[i + 1]);
            valid = !(byte == 0xe0 && second < 0xa0) && !(byte == 0xed && second >= 0xa0) &&
                    !(byte == 0xf0 && second < 0x90) && !(byte == 0xf4 && second >= 0x90);
        }
        if (!valid)
            return util::make_error(at(name, line, i - line_start + 1), "text is not UTF-8");
        i += length;
    }
    return util::ok_status();
}

// A limit met while the events arrive; thrown through yaml-cpp's parser, which unwinds cleanly.
struct TreeLimit : std::runtime_error {
    TreeLimit(const YAML::Mark& where, const std::string& what)
        : std::runtime_error(what), mark(where) {}
    YAML::Mark mark;
};

// yaml-cpp's events as a YamlTree. The depth check comes before yaml-cpp recurses into a
// collection's content (its own guard is 2000 levels of C++ recursion), the node count before
// the node is stored; an alias is the index of its anchor's node, never a copy.
class TreeBuilder final : public YAML::EventHandler {
  public:
    explicit TreeBuilder(YamlTree& tree) : m_tree(tree) {}

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        add(YamlNode::Kind::null, mark, "?", {}, anchor);
    }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        count(mark);
        if (anchor >= m_anchors.size() || m_anchors[anchor] == k_no_node)
            throw TreeLimit(mark, "an alias names no anchor");
        attach(m_anchors[anchor]);
    }
    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  const std::string& value) override {
        add(YamlNode::Kind::scalar, mark, tag, value, anchor);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        open(add(YamlNode::Kind::sequence, mark, tag, {}, anchor), mark);
    }
    void OnSequenceEnd() override { m_open.pop_back(); }
    void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        open(add(YamlNode::Kind::mapping, mark, tag, {}, anchor), mark);
    }
    void OnMapEnd() override { m_open.pop_back(); }

  private:
    static constexpr uint32_t k_no_node = UINT32_MAX;

    void count(const YAML::Mark& mark) {
        if (++m_events > cdi::k_max_nodes)
            throw TreeLimit(mark, "more than " + std::to_string(cdi::k_max_nodes) + " YAML nodes");
    }

    uint32_t add(YamlNode::Kind kind, const YAML::Mark& mark, const std::string& tag,
                 const std::string& value, YAML::anchor_t anchor) {
        count(mark);
        YamlNode node;
        node.kind = kind;
        // yaml-cpp writes "?" for a plain node without a tag and "!" for a quoted one.
        node.plain = tag == "?";
        if (tag != "?" && tag != "!")
            node.tag = tag;
        node.value = value;
        node.line = static_cast<uint32_t>(mark.line + 1);
        node.column = static_cast<uint32_t>(mark.column + 1);
        const auto index = static_cast<uint32_t>(m_tree.nodes.size());
        m_tree.nodes.push_back(std::move(node));
        // yaml-cpp numbers anchors 1, 2, ... in the order they are defined, and a redefined
        // name gets a new number, so the table stays as small as the node count.
        if (anchor != YAML::NullAnchor) {
            if (anchor >= m_anchors.size())
                m_anchors.resize(anchor + 1, k_no_node);
            m_anchors[anchor] = index;
        }
        attach(index);
        return index;
    }

    void attach(uint32_t index) {
        if (m_open.empty())
            m_tree.root = index;
        else
            m_tree.nodes[m_open.back()].children.push_back(index);
    }

    void open(uint32_t index, const YAML::Mark& mark) {
        if (m_open.size() >= cdi::k_max_depth)
            throw TreeLimit(mark,
                            "nested deeper than " + std::to_string(cdi::k_max_depth) + " levels");
        m_open.push_back(index);
    }

    YamlTree& m_tree;
    std::vector<uint32_t> m_open;
    std::vector<uint32_t> m_anchors;
    size_t m_events = 0;
};

std::string located(std::string_view name, const YAML::Mark& mark) {
    if (mark.is_null() || mark.line < 0 || mark.column < 0)
        return std::string(name);
    return at(name, static_cast<size_t>(mark.line) + 1, static_cast<size_t>(mark.column) + 1);
}

// yaml-cpp's message, whose few parts taken from the input (a bad escape's character, a YAML
// directive's argument) are quoted like any other echo.
std::string yaml_message(const std::string& msg) {
    for (std::string_view prefix : {YAML::ErrorMsg::INVALID_ESCAPE, YAML::ErrorMsg::INVALID_UNICODE,
                                    YAML::ErrorMsg::YAML_VERSION})
        if (msg.size() > prefix.size() && msg.compare(0, prefix.size(), prefix) == 0)
            return "YAML: " + std::string(prefix) +
                   util::quote_prefix(std::string_view(msg).substr(prefix.size()), 32);
    return "YAML: " + util::printable(msg);
}

util::Result<YamlTree> load_events(std::string_view text, std::string_view name) {
    YamlTree tree;
    try {
        std::istringstream stream{std::string(text)};
        YAML::Parser parser(stream);
        TreeBuilder builder(tree);
        if (!parser.HandleNextDocument(builder) || tree.nodes.empty())
            return util::make_error(std::string(name), "no YAML document");
    } catch (const TreeLimit& limit) {
        return util::make_error(located(name, limit.mark), limit.what());
    } catch (const YAML::Exception& yaml) {
        return util::make_error(located(name, yaml.mark), yaml_message(yaml.msg));
    } catch (const std::exception& other) {
        return util::make_error(std::string(name), "YAML: " + util::printable(other.what()));
    }
    return tree;
}

// See TreeReader::integer.
struct CdiInteger {
    enum class State { ok, not_number, too_big } state = State::not_number;
    bool negative = false;
    uint64_t magnitude = 0;
};

CdiInteger cdi_parse_integer(std::string_view text) {
    std::string digits;
    for (char c : text)
        if (c != '_')
            digits.push_back(c);
    CdiInteger out;
    std::string_view rest = digits;
    if (!rest.empty() && (rest.front() == '+' || rest.front() == '-')) {
        out.negative = rest.front() == '-';
        rest.remove_prefix(1);
    }
    uint64_t base = 10;
    if (rest.size() >= 2 && rest.front() == '0') {
        const char marker = rest[1];
        if (marker == 'x' || marker == 'X' || marker == 'o' || marker == 'O' || marker == 'b' ||
            marker == 'B') {
            base = (marker == 'x' || marker == 'X') ? 16 : (marker == 'b' || marker == 'B') ? 2 : 8;
            rest.remove_prefix(2);
        } else {
            base = 8;
            rest.remove_prefix(1);
        }
    }
    if (rest.empty())
        return out;
    uint64_t value = 0;
    bool too_big = false;
    for (char c : rest) {
        uint64_t digit = 0;
        if (c >= '0' && c <= '9')
            digit = static_cast<uint64_t>(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = static_cast<uint64_t>(c - 'a') + 10;
        else if (c >= 'A' && c <= 'F')
            digit = static_cast<uint64_t>(c - 'A') + 10;
        else
            return out;
        if (digit >= base)
            return out;
        if (value > (std::numeric_limits<uint64_t>::max() - digit) / base)
            too_big = true;
        else
            value = value * base + digit;
    }
    out.state = too_big ? CdiInteger::State::too_big : CdiInteger::State::ok;
    out.magnitude = value;
    return out;
}

}  // namespace
}  // namespace rootlock::gpu::cdi_yaml

namespace rootlock::gpu::cdi {

std::string shown(std::string_view text) {
    return util::quote_prefix(text, 128);
}

util::Result<YamlTree> load_yaml_tree(std::string_view text, std::string_view name) {
    if (text.size() > k_max_text)
        return util::make_error(std::string(name),
                                "larger than 16 MiB (" + std::to_string(text.size()) + " bytes)");
    if (auto status = cdi_yaml::check_bytes(text, name); !status.ok())
        return status.error();
    return cdi_yaml::load_events(text, name);
}

util::Error TreeReader::error(const YamlNode& node, std::string message) const {
    return util::make_error(
        m_name + ":" + std::to_string(node.line) + ":" + std::to_string(node.column),
        std::move(message));
}

// Every node is reached through here, so an alias bomb stops at k_max_visits.
util::Result<const YamlNode*> TreeReader::visit(uint32_t index) {
    const YamlNode& node = m_tree.nodes[index];
    if (++m_visits > k_max_visits)
        return error(node, "aliases repeat nodes past " + std::to_string(k_max_visits));
    return &node;
}

util::Result<std::vector<const YamlNode*>> TreeReader::fields(
    const YamlNode& map, std::string_view what, std::span<const std::string_view> known) {
    std::vector<const YamlNode*> out(known.size(), nullptr);
    std::vector<bool> seen(known.size(), false);
    for (size_t i = 0; i + 1 < map.children.size(); i += 2) {
        ROOTLOCK_TRY(key, visit(map.children[i]));
        if (key->kind != YamlNode::Kind::scalar)
            return error(*key, "a key in " + std::string(what) + " is not a string");
        auto found = std::find(known.begin(), known.end(), key->value);
        if (found == known.end())
            return error(*key, "unknown field " + shown(key->value) + " in " + std::string(what));
        const auto index = static_cast<size_t>(found - known.begin());
        if (seen[index])
            return error(*key,
                         "field " + shown(key->value) + " appears twice in " + std::string(what));
        seen[index] = true;
        ROOTLOCK_TRY(value, visit(map.children[i + 1]));
        if (value->kind != YamlNode::Kind::null)
            out[index] = value;
    }
    return out;
}

util::Result<std::string> TreeReader::text(const YamlNode& node, std::string_view field) {
    if (node.kind == YamlNode::Kind::null)
        return std::string();
    if (!cdi_yaml::cdi_string_node(node))
        return error(node, "\"" + std::string(field) + "\" must be a string");
    m_copied += node.value.size();
    if (m_copied > cdi::k_max_copied_bytes)
        return error(node, "aliases repeat text past 64 MiB");
    return node.value;
}

util::Result<int64_t> TreeReader::integer(const YamlNode& node, std::string_view field, int64_t min,
                                          int64_t max) {
    const std::string quoted_field = "\"" + std::string(field) + "\"";
    // A quoted number is a string to Go's decoder, which refuses it for a number field.
    if (node.kind != YamlNode::Kind::scalar || (node.tag.empty() && !node.plain) ||
        (!node.tag.empty() && node.tag != cdi_yaml::k_int_tag))
        return error(node, quoted_field + " must be an integer");
    const cdi_yaml::CdiInteger parsed = cdi_yaml::cdi_parse_integer(node.value);
    if (parsed.state == cdi_yaml::CdiInteger::State::not_number)
        return error(node, quoted_field + " must be an integer: " + shown(node.value));
    constexpr auto k_int64_max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    bool fits = parsed.state == cdi_yaml::CdiInteger::State::ok &&
                parsed.magnitude <= k_int64_max + (parsed.negative ? 1 : 0);
    int64_t value = 0;
    if (fits) {
        if (!parsed.negative)
            value = static_cast<int64_t>(parsed.magnitude);
        else if (parsed.magnitude == k_int64_max + 1)
            value = std::numeric_limits<int64_t>::min();
        else
            value = -static_cast<int64_t>(parsed.magnitude);
        fits = value >= min && value <= max;
    }
    if (!fits)
        return error(node, quoted_field + " is out of range: " + shown(node.value));
    return value;
}

util::Result<bool> TreeReader::boolean(const YamlNode& node, std::string_view field) {
    static constexpr std::array<std::string_view, 11> k_true = {
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
    static constexpr std::array<std::string_view, 11> k_false = {
        "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
    if (node.kind == YamlNode::Kind::scalar && (node.plain || node.tag == cdi_yaml::k_bool_tag) &&
        (node.tag.empty() || node.tag == cdi_yaml::k_bool_tag)) {
        if (std::find(k_true.begin(), k_true.end(), node.value) != k_true.end())
            return true;
        if (std::find(k_false.begin(), k_false.end(), node.value) != k_false.end())
            return false;
    }
    return error(node, "\"" + std::string(field) + "\" must be true or false");
}

util::Result<std::vector<const YamlNode*>> TreeReader::items(const YamlNode& node,
                                                             std::string_view field) {
    if (node.kind != YamlNode::Kind::sequence)
        return error(node, "\"" + std::string(field) + "\" must be a sequence");
    std::vector<const YamlNode*> out;
    out.reserve(node.children.size());
    for (uint32_t child : node.children) {
        ROOTLOCK_TRY(item, visit(child));
        out.push_back(item);
    }
    return out;
}

util::Result<std::vector<std::string>> TreeReader::strings(const YamlNode& node,
                                                           std::string_view field) {
    ROOTLOCK_TRY(list, items(node, field));
    std::vector<std::string> out;
    out.reserve(list.size());
    for (const YamlNode* item : list) {
        ROOTLOCK_TRY(value, text(*item, std::string(field) + "[]"));
        out.push_back(std::move(value));
    }
    return out;
}

util::Result<std::map<std::string, std::string>> TreeReader::string_map(const YamlNode& node,
                                                                        std::string_view field) {
    const std::string quoted_field = "\"" + std::string(field) + "\"";
    if (node.kind != YamlNode::Kind::mapping)
        return error(node, quoted_field + " must be a mapping");
    std::map<std::string, std::string> out;
    for (size_t i = 0; i + 1 < node.children.size(); i += 2) {
        ROOTLOCK_TRY(key_node, visit(node.children[i]));
        if (key_node->kind != YamlNode::Kind::scalar)
            return error(*key_node, "a key in " + quoted_field + " is not a string");
        ROOTLOCK_TRY(key, text(*key_node, field));
        ROOTLOCK_TRY(value_node, visit(node.children[i + 1]));
        // The key is untrusted: it is named quoted, never as a field name.
        if (value_node->kind != YamlNode::Kind::null && !cdi_yaml::cdi_string_node(*value_node))
            return error(*value_node, "the value of " + shown(key) + " in " + quoted_field +
                                          " must be a string");
        ROOTLOCK_TRY(value, text(*value_node, field));
        if (!out.emplace(key, std::move(value)).second)
            return error(*key_node, "key " + shown(key) + " appears twice in " + quoted_field);
    }
    return out;
}

}  // namespace rootlock::gpu::cdi
