// The wheel-scan cache searched for torch builds that define what an extension misses.
#include <doctest/doctest.h>

#include "assemble/cached_builds.hpp"
#include "python/wheel_filename.hpp"
#include "python/wheel_scan.hpp"
#include "support/temp_dir.hpp"
#include "util/sealed_text.hpp"

namespace rootlock::testing {
namespace {

// A cached scan of `filename` holding torch/lib/libc10.so that defines `names`.
void cache_scan(const TempDir& cache, const std::string& sha, const std::string& filename,
                const std::vector<std::string>& names) {
    python::WheelScan scan;
    scan.wheel_sha256 = sha;
    auto parsed = python::parse_wheel_filename(filename);
    REQUIRE(parsed.ok());
    scan.filename = *parsed;
    python::WheelEntry entry;
    entry.path = "torch/lib/libc10.so";
    elf::ElfInfo info;
    info.soname = "libc10.so";
    info.symbols_read = true;
    for (const auto& name : names) {
        elf::Symbol symbol;
        symbol.name = name;
        symbol.defined = true;
        symbol.binding = elf::k_stb_global;
        symbol.type = elf::k_stt_func;
        info.symbols.push_back(symbol);
    }
    entry.elf = info;
    scan.entries.push_back(entry);
    cache.write_file("scans/v2/" + sha.substr(0, 2) + "/" + sha.substr(2) + ".json",
                     util::seal_text(python::scan_to_json(scan)));
}

}  // namespace

TEST_SUITE("rootlock::assemble") {
    TEST_CASE("cached torch builds defining every missing symbol are named") {
        TempDir cache;
        cache_scan(cache, std::string(64, 'a'), "torch-2.8.0+cu128-cp311-cp311-linux_x86_64.whl",
                   {"_ZN3c104cuda9SetDeviceEi", "_ZN3c105ErrorC2Ev"});
        cache_scan(cache, std::string(64, 'b'), "torch-2.9.1+cu130-cp311-cp311-linux_x86_64.whl",
                   {"_ZN3c104cuda9SetDeviceEa", "_ZN3c105ErrorC2Ev"});
        cache_scan(cache, std::string(64, 'c'), "torch-2.7.0+cu128-cp311-cp311-linux_x86_64.whl",
                   {"_ZN3c104cuda9SetDeviceEi", "_ZN3c105ErrorC2Ev"});
        cache.write_file("scans/v2/dd/broken.json", "{not json");
        cache.write_file("scans/v2/dd/damaged.json",
                         util::seal_text("{}").substr(0, 80) + "\"filename\":\"torch-");
        using Names = std::vector<std::string>;
        CHECK(assemble::cached_builds_defining(cache.path(), "torch", "libc10.so",
                                               {"_ZN3c104cuda9SetDeviceEi"}) ==
              Names{"2.7.0+cu128", "2.8.0+cu128"});
        CHECK(assemble::cached_builds_defining(cache.path(), "torch", "libc10.so",
                                               {"_ZN3c104cuda9SetDeviceEa", "_ZN3c105ErrorC2Ev"}) ==
              Names{"2.9.1+cu130"});
        CHECK(assemble::cached_builds_defining(cache.path(), "torch", "libtorch.so",
                                               {"_ZN3c105ErrorC2Ev"})
                  .empty());
        CHECK(assemble::cached_builds_defining(cache.path() + "/absent", "torch", "libc10.so",
                                               {"_ZN3c105ErrorC2Ev"})
                  .empty());

        std::vector<check::Problem> problems(2);
        problems[0].kind = "undefined-symbol";
        problems[0].fields = nlohmann::ordered_json::parse(R"({
            "library": "libc10.so", "hint": "this extension was built against another torch",
            "symbols": [{"name": "_ZN3c104cuda9SetDeviceEa"}]})");
        problems[1] = problems[0];
        problems[1].fields["hint"] = "built against another version of libc10.so";
        assemble::add_cached_builds(cache.path(), problems);
        CHECK(problems[0].fields["cached_builds"] == nlohmann::ordered_json({"2.9.1+cu130"}));
        CHECK_FALSE(problems[1].fields.contains("cached_builds"));
    }
}

}  // namespace rootlock::testing
