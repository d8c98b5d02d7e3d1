// The Debian part of diff_locks, see deb_diff.hpp: the archives a base was resolved against and
// its pinned .debs, versions ordered by dpkg (debian::compare_deb_versions), never as text.
#include "diff/deb_diff.hpp"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "debian/deb_version.hpp"

namespace rootlock::diff {

namespace {

using Key = std::pair<std::string, std::string>;  // (name, architecture)
using DebsByKey = std::map<Key, std::vector<const pylock::LockDeb*>>;
using SuiteOf = std::map<std::string, std::string>;  // archive name -> suite

constexpr std::string_view k_security_suffix = "-security";

const pylock::LockDebArchive* find_archive(const pylock::LockBase& base, const std::string& name) {
    for (const auto& archive : base.archives) {
        if (archive.name == name)
            return &archive;
    }
    return nullptr;
}

// As a sources.list line would name it.
std::string archive_summary(const pylock::LockDebArchive& archive) {
    std::string out = archive.url + " " + archive.suite;
    for (const auto& component : archive.components)
        out += " " + component;
    return out;
}

void add_field(std::vector<FieldChange>& out, std::string field, const std::string& before,
               const std::string& after) {
    if (before != after)
        out.push_back(FieldChange{std::move(field), before, after});
}

void diff_archive(const pylock::LockDebArchive& b, const pylock::LockDebArchive& a,
                  std::vector<FieldChange>& out) {
    const std::string field = "archive " + b.name + " ";
    add_field(out, field + "url", b.url, a.url);
    add_field(out, field + "suite", b.suite, a.suite);
    add_field(out, field + "components", fmt::format("{}", fmt::join(b.components, " ")),
              fmt::format("{}", fmt::join(a.components, " ")));
    add_field(out, field + "snapshot", b.snapshot, a.snapshot);
    add_field(out, field + "keyring", b.keyring, a.keyring);
    add_field(out, field + "keyring-sha256", b.keyring_sha256, a.keyring_sha256);
}

SuiteOf suites(const pylock::LockBase& base) {
    SuiteOf out;
    for (const auto& archive : base.archives)
        out.emplace(archive.name, archive.suite);
    return out;
}

// A Debian base's architecture: the lock names none for amd64.
std::string base_architecture(const pylock::LockBase& base) {
    return base.kind == "debian" && base.architecture.empty() ? std::string("amd64")
                                                              : base.architecture;
}

// By (name, architecture); a .deb of the base's own architecture keyed as `native_as` when set
// (the other base's architecture), so that libc6:amd64 and libc6:arm64 pair across two bases.
DebsByKey by_key(const pylock::LockBase& base, const std::string& native_as) {
    const std::string native = base_architecture(base);
    DebsByKey out;
    for (const auto& deb : base.debs) {
        const bool renamed = !native_as.empty() && deb.architecture == native;
        out[{deb.name, renamed ? native_as : deb.architecture}].push_back(&deb);
    }
    return out;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string suite_of(const SuiteOf& table, const std::string& archive) {
    auto found = table.find(archive);
    return found == table.end() ? std::string() : found->second;
}

DebChange start_change(DebChangeKind kind, const pylock::LockDeb* b, const SuiteOf& sb,
                       const pylock::LockDeb* a, const SuiteOf& sa) {
    DebChange change;
    // A pair across two architectures is named by what it is now (B's).
    const pylock::LockDeb& any = b != nullptr && a == nullptr ? *b : *a;
    change.name = any.name;
    change.architecture = any.architecture;
    change.kind = kind;
    if (b != nullptr) {
        change.before = b->version;
        change.archive_before = b->archive;
        change.suite_before = suite_of(sb, b->archive);
        change.filename_before = b->filename;
        change.sha256_before = b->sha256;
    }
    if (a != nullptr) {
        change.after = a->version;
        change.archive_after = a->archive;
        change.suite_after = suite_of(sa, a->archive);
        change.filename_after = a->filename;
        change.sha256_after = a->sha256;
        change.security = ends_with(change.suite_after, k_security_suffix);
    }
    return change;
}

bool same_version(const std::string& b, const std::string& a) {
    return b == a || debian::compare_deb_versions(b, a) == 0;
}

void diff_key(const std::vector<const pylock::LockDeb*>& before, const SuiteOf& sb,
              const std::vector<const pylock::LockDeb*>& after, const SuiteOf& sa,
              std::vector<DebChange>& out) {
    std::vector<const pylock::LockDeb*> left_before;
    std::vector<bool> used(after.size(), false);
    for (const pylock::LockDeb* b : before) {
        const pylock::LockDeb* paired = nullptr;
        for (size_t i = 0; i < after.size() && paired == nullptr; ++i) {
            if (!used[i] && same_version(b->version, after[i]->version)) {
                used[i] = true;
                paired = after[i];
            }
        }
        if (paired == nullptr)
            left_before.push_back(b);
        else if (b->architecture != paired->architecture)
            continue;  // one version built for two architectures: other bytes, other pool file
        else if (b->sha256 != paired->sha256)
            out.push_back(start_change(DebChangeKind::rebuilt, b, sb, paired, sa));
        else if (b->archive != paired->archive || b->filename != paired->filename)
            out.push_back(start_change(DebChangeKind::moved, b, sb, paired, sa));
    }
    std::vector<const pylock::LockDeb*> left_after;
    for (size_t i = 0; i < after.size(); ++i) {
        if (!used[i])
            left_after.push_back(after[i]);
    }
    if (left_before.size() == 1 && left_after.size() == 1) {
        const bool up =
            debian::compare_deb_versions(left_before[0]->version, left_after[0]->version) < 0;
        out.push_back(start_change(up ? DebChangeKind::upgraded : DebChangeKind::downgraded,
                                   left_before[0], sb, left_after[0], sa));
        return;
    }
    for (const pylock::LockDeb* b : left_before)
        out.push_back(start_change(DebChangeKind::removed, b, sb, nullptr, sa));
    for (const pylock::LockDeb* a : left_after)
        out.push_back(start_change(DebChangeKind::added, nullptr, sb, a, sa));
}

}  // namespace

void diff_archives(const pylock::LockBase& before, const pylock::LockBase& after,
                   std::vector<FieldChange>& out) {
    for (const auto& b : before.archives) {
        if (const pylock::LockDebArchive* a = find_archive(after, b.name))
            diff_archive(b, *a, out);
        else
            out.push_back(FieldChange{"archive " + b.name, archive_summary(b), ""});
    }
    for (const auto& a : after.archives) {
        if (find_archive(before, a.name) == nullptr)
            out.push_back(FieldChange{"archive " + a.name, "", archive_summary(a)});
    }
}

std::vector<DebChange> diff_debs(const pylock::LockBase& before, const pylock::LockBase& after) {
    // Bases of two architectures (an amd64 and an arm64 lock of one recipe): their own .debs
    // pair by name; the architecture change itself is the base's "architecture" field.
    const std::string arch_before = base_architecture(before);
    const std::string arch_after = base_architecture(after);
    const bool across =
        before.kind == "debian" && after.kind == "debian" && arch_before != arch_after;
    const DebsByKey b = by_key(before, across ? arch_after : "");
    const DebsByKey a = by_key(after, "");
    const SuiteOf sb = suites(before);
    const SuiteOf sa = suites(after);
    std::set<Key> keys;
    for (const auto& [key, list] : b)
        keys.insert(key);
    for (const auto& [key, list] : a)
        keys.insert(key);
    const std::vector<const pylock::LockDeb*> none;
    std::vector<DebChange> out;
    for (const auto& key : keys) {
        auto fb = b.find(key);
        auto fa = a.find(key);
        diff_key(fb == b.end() ? none : fb->second, sb, fa == a.end() ? none : fa->second, sa, out);
    }
    return out;
}

std::string to_string(DebChangeKind kind) {
    switch (kind) {
        case DebChangeKind::added:
            return "added";
        case DebChangeKind::removed:
            return "removed";
        case DebChangeKind::upgraded:
            return "upgraded";
        case DebChangeKind::downgraded:
            return "downgraded";
        case DebChangeKind::rebuilt:
            return "rebuilt";
        case DebChangeKind::moved:
            return "moved";
    }
    return "unknown";
}

}  // namespace rootlock::diff
