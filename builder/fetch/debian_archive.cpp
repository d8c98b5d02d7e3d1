// Loading a Debian archive's indexes: InRelease over HTTP into a temporary file for gpgv, the
// signed text parsed, then the Packages indexes downloaded into the content store by the
// SHA256 the signed Release lists and decompressed through libarchive's raw reader.
#include "fetch/debian_archive.hpp"

#include <unistd.h>

#include <array>
#include <span>

#include "debian/signature.hpp"
#include "fs/archive_reader.hpp"
#include "util/atomic_file.hpp"

namespace rootlock::fetch {

namespace {

util::Result<std::string> read_decompressed(const std::string& path) {
    ROOTLOCK_TRY(reader, fs::ArchiveReader::open(path, fs::ArchiveFormat::raw));
    ROOTLOCK_TRY(entry, reader->next());
    if (!entry.has_value())
        return util::make_error(path, "empty compressed file");
    std::string out;
    std::array<std::byte, 1 << 16> buffer{};
    constexpr size_t k_limit = size_t{1} << 30;  // a Packages file of 1 GiB is not an index
    for (;;) {
        ROOTLOCK_TRY(got, reader->read(std::span<std::byte>(buffer)));
        if (got == 0)
            break;
        out.append(reinterpret_cast<const char*>(buffer.data()), got);
        if (out.size() > k_limit)
            return util::make_error(path, "decompresses to more than 1 GiB");
    }
    return out;
}

util::Result<std::string> fetch_inrelease(const std::string& url, index::HttpClient& http,
                                          index::ContentStore& store,
                                          const std::vector<std::string>& keyrings) {
    ROOTLOCK_TRY(response, http.get(index::FetchRequest{url, {}, 64ull << 20}));
    if (response.status != 200)
        return util::make_network_error(url, "HTTP " + std::to_string(response.status));
    ROOTLOCK_TRY(temp, store.temp_path());
    if (auto written = util::write_file_atomically(temp, response.body); !written.ok())
        return written.error();
    auto text = debian::verify_clearsigned(temp, keyrings, url);
    ::unlink(temp.c_str());
    return text;
}

// The index file Release lists for one component and architecture, preferring compressed ones.
const debian::ReleaseFile* packages_entry(const debian::Release& release,
                                          const std::string& component,
                                          const std::string& architecture) {
    const std::string stem = component + "/binary-" + architecture + "/Packages";
    for (const char* suffix : {".xz", ".gz", ""}) {
        if (const auto* file = release.find(stem + suffix))
            return file;
    }
    return nullptr;
}

}  // namespace

util::Result<LoadedArchive> load_archive(const ArchiveSpec& spec, const std::string& architecture,
                                         index::HttpClient& http, index::ContentStore& store) {
    LoadedArchive out;
    out.spec = spec;
    const std::string dists = spec.url + "/dists/" + spec.suite;
    const std::string inrelease_url = dists + "/InRelease";
    const std::vector<std::string> keyrings{
        spec.keyring.empty() ? std::string(debian::k_debian_archive_keyring) : spec.keyring};
    ROOTLOCK_TRY(signed_text, fetch_inrelease(inrelease_url, http, store, keyrings));
    ROOTLOCK_TRY(release, debian::parse_release(signed_text, inrelease_url));
    out.release = std::move(release);
    ROOTLOCK_TRY(date, debian::parse_release_date(out.release.date));
    out.date = date;

    std::vector<index::DownloadRequest> requests;
    for (const auto& component : spec.components) {
        const auto* file = packages_entry(out.release, component, architecture);
        if (file == nullptr)
            return util::make_network_error(
                inrelease_url, "lists no Packages index for " + component + "/" + architecture);
        requests.push_back({dists + "/" + file->path, file->sha256, file->size});
    }
    auto downloads = http.download(requests, store);
    for (size_t i = 0; i < downloads.size(); ++i) {
        if (!downloads[i].ok()) {
            // A mismatch is ErrorKind::integrity already: the bytes arrived and are not the ones
            // the signature covers, so the archive (or something on the way) is not what it
            // claims, which is not the user's input.
            return downloads[i].error();
        }
        ROOTLOCK_TRY(text, read_decompressed(downloads[i]->path));
        ROOTLOCK_TRY(packages, debian::parse_packages(text, requests[i].url));
        out.components.push_back({spec.components[i], std::move(packages)});
    }
    return out;
}

OfferedPackages::OfferedPackages(const std::vector<LoadedArchive>& archives) {
    for (const auto& archive : archives) {
        for (const auto& component : archive.components) {
            for (const auto& package : component.packages)
                m_offers.emplace(
                    std::make_tuple(package.name, package.version, package.architecture),
                    Offer{&archive, &component.component, &package});
        }
    }
}

std::optional<pylock::LockDeb> OfferedPackages::pin(const std::string& name,
                                                    const std::string& version,
                                                    const std::string& architecture) const {
    auto found = m_offers.find({name, version, architecture});
    if (found == m_offers.end())
        found = m_offers.find({name, version, "all"});
    if (found == m_offers.end())
        return std::nullopt;
    const debian::BinaryPackage& package = *found->second.package;
    pylock::LockDeb deb;
    deb.name = package.name;
    deb.version = package.version;
    deb.architecture = package.architecture;
    deb.archive = found->second.archive->spec.name;
    deb.component = *found->second.component;
    deb.filename = package.filename;
    deb.size = package.size;
    deb.sha256 = package.sha256;
    if (package.source != package.name)
        deb.source = package.source;
    if (package.source_version != package.version)
        deb.source_version = package.source_version;
    return deb;
}

}  // namespace rootlock::fetch
