// The activation script `python -m venv` writes (CPython 3.11's venv/scripts/common/activate),
// filled in the way venv's replace_variables() does, so `. /opt/venv/bin/activate` works.
#include "python/venv_scripts.hpp"

#include <string_view>

namespace rootlock::python {

namespace {

constexpr std::string_view k_activate_template =
    R"ACTIVATE(# This file must be used with "source bin/activate" *from bash*
# you cannot run it directly

deactivate () {
    # reset old environment variables
    if [ -n "${_OLD_VIRTUAL_PATH:-}" ] ; then
        PATH="${_OLD_VIRTUAL_PATH:-}"
        export PATH
        unset _OLD_VIRTUAL_PATH
    fi
    if [ -n "${_OLD_VIRTUAL_PYTHONHOME:-}" ] ; then
        PYTHONHOME="${_OLD_VIRTUAL_PYTHONHOME:-}"
        export PYTHONHOME
        unset _OLD_VIRTUAL_PYTHONHOME
    fi

    # This should detect bash and zsh, which have a hash command that must
    # be called to get it to forget past commands.  Without forgetting
    # past commands the $PATH changes we made may not be respected
    if [ -n "${BASH:-}" -o -n "${ZSH_VERSION:-}" ] ; then
        hash -r 2> /dev/null
    fi

    if [ -n "${_OLD_VIRTUAL_PS1:-}" ] ; then
        PS1="${_OLD_VIRTUAL_PS1:-}"
        export PS1
        unset _OLD_VIRTUAL_PS1
    fi

    unset VIRTUAL_ENV
    unset VIRTUAL_ENV_PROMPT
    if [ ! "${1:-}" = "nondestructive" ] ; then
    # Self destruct!
        unset -f deactivate
    fi
}

# unset irrelevant variables
deactivate nondestructive

VIRTUAL_ENV=__VENV_DIR__
export VIRTUAL_ENV

_OLD_VIRTUAL_PATH="$PATH"
PATH="$VIRTUAL_ENV/"__VENV_BIN_NAME__":$PATH"
export PATH

# unset PYTHONHOME if set
# this will fail if PYTHONHOME is set to the empty string (which is bad anyway)
# could use `if (set -u; : $PYTHONHOME) ;` in bash
if [ -n "${PYTHONHOME:-}" ] ; then
    _OLD_VIRTUAL_PYTHONHOME="${PYTHONHOME:-}"
    unset PYTHONHOME
fi

if [ -z "${VIRTUAL_ENV_DISABLE_PROMPT:-}" ] ; then
    _OLD_VIRTUAL_PS1="${PS1:-}"
    PS1=__VENV_PROMPT__"${PS1:-}"
    export PS1
    VIRTUAL_ENV_PROMPT=__VENV_PROMPT__
    export VIRTUAL_ENV_PROMPT
fi

# This should detect bash and zsh, which have a hash command that must
# be called to get it to forget past commands.  Without forgetting
# past commands the $PATH changes we made may not be respected
if [ -n "${BASH:-}" -o -n "${ZSH_VERSION:-}" ] ; then
    hash -r 2> /dev/null
fi
)ACTIVATE";

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

}  // namespace

std::string activate_script(const std::string& venv) {
    std::string text(k_activate_template);
    const std::string name = venv.substr(venv.rfind('/') + 1);
    replace_all(text, "__VENV_DIR__", shell_quote(venv));
    replace_all(text, "__VENV_NAME__", shell_quote(name));
    replace_all(text, "__VENV_PROMPT__", shell_quote("(" + name + ") "));
    replace_all(text, "__VENV_BIN_NAME__", shell_quote("bin"));
    replace_all(text, "__VENV_PYTHON__", shell_quote(venv + "/bin/python"));
    return text;
}

}  // namespace rootlock::python
