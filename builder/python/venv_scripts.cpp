// The activation scripts `python -m venv` writes (CPython 3.11's venv/scripts), filled in the
// way venv's replace_variables() does for POSIX shells (shlex.quote).
#include "python/venv_scripts.hpp"

#include <string_view>

#include "python/venv_templates.hpp"

namespace rootlock::python {

namespace {

// shlex.quote: unchanged when every character is safe, else single-quoted.
std::string shell_quote(std::string_view text) {
    const bool safe =
        !text.empty() &&
        text.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_") ==
            std::string_view::npos;
    if (safe)
        return std::string(text);
    std::string out = "'";
    for (char c : text) {
        if (c == '\'')
            out += "'\"'\"'";
        else
            out += c;
    }
    return out + "'";
}

void replace_all(std::string& text, std::string_view key, const std::string& value) {
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
        text.replace(at, key.size(), value);
}

std::string fill(std::string_view template_text, const std::string& venv) {
    std::string text(template_text);
    const std::string name = venv.substr(venv.rfind('/') + 1);
    replace_all(text, "__VENV_DIR__", shell_quote(venv));
    replace_all(text, "__VENV_NAME__", shell_quote(name));
    replace_all(text, "__VENV_PROMPT__", shell_quote("(" + name + ") "));
    replace_all(text, "__VENV_BIN_NAME__", shell_quote("bin"));
    replace_all(text, "__VENV_PYTHON__", shell_quote(venv + "/bin/python"));
    return text;
}

}  // namespace

std::string activate_script(const std::string& venv) {
    return fill(templates::k_activate, venv);
}

std::vector<VenvScript> activation_scripts(const std::string& venv) {
    // 3.11's Activate.ps1 has no placeholders: it reads pyvenv.cfg when it runs.
    const std::string_view ps1 = templates::k_activate_ps1;
    std::string crlf;
    crlf.reserve(ps1.size() + ps1.size() / 32);
    for (char c : ps1) {
        if (c == '\n')
            crlf += '\r';
        crlf += c;
    }
    return {{"Activate.ps1", std::move(crlf)},
            {"activate", activate_script(venv)},
            {"activate.csh", fill(templates::k_activate_csh, venv)},
            {"activate.fish", fill(templates::k_activate_fish, venv)}};
}

}  // namespace rootlock::python
