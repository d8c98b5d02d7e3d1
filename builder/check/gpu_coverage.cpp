// scan_device_code and coverage_problems: gpu/fatbin's headers per object, gpu/arch_coverage's
// verdict per GPU, folded into one problem per GPU and verdict so a report stays short.
#include "check/gpu_coverage.hpp"

#include <fmt/format.h>

#include "gpu/arch_coverage.hpp"
#include "gpu/fatbin_stream.hpp"

namespace rootlock::check {

namespace {

DeviceCode describe(const gpu::FatbinSummary& summary) {
    DeviceCode code;
    for (const auto& name : summary.architectures)
        (name.ptx ? code.ptx : code.cubins).push_back(name.text());
    code.compressed = summary.any_compressed;
    code.entries = summary.entries.size();
    return code;
}

nlohmann::ordered_json names_json(const std::vector<std::string>& names) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& name : names)
        out.push_back(name);
    return out;
}

}  // namespace

DeviceCodeScan scan_device_code(const fs::FileTree& tree, const std::vector<std::string>& paths,
                                bool say_unreadable,
                                const std::map<std::string, gpu::FatbinSummary>& known) {
    DeviceCodeScan scan;
    size_t unreadable = 0;
    for (const auto& path : paths) {
        auto source = tree.open_bytes(path);
        if (!source) {
            if (auto found = known.find(path); found != known.end()) {
                if (!found->second.architectures.empty()) {
                    scan.objects.emplace(path, describe(found->second));
                    scan.summaries.emplace(path, found->second);
                }
                continue;
            }
            ++unreadable;
            continue;
        }
        auto summary = gpu::read_fatbin(**source);
        if (!summary) {
            scan.notes.push_back("device code not read: " + summary.error().text());
            continue;
        }
        // No entry, or only modules without a kernel (nothing can fail to launch).
        if (!summary->has_value() || (*summary)->architectures.empty())
            continue;
        scan.objects.emplace(path, describe(**summary));
        scan.summaries.emplace(path, std::move(**summary));
    }
    if (unreadable > 0 && say_unreadable)
        scan.notes.push_back(fmt::format(
            "the device code of {} objects was not read: {} does not hold their bytes for "
            "random access (check an unpacked root or an OCI layout for GPU coverage)",
            unreadable, tree.describe()));
    return scan;
}

struct StreamedDeviceCode::State {
    std::map<std::string, gpu::FatbinSummary> found;
    std::vector<std::string> notes;
};

namespace {

// One member's scanner; what it finds goes into the shared state at its end.
class DeviceCodeObserver final : public util::StreamObserver {
  public:
    DeviceCodeObserver(std::shared_ptr<StreamedDeviceCode::State> state, std::string path,
                       uint64_t size)
        : m_state(std::move(state)), m_path(path), m_scanner(std::move(path), size) {}
    void feed(std::span<const std::byte> bytes) override { m_scanner.feed(bytes); }
    void end() override {
        auto summary = m_scanner.finish();
        m_state->found.erase(m_path);
        if (!summary)
            m_state->notes.push_back("device code not read: " + summary.error().text());
        else  // an object without device code is known too: read, and nothing in it
            m_state->found.emplace(m_path, summary->value_or(gpu::FatbinSummary{}));
    }

  private:
    std::shared_ptr<StreamedDeviceCode::State> m_state;
    std::string m_path;
    gpu::FatbinStreamScanner m_scanner;
};

}  // namespace

StreamedDeviceCode::StreamedDeviceCode() : m_state(std::make_shared<State>()) {}

std::function<std::unique_ptr<util::StreamObserver>(const std::string&, uint64_t)>
StreamedDeviceCode::observer() const {
    return [state = m_state](const std::string& path, uint64_t size) {
        return std::unique_ptr<util::StreamObserver>(
            std::make_unique<DeviceCodeObserver>(state, path, size));
    };
}

std::map<std::string, gpu::FatbinSummary> StreamedDeviceCode::found() const {
    return m_state->found;
}

std::vector<std::string> StreamedDeviceCode::notes() const {
    return m_state->notes;
}

std::vector<Problem> coverage_problems(const DeviceCodeScan& scan,
                                       const std::vector<GpuTarget>& gpus) {
    std::vector<Problem> problems;
    for (const auto& target : gpus) {
        nlohmann::ordered_json missing = nlohmann::ordered_json::array();
        nlohmann::ordered_json ptx_only = nlohmann::ordered_json::array();
        for (const auto& [path, summary] : scan.summaries) {
            const gpu::CoverageVerdict verdict = gpu::cover(summary, target.capability);
            const DeviceCode& code = scan.objects.at(path);
            if (verdict.coverage == gpu::Coverage::none) {
                missing.push_back({{"path", path},
                                   {"cubin", names_json(code.cubins)},
                                   {"ptx", names_json(code.ptx)}});
            } else if (verdict.coverage == gpu::Coverage::ptx_jit) {
                ptx_only.push_back(
                    {{"path", path},
                     {"ptx", verdict.decided_by ? verdict.decided_by->text() : std::string()},
                     {"cubin", names_json(code.cubins)}});
            }
        }
        const std::string cc = target.capability.text();
        if (!missing.empty()) {
            Problem problem{"gpu-arch-missing", Severity::error, {}};
            problem.fields["gpu"] = cc;
            problem.fields["sm"] = "sm_" + std::to_string(target.capability.sm());
            problem.fields["source"] = target.source;
            problem.fields["problem"] = "no kernel image is available for execution on the device";
            problem.fields["objects"] = std::move(missing);
            problems.push_back(std::move(problem));
        }
        if (!ptx_only.empty()) {
            Problem problem{"gpu-arch-ptx-only", Severity::warning, {}};
            problem.fields["gpu"] = cc;
            problem.fields["sm"] = "sm_" + std::to_string(target.capability.sm());
            problem.fields["source"] = target.source;
            problem.fields["problem"] =
                "no cubin for this GPU: the driver JIT-compiles PTX at first use (slow start; "
                "needs a driver at least as new as the PTX)";
            problem.fields["objects"] = std::move(ptx_only);
            problems.push_back(std::move(problem));
        }
    }
    return problems;
}

std::string device_code_text(const DeviceCode& code) {
    std::string text;
    for (const auto* names : {&code.cubins, &code.ptx}) {
        for (const auto& name : *names)
            text += (text.empty() ? "" : " ") + name;
    }
    return text;
}

std::optional<DeviceCode> device_code_of(const fs::FileTree& tree, const std::string& path) {
    DeviceCodeScan scan = scan_device_code(tree, {path});
    auto found = scan.objects.find(path);
    if (found == scan.objects.end())
        return std::nullopt;
    return found->second;
}

nlohmann::ordered_json device_code_json(const DeviceCode& code) {
    nlohmann::ordered_json out;
    out["cubin"] = names_json(code.cubins);
    out["ptx"] = names_json(code.ptx);
    out["compressed"] = code.compressed;
    return out;
}

}  // namespace rootlock::check
