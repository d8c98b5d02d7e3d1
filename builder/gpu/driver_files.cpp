// Parsers of the NVIDIA driver's /proc and /sys files and of driver releases; see
// driver_files.hpp. Pure text in, values or one located error line out; nothing is read here.
#include "gpu/driver_files.hpp"

#include <fmt/format.h>
#include <charconv>

namespace rootlock::gpu {

namespace {

// How much of an offending text an error echoes: enough to recognise a line, never a whole file.
constexpr size_t k_driver_echo = 80;
// Nine digits: every driver number is far shorter, and int cannot overflow.
constexpr size_t k_release_part_digits = 9;
// Linux's device numbers give a major 12 bits (MINORBITS is 20).
constexpr uint64_t k_max_char_major = 4095;
// Minor 255 is /dev/nvidiactl, so a GPU's own minor is below it.
constexpr uint64_t k_max_device_minor = 254;

bool is_driver_blank(char c) {
    return c == ' ' || c == '\t';
}

bool is_driver_digit(char c) {
    return c >= '0' && c <= '9';
}

std::string_view trim_driver_blanks(std::string_view text) {
    while (!text.empty() && is_driver_blank(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && is_driver_blank(text.back()))
        text.remove_suffix(1);
    return text;
}

// Lines split on '\n'; a final newline does not start one more line.
std::vector<std::string_view> driver_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const size_t newline = text.find('\n');
        if (newline == std::string_view::npos) {
            lines.push_back(text);
            break;
        }
        lines.push_back(text.substr(0, newline));
        text.remove_prefix(newline + 1);
    }
    return lines;
}

std::vector<std::string_view> driver_words(std::string_view text) {
    std::vector<std::string_view> words;
    size_t at = 0;
    while (at < text.size()) {
        while (at < text.size() && is_driver_blank(text[at]))
            ++at;
        const size_t start = at;
        while (at < text.size() && !is_driver_blank(text[at]))
            ++at;
        if (at > start)
            words.push_back(text.substr(start, at - start));
    }
    return words;
}

// A non-empty run of decimal digits no larger than `max`.
std::optional<uint64_t> driver_decimal(std::string_view text, uint64_t max) {
    if (text.empty())
        return std::nullopt;
    for (char c : text) {
        if (!is_driver_digit(c))
            return std::nullopt;
    }
    uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value > max)
        return std::nullopt;
    return value;
}

std::optional<uint32_t> driver_hex(std::string_view text, size_t min_digits, size_t max_digits) {
    if (text.size() < min_digits || text.size() > max_digits)
        return std::nullopt;
    uint32_t value = 0;
    for (char c : text) {
        uint32_t digit = 0;
        if (is_driver_digit(c))
            digit = static_cast<uint32_t>(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = static_cast<uint32_t>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            digit = static_cast<uint32_t>(c - 'A' + 10);
        else
            return std::nullopt;
        value = value * 16 + digit;  // eight digits at most: no overflow
    }
    return value;
}

std::string driver_at_line(std::string_view name, size_t index) {
    return fmt::format("{}:{}", name, index + 1);
}

std::string driver_echo(std::string_view text) {
    return util::quote_prefix(text, k_driver_echo);
}

// What is wrong with `text` as a driver release, or nullopt; `out` filled when it is right.
std::optional<std::string> release_problem(std::string_view text, DriverRelease& out) {
    if (text.empty())
        return "it is empty";
    out.text = std::string(text);
    out.parts.clear();
    size_t index = 0;
    while (true) {
        const size_t dot = text.find('.');
        const std::string_view part = text.substr(0, dot);
        ++index;
        if (index > 3)
            return "it has more than three parts";
        if (part.empty())
            return fmt::format("part {} is empty", index);
        for (char c : part) {
            if (!is_driver_digit(c))
                return fmt::format("part {} is not a decimal number", index);
        }
        if (part.size() > k_release_part_digits)
            return fmt::format("part {} has more than {} digits", index, k_release_part_digits);
        out.parts.push_back(static_cast<int>(driver_decimal(part, 999999999).value_or(0)));
        if (dot == std::string_view::npos)
            break;
        text.remove_prefix(dot + 1);
    }
    if (out.parts.front() == 0)
        return std::string("branch 0 does not exist");
    return std::nullopt;
}

std::string release_message(std::string_view text, std::string_view why) {
    return fmt::format("{} is not a driver release such as 580.65.06: {}", driver_echo(text), why);
}

// A release as a kernel module reports it: two or three parts.
util::Result<DriverRelease> module_release(std::string_view text, const std::string& where) {
    DriverRelease release;
    if (auto problem = release_problem(text, release))
        return util::make_error(where, release_message(text, *problem));
    if (!release.full()) {
        return util::make_error(
            where, release_message(text, "a kernel module's release has two or three parts"));
    }
    return release;
}

bool is_architecture_word(std::string_view word) {
    if (word.empty())
        return false;
    for (char c : word) {
        const bool ok = is_driver_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        c == '_' || c == '-';
        if (!ok)
            return false;
    }
    return true;
}

bool is_uuid_char(char c) {
    return is_driver_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '?';
}

// The known keys of an information file, each seen once.
struct InformationSeen {
    bool model = false, uuid = false, bus = false, minor = false, irq = false, excluded = false;
};

// Checks and stores one known key's value; an error message (without location) or "".
std::string information_value(std::string_view key, std::string_view value, GpuInformation& out,
                              InformationSeen& seen) {
    auto once = [&](bool& flag) {
        const bool first = !flag;
        flag = true;
        return first;
    };
    if (key == "Model") {
        if (!once(seen.model))
            return "Model is given twice";
        if (value.empty())
            return "Model is empty";
        out.model = std::string(value);
    } else if (key == "GPU UUID") {
        if (!once(seen.uuid))
            return "GPU UUID is given twice";
        if (!is_gpu_uuid(value)) {
            return fmt::format("GPU UUID {} is not GPU- and 8-4-4-4-12 hex digits",
                               driver_echo(value));
        }
        out.uuid = std::string(value);
    } else if (key == "Bus Location") {
        if (!once(seen.bus))
            return "Bus Location is given twice";
        auto bus = parse_pci_address(value);
        if (!bus)
            return fmt::format("Bus Location {} is not a PCI address such as 0000:01:00.0",
                               driver_echo(value));
        out.bus = *bus;
    } else if (key == "Device Minor") {
        if (!once(seen.minor))
            return "Device Minor is given twice";
        auto minor = driver_decimal(value, k_max_device_minor);
        if (!minor)
            return fmt::format("Device Minor {} is not a number from 0 to 254", driver_echo(value));
        out.device_minor = static_cast<int>(*minor);
    } else if (key == "IRQ") {
        if (!once(seen.irq))
            return "IRQ is given twice";
        auto irq = driver_decimal(value, 0x7fffffff);
        if (!irq)
            return fmt::format("IRQ {} is not a decimal number", driver_echo(value));
        out.irq = static_cast<int>(*irq);
    } else if (key == "GPU Excluded") {
        if (!once(seen.excluded))
            return "GPU Excluded is given twice";
        if (value != "Yes" && value != "No")
            return fmt::format("GPU Excluded {} is not Yes or No", driver_echo(value));
        out.excluded = value == "Yes";
    } else if (key == "Video BIOS") {
        out.video_bios = std::string(value);
    } else if (key == "Bus Type") {
        out.bus_type = std::string(value);
    } else if (key == "DMA Size") {
        out.dma_size = std::string(value);
    } else if (key == "DMA Mask") {
        out.dma_mask = std::string(value);
    }
    return "";
}

}  // namespace

util::Result<DriverRelease> parse_driver_release(std::string_view text) {
    DriverRelease release;
    if (auto problem = release_problem(text, release))
        return util::make_error("", release_message(text, *problem));
    return release;
}

util::Result<DriverRelease> parse_sys_module_version(std::string_view text, std::string_view name) {
    const auto lines = driver_lines(text);
    bool blank = true;
    for (std::string_view line : lines)
        blank = blank && trim_driver_blanks(line).empty();
    if (blank) {
        return util::make_error(
            std::string(name),
            "the file is empty; a driver release such as 570.124.06 was expected");
    }
    ROOTLOCK_TRY(release, module_release(trim_driver_blanks(lines[0]), driver_at_line(name, 0)));
    for (size_t i = 1; i < lines.size(); ++i) {
        if (!trim_driver_blanks(lines[i]).empty()) {
            return util::make_error(driver_at_line(name, i),
                                    fmt::format("{} follows the release; the file holds one line",
                                                driver_echo(lines[i])));
        }
    }
    return std::move(release);
}

util::Result<ProcDriverVersion> parse_proc_driver_version(std::string_view text,
                                                          std::string_view name) {
    constexpr std::string_view k_nvrm = "NVRM version:";
    const auto lines = driver_lines(text);
    if (lines.empty()) {
        return util::make_error(std::string(name),
                                "the file is empty; an \"NVRM version:\" line was expected");
    }
    const std::string where = driver_at_line(name, 0);
    if (!lines[0].starts_with(k_nvrm)) {
        return util::make_error(
            where, fmt::format("{} does not start with \"NVRM version:\"", driver_echo(lines[0])));
    }
    const auto words = driver_words(lines[0].substr(k_nvrm.size()));
    if (words.size() < 2 || words[0] != "NVIDIA" || words[1] != "UNIX")
        return util::make_error(where, "the NVRM line does not go on with \"NVIDIA UNIX\"");
    size_t module = 2;
    while (module + 1 < words.size() &&
           !(words[module] == "Kernel" && words[module + 1] == "Module"))
        ++module;
    if (module + 1 >= words.size())
        return util::make_error(where, "the NVRM line has no \"Kernel Module\"");

    ProcDriverVersion out;
    size_t next = module + 2;
    if (module == 3 && words[2] == "Open") {
        // "NVIDIA UNIX Open Kernel Module for x86_64  575.57.08 ..."
        out.flavor = KernelModuleFlavor::open;
        if (next + 1 >= words.size() || words[next] != "for") {
            return util::make_error(
                where,
                "the open module's NVRM line has no \"for ARCHITECTURE\" after \"Kernel "
                "Module\"");
        }
        out.architecture = std::string(words[next + 1]);
        next += 2;
    } else if (module == 3) {
        // "NVIDIA UNIX x86_64 Kernel Module  570.86.15 ..."
        out.architecture = std::string(words[2]);
    } else {
        return util::make_error(
            where,
            "the NVRM line has not one word (an architecture, or \"Open\") between "
            "\"NVIDIA UNIX\" and \"Kernel Module\"");
    }
    if (!is_architecture_word(out.architecture)) {
        return util::make_error(where, fmt::format("architecture {} is not a word such as x86_64",
                                                   driver_echo(out.architecture)));
    }
    if (next >= words.size())
        return util::make_error(where, "the NVRM line has no release after the module's name");
    ROOTLOCK_TRY(release, module_release(words[next], where));
    out.release = std::move(release);
    for (size_t i = next + 1; i < words.size(); ++i) {
        if (!out.build.empty())
            out.build += ' ';
        out.build += util::printable(words[i]);
    }
    constexpr std::string_view k_gcc = "GCC version:";
    if (lines.size() > 1 && lines[1].starts_with(k_gcc))
        out.gcc = util::printable(trim_driver_blanks(lines[1].substr(k_gcc.size())));
    return out;
}

util::Result<std::vector<CharDevice>> parse_proc_devices(std::string_view text,
                                                         std::string_view name) {
    const auto lines = driver_lines(text);
    size_t index = 0;
    while (index < lines.size() && trim_driver_blanks(lines[index]) != "Character devices:")
        ++index;
    if (index == lines.size())
        return util::make_error(std::string(name), "no \"Character devices:\" section");
    std::vector<CharDevice> devices;
    for (++index; index < lines.size(); ++index) {
        const std::string_view line = trim_driver_blanks(lines[index]);
        if (line.empty() || line.ends_with(':'))  // the blank line before "Block devices:"
            break;
        size_t blank = 0;
        while (blank < line.size() && !is_driver_blank(line[blank]))
            ++blank;
        const auto major = driver_decimal(line.substr(0, blank), k_max_char_major);
        const std::string_view device = trim_driver_blanks(line.substr(blank));
        const std::string where = driver_at_line(name, index);
        if (!major) {
            return util::make_error(where,
                                    fmt::format("{} is not \"MAJOR NAME\": the major is not a "
                                                "number from 0 to 4095",
                                                driver_echo(line)));
        }
        if (device.empty())
            return util::make_error(
                where, fmt::format("{} is not \"MAJOR NAME\": no name", driver_echo(line)));
        if (!util::is_one_line(device)) {
            return util::make_error(
                where, fmt::format("{} is not \"MAJOR NAME\": the name holds a control byte",
                                   driver_echo(line)));
        }
        devices.push_back(CharDevice{static_cast<int>(*major), std::string(device)});
    }
    return devices;
}

std::optional<int> find_major(const std::vector<CharDevice>& devices, std::string_view name) {
    for (const CharDevice& device : devices) {
        if (device.name == name)
            return device.major;
    }
    return std::nullopt;
}

std::optional<int> nvidia_frontend_major(const std::vector<CharDevice>& devices) {
    if (auto major = find_major(devices, "nvidia-frontend"))
        return major;
    return find_major(devices, "nvidia");
}

std::string PciAddress::text() const {
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

std::optional<PciAddress> parse_pci_address(std::string_view text) {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    const std::string_view rest = text.substr(colon + 1);
    // "BB:DD.F" exactly
    if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.')
        return std::nullopt;
    const auto domain = driver_hex(text.substr(0, colon), 1, 8);
    const auto bus = driver_hex(rest.substr(0, 2), 2, 2);
    const auto device = driver_hex(rest.substr(3, 2), 2, 2);
    const auto function = driver_hex(rest.substr(6, 1), 1, 1);
    if (!domain || !bus || !device || !function || *device > 0x1f || *function > 7)
        return std::nullopt;
    return PciAddress{*domain, static_cast<uint8_t>(*bus), static_cast<uint8_t>(*device),
                      static_cast<uint8_t>(*function)};
}

bool is_gpu_uuid(std::string_view text) {
    constexpr std::string_view k_prefix = "GPU-";
    if (!text.starts_with(k_prefix))
        return false;
    text.remove_prefix(k_prefix.size());
    // 8-4-4-4-12
    if (text.size() != 36)
        return false;
    for (size_t i = 0; i < text.size(); ++i) {
        const bool dash_here = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash_here ? text[i] != '-' : !is_uuid_char(text[i]))
            return false;
    }
    return true;
}

bool GpuInformation::uuid_known() const {
    return is_gpu_uuid(uuid) && uuid.find('?') == std::string::npos;
}

util::Result<GpuInformation> parse_gpu_information(std::string_view text, std::string_view name) {
    GpuInformation out;
    InformationSeen seen;
    const auto lines = driver_lines(text);
    for (size_t index = 0; index < lines.size(); ++index) {
        const std::string_view line = lines[index];
        if (trim_driver_blanks(line).empty())
            continue;
        const std::string where = driver_at_line(name, index);
        const size_t colon = line.find(':');
        const std::string_view key =
            trim_driver_blanks(line.substr(0, colon == std::string_view::npos ? 0 : colon));
        if (colon == std::string_view::npos || key.empty())
            return util::make_error(where,
                                    fmt::format("{} is not \"Key: value\"", driver_echo(line)));
        const std::string_view value = trim_driver_blanks(line.substr(colon + 1));
        if (!util::is_one_line(key) || !util::is_one_line(value))
            return util::make_error(where,
                                    fmt::format("{} holds a control byte", driver_echo(line)));
        const std::string problem = information_value(key, value, out, seen);
        if (!problem.empty())
            return util::make_error(where, problem);
        out.fields.emplace_back(std::string(key), std::string(value));
    }
    const std::pair<bool, std::string_view> required[] = {{seen.model, "Model"},
                                                          {seen.uuid, "GPU UUID"},
                                                          {seen.bus, "Bus Location"},
                                                          {seen.minor, "Device Minor"}};
    for (const auto& [present, key] : required) {
        if (!present)
            return util::make_error(std::string(name), fmt::format("no \"{}\" line", key));
    }
    return out;
}

}  // namespace rootlock::gpu
