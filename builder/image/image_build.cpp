// The build, step by step: base and wheels from the cache (fetched and verified when missing),
// the venv placed over the base as an overlay, the closure check and pct's rules on that final
// tree, then every entry written in component order from its source, to a temporary file that
// is renamed over the image only when complete.
#include "image/image_build.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <optional>

#include "assemble/final_check.hpp"
#include "assemble/machine_hygiene.hpp"
#include "assemble/recipe_extras.hpp"
#include "check/gpu_coverage.hpp"
#include "fetch/base_source.hpp"
#include "fetch/file_digest.hpp"
#include "fetch/wheel_fetcher.hpp"
#include "fs/overlay_tree.hpp"
#include "fs/zip_index.hpp"
#include "image/compile_step.hpp"
#include "image/frame_cache.hpp"
#include "image/frame_plan.hpp"
#include "image/layer_cache.hpp"
#include "image/oci_build.hpp"
#include "image/oci_spec.hpp"
#include "image/sbom.hpp"
#include "image/tar_index.hpp"
#include "image/tar_writer.hpp"
#include "index/content_store.hpp"
#include "index/page_cache.hpp"
#include "loader/target.hpp"
#include "python/wheel_install.hpp"
#include "util/atomic_file.hpp"
#include "util/json_text.hpp"
#include "util/leftovers.hpp"
#include "util/sha256.hpp"

namespace rootlock::image {

namespace {

char g_temporary[4096] = {0};  // read by a signal handler: a plain buffer, set before writing

void set_temporary(const std::string& path) {
    const size_t length = std::min(path.size(), sizeof g_temporary - 1);
    std::memcpy(g_temporary, path.data(), length);
    g_temporary[length] = '\0';
}

std::string directory_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Where an entry's bytes come from.
struct Source {
    enum class Kind { none, base, wheel, bytes } kind = Kind::none;
    size_t index = 0;    // base member, or wheel
    std::string member;  // wheel member name
    const std::string* bytes = nullptr;
};

struct Planned {
    TarEntry entry;
    Source source;
    bool from_base = false;  // a member of the base (its OCI layer)
};

// What the output's name asks for: "NAME.oci.tar" an OCI archive, "NAME.oci" an OCI layout
// directory, anything else a tarball whose suffix picks the compression.
enum class OutputForm { tarball, oci_archive, oci_layout };

bool ends_with(const std::string& text, std::string_view suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

OutputForm output_form(const std::string& output) {
    if (ends_with(output, ".oci.tar"))
        return OutputForm::oci_archive;
    if (ends_with(output, ".oci"))
        return OutputForm::oci_layout;
    return OutputForm::tarball;
}

bool is_plain_tar(const std::string& path) {
    auto head = util::read_host_file_prefix(path, 512);
    return head.ok() && head->size() >= 262 && head->compare(257, 5, "ustar") == 0;
}

// The frame plan's view of the entries: what each one's bytes are, and which source's run it
// belongs to (frame_plan.hpp). `base_sha256` is the plain base tar's own digest.
std::vector<FramedEntry> framed_entries(const std::vector<Planned>& planned,
                                        const TarIndex& base_index, const std::string& base_sha256,
                                        const std::vector<fetch::FetchedWheel>& wheels) {
    std::vector<FramedEntry> framed;
    framed.reserve(planned.size());
    for (const auto& item : planned) {
        FramedEntry entry;
        entry.entry = &item.entry;
        switch (item.source.kind) {
            case Source::Kind::none:
                if (item.from_base)
                    entry.group = "base";
                break;
            case Source::Kind::bytes:
                entry.content_id = "bytes " + util::sha256_hex(*item.source.bytes);
                break;
            case Source::Kind::base:
                entry.content_id =
                    "base " + base_sha256 + " " +
                    std::to_string(base_index.members[item.source.index].data_offset);
                entry.group = "base";
                break;
            case Source::Kind::wheel:
                entry.group = "wheel " + wheels[item.source.index].sha256;
                entry.content_id = entry.group + " " + item.source.member;
                break;
        }
        framed.push_back(std::move(entry));
    }
    return framed;
}

// Each wheel's files dated by its upload time (clamped to the epoch, as the OCI layers are),
// and each directory the build adds by the newest wheel file below it; the rest keeps the
// epoch. So a lock change that touches one wheel re-dates only what holds its files, and a
// rebuild's unchanged frames keep their keys (a newer upload moves the epoch itself).
void date_wheel_files(std::vector<Planned>& planned,
                      const std::map<std::string, size_t>& wheel_of_file, const pylock::Lock& lock,
                      int64_t epoch) {
    const auto dates = wheel_dates(lock, epoch);
    std::map<std::string, int64_t, std::less<>> newest_below;
    for (auto& item : planned) {
        if (item.from_base)
            continue;
        auto wheel = wheel_of_file.find(item.entry.path);
        if (wheel == wheel_of_file.end())
            continue;
        auto dated = dates.find(lock.packages[wheel->second].name);
        if (dated == dates.end())
            continue;
        item.entry.mtime = dated->second;
        for (std::string_view at = item.entry.path; at.size() > 1;) {
            at = at.substr(0, std::max<size_t>(at.rfind('/'), 1));
            auto [found, added] = newest_below.emplace(std::string(at), dated->second);
            if (!added)
                found->second = std::max(found->second, dated->second);
        }
    }
    for (auto& item : planned)
        if (!item.from_base && item.entry.kind == EntryKind::directory)
            if (auto found = newest_below.find(item.entry.path); found != newest_below.end())
                item.entry.mtime = found->second;
}

// The profile script that gives login shells the recipe's environment and the venv first.
std::string profile_script(const pylock::LockRootlockData& data) {
    std::string out = "# Written by rootlock from the recipe's [environment]; do not edit.\n";
    out += "export PATH='" + data.venv + "/bin':\"$PATH\"\n";
    for (const auto& [name, value] : data.environment) {
        std::string quoted;
        for (char c : value)
            quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += "export " + name + "='" + quoted + "'\n";
    }
    return out;
}

// A hard link must follow the file it names, and the image is in component order, not the
// base's: in each group of names for one file, the first name in component order carries the
// data and the others link to it (a base may list /usr/bin/perl5.36.0 first, linking perl).
util::Status order_hard_links(std::vector<Planned>& planned, const TarIndex& base_index) {
    std::map<std::string, std::vector<size_t>> groups;  // the base's file -> its names here
    for (size_t i = 0; i < planned.size(); ++i) {
        const Planned& item = planned[i];
        if (item.entry.kind == EntryKind::hardlink)
            groups[item.entry.link_target].push_back(i);
    }
    for (size_t i = 0; i < planned.size(); ++i) {
        const Planned& item = planned[i];
        if (item.entry.kind == EntryKind::regular && item.source.kind == Source::Kind::base) {
            auto group = groups.find(item.entry.path);
            if (group != groups.end())
                group->second.push_back(i);
        }
    }
    for (auto& [target, names] : groups) {
        const TarMember* data = base_index.find(target);
        if (data == nullptr || data->type != TarMemberType::regular)
            return util::make_error(target, "a hard link names a file the base does not hold");
        const size_t first = *std::min_element(names.begin(), names.end(), [&](size_t a, size_t b) {
            return component_less(planned[a].entry.path, planned[b].entry.path);
        });
        const size_t data_index = static_cast<size_t>(data - base_index.members.data());
        for (size_t i : names) {
            TarEntry& entry = planned[i].entry;
            if (i == first) {
                entry.kind = EntryKind::regular;
                entry.size = data->size;
                entry.link_target.clear();
                planned[i].source = Source{Source::Kind::base, data_index, "", nullptr};
            } else {
                entry.kind = EntryKind::hardlink;
                entry.size = 0;
                entry.link_target = planned[first].entry.path;
                planned[i].source = Source{};
            }
        }
    }
    return util::ok_status();
}

// 5. The entries, in component order, and pct's rules on them.
struct PlannedEntries {
    std::vector<Planned> planned;
    std::string sh_machine;         // /bin/sh's ELF machine ("" when it has none)
    std::vector<PctFinding> notes;  // pct's non-fatal findings
};

util::Result<PlannedEntries> plan_entries(const TarIndex& base_index,
                                          const fs::OverlayTree& overlay,
                                          const std::map<std::string, Source>& wheel_sources,
                                          const std::map<std::string, size_t>& wheel_of_file,
                                          const pylock::Lock& lock, int64_t epoch) {
    PlannedEntries out;
    for (size_t m = 0; m < base_index.members.size(); ++m) {
        const TarMember& member = base_index.members[m];
        if (member.path.empty() || overlay.shadows_base(member.path))
            continue;
        if (base_index.find(member.path) != &member)
            continue;  // a later member of the same name replaced this one, as extraction would
        // pct skips everything below /dev (LXC mounts its own): so does the image.
        if (member.path.rfind("/dev/", 0) == 0)
            continue;
        if (member.uid > 65535 || member.gid > 65535)
            return util::make_error(member.path,
                                    "owner " + std::to_string(std::max(member.uid, member.gid)) +
                                        " cannot be mapped in an unprivileged container (pct would "
                                        "refuse this image)");
        Planned entry;
        entry.from_base = true;
        entry.entry.path = member.path;
        entry.entry.mode = member.mode & 07777;
        entry.entry.uid = static_cast<uint32_t>(member.uid);
        entry.entry.gid = static_cast<uint32_t>(member.gid);
        entry.entry.mtime = std::min<int64_t>(member.mtime, epoch);
        for (const auto& [name, value] : member.xattrs) {
            if (name == "security.capability" || name.rfind("user.", 0) == 0)
                entry.entry.xattrs.emplace_back(name, value);
        }
        switch (member.type) {
            case TarMemberType::regular:
                entry.entry.kind = EntryKind::regular;
                entry.entry.size = member.size;
                entry.source = Source{Source::Kind::base, m, "", nullptr};
                break;
            case TarMemberType::directory:
                entry.entry.kind = EntryKind::directory;
                break;
            case TarMemberType::symlink:
                entry.entry.kind = EntryKind::symlink;
                entry.entry.link_target = member.link_target;
                break;
            case TarMemberType::hardlink:
                entry.entry.kind = EntryKind::hardlink;
                entry.entry.link_target = member.link_target;
                break;
            default:
                // Outside /dev: a device node cannot be made in an unprivileged container, and
                // the image format rootlock writes holds no fifo.
                return util::make_error(member.path,
                                        "a device node or fifo outside /dev: an unprivileged "
                                        "container cannot create it");
        }
        out.planned.push_back(std::move(entry));
    }
    for (const auto& added : overlay.added()) {
        Planned entry;
        entry.entry.path = added.path;
        entry.entry.mode = added.mode & 07777;
        entry.entry.mtime = epoch;
        if (added.kind == fs::NodeKind::directory) {
            entry.entry.kind = EntryKind::directory;
        } else if (added.kind == fs::NodeKind::symlink) {
            entry.entry.kind = EntryKind::symlink;
            entry.entry.link_target = added.target;
        } else {
            entry.entry.kind = EntryKind::regular;
            entry.entry.size = added.size;
            if (added.content != nullptr) {
                entry.source = Source{Source::Kind::bytes, 0, "", added.content};
                entry.entry.size = added.content->size();
            } else {
                auto found = wheel_sources.find(added.path);
                if (found == wheel_sources.end())
                    return util::make_error(added.path, "no source for an added file (a bug)");
                entry.source = found->second;
            }
        }
        out.planned.push_back(std::move(entry));
    }
    ROOTLOCK_TRY(relinked, order_hard_links(out.planned, base_index));
    (void)relinked;
    std::sort(out.planned.begin(), out.planned.end(), [](const Planned& a, const Planned& b) {
        return component_less(a.entry.path, b.entry.path);
    });
    date_wheel_files(out.planned, wheel_of_file, lock, epoch);

    // pct's rules on the final entries.
    PctInput pct;
    for (const auto& item : out.planned) {
        RootfsEntryFacts facts;
        facts.path = item.entry.path;
        facts.kind = item.entry.kind == EntryKind::directory  ? 'd'
                     : item.entry.kind == EntryKind::symlink  ? 'l'
                     : item.entry.kind == EntryKind::hardlink ? 'h'
                                                              : 'f';
        facts.uid = item.entry.uid;
        facts.gid = item.entry.gid;
        facts.mode = item.entry.mode;
        for (const auto& [name, value] : item.entry.xattrs)
            facts.xattr_names.push_back(name);
        pct.entries.push_back(std::move(facts));
    }
    pct.read_small_file = [&overlay](std::string_view path) -> std::optional<std::string> {
        auto text = overlay.read_file(path, 1 << 20);
        if (!text.ok())
            return std::nullopt;
        return *text;
    };
    auto target = loader::detect_target(overlay, {});
    pct.sh_machine = target.ok() ? elf::machine_name(target->machine) : "";
    for (auto& finding : check_pct_rules(pct)) {
        if (finding.fatal)
            return util::make_error(finding.path,
                                    finding.problem + " (pct would refuse this image)");
        out.notes.push_back(std::move(finding));
    }
    out.sh_machine = std::move(pct.sh_machine);
    return out;
}

}  // namespace

const char* build_temporary_path() {
    return g_temporary;
}

namespace {
util::Status publish_side_files(const pylock::Lock& lock, const pylock::LockRootlockData& data,
                                const BuildOptions& options, const BuildOutcome& outcome,
                                std::string sbom);
BuildOutcome finish_outcome(const BuildOptions& options, BuildOutcome outcome);
}  // namespace

util::Result<BuildOutcome> build_image(const pylock::Lock& lock, const BuildOptions& options) {
    if (!lock.rootlock.has_value())
        return util::make_error(options.lock_path,
                                "not written by rootlock: it has no [tool.rootlock] to build from");
    const pylock::LockRootlockData& data = *lock.rootlock;
    if (data.base.kind.empty())
        return util::make_error(options.lock_path,
                                !data.frozen_from.empty()
                                    ? "a frozen lock names no base: freeze again with --base-from "
                                      "LOCK (the lock the environment was built from)"
                                    : "[tool.rootlock] names no base to build on");
    const OutputForm form = output_form(options.output);
    Compression compression = Compression::none;
    if (form == OutputForm::tarball) {
        ROOTLOCK_TRY(chosen, compression_for(options.output));
        compression = chosen;
    }
    BuildOutcome outcome;
    index::HttpClient http(options.http);
    index::ContentStore store(options.cache_dir);
    index::PageCache pages(options.cache_dir);
    store.set_offline(options.offline);  // a damaged entry cannot be fetched again
    pages.set_offline(options.offline);

    // 1. The base, verified against the lock.
    fetch::BaseOptions base_options;
    base_options.offline = options.offline;
    base_options.recipe_dir = directory_of(directory_of(options.lock_path) + "/" + data.recipe);
    base_options.cache_dir = options.cache_dir;
    check::StreamedDeviceCode base_device_code;
    if (!data.target.gpus.empty())
        base_options.observe_elf = base_device_code.observer();
    ROOTLOCK_TRY(base, fetch::acquire_locked_base(data.base, base_options, http, store, pages));
    std::string plain = base.host_path;
    if (!is_plain_tar(plain)) {
        plain = store.root() + "/bases/plain-" + data.base.sha256 + ".tar";  // tarball bases only
        ROOTLOCK_TRY(whole, fetch::check_made_file(plain, pages, options.offline));
        if (!whole) {
            // Its digest recorded before it is renamed into place, then remembered: the frame
            // keys below need it, and it is never read twice for it.
            ROOTLOCK_TRY(made, decompress_to_plain_tar(
                                   base.host_path, plain, [&plain](const std::string& sha256) {
                                       return fetch::record_made_file(plain, sha256);
                                   }));
            fetch::remember_sha256(plain, made, pages);
        }
    }
    ROOTLOCK_TRY(base_index, index_tar(plain));
    std::vector<std::unique_ptr<fs::ZipIndex>> zips(lock.packages.size());

    // 2. Every locked wheel in the store (downloaded and verified when missing), and its scan.
    std::vector<index::DownloadRequest> missing;
    std::vector<fetch::ChosenFile> chosen;
    for (const auto& package : lock.packages) {
        if (package.wheels.empty())
            return util::make_error(package.name,
                                    data.frozen_from.empty()
                                        ? "the lock has no wheel for it"
                                        : "the lock has no wheel for it (freeze with --index URL "
                                          "to find the wheel it was installed from)");
        const pylock::LockWheel& wheel = package.wheels.front();
        auto sha = wheel.hashes.find("sha256");
        if (sha == wheel.hashes.end())
            return util::make_error(wheel.name, "the lock gives no sha256");
        fetch::ChosenFile file;
        file.file.filename = wheel.name;
        file.file.url = wheel.url;
        file.file.hashes["sha256"] = sha->second;
        file.file.size = wheel.size;
        file.index_url = package.index;
        chosen.push_back(file);
        // A blob whose digest was verified before, and whose file has not changed since, is not
        // hashed again (the memo is keyed by device, inode, size, mtime and ctime).
        const std::string blob = store.blob_path(sha->second);
        auto remembered = ::access(blob.c_str(), R_OK) == 0
                              ? fetch::remembered_sha256(blob, pages)
                              : util::Result<std::string>(std::string());
        if (remembered.ok() && *remembered == sha->second)
            continue;
        ROOTLOCK_TRY(present, store.find(sha->second));
        if (!present.has_value()) {
            if (options.offline)
                return util::make_network_error(
                    wheel.url, "not in the cache and --offline forbids the network");
            missing.push_back({wheel.url, sha->second, wheel.size});
        }
    }
    if (!missing.empty()) {
        for (auto& result : http.download(missing, store)) {
            if (!result.ok())
                return result.error();
        }
    }
    fetch::WheelFetcher fetcher(http, store, pages, options.offline, options.threads);
    std::vector<const fetch::ChosenFile*> pointers;
    for (const auto& file : chosen)
        pointers.push_back(&file);
    std::vector<fetch::FetchedWheel> wheels;
    for (auto& result : fetcher.fetch(pointers)) {
        if (!result.ok())
            return result.error();
        wheels.push_back(std::move(*result));
    }

    // 3. The final tree: base, venv, wheels where pip puts them, the environment script.
    auto overlay = std::make_shared<fs::OverlayTree>(base.tree);
    const std::string base_python = "/usr/bin/python" + data.target.python;
    python::InstallScheme scheme{data.venv, data.target.python};
    ROOTLOCK_TRY(venv, python::add_venv(*overlay, scheme, base_python));
    (void)venv;
    std::vector<std::vector<python::InstalledFile>> plans;
    for (size_t i = 0; i < wheels.size(); ++i) {
        const bool requested = lock.packages[i].rootlock && lock.packages[i].rootlock->requested;
        ROOTLOCK_TRY(plan, python::install_plan(*wheels[i].scan, scheme, requested, base_python));
        plans.push_back(std::move(plan));
    }
    if (data.compile_bytecode) {
        CompileStepInput input{scheme, data.target.python_full, {}, {}, {}};
        for (size_t i = 0; i < wheels.size(); ++i) {
            input.wheel_paths.push_back(store.blob_path(wheels[i].sha256));
            input.wheel_names.push_back(lock.packages[i].wheels.front().name);
        }
        ROOTLOCK_TRY(compiled, compile_plans(plans, input));
        outcome.compiled = compiled;
    }
    std::map<std::string, Source> wheel_sources;  // canonical path -> member
    std::map<std::string, size_t> wheel_of_file;  // canonical path -> the wheel that put it there
    std::map<std::string, std::vector<std::string>> device_code;  // canonical path -> architectures
    for (size_t i = 0; i < wheels.size(); ++i) {
        for (auto& file : plans[i]) {
            if (file.has_content) {
                ROOTLOCK_TRY(placed,
                             overlay->add_file(file.path, std::move(file.content), file.mode));
                wheel_of_file[placed] = i;
                continue;
            }
            fs::SizedFile sized;
            sized.size = file.size;
            sized.mode = file.mode;
            if (file.source != nullptr && file.source->elf)
                sized.elf = std::make_shared<const elf::ElfInfo>(*file.source->elf);
            ROOTLOCK_TRY(placed, overlay->add_sized_file(file.path, std::move(sized)));
            if (file.source == nullptr)
                return util::make_error(file.path, "a generated file without content (a bug)");
            wheel_sources[placed] = Source{Source::Kind::wheel, i, file.source->path, nullptr};
            wheel_of_file[placed] = i;
            if (python::read_device_code(*file.source))
                device_code[placed] = file.source->architectures;
        }
    }
    ROOTLOCK_TRY(profile,
                 overlay->add_file("/etc/profile.d/rootlock-venv.sh", profile_script(data)));
    (void)profile;
    // Before the recipe's [files], which may set any of them on purpose.
    if (auto fixed = assemble::add_fixed_machine_files(*overlay); !fixed.ok())
        return fixed.error();
    if (auto extras = assemble::add_recipe_extras(*overlay, data.library_paths, data.files);
        !extras.ok())
        return extras.error();

    // 4. The closure check and pct's rules, on exactly the tree about to be written. The check
    // runs on a thread of its own while step 5 plans the entries (both only read the tree):
    // nothing is written before it has passed, and its report still comes before any error of
    // step 5, as if the two had run in turn.
    assemble::FinalCheckOptions final_check;
    final_check.environment = data.environment;
    final_check.host_provides = data.host_provides;
    final_check.cuda = data.target.cuda;
    final_check.driver = data.target.driver;
    final_check.cache_dir = options.cache_dir;
    final_check.gpus = data.target.gpus;
    final_check.device_code = std::move(device_code);
    final_check.base_device_code = base_device_code.found();
    auto checking = std::async(std::launch::async, [&overlay, &base, &final_check] {
        return assemble::check_final_tree(*overlay, *base.tree, final_check);
    });

    // 5. The entries (beside the check).
    const int64_t epoch = static_cast<int64_t>(data.source_date_epoch);
    auto entries = plan_entries(base_index, *overlay, wheel_sources, wheel_of_file, lock, epoch);
    ROOTLOCK_TRY(report, checking.get());
    outcome.report = std::move(report);
    if (!outcome.report.ok && !options.allow_broken)
        return outcome;  // built == false: the caller prints the report
    if (!entries.ok())
        return entries.error();
    const std::vector<Planned>& planned = entries->planned;
    const std::string& sh_machine = entries->sh_machine;
    outcome.architecture = oci_architecture(sh_machine);
    outcome.pct = std::move(entries->notes);

    // 6. One pass: every entry from its source into a temporary file beside the image.
    ROOTLOCK_TRY(made_dir, util::make_directories(directory_of(options.output)));
    (void)made_dir;
    // A killed build's temporary names its process: cleared here once that process is gone.
    util::remove_dead_leftovers(directory_of(options.output),
                                "." + base_name(options.output) + ".partial-");
    const std::string temporary = directory_of(options.output) + "/." + base_name(options.output) +
                                  ".partial-" + std::to_string(::getpid());
    set_temporary(temporary);
    auto fail = [&](util::Error error) {
        if (error.where == temporary)
            error.where = options.output;  // the user knows the image by its final name
        ::unlink(temporary.c_str());
        set_temporary("");
        return error;
    };
    // One entry from its source into `writer`.
    auto write_item = [&](TarWriter& writer, const Planned& item) -> util::Status {
        switch (item.source.kind) {
            case Source::Kind::none:
                return writer.add(item.entry, nullptr);
            case Source::Kind::bytes:
                return writer.add_bytes(item.entry, *item.source.bytes);
            case Source::Kind::base:
                return writer.add_lazily(
                    item.entry, [&]() -> util::Result<std::unique_ptr<util::ByteStream>> {
                        return open_member(base_index, base_index.members[item.source.index]);
                    });
            case Source::Kind::wheel:
                // A wheel whose members all come from cached frames is never opened.
                return writer.add_lazily(
                    item.entry, [&]() -> util::Result<std::unique_ptr<util::ByteStream>> {
                        auto& zip = zips[item.source.index];
                        if (!zip) {
                            const auto& wheel = lock.packages[item.source.index].wheels.front();
                            ROOTLOCK_TRY(
                                opened,
                                fs::index_zip(store.blob_path(wheels[item.source.index].sha256),
                                              wheel.name));
                            zip = std::make_unique<fs::ZipIndex>(std::move(opened));
                        }
                        const fs::ZipMember* member = zip->find(item.source.member);
                        if (member == nullptr)
                            return util::make_error(zip->name,
                                                    item.source.member + ": not in the wheel");
                        return fs::open_member(*zip, *member);
                    });
        }
        return util::ok_status();
    };
    if (form != OutputForm::tarball) {
        OciBuildInput oci;
        for (const auto& item : planned)
            oci.entries.push_back(LayerInput{
                item.entry.path, item.entry.kind == EntryKind::directory, item.from_base,
                item.source.kind == Source::Kind::wheel ? lock.packages[item.source.index].name
                                                        : std::string(),
                item.entry.kind == EntryKind::regular ? item.entry.size : 0});
        oci.write_entry = [&](TarWriter& writer, size_t index, int64_t mtime) {
            if (mtime < 0)
                return write_item(writer, planned[index]);
            Planned item = planned[index];
            item.entry.mtime = mtime;
            return write_item(writer, item);
        };
        // The base layer's newest entry dates the layers that hold no wheel; a wheel layer is
        // dated by its newest upload.
        int64_t base_epoch = 0;
        for (const auto& item : planned)
            if (item.from_base)
                base_epoch = std::max(base_epoch, item.entry.mtime);
        oci.wheel_mtime = wheel_dates(lock, epoch);
        oci.plain_mtime = std::min(base_epoch, epoch);  // the lock's clamp holds
        oci.plan.venv = data.venv;
        oci.mtime = epoch;
        oci.zstd = options.oci_zstd;
        oci.threads = options.threads;
        // Layers keyed by what they hold: a one-package change writes that package's layer.
        ROOTLOCK_TRY(base_sha256, fetch::remembered_sha256(plain, pages));
        LayerCache layer_cache(options.cache_dir);
        layer_cache.set_offline(options.offline);
        oci.cache = &layer_cache;
        oci.identities = framed_entries(planned, base_index, base_sha256, wheels);
        oci.identity =
            (oci.zstd ? frame_codec_identity(FrameCodec::zstd, TarWriterOptions{}.zstd_level)
                      : frame_codec_identity(FrameCodec::gzip, TarWriterOptions{}.gzip_level)) +
            " " + tar_writer_identity() + " rootlock-layers-1";
        ROOTLOCK_TRY(lock_digest, util::sha256_file(options.lock_path));
        oci.spec = oci_spec_of(lock, sh_machine, util::Sha256::to_hex(lock_digest), epoch);
        oci.before_publish = [&](const std::string& sha256, const std::string& image_sbom) {
            BuildOutcome ready;
            ready.sha256 = sha256;
            ready.report = outcome.report;
            return publish_side_files(lock, data, options, ready, image_sbom);
        };
        ROOTLOCK_TRY(written,
                     build_oci(oci, options.output, form == OutputForm::oci_layout, temporary));
        set_temporary("");
        outcome.entries = written.entries;
        outcome.sha256 = written.sha256;
        outcome.manifest_digest = written.manifest_digest;
        outcome.sbom_digest = written.sbom_digest;
        outcome.layers = written.layers;
        outcome.layers_reused = written.layers_reused;
    } else {
        TarWriterOptions writer_options;
        writer_options.compression = compression;
        writer_options.threads = std::max(1, options.threads);
        // zstd and gzip images are cut into frames, each reused from the frame cache while what
        // it holds is unchanged: a rebuild after a one-package change compresses little.
        std::vector<FrameCut> cuts;
        std::optional<FrameCache> frame_cache;
        if (compression == Compression::zstd || compression == Compression::gzip) {
            const FrameCodec codec =
                compression == Compression::zstd ? FrameCodec::zstd : FrameCodec::gzip;
            ROOTLOCK_TRY(base_sha256, fetch::remembered_sha256(plain, pages));
            FramePlanOptions plan;
            plan.identity =
                frame_codec_identity(codec, codec == FrameCodec::zstd ? writer_options.zstd_level
                                                                      : writer_options.gzip_level) +
                " " + tar_writer_identity() + " rootlock-frames-2";
            cuts = plan_frames(framed_entries(planned, base_index, base_sha256, wheels), plan);
            frame_cache.emplace(options.cache_dir, codec);
            frame_cache->set_offline(options.offline);
            writer_options.frame_cuts = &cuts;
            writer_options.frame_cache = &*frame_cache;
        }
        std::vector<std::string> keys;
        for (const auto& cut : cuts)
            keys.push_back(cut.key);
        if (frame_cache) {
            if (auto kept = frame_cache->unchanged_image(options.output, keys)) {
                ::unlink(temporary.c_str());
                set_temporary("");
                outcome.unchanged = true;
                outcome.sha256 = kept->sha256;
                outcome.entries = kept->entries;
                // Every frame of the file kept: the planned ones and the end of the archive.
                outcome.frames = outcome.frames_reused = cuts.size() + 1;
                frame_cache->keep_only_used(options.output, keys, &*kept);
                ROOTLOCK_TRY(published, publish_side_files(lock, data, options, outcome, ""));
                (void)published;
                return finish_outcome(options, std::move(outcome));
            }
        }
        // A cached frame whose bytes fail their checksum ends the write (it may be in the file
        // already): it is discarded and the image written again, every frame then checked as
        // it is loaded, so a second write cannot end so. Offline, the damage is the error.
        for (bool again = false;; again = true) {
            auto writer = TarWriter::create(temporary, writer_options);
            if (!writer.ok())
                return fail(writer.error());
            auto write_all = [&]() -> util::Status {
                for (const auto& item : planned)
                    if (auto added = write_item(**writer, item); !added.ok())
                        return added;
                return (*writer)->finish();
            };
            if (auto written = write_all(); !written.ok()) {
                auto damaged = (*writer)->damaged_frame();
                writer->reset();
                if (!damaged || again || options.offline)
                    return fail(written.error());
                frame_cache->discard(*damaged);
                frame_cache->check_on_load();
                continue;
            }
            outcome.entries = (*writer)->entries();
            outcome.sha256 = util::Sha256::to_hex((*writer)->digest());
            outcome.frames = (*writer)->frames();
            outcome.frames_reused = (*writer)->frames_reused();
            outcome.frames_cloned = (*writer)->frames_cloned();
            break;
        }
        // The files beside it first: the image never stands under its name without them.
        if (auto published = publish_side_files(lock, data, options, outcome, ""); !published.ok())
            return fail(published.error());
        if (::rename(temporary.c_str(), options.output.c_str()) != 0)
            return fail(util::make_io_error(options.output, std::strerror(errno)));
        set_temporary("");
        if (frame_cache) {
            const ListedImage built{outcome.sha256, outcome.entries};
            frame_cache->keep_only_used(options.output, keys, &built);
        }
    }
    return finish_outcome(options, std::move(outcome));
}

namespace {

// 7. Beside the image: its sha256, the SBOM, the check report. Each is written and synced
// under a temporary name first, where a full disk fails with nothing renamed; then all three
// are renamed into place, before the image itself is (by the caller).
util::Status publish_side_files(const pylock::Lock& lock, const pylock::LockRootlockData& data,
                                const BuildOptions& options, const BuildOutcome& outcome,
                                std::string sbom) {
    const std::string name = base_name(options.output);
    // An OCI image holds its SBOM (which names it by manifest digest): the same bytes beside it.
    if (sbom.empty())
        sbom = cyclonedx_sbom(lock, data.image_name, outcome.sha256);
    const std::pair<const char*, std::string> sides[] = {
        {".sha256", outcome.sha256 + "  " + name + "\n"},
        {".cdx.json", std::move(sbom)},
        {".check.json", util::json_text(check::summary_json(outcome.report), 2) + "\n"},
    };
    std::vector<util::StagedFile> staged;
    for (const auto& [suffix, bytes] : sides) {
        // (A killed build's staged file is cleared by StagedFile itself.)
        ROOTLOCK_TRY(file, util::StagedFile::stage(options.output + suffix, bytes));
        staged.push_back(std::move(file));
    }
    for (auto& file : staged)
        if (auto committed = file.commit(); !committed.ok())
            return committed;
    return util::ok_status();
}

BuildOutcome finish_outcome(const BuildOptions& options, BuildOutcome outcome) {
    const OutputForm form = output_form(options.output);
    outcome.image_path = options.output;
    auto size = form == OutputForm::oci_layout ? util::Result<uint64_t>(uint64_t{0})
                                               : util::read_host_file_size(options.output);
    outcome.size = size.ok() ? *size : 0;
    outcome.sha256_path = options.output + ".sha256";
    outcome.sbom_path = options.output + ".cdx.json";
    outcome.report_path = options.output + ".check.json";
    outcome.built = true;
    return outcome;
}

}  // namespace

}  // namespace rootlock::image
