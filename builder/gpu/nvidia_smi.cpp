// nvidia-smi's CSV rows parsed field by field; see nvidia_smi.hpp. Each field goes through the
// parser its /proc twin uses, so a UUID or a bus reads the same from either source.
#include "gpu/nvidia_smi.hpp"

#include <fmt/format.h>
#include <charconv>

namespace rootlock::gpu {

namespace {

constexpr size_t k_smi_echo = 80;
constexpr size_t k_smi_field_count = 6;
constexpr int k_max_smi_index = 65535;

std::string_view trim_smi(std::string_view text) {
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!text.empty() && blank(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && blank(text.back()))
        text.remove_suffix(1);
    return text;
}

std::vector<std::string_view> smi_fields(std::string_view line) {
    std::vector<std::string_view> fields;
    while (true) {
        const size_t comma = line.find(',');
        fields.push_back(trim_smi(line.substr(0, comma)));
        if (comma == std::string_view::npos)
            return fields;
        line.remove_prefix(comma + 1);
    }
}

std::optional<int> smi_index(std::string_view text) {
    if (text.empty() || text.size() > 5)
        return std::nullopt;
    for (char c : text) {
        if (c < '0' || c > '9')
            return std::nullopt;
    }
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value > k_max_smi_index)
        return std::nullopt;
    return value;
}

// One row's fields into `gpu`; the problem, without location, or "".
std::string smi_row(const std::vector<std::string_view>& fields, SmiGpu& gpu) {
    const auto index = smi_index(fields[0]);
    if (!index) {
        return fmt::format("index {} is not a number from 0 to {}",
                           util::quote_prefix(fields[0], k_smi_echo), k_max_smi_index);
    }
    gpu.index = *index;
    if (!is_gpu_uuid(fields[1])) {
        return fmt::format("uuid {} is not GPU- and 8-4-4-4-12 hex digits",
                           util::quote_prefix(fields[1], k_smi_echo));
    }
    gpu.uuid = std::string(fields[1]);
    if (fields[2].empty())
        return "name is empty";
    if (!util::is_one_line(fields[2]))
        return fmt::format("name {} holds a control byte",
                           util::quote_prefix(fields[2], k_smi_echo));
    gpu.name = std::string(fields[2]);
    const auto bus = parse_pci_address(fields[3]);
    if (!bus) {
        return fmt::format("pci.bus_id {} is not a PCI address such as 00000000:01:00.0",
                           util::quote_prefix(fields[3], k_smi_echo));
    }
    gpu.bus = *bus;
    gpu.bus_text = std::string(fields[3]);
    // "[N/A]", "[Not Supported]", "[Unknown Error]": nvidia-smi's bracketed non-answers.
    if (!(fields[4].starts_with('[') && fields[4].ends_with(']'))) {
        auto capability = parse_compute_capability(fields[4]);
        if (!capability)
            return "compute_cap " + capability.error().message;
        gpu.compute_cap = *capability;
    }
    auto driver = parse_driver_release(fields[5]);
    if (!driver)
        return "driver_version " + driver.error().message;
    if (!driver->full()) {
        return fmt::format("driver_version {} is a branch only; nvidia-smi writes a full release",
                           util::quote_prefix(fields[5], k_smi_echo));
    }
    gpu.driver = std::move(driver.value());
    return "";
}

}  // namespace

util::Result<std::vector<SmiGpu>> parse_nvidia_smi(std::string_view text, std::string_view name) {
    std::vector<SmiGpu> gpus;
    size_t index = 0;
    while (!text.empty()) {
        const size_t newline = text.find('\n');
        const std::string_view line = trim_smi(text.substr(0, newline));
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        const std::string where = fmt::format("{}:{}", name, ++index);
        if (line.empty())
            continue;
        if (line == "No devices were found")
            return util::make_error(where, "nvidia-smi found no GPU (\"No devices were found\")");
        const auto fields = smi_fields(line);
        if (fields.size() != k_smi_field_count) {
            return util::make_error(where,
                                    fmt::format("{} has {} fields; {} were expected ({})",
                                                util::quote_prefix(line, k_smi_echo), fields.size(),
                                                k_smi_field_count, k_nvidia_smi_query_fields));
        }
        SmiGpu gpu;
        const std::string problem = smi_row(fields, gpu);
        if (!problem.empty())
            return util::make_error(where, problem);
        gpus.push_back(std::move(gpu));
    }
    if (gpus.empty()) {
        return util::make_error(std::string(name),
                                "the output is empty; one line per GPU was expected");
    }
    return gpus;
}

bool same_pci_bus(std::string_view a, std::string_view b) {
    const auto left = parse_pci_address(trim_smi(a));
    const auto right = parse_pci_address(trim_smi(b));
    return left && right && *left == *right;
}

}  // namespace rootlock::gpu
