// One pass over the entries: each piece of content goes into the current frame's hash, and a
// new frame starts at a change of source, when the current one is full, inside a large member
// and after its last piece.
#include "image/frame_plan.hpp"

#include <optional>

#include "util/sha256.hpp"

namespace rootlock::image {

namespace {

// A tar header is at least one 512-byte block: counted so that a run of empty files still ends.
constexpr uint64_t k_header_estimate = 512;

void add_field(util::Sha256& hash, std::string_view text) {
    hash.update(std::to_string(text.size()));
    hash.update(":");
    hash.update(text);
}

void add_piece(util::Sha256& hash, const FramedEntry& item, uint64_t begin, uint64_t end) {
    const TarEntry& entry = *item.entry;
    add_field(hash, entry.path);
    add_field(hash, std::to_string(static_cast<int>(entry.kind)));
    add_field(hash, std::to_string(entry.mode) + " " + std::to_string(entry.uid) + " " +
                        std::to_string(entry.gid) + " " + std::to_string(entry.mtime) + " " +
                        std::to_string(entry.size));
    add_field(hash, entry.link_target);
    add_field(hash, std::to_string(entry.xattrs.size()));
    for (const auto& [name, value] : entry.xattrs) {
        add_field(hash, name);
        add_field(hash, value);
    }
    add_field(hash, item.content_id);
    add_field(hash, std::to_string(begin) + "-" + std::to_string(end));
}

}  // namespace

std::vector<FrameCut> plan_frames(std::span<const FramedEntry> entries,
                                  const FramePlanOptions& options) {
    const uint64_t limit = std::max<uint64_t>(options.frame_bytes, 1);
    std::vector<FrameCut> cuts;
    std::optional<util::Sha256> hash;
    std::string group;    // the current frame's source, once a member with one joined it
    uint64_t filled = 0;  // bytes (headers estimated) in the current frame
    auto start = [&](size_t entry, uint64_t offset) {
        if (hash)
            cuts.back().key = util::Sha256::to_hex(hash->digest());
        cuts.push_back(FrameCut{entry, offset, {}});
        hash.emplace();
        add_field(*hash, options.identity);
        group.clear();
        filled = 0;
    };
    for (size_t i = 0; i < entries.size(); ++i) {
        const FramedEntry& item = entries[i];
        const bool other_source = !item.group.empty() && !group.empty() && item.group != group;
        if (!hash || other_source || filled >= limit)
            start(i, 0);
        if (!item.group.empty())
            group = item.group;
        const uint64_t size = item.entry->kind == EntryKind::regular ? item.entry->size : 0;
        filled += k_header_estimate;
        // Cuts inside a member are counted from its own start, so they stay where they are
        // whatever comes before it.
        uint64_t begin = 0;
        while (size - begin > limit) {
            add_piece(*hash, item, begin, begin + limit);
            begin += limit;
            start(i, begin);
            group = item.group;
        }
        add_piece(*hash, item, begin, size);
        filled += size - begin;
        // The tail of a member cut inside ends its frame: producing that frame again means
        // inflating the whole member up to it (a deflated wheel member cannot be entered in the
        // middle), so it should change only with the member. Otherwise a generated file that
        // follows it (the venv's pyvenv.cfg after the last wheel, dated by the lock's epoch)
        // made every rebuild inflate a hundred MB of an unchanged .so.
        if (begin > 0)
            filled = limit;
    }
    if (hash)
        cuts.back().key = util::Sha256::to_hex(hash->digest());
    return cuts;
}

struct MembersKey::State {
    util::Sha256 hash;
};

MembersKey::MembersKey(std::string_view identity) : m_state(std::make_unique<State>()) {
    add_field(m_state->hash, identity);
}

MembersKey::~MembersKey() = default;

void MembersKey::add(const FramedEntry& entry, int64_t mtime) {
    if (mtime < 0) {
        add_piece(m_state->hash, entry, 0, entry.entry->size);
        return;
    }
    TarEntry dated = *entry.entry;
    dated.mtime = mtime;
    add_piece(m_state->hash, FramedEntry{&dated, entry.content_id, entry.group}, 0, dated.size);
}

std::string MembersKey::hex() const {
    return util::Sha256::to_hex(m_state->hash.digest());
}

}  // namespace rootlock::image
