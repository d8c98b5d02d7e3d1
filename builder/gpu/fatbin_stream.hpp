// The device code of an ELF object seen once, front to back (a wheel member as it is inflated):
// what read_fatbin finds through the section table, found without random access, so that `lock`
// knows each wheel's GPU architectures from the one pass that already hashes its files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/fatbin.hpp"
#include "util/result.hpp"

namespace rootlock::gpu {

// Feed it every byte of the object in order, then call finish() once.
//
// How: the section table is at the end of the file and names which bytes are .nv_fatbin, so
// containers are found as they pass, by their magic at 8-byte aligned file offsets (and right
// after a container that ends unaligned), each followed through its entry headers as the bytes
// arrive, several at once where a payload happens to hold the magic. At the end, the section
// headers and their names, kept from a window before e_shoff (GNU ld and lld write .shstrtab
// there), say which sections the complete containers lie in; per section they are taken by
// read_fatbin's rules (in .nv_fatbin and __nv_relfatbin any container; in the data sections only
// version 1 with a 16-byte header and entries, each container passed over whole). Memory: the
// head (64 KiB), the window (k_stream_window_before the table and the table itself, bounded),
// and the headers of the containers found.
//
// On well-formed objects the summary equals read_fatbin's (the tests compare both on nvcc's output
// and NVIDIA's libraries). A malformed .nv_fatbin, which read_fatbin refuses with a located error,
// reads here as the containers that do hold together.
class FatbinStreamScanner {
  public:
    // `name` locates errors; `size` is the object's size in bytes.
    FatbinStreamScanner(std::string name, uint64_t size);
    ~FatbinStreamScanner();
    FatbinStreamScanner(FatbinStreamScanner&&) noexcept;
    FatbinStreamScanner& operator=(FatbinStreamScanner&&) noexcept;

    // The next bytes of the object.
    void feed(std::span<const std::byte> bytes);

    // After every byte: nullopt when the object has neither .nv_fatbin nor __nv_relfatbin (or is
    // not an ELF object with a section table). An error when the section names were outside what
    // was kept ("NAME@0xOFF: the section names lie outside ..."), or when fewer bytes than `size`
    // were fed.
    util::Result<std::optional<FatbinSummary>> finish();

    // Bytes held now (head, window, partial headers), for tests that prove the memory bound.
    uint64_t kept_bytes() const;

  private:
    struct Candidate;
    struct Container;
    void scan_magic(std::span<const std::byte> bytes);
    void start_candidate(uint64_t offset, std::span<const std::byte> seed);
    void feed_candidates(std::span<const std::byte> bytes);
    bool step(Candidate& candidate);
    void keep(std::span<const std::byte> bytes);

    std::string m_name;
    uint64_t m_size = 0;
    uint64_t m_position = 0;
    std::vector<std::byte> m_head;
    bool m_place_known = false;
    bool m_has_table = false;
    uint64_t m_window_begin = 0;
    uint64_t m_window_end = 0;
    std::vector<std::byte> m_window;
    std::array<std::byte, 4> m_word{};  // an aligned word cut by the end of a feed
    size_t m_word_have = 0;
    uint64_t m_word_at = 0;
    std::vector<Candidate> m_active;
    std::vector<Container> m_done;
    bool m_overflow = false;
};

// How much before the section header table the scanner keeps for .shstrtab, and how much of the
// table and what follows it.
inline constexpr uint64_t k_stream_window_before = uint64_t{16} << 20;
inline constexpr uint64_t k_stream_window_after = uint64_t{16} << 20;
// Containers followed at once; a file that makes more look alive (magic after magic, each with a
// plausible header) has the rest passed over, and finish() says so in its error.
inline constexpr size_t k_stream_max_candidates = 64;

}  // namespace rootlock::gpu
