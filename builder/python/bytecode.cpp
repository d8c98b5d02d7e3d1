// compile_bytecode: the jobs go to a file, one python3.N process compiles them the way
// py_compile does (compile(), then importlib's _code_to_hash_pyc with checked=False), and the
// results come back through a second file, both deleted before returning.
#include "python/bytecode.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "util/subprocess.hpp"

namespace rootlock::python {

namespace {

// Reads "<I path length><Q source length> path source" records, writes "<B ok><Q length> pyc"
// records. The version check comes first, so that a wrong interpreter compiles nothing.
constexpr const char* k_compiler = R"PY(
import importlib._bootstrap_external as external, importlib.util, struct, sys, warnings
jobs, results, wanted = sys.argv[1:4]
version = "%d.%d.%d" % sys.version_info[:3]
if wanted and version != wanted:
    print("version " + version)
    sys.exit(3)
warnings.simplefilter("ignore")
with open(jobs, "rb") as source_file, open(results, "wb") as out:
    while True:
        head = source_file.read(12)
        if not head:
            break
        path_size, source_size = struct.unpack("<IQ", head)
        path = source_file.read(path_size).decode("utf-8", "surrogateescape")
        source = source_file.read(source_size)
        try:
            code = compile(source, path, "exec", dont_inherit=True)
        except Exception:
            out.write(struct.pack("<BQ", 0, 0))
            continue
        data = external._code_to_hash_pyc(code, importlib.util.source_hash(source), False)
        out.write(struct.pack("<BQ", 1, len(data)))
        out.write(data)
)PY";

void put_le(std::string& out, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i)
        out += static_cast<char>((value >> (8 * i)) & 0xffU);
}

uint64_t get_le(std::string_view in, size_t at, int bytes) {
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i)
        value |= uint64_t{static_cast<unsigned char>(in[at + static_cast<size_t>(i)])} << (8 * i);
    return value;
}

// A private directory, removed with what is in it when the scope ends.
class ScratchDir {
  public:
    explicit ScratchDir(std::string base) {
        std::string pattern = base + "/rootlock-pyc-XXXXXX";
        if (::mkdtemp(pattern.data()) != nullptr)
            m_path = pattern;
    }
    ~ScratchDir() {
        if (m_path.empty())
            return;
        ::unlink((m_path + "/jobs").c_str());
        ::unlink((m_path + "/results").c_str());
        ::rmdir(m_path.c_str());
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::string& path() const { return m_path; }

  private:
    std::string m_path;
};

// Every executable called `name` in PATH, in PATH's order, each file once (a merged /usr shows
// /usr/bin/x and /bin/x); just `name` when there is none, so that running it says "not found".
std::vector<std::string> candidates(const std::string& name) {
    std::vector<std::string> found;
    std::set<std::string> seen;
    const char* path_env = std::getenv("PATH");
    std::string_view rest = path_env != nullptr ? path_env : "/usr/bin:/bin";
    while (true) {
        const size_t colon = rest.find(':');
        const std::string dir(rest.substr(0, colon));
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) {
            char* real = ::realpath(candidate.c_str(), nullptr);
            const std::string key = real != nullptr ? real : candidate;
            std::free(real);
            if (seen.insert(key).second)
                found.push_back(candidate);
        }
        if (colon == std::string_view::npos)
            break;
        rest.remove_prefix(colon + 1);
    }
    if (found.empty())
        found.push_back(name);
    return found;
}

util::Result<std::vector<std::optional<std::string>>> read_results(const std::string& path,
                                                                   size_t count,
                                                                   const std::string& python) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<std::optional<std::string>> results;
    size_t at = 0;
    for (size_t i = 0; i < count; ++i) {
        if (bytes.size() - at < 9)
            return util::make_error(python, "its results end early");
        const bool compiled = bytes[at] == 1;
        const uint64_t size = get_le(bytes, at + 1, 8);
        at += 9;
        if (bytes.size() - at < size)
            return util::make_error(python, "its results end early");
        if (compiled)
            results.emplace_back(bytes.substr(at, static_cast<size_t>(size)));
        else
            results.emplace_back(std::nullopt);
        at += static_cast<size_t>(size);
    }
    return results;
}

}  // namespace

std::string pyc_path_for(std::string_view py_path, std::string_view python_version) {
    const size_t slash = py_path.rfind('/');
    const std::string_view dir = slash == std::string_view::npos ? "" : py_path.substr(0, slash);
    std::string_view name = slash == std::string_view::npos ? py_path : py_path.substr(slash + 1);
    if (name.ends_with(".py"))
        name.remove_suffix(3);
    std::string tag = "cpython-";
    for (char c : python_version) {
        if (c != '.')
            tag += c;
    }
    return std::string(dir) + "/__pycache__/" + std::string(name) + "." + tag + ".pyc";
}

util::Result<std::vector<std::optional<std::string>>> compile_bytecode(
    const std::vector<BytecodeJob>& jobs, const BytecodeOptions& options) {
    const std::string python = "python" + options.python_version;
    std::vector<std::optional<std::string>> results;
    if (jobs.empty())
        return results;
    const char* tmp = std::getenv("TMPDIR");
    ScratchDir scratch(!options.temp_dir.empty()        ? options.temp_dir
                       : tmp != nullptr && *tmp != '\0' ? tmp
                                                        : "/tmp");
    if (scratch.path().empty())
        return util::make_error(
            python, std::string("cannot make a scratch directory: ") + std::strerror(errno));
    const std::string jobs_path = scratch.path() + "/jobs";
    const std::string results_path = scratch.path() + "/results";
    {
        std::ofstream out(jobs_path, std::ios::binary);
        for (const BytecodeJob& job : jobs) {
            std::string head;
            put_le(head, job.path.size(), 4);
            put_le(head, job.source.size(), 8);
            out << head << job.path << job.source;
        }
        if (!out.flush())
            return util::make_error(jobs_path, "cannot write the sources to compile");
    }
    // The first interpreter of that name in PATH that is the base's exact version: a pyenv shim
    // or a /usr/local build may come before the distribution's.
    std::vector<std::string> others;
    for (const std::string& candidate : candidates(python)) {
        // No user site, no PYTHONPATH, no -O: the bytes must not depend on the caller's setup.
        ROOTLOCK_TRY(run, util::run_process({candidate, "-S", "-s", "-c", k_compiler, jobs_path,
                                             results_path, options.python_full},
                                            {{"PYTHONHASHSEED", "0"},
                                             {"PYTHONPATH", ""},
                                             {"PYTHONOPTIMIZE", ""},
                                             {"PYTHONDONTWRITEBYTECODE", "1"}}));
        const std::string last = util::last_line(run.output);
        if (run.exit_code == 3 && last.rfind("version ", 0) == 0) {
            others.push_back(last.substr(8) + " at " + candidate);
            continue;
        }
        if (run.exit_code != 0)
            return util::make_error(candidate, last);
        return read_results(results_path, jobs.size(), candidate);
    }
    std::string found;
    for (const std::string& other : others)
        found += (found.empty() ? "" : ", ") + other;
    return util::make_error(python, "the base's " + options.python_full +
                                        " is needed (another version compiles other bytes); "
                                        "found " +
                                        found);
}

}  // namespace rootlock::python
