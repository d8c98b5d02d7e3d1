// The curl functions rootlock calls, forwarding to libcurl.so.4 opened on first use; see
// curl_loader.hpp. Each name is defined in parentheses: with optimisation, curl's headers make
// curl_easy_setopt and curl_easy_getinfo macros that check argument types.
#include "index/curl_loader.hpp"

#include <curl/curl.h>
#include <dlfcn.h>

#include <cstdarg>
#include <mutex>

namespace rootlock::index {

namespace {

struct Library {
    void* handle = nullptr;
    std::string error;
    CURLcode (*global_init)(long) = nullptr;
    CURL* (*easy_init)() = nullptr;
    void (*easy_cleanup)(CURL*) = nullptr;
    CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
    CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
    const char* (*easy_strerror)(CURLcode) = nullptr;
    CURLM* (*multi_init)() = nullptr;
    CURLMcode (*multi_cleanup)(CURLM*) = nullptr;
    CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...) = nullptr;
    CURLMcode (*multi_add_handle)(CURLM*, CURL*) = nullptr;
    CURLMcode (*multi_remove_handle)(CURLM*, CURL*) = nullptr;
    CURLMcode (*multi_perform)(CURLM*, int*) = nullptr;
    CURLMsg* (*multi_info_read)(CURLM*, int*) = nullptr;
    CURLMcode (*multi_poll)(CURLM*, curl_waitfd*, unsigned int, int, int*) = nullptr;
    curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
    void (*slist_free_all)(curl_slist*) = nullptr;
};

template <typename Function>
void bind_symbol(Library& library, Function& function, const char* name) {
    if (!library.error.empty())
        return;
    void* address = ::dlsym(library.handle, name);
    if (address == nullptr) {
        library.error = std::string("libcurl.so.4 has no ") + name;
        return;
    }
    function = reinterpret_cast<Function>(address);
}

const Library& curl_library() {
    static Library loaded;
    static std::once_flag once;
    std::call_once(once, [] {
        loaded.handle = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (loaded.handle == nullptr) {
            const char* why = ::dlerror();
            loaded.error = why != nullptr ? why : "libcurl.so.4 could not be opened";
            return;
        }
        bind_symbol(loaded, loaded.global_init, "curl_global_init");
        bind_symbol(loaded, loaded.easy_init, "curl_easy_init");
        bind_symbol(loaded, loaded.easy_cleanup, "curl_easy_cleanup");
        bind_symbol(loaded, loaded.easy_setopt, "curl_easy_setopt");
        bind_symbol(loaded, loaded.easy_getinfo, "curl_easy_getinfo");
        bind_symbol(loaded, loaded.easy_strerror, "curl_easy_strerror");
        bind_symbol(loaded, loaded.multi_init, "curl_multi_init");
        bind_symbol(loaded, loaded.multi_cleanup, "curl_multi_cleanup");
        bind_symbol(loaded, loaded.multi_setopt, "curl_multi_setopt");
        bind_symbol(loaded, loaded.multi_add_handle, "curl_multi_add_handle");
        bind_symbol(loaded, loaded.multi_remove_handle, "curl_multi_remove_handle");
        bind_symbol(loaded, loaded.multi_perform, "curl_multi_perform");
        bind_symbol(loaded, loaded.multi_info_read, "curl_multi_info_read");
        bind_symbol(loaded, loaded.multi_poll, "curl_multi_poll");
        bind_symbol(loaded, loaded.slist_append, "curl_slist_append");
        bind_symbol(loaded, loaded.slist_free_all, "curl_slist_free_all");
    });
    return loaded;
}

bool curl_usable(const Library& library) {
    return library.error.empty();
}

// Passes a setopt's variadic value on as the type its option's number says (curl.h's
// CURLOPTTYPE_* ranges, which easy and multi options share), as libcurl itself reads it: a
// long, a pointer (object, string, list, function or blob) or a curl_off_t.
template <typename Code, typename Handle, typename Option>
Code forward_option(Code (*set)(Handle*, Option, ...), Handle* handle, Option option,
                    va_list arguments) {
    const auto number = static_cast<long>(option);
    if (number < CURLOPTTYPE_OBJECTPOINT)
        return set(handle, option, va_arg(arguments, long));
    if (number < CURLOPTTYPE_OFF_T || number >= CURLOPTTYPE_BLOB)
        return set(handle, option, va_arg(arguments, void*));
    return set(handle, option, va_arg(arguments, curl_off_t));
}

}  // namespace

std::string curl_load_error() {
    return curl_library().error;
}

}  // namespace rootlock::index

using rootlock::index::curl_library;
using rootlock::index::curl_usable;
using rootlock::index::forward_option;

// curl.h fixes the variadic functions' last named parameter as an enum (CURLoption,
// CURLMoption, CURLINFO), which clang warns va_start about: an enum is promoted when passed.
// These enums are int-sized with an int or unsigned underlying type, so the promoted type is
// the one declared, as libcurl's own C definitions of these functions rely on.
static_assert(sizeof(CURLoption) == sizeof(int) && sizeof(CURLMoption) == sizeof(int) &&
              sizeof(CURLINFO) == sizeof(int));
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wvarargs"
#endif

extern "C" {

CURLcode(curl_global_init)(long flags) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.global_init(flags) : CURLE_FAILED_INIT;
}

CURL*(curl_easy_init)(void) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.easy_init() : nullptr;
}

void(curl_easy_cleanup)(CURL* handle) {
    const auto& l = curl_library();
    if (curl_usable(l))
        l.easy_cleanup(handle);
}

CURLcode(curl_easy_setopt)(CURL* handle, CURLoption option, ...) {
    const auto& l = curl_library();
    if (!curl_usable(l))
        return CURLE_FAILED_INIT;
    va_list arguments;
    va_start(arguments, option);
    const CURLcode code = forward_option(l.easy_setopt, handle, option, arguments);
    va_end(arguments);
    return code;
}

CURLcode(curl_easy_getinfo)(CURL* handle, CURLINFO info, ...) {
    const auto& l = curl_library();
    if (!curl_usable(l))
        return CURLE_FAILED_INIT;
    va_list arguments;
    va_start(arguments, info);
    void* out = va_arg(arguments, void*);  // every info is written through a pointer
    va_end(arguments);
    return l.easy_getinfo(handle, info, out);
}

const char*(curl_easy_strerror)(CURLcode code) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.easy_strerror(code) : "libcurl.so.4 could not be loaded";
}

CURLM*(curl_multi_init)(void) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.multi_init() : nullptr;
}

CURLMcode(curl_multi_cleanup)(CURLM* multi) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.multi_cleanup(multi) : CURLM_INTERNAL_ERROR;
}

CURLMcode(curl_multi_setopt)(CURLM* multi, CURLMoption option, ...) {
    const auto& l = curl_library();
    if (!curl_usable(l))
        return CURLM_INTERNAL_ERROR;
    va_list arguments;
    va_start(arguments, option);
    const CURLMcode code = forward_option(l.multi_setopt, multi, option, arguments);
    va_end(arguments);
    return code;
}

CURLMcode(curl_multi_add_handle)(CURLM* multi, CURL* handle) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.multi_add_handle(multi, handle) : CURLM_INTERNAL_ERROR;
}

CURLMcode(curl_multi_remove_handle)(CURLM* multi, CURL* handle) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.multi_remove_handle(multi, handle) : CURLM_INTERNAL_ERROR;
}

CURLMcode(curl_multi_perform)(CURLM* multi, int* running) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.multi_perform(multi, running) : CURLM_INTERNAL_ERROR;
}

CURLMsg*(curl_multi_info_read)(CURLM* multi, int* left) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.multi_info_read(multi, left) : nullptr;
}

CURLMcode(curl_multi_poll)(CURLM* multi, curl_waitfd extra[], unsigned int extra_count,
                           int timeout_ms, int* ready) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.multi_poll(multi, extra, extra_count, timeout_ms, ready)
                          : CURLM_INTERNAL_ERROR;
}

curl_slist*(curl_slist_append)(curl_slist* list, const char* text) {
    const auto& l = curl_library();
    return curl_usable(l) ? l.slist_append(list, text) : nullptr;
}

void(curl_slist_free_all)(curl_slist* list) {
    const auto& l = curl_library();
    if (curl_usable(l))
        l.slist_free_all(list);
}

}  // extern "C"

#if defined(__clang__)
#pragma clang diagnostic pop
#endif
