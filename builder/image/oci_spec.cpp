// The run settings, annotations and SBOM of an OCI image from its lock; see oci_spec.hpp.
#include "image/oci_spec.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "image/sbom.hpp"
#include "oci/oci_documents.hpp"

namespace rootlock::image {

// GOARCH names, as the image-spec's platform uses them, for the target's ELF machine name.
std::string oci_architecture(const std::string& machine) {
    if (machine == "aarch64")
        return "arm64";
    if (machine == "x86_64" || machine.empty())
        return "amd64";
    if (machine == "i686")
        return "386";
    return machine;  // ppc64le, s390x, riscv64 are GOARCH names too
}

OciImageSpec oci_spec_of(const pylock::Lock& lock, const std::string& machine,
                         const std::string& lock_sha256, int64_t epoch) {
    const pylock::LockRootlockData& data = *lock.rootlock;
    OciImageSpec spec;
    spec.run.architecture = oci_architecture(machine);
    if (spec.run.architecture == "arm64")
        spec.run.variant = "v8";  // what runtimes match linux/arm64 against (image-index.md)
    // fmt rather than operator+: GCC 12 sees a false -Wrestrict in "literal" + string here.
    spec.run.env.push_back(fmt::format(
        "PATH={}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", data.venv));
    spec.run.env.push_back(fmt::format("VIRTUAL_ENV={}", data.venv));
    for (const auto& [name, value] : data.environment)
        spec.run.env.push_back(fmt::format("{}={}", name, value));
    spec.run.entrypoint = data.entrypoint;
    spec.run.cmd = data.cmd;
    spec.run.working_dir.assign(1, '/');  // not = "/": the same false -Wrestrict
    spec.run.created = oci::rfc3339_utc(epoch);
    spec.run.labels = {{"org.rootlock.lock.sha256", lock_sha256},
                       {"org.rootlock.recipe", data.image_name}};
    spec.annotations = {{"org.opencontainers.image.created", spec.run.created},
                        {"org.opencontainers.image.title", data.image_name}};
    spec.ref_name = data.image_name;
    // The SBOM names the image by its manifest digest: the archive's own digest would depend on
    // the SBOM it holds.
    spec.sbom = [&lock](const std::string& manifest_digest) {
        return cyclonedx_sbom(lock, lock.rootlock->image_name, manifest_digest.substr(7));
    };
    return spec;
}

std::map<std::string, int64_t> wheel_dates(const pylock::Lock& lock, int64_t epoch) {
    std::map<std::string, int64_t> out;
    for (const auto& package : lock.packages) {
        if (package.wheels.empty() || !package.wheels.front().upload_time)
            continue;
        if (auto seconds = pylock::upload_time_seconds(*package.wheels.front().upload_time))
            out[package.name] = std::min(static_cast<int64_t>(*seconds), epoch);
    }
    return out;
}

}  // namespace rootlock::image
