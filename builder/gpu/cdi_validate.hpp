// The reader of a CDI spec's YAML tree (cdi_yaml.hpp): every field's type, then the reference
// loader's rules (pkg/cdi/spec.go, container-edits.go, pkg/parser, specs-go/version.go).
#pragma once

#include <string_view>

#include "gpu/cdi_spec.hpp"
#include "gpu/cdi_yaml.hpp"
#include "util/result.hpp"

namespace rootlock::gpu::cdi {

// The spec a document holds, every rule of parse_cdi_spec checked; errors "NAME:LINE:COL: ...".
util::Result<CdiSpec> read_spec_tree(const YamlTree& tree, std::string_view name);

}  // namespace rootlock::gpu::cdi
