// Internal to the recipe parser: source positions, the collector of located problems, and the
// reader that walks one TOML table against its allowed keys and expected types.
#pragma once

#include <toml++/toml.h>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "recipe/recipe_validate.hpp"
#include "util/quote.hpp"
#include "util/result.hpp"

namespace rootlock::recipe::detail {

struct Position {
    std::uint32_t line = 1;
    std::uint32_t column = 1;
};

inline Position position_of(const toml::source_region& region) {
    if (region.begin.line == 0)
        return Position{};
    return Position{region.begin.line, region.begin.column};
}

inline std::string where_text(const std::string& file, Position at) {
    return file + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

inline std::string quoted(std::string_view text) {
    return util::quote(text);
}

// "a string", "an integer", ...: the article and the TOML type, for messages.
std::string type_phrase(toml::node_type type);

struct Problem {
    Position at;
    std::string message;
};

class Collector {
  public:
    explicit Collector(const std::string& file) : m_file(file) {}

    void add(Position at, std::string message) {
        m_problems.push_back(Problem{at, std::move(message)});
    }
    void add(const toml::node& node, std::string message) {
        add(position_of(node.source()), std::move(message));
    }
    bool empty() const { return m_problems.empty(); }
    const std::string& file() const { return m_file; }

    std::vector<util::Error> finish() {
        std::stable_sort(m_problems.begin(), m_problems.end(),
                         [](const Problem& a, const Problem& b) {
                             if (a.at.line != b.at.line)
                                 return a.at.line < b.at.line;
                             return a.at.column < b.at.column;
                         });
        std::vector<util::Error> errors;
        for (auto& problem : m_problems)
            errors.push_back(util::make_error(where_text(m_file, problem.at), problem.message));
        return errors;
    }

  private:
    const std::string& m_file;
    std::vector<Problem> m_problems;
};

// One table being read: `path` prefixes key names in messages ("image.name"), `label` names the
// table itself ("[image]").
class TableReader {
  public:
    TableReader(const toml::table& table, std::string path, std::string label, Collector& out)
        : m_table(table),
          m_path(std::move(path)),
          m_label(std::move(label)),
          m_out(out),
          m_at(position_of(table.source())) {}

    Position position() const { return m_at; }
    const toml::table& table() const { return m_table; }
    bool has(std::string_view key) const { return m_table.contains(key); }

    std::string key_path(std::string_view key) const {
        return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
    }

    void check_keys(const std::vector<std::string_view>& allowed) {
        for (const auto& [key, node] : m_table) {
            const std::string_view name = key.str();
            if (std::find(allowed.begin(), allowed.end(), name) != allowed.end())
                continue;
            const auto suggestion = suggest_key(name, allowed);
            std::string message;
            if (m_path.empty() && node.is_table()) {
                message = "unknown table [" + std::string(name) + "]";
                if (suggestion)
                    message += "; did you mean [" + *suggestion + "]?";
            } else {
                message = "unknown key " + quoted(name) + " in " + m_label;
                if (suggestion)
                    message += "; did you mean " + quoted(*suggestion) + "?";
            }
            m_out.add(position_of(key.source()), std::move(message));
        }
    }

    std::optional<std::string> string(std::string_view key, bool required, Position* at) {
        const toml::node* node = m_table.get(key);
        if (node == nullptr) {
            if (required)
                m_out.add(m_at, m_label + " is missing required key " + quoted(key));
            return std::nullopt;
        }
        *at = position_of(node->source());
        if (const auto* value = node->as_string())
            return value->get();
        m_out.add(*node, key_path(key) + ": expected a string, found " + type_phrase(node->type()));
        return std::nullopt;
    }

    // An optional boolean; a wrong type is reported and reads as absent.
    std::optional<bool> boolean(std::string_view key) {
        const toml::node* node = m_table.get(key);
        if (node == nullptr)
            return std::nullopt;
        if (const auto* value = node->as_boolean())
            return value->get();
        m_out.add(*node,
                  key_path(key) + ": expected a boolean, found " + type_phrase(node->type()));
        return std::nullopt;
    }

    // The strings of an array, each with its position; wrong elements are reported and skipped.
    std::vector<std::pair<std::string, Position>> strings(std::string_view key) {
        std::vector<std::pair<std::string, Position>> values;
        const toml::node* node = m_table.get(key);
        if (node == nullptr)
            return values;
        const auto* array = node->as_array();
        if (array == nullptr) {
            m_out.add(*node, key_path(key) + ": expected an array of strings, found " +
                                 type_phrase(node->type()));
            return values;
        }
        for (std::size_t i = 0; i < array->size(); ++i) {
            const toml::node& element = *array->get(i);
            if (const auto* value = element.as_string()) {
                values.emplace_back(value->get(), position_of(element.source()));
            } else {
                m_out.add(element, key_path(key) + "[" + std::to_string(i) +
                                       "]: expected a string, found " +
                                       type_phrase(element.type()));
            }
        }
        return values;
    }

    const toml::table* subtable(std::string_view key, bool required) {
        const toml::node* node = m_table.get(key);
        if (node == nullptr) {
            if (required)
                m_out.add(m_at, "missing required table [" + std::string(key) + "]");
            return nullptr;
        }
        if (const auto* table = node->as_table())
            return table;
        m_out.add(*node, key_path(key) + ": expected a table, found " + type_phrase(node->type()));
        return nullptr;
    }

    Collector& out() { return m_out; }

  private:
    const toml::table& m_table;
    std::string m_path;
    std::string m_label;
    Collector& m_out;
    Position m_at;
};

}  // namespace rootlock::recipe::detail
