// libcurl, opened the first time a command needs the network. Linked at build time, libcurl and
// the two dozen libraries it brings (TLS twice over, Kerberos, LDAP, SSH, IDN, HTTP/2) cost every
// rootlock run 12 ms and 3 MB before main() even where nothing opens a socket: check, ldd, why
// and diff, whose whole-root check is measured against libtree's 0.11 s. curl_loader.cpp defines
// the curl functions http_client calls, extern "C" with curl's own signatures, each forwarding
// to libcurl.so.4's (its ABI has been stable since 2006); the curl headers still come from
// libcurl4-openssl-dev.
#pragma once

#include <string>

namespace rootlock::index {

// Why libcurl.so.4 could not be opened (dlerror's text, or the symbol it lacks); empty when it
// was opened, or has not been needed yet. Every curl call fails while this is not empty.
std::string curl_load_error();

}  // namespace rootlock::index
