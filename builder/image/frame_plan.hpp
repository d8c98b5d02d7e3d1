// Where an image's tar is cut into independent frames, and the key each frame is cached under.
//
// A frame holds a run of consecutive members from one source (the base, or one wheel; generated
// files and directories join whatever run they fall in), at most about `frame_bytes` of them;
// a member larger than that is cut inside its data every `frame_bytes`, counted from its own
// start, and its last piece ends its frame (reproducing a piece means inflating the member up
// to it). So a lock change that touches one wheel changes only the frames that hold its members
// (and the frames at either edge of its run), and every other frame keeps its key and bytes.
//
// A key is the sha256 of everything the frame's bytes depend on: the codec identity (codec,
// level, library versions), each piece's tar entry (path, kind, mode, owner, mtime, size, link,
// xattrs), what its content bytes are (a wheel's sha256 and member name, the base tar's sha256
// and offset, a generated file's sha256) and which range of them the frame holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "image/tar_entry.hpp"

namespace rootlock::image {

struct FramedEntry {
    const TarEntry* entry = nullptr;
    // What the content bytes are ("wheel SHA256 MEMBER", "base SHA256 OFFSET", "bytes SHA256"),
    // empty for an entry without content.
    std::string content_id;
    // The source whose run the entry belongs to ("base", "wheel SHA256"); empty: none of its
    // own (a directory, a generated file), so it joins the run it falls in.
    std::string group;
};

// A frame begins at entry `entry`, `offset` bytes into its content (0: with its header).
struct FrameCut {
    size_t entry = 0;
    uint64_t offset = 0;
    std::string key;  // sha256 hex of what the frame holds
};

struct FramePlanOptions {
    uint64_t frame_bytes = uint64_t{8} << 20;
    // Everything else the bytes depend on: frame_codec_identity(), libarchive's version, the
    // member naming ("./etc" or "etc").
    std::string identity;
};

// The cuts, in order; the first is at entry 0, offset 0 (none for no entries).
std::vector<FrameCut> plan_frames(std::span<const FramedEntry> entries,
                                  const FramePlanOptions& options);

// The key of a run of whole members, as an OCI layer's: the fields a frame's key covers, each
// member with the mtime it is written with.
class MembersKey {
  public:
    explicit MembersKey(std::string_view identity);
    ~MembersKey();
    MembersKey(const MembersKey&) = delete;
    MembersKey& operator=(const MembersKey&) = delete;
    // `mtime` replaces the entry's own unless negative.
    void add(const FramedEntry& entry, int64_t mtime);
    std::string hex() const;  // sha256 hex

  private:
    struct State;
    std::unique_ptr<State> m_state;
};

}  // namespace rootlock::image
