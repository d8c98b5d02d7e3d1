// The JSON rendering of a LockDiff, with the shape docs/diff.md promises (keys only ever added).
// Apart from the text and Markdown renderers: nothing is shared but the model.
#include <nlohmann/json.hpp>

#include "diff/lock_diff.hpp"
#include "util/json_text.hpp"

namespace rootlock::diff {

namespace {

using Json = nlohmann::ordered_json;

Json json_fields(const std::vector<FieldChange>& list) {
    Json out = Json::array();
    for (const auto& change : list)
        out.push_back(
            Json{{"field", change.field}, {"before", change.before}, {"after", change.after}});
    return out;
}

Json optional_text(const std::optional<std::string>& text) {
    return text ? Json(*text) : Json(nullptr);
}

Json json_packages(const std::vector<PackageChange>& list) {
    Json out = Json::array();
    for (const auto& change : list) {
        Json entry;
        entry["name"] = change.name;
        entry["before"] = optional_text(change.before);
        entry["after"] = optional_text(change.after);
        entry["changes"] = Json::array();
        for (auto kind : change.kinds)
            entry["changes"].push_back(to_string(kind));
        entry["index"] = Json{{"before", change.before_index}, {"after", change.after_index}};
        entry["wheels"] = Json{{"removed", change.wheels_removed}, {"added", change.wheels_added}};
        entry["rebuilt"] = Json::array();
        for (const auto& wheel : change.rebuilt)
            entry["rebuilt"].push_back(Json{{"wheel", wheel.wheel},
                                            {"algorithm", wheel.algorithm},
                                            {"before", wheel.before},
                                            {"after", wheel.after},
                                            {"kind", wheel.kind}});
        entry["source"] = Json{{"before", change.source_before}, {"after", change.source_after}};
        entry["source_fields"] = Json::array();
        for (const auto& field : change.source_fields)
            entry["source_fields"].push_back(Json{{"source", field.source},
                                                  {"field", field.field},
                                                  {"before", field.before},
                                                  {"after", field.after}});
        out.push_back(std::move(entry));
    }
    return out;
}

Json json_debs(const std::vector<DebChange>& list) {
    Json out = Json::array();
    for (const auto& change : list)
        out.push_back(Json{{"name", change.name},
                           {"architecture", change.architecture},
                           {"change", to_string(change.kind)},
                           {"before", optional_text(change.before)},
                           {"after", optional_text(change.after)},
                           {"archive_before", change.archive_before},
                           {"archive_after", change.archive_after},
                           {"suite_before", change.suite_before},
                           {"suite_after", change.suite_after},
                           {"security", change.security},
                           {"filename_before", change.filename_before},
                           {"filename_after", change.filename_after},
                           {"sha256_before", change.sha256_before},
                           {"sha256_after", change.sha256_after}});
    return out;
}

Json json_maximum(const std::optional<FieldChange>& change) {
    if (!change)
        return nullptr;
    return Json{{"before", change->before}, {"after", change->after}};
}

Json json_sonames(const SonameDiff& sonames) {
    Json out;
    out["changes"] = Json::array();
    for (const auto& change : sonames.changes)
        out["changes"].push_back(Json{{"soname", change.soname},
                                      {"change", to_string(change.kind)},
                                      {"before", change.before},
                                      {"after", change.after}});
    out["glibc"] = json_maximum(sonames.glibc);
    out["glibcxx"] = json_maximum(sonames.glibcxx);
    out["cuda_majors_added"] = sonames.cuda_majors_added;
    out["cuda_majors_removed"] = sonames.cuda_majors_removed;
    return out;
}

Json json_architectures(const std::vector<ArchitectureChange>& list) {
    Json out = Json::array();
    for (const auto& change : list)
        out.push_back(Json{{"name", change.name},
                           {"before", change.before},
                           {"after", change.after},
                           {"added", change.added},
                           {"removed", change.removed}});
    return out;
}

Json json_recipe(const std::vector<RecipeChange>& list) {
    Json out = Json::array();
    for (const auto& change : list)
        out.push_back(Json{{"field", change.field},
                           {"added", change.added},
                           {"removed", change.removed},
                           {"changed", change.changed}});
    return out;
}

}  // namespace

std::string render_diff_json(const LockDiff& diff) {
    Json out;
    out["same"] = diff.same();
    out["target"] = json_fields(diff.target);
    out["base"] = json_fields(diff.base);
    out["debian"] = json_debs(diff.debian);
    out["torch"] = json_packages(diff.torch);
    out["nvidia"] = json_packages(diff.nvidia);
    out["packages"] = json_packages(diff.packages);
    out["sonames"] = json_sonames(diff.sonames);
    out["gpu_architectures"] = json_architectures(diff.gpu_architectures);
    out["recipe"] = json_recipe(diff.recipe);
    return util::json_text(out, 2) + "\n";
}

}  // namespace rootlock::diff
