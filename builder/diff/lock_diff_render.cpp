// Two renderings of a LockDiff: text for a terminal and Markdown for a pull request (JSON is in
// lock_diff_json.cpp). Nothing here decides what differs.
#include <string_view>

#include <fmt/format.h>

#include "diff/lock_diff.hpp"

namespace rootlock::diff {

namespace {

constexpr std::string_view k_green = "32";
constexpr std::string_view k_red = "31";
constexpr std::string_view k_yellow = "33";
constexpr std::string_view k_red_bold = "1;31";
constexpr std::string_view k_yellow_bold = "1;33";

// A 64-character hex digest is cut to 8 characters in text and Markdown; JSON keeps it whole.
std::string shown(const std::string& value) {
    if (value.empty())
        return "(none)";
    if (value.size() == 64 && value.find_first_not_of("0123456789abcdef") == std::string::npos)
        return value.substr(0, 8) + "...";
    return value;
}

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
    return fmt::format("{}", fmt::join(items, separator));
}

std::string joined_or_none(const std::vector<std::string>& items) {
    return items.empty() ? "(none)" : joined(items, ", ");
}

bool has_kind(const PackageChange& change, PackageChangeKind kind) {
    for (auto k : change.kinds) {
        if (k == kind)
            return true;
    }
    return false;
}

// The version the change is about: the one kept, or the new one.
std::string version_of(const PackageChange& change) {
    return change.after ? *change.after : change.before.value_or("");
}

std::string name_version(const std::string& name, const std::string& version) {
    return version.empty() ? name : name + " " + version;
}

// An sdist or archive is always named with its kind; a wheel only when several were rebuilt.
std::string rebuilt_which(const PackageChange& change, const RebuiltWheel& wheel) {
    if (wheel.kind != "wheel")
        return " " + wheel.kind + " " + wheel.wheel;
    return change.rebuilt.size() > 1 ? " " + wheel.wheel : "";
}

std::string rebuilt_text(const PackageChange& change, const RebuiltWheel& wheel) {
    return fmt::format("rebuilt{}: {} {} -> {}", rebuilt_which(change, wheel), wheel.algorithm,
                       shown(wheel.before), shown(wheel.after));
}

// A source field's value: a git commit id is cut to 12 hex digits, as git's short form.
std::string shown_source(const SourceFieldChange& field, const std::string& value) {
    if (field.field == "commit-id" && value.size() == 40 &&
        value.find_first_not_of("0123456789abcdef") == std::string::npos)
        return value.substr(0, 12) + "...";
    return shown(value);
}

// "vcs commit-id 1a2b3c4d5e6f... -> 6f5e4d3c2b1a...".
std::string source_field_text(const SourceFieldChange& field) {
    return fmt::format("{} {} {} -> {}", field.source, field.field,
                       shown_source(field, field.before), shown_source(field, field.after));
}

std::string source_kind_text(const PackageChange& change) {
    return fmt::format("source {} -> {}", shown(change.source_before), shown(change.source_after));
}

// The source a *-changed kind is about.
std::string_view source_of_kind(PackageChangeKind kind) {
    switch (kind) {
        case PackageChangeKind::vcs_changed:
            return "vcs";
        case PackageChangeKind::directory_changed:
            return "directory";
        case PackageChangeKind::archive_changed:
            return "archive";
        case PackageChangeKind::sdist_changed:
            return "sdist";
        default:
            return "";
    }
}

std::vector<std::string> source_field_texts(const PackageChange& change, PackageChangeKind kind) {
    std::vector<std::string> out;
    for (const auto& field : change.source_fields) {
        if (field.source == source_of_kind(kind))
            out.push_back(source_field_text(field));
    }
    return out;
}

// Where one side of a .deb came from: its archive's suite, else the archive's name.
std::string deb_place(const std::string& suite, const std::string& archive) {
    return shown(suite.empty() ? archive : suite);
}

bool deb_suite_changed(const DebChange& change) {
    return change.before && change.after &&
           deb_place(change.suite_before, change.archive_before) !=
               deb_place(change.suite_after, change.archive_after);
}

// "bookworm", or "bookworm -> bookworm-security" when a kept .deb comes from elsewhere now.
std::string deb_suites(const DebChange& change) {
    const std::string b = deb_place(change.suite_before, change.archive_before);
    const std::string a = deb_place(change.suite_after, change.archive_after);
    if (deb_suite_changed(change))
        return b + " -> " + a;
    return change.after ? a : b;
}

// The same for a sentence: "from bookworm", or "bookworm -> bookworm-security".
std::string deb_origin(const DebChange& change) {
    return deb_suite_changed(change) ? deb_suites(change) : "from " + deb_suites(change);
}

// "libc6 2.36-9+deb12u10 (amd64)", or "libc6 2.36-9+deb12u10 -> 2.36-9+deb12u13 (amd64)".
std::string deb_versions(const DebChange& change) {
    const bool both = change.before && change.after && *change.before != *change.after;
    const std::string version = both ? *change.before + " -> " + *change.after
                                     : change.after.value_or(change.before.value_or(""));
    return fmt::format("{} {} ({})", change.name, version, change.architecture);
}

// A moved .deb: what moved, "archive debian -> local, file pool/a.deb -> pool/b.deb".
std::string deb_moves(const DebChange& change) {
    std::vector<std::string> parts;
    if (change.archive_before != change.archive_after)
        parts.push_back(fmt::format("archive {} -> {}", shown(change.archive_before),
                                    shown(change.archive_after)));
    if (change.filename_before != change.filename_after)
        parts.push_back(fmt::format("file {} -> {}", shown(change.filename_before),
                                    shown(change.filename_after)));
    return joined(parts, ", ");
}

std::string deb_rebuilt_text(const DebChange& change) {
    return fmt::format("rebuilt: sha256 {} -> {}", shown(change.sha256_before),
                       shown(change.sha256_after));
}

std::string security_flag(const DebChange& change) {
    return change.security ? " [security]" : "";
}

// ---- text ----

class TextOut {
  public:
    explicit TextOut(bool colour) : m_colour(colour) {}

    void header(std::string_view name) {
        m_out += name;
        m_out += '\n';
    }
    void line(char mark, std::string_view colour, const std::string& text) {
        const std::string body = fmt::format("{} {}", mark, text);
        if (m_colour)
            m_out += fmt::format("  \x1b[{}m{}\x1b[0m\n", colour, body);
        else
            m_out += "  " + body + "\n";
    }
    std::string take() { return std::move(m_out); }

  private:
    bool m_colour;
    std::string m_out;
};

void text_field(TextOut& out, const std::string& label, const FieldChange& change) {
    out.line('~', k_yellow,
             fmt::format("{} {} -> {}", label, shown(change.before), shown(change.after)));
}

void text_packages(TextOut& out, std::string_view header, const std::vector<PackageChange>& list,
                   const std::vector<FieldChange>& fields) {
    if (list.empty() && fields.empty())
        return;
    out.header(header);
    for (const auto& field : fields)
        text_field(out, field.field + " build", field);
    for (const auto& change : list) {
        const std::string here = name_version(change.name, version_of(change));
        for (auto kind : change.kinds) {
            switch (kind) {
                case PackageChangeKind::added:
                    out.line('+', k_green, here);
                    break;
                case PackageChangeKind::removed:
                    out.line('-', k_red, here);
                    break;
                case PackageChangeKind::upgraded:
                case PackageChangeKind::downgraded:
                    out.line('~', k_yellow,
                             fmt::format("{} {} -> {} ({})", change.name, *change.before,
                                         *change.after, to_string(kind)));
                    break;
                case PackageChangeKind::index_moved:
                    out.line('~', k_yellow,
                             fmt::format("{}: index {} -> {} (index-moved)", here,
                                         shown(change.before_index), shown(change.after_index)));
                    break;
                case PackageChangeKind::rebuilt:
                    for (const auto& wheel : change.rebuilt)
                        out.line('!', k_red_bold,
                                 fmt::format("{}: {} (same version, different artifact)", here,
                                             rebuilt_text(change, wheel)));
                    break;
                case PackageChangeKind::wheel_changed:
                    out.line('~', k_yellow,
                             fmt::format("{}: wheel {} -> {} (wheel-changed)", here,
                                         joined_or_none(change.wheels_removed),
                                         joined_or_none(change.wheels_added)));
                    break;
                case PackageChangeKind::source_changed:
                    out.line(
                        '~', k_yellow,
                        fmt::format("{}: {} (source-changed)", here, source_kind_text(change)));
                    break;
                case PackageChangeKind::vcs_changed:
                case PackageChangeKind::directory_changed:
                case PackageChangeKind::archive_changed:
                case PackageChangeKind::sdist_changed:
                    for (const auto& text : source_field_texts(change, kind))
                        out.line('~', k_yellow,
                                 fmt::format("{}: {} ({})", here, text, to_string(kind)));
                    break;
            }
        }
    }
}

void text_sonames(TextOut& out, const SonameDiff& sonames) {
    if (sonames.empty())
        return;
    out.header("sonames");
    for (const auto& change : sonames.changes) {
        const std::string before = joined(change.before, ", ");
        const std::string after = joined(change.after, ", ");
        switch (change.kind) {
            case SonameChangeKind::provided_added:
                out.line('+', k_green, fmt::format("provides {} ({})", change.soname, after));
                break;
            case SonameChangeKind::provided_removed:
                out.line('-', k_red, fmt::format("provides {} ({})", change.soname, before));
                break;
            case SonameChangeKind::needed_added:
                out.line('+', k_green, fmt::format("needs {} ({})", change.soname, after));
                break;
            case SonameChangeKind::needed_removed:
                out.line('-', k_red, fmt::format("needs {} ({})", change.soname, before));
                break;
            case SonameChangeKind::provider_moved:
                out.line(
                    '~', k_yellow,
                    fmt::format("{}: {} -> {} (provider moved)", change.soname, before, after));
                break;
        }
    }
    for (const auto* field : {&sonames.glibc, &sonames.glibcxx}) {
        if (*field)
            text_field(out, fmt::format("highest {}_ needed:", (*field)->field), **field);
    }
    for (int major : sonames.cuda_majors_added)
        out.line('+', k_green, fmt::format("CUDA {} in the closure", major));
    for (int major : sonames.cuda_majors_removed)
        out.line('-', k_red, fmt::format("CUDA {} in the closure", major));
}

// One line per .deb: a point release changes a hundred at once, so each stays on one line with
// the suite it came from, and the flags ([downgraded], [security]) at its end.
void text_debian(TextOut& out, const std::vector<DebChange>& list) {
    if (list.empty())
        return;
    out.header("debian");
    for (const auto& change : list) {
        const std::string what = deb_versions(change);
        const std::string flag = security_flag(change);
        switch (change.kind) {
            case DebChangeKind::added:
                out.line('+', k_green, fmt::format("{} {}{}", what, deb_origin(change), flag));
                break;
            case DebChangeKind::removed:
                out.line('-', k_red, fmt::format("{} {}", what, deb_origin(change)));
                break;
            case DebChangeKind::upgraded:
                out.line('~', k_yellow, fmt::format("{} {}{}", what, deb_origin(change), flag));
                break;
            case DebChangeKind::downgraded:
                out.line('~', k_yellow_bold,
                         fmt::format("{} {} [downgraded]{}", what, deb_origin(change), flag));
                break;
            case DebChangeKind::rebuilt:
                out.line('!', k_red_bold,
                         fmt::format("{} {}: {} (same version, different artifact){}", what,
                                     deb_origin(change), deb_rebuilt_text(change), flag));
                break;
            case DebChangeKind::moved:
                out.line('~', k_yellow,
                         fmt::format("{}: {} (moved){}", what, deb_moves(change), flag));
                break;
        }
    }
}

std::string recipe_items(const RecipeChange& change) {
    std::vector<std::string> items;
    for (const auto& item : change.added)
        items.push_back("+ " + item);
    for (const auto& item : change.removed)
        items.push_back("- " + item);
    for (const auto& item : change.changed)
        items.push_back("~ " + item);
    return joined(items, "; ");
}

// ---- Markdown ----

std::string cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        // '~' too: GitHub strikes through text between two tildes ("1.0~rc1 ~ 1.0~rc2").
        if (c == '|' || c == '\\' || c == '~')
            out += '\\';
        out += c == '\n' ? ' ' : c;
    }
    return out;
}

std::string bold(const std::string& text) {
    return "**" + text + "**";
}

void md_table_head(std::string& out, std::string_view title, std::string_view columns) {
    out += fmt::format("\n#### {}\n\n| {} |\n|", title, columns);
    for (char c : columns) {
        if (c == '|')
            out += "---|";
    }
    out += "---|\n";
}

void md_row(std::string& out, const std::vector<std::string>& cells) {
    out += "|";
    for (const auto& c : cells)
        out += " " + c + " |";
    out += "\n";
}

void md_fields(std::string& out, std::string_view title, const std::vector<FieldChange>& list) {
    if (list.empty())
        return;
    md_table_head(out, title, "field | before | after");
    for (const auto& change : list)
        md_row(out, {cell(change.field), cell(shown(change.before)), cell(shown(change.after))});
}

std::string md_change(const PackageChange& change) {
    std::vector<std::string> parts;
    for (auto kind : change.kinds) {
        switch (kind) {
            case PackageChangeKind::index_moved:
                parts.push_back(fmt::format("index-moved ({} -> {})", shown(change.before_index),
                                            shown(change.after_index)));
                break;
            case PackageChangeKind::rebuilt:
                for (const auto& wheel : change.rebuilt)
                    parts.push_back(rebuilt_text(change, wheel));
                break;
            case PackageChangeKind::wheel_changed:
                parts.push_back(fmt::format("wheel-changed ({} -> {})",
                                            joined_or_none(change.wheels_removed),
                                            joined_or_none(change.wheels_added)));
                break;
            case PackageChangeKind::source_changed:
                parts.push_back(fmt::format("source-changed ({} -> {})",
                                            shown(change.source_before),
                                            shown(change.source_after)));
                break;
            case PackageChangeKind::vcs_changed:
            case PackageChangeKind::directory_changed:
            case PackageChangeKind::archive_changed:
            case PackageChangeKind::sdist_changed:
                parts.push_back(fmt::format("{} ({})", to_string(kind),
                                            joined(source_field_texts(change, kind), "; ")));
                break;
            default:
                parts.push_back(to_string(kind));
        }
    }
    return joined(parts, "; ");
}

void md_packages(std::string& out, std::string_view title, const std::vector<PackageChange>& list,
                 const std::vector<FieldChange>& fields) {
    if (list.empty() && fields.empty())
        return;
    md_table_head(out, title, "package | before | after | change");
    for (const auto& field : fields)
        md_row(out, {cell(field.field + " (build)"), cell(shown(field.before)),
                     cell(shown(field.after)), "changed"});
    for (const auto& change : list) {
        std::vector<std::string> row{cell(change.name), cell(change.before.value_or("")),
                                     cell(change.after.value_or("")), cell(md_change(change))};
        if (has_kind(change, PackageChangeKind::rebuilt)) {
            for (auto& c : row) {
                if (!c.empty())
                    c = bold(c);
            }
        }
        md_row(out, row);
    }
}

std::string md_deb_change(const DebChange& change) {
    std::string text;
    switch (change.kind) {
        case DebChangeKind::rebuilt:
            text = deb_rebuilt_text(change);
            break;
        case DebChangeKind::moved:
            text = fmt::format("moved ({})", deb_moves(change));
            break;
        default:
            text = to_string(change.kind);
    }
    return text + security_flag(change);
}

void md_debian(std::string& out, const std::vector<DebChange>& list) {
    if (list.empty())
        return;
    md_table_head(out, "debian", "package | architecture | before | after | suite | change");
    for (const auto& change : list) {
        std::vector<std::string> row{cell(change.name),
                                     cell(change.architecture),
                                     cell(change.before.value_or("")),
                                     cell(change.after.value_or("")),
                                     cell(deb_suites(change)),
                                     cell(md_deb_change(change))};
        if (change.kind == DebChangeKind::rebuilt) {
            for (auto& c : row)
                c = bold(c);
        }
        md_row(out, row);
    }
}

// "torch 2.10.0 -> 2.11.0 drops sm_70; adds sm_120": the GPUs a new build no longer runs on
// natively come first, since they are what breaks.
void text_architectures(TextOut& out, const std::vector<ArchitectureChange>& changes) {
    if (changes.empty())
        return;
    out.header("gpu architectures");
    for (const auto& change : changes) {
        std::string line =
            change.before == change.after
                ? fmt::format("{} {}", change.name, change.after)
                : fmt::format("{} {} -> {}", change.name, change.before, change.after);
        std::string what;
        if (!change.removed.empty())
            what = "drops " + joined(change.removed, ", ");
        if (!change.added.empty())
            what += (what.empty() ? "adds " : "; adds ") + joined(change.added, ", ");
        out.line(change.removed.empty() ? '+' : '-', change.removed.empty() ? k_green : k_red,
                 line + " " + what);
    }
}

void md_sonames(std::string& out, const SonameDiff& sonames) {
    if (sonames.empty())
        return;
    md_table_head(out, "sonames", "soname | before | after | change");
    for (const auto& change : sonames.changes)
        md_row(out, {cell(change.soname), cell(joined(change.before, ", ")),
                     cell(joined(change.after, ", ")), to_string(change.kind)});
    for (const auto* field : {&sonames.glibc, &sonames.glibcxx}) {
        if (*field)
            md_row(out, {fmt::format("highest {}_ needed", (*field)->field),
                         cell(shown((*field)->before)), cell(shown((*field)->after)), "changed"});
    }
    for (int major : sonames.cuda_majors_added)
        md_row(out, {fmt::format("CUDA {} in the closure", major), "no", "yes", "added"});
    for (int major : sonames.cuda_majors_removed)
        md_row(out, {fmt::format("CUDA {} in the closure", major), "yes", "no", "removed"});
}

// The target without the torch build, and the torch build alone: the issue groups the build
// with torch.
std::pair<std::vector<FieldChange>, std::vector<FieldChange>> split_target(const LockDiff& diff) {
    std::pair<std::vector<FieldChange>, std::vector<FieldChange>> out;
    for (const auto& change : diff.target)
        (change.field == "torch" ? out.second : out.first).push_back(change);
    return out;
}

}  // namespace

std::string render_diff_text(const LockDiff& diff, bool colour) {
    if (diff.same())
        return "no difference in meaning\n";
    TextOut out(colour);
    const auto [target, torch_build] = split_target(diff);
    if (!target.empty()) {
        out.header("target");
        for (const auto& change : target)
            text_field(out, change.field, change);
    }
    if (!diff.base.empty()) {
        out.header("base");
        for (const auto& change : diff.base)
            text_field(out, change.field, change);
    }
    text_debian(out, diff.debian);
    text_packages(out, "torch", diff.torch, torch_build);
    text_packages(out, "nvidia", diff.nvidia, {});
    text_packages(out, "packages", diff.packages, {});
    text_sonames(out, diff.sonames);
    text_architectures(out, diff.gpu_architectures);
    if (!diff.recipe.empty()) {
        out.header("recipe");
        for (const auto& change : diff.recipe)
            out.line('~', k_yellow, change.field + ": " + recipe_items(change));
    }
    return out.take();
}

std::string render_diff_markdown(const LockDiff& diff) {
    std::string out = "### Lock changes\n";
    if (diff.same())
        return out + "\nThe two locks do not differ in meaning.\n";
    bool warned = false;
    for (const auto& change : diff.debian) {
        if (change.kind != DebChangeKind::rebuilt)
            continue;
        out +=
            fmt::format("{}> **Warning:** {} was rebuilt under the same version: sha256 {} -> {}\n",
                        warned ? ">\n" : "\n", cell(deb_versions(change)),
                        shown(change.sha256_before), shown(change.sha256_after));
        warned = true;
    }
    for (const auto* group : {&diff.torch, &diff.nvidia, &diff.packages}) {
        for (const auto& change : *group) {
            for (const auto& wheel : change.rebuilt) {
                const std::string what =
                    wheel.kind == "wheel" ? "" : cell(wheel.kind + " " + wheel.wheel) + " ";
                out += fmt::format(
                    "{}> **Warning:** {} was rebuilt under the same version: {}{} {} -> {}\n",
                    warned ? ">\n" : "\n", cell(name_version(change.name, version_of(change))),
                    what, wheel.algorithm, shown(wheel.before), shown(wheel.after));
                warned = true;
            }
        }
    }
    const auto [target, torch_build] = split_target(diff);
    md_fields(out, "target", target);
    md_fields(out, "base", diff.base);
    md_debian(out, diff.debian);
    md_packages(out, "torch", diff.torch, torch_build);
    md_packages(out, "nvidia", diff.nvidia, {});
    md_packages(out, "packages", diff.packages, {});
    md_sonames(out, diff.sonames);
    if (!diff.gpu_architectures.empty()) {
        md_table_head(out, "gpu architectures", "package | before | after | dropped | added");
        for (const auto& change : diff.gpu_architectures)
            md_row(out, {cell(change.name), cell(change.before), cell(change.after),
                         cell(joined(change.removed, ", ")), cell(joined(change.added, ", "))});
    }
    if (!diff.recipe.empty()) {
        md_table_head(out, "recipe", "field | added | removed | changed");
        for (const auto& change : diff.recipe)
            md_row(out, {cell(change.field), cell(joined(change.added, ", ")),
                         cell(joined(change.removed, ", ")), cell(joined(change.changed, ", "))});
    }
    return out;
}

}  // namespace rootlock::diff
