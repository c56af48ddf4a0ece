// `bitgate bench`'s selection, made on the host before any device work: which (catalog line marked
// `bench`, variant) pairs a run times. A run that timed nothing would print an empty table and
// exit 0, so a selection that names something matching no pair is bad input, told in one line
// on any machine, before the device is looked for.
#include <algorithm>
#include <set>

#include "bench.hpp"
#include "catalog.hpp"
#include "check.hpp"
#include "errors.hpp"
#include "registry.hpp"

namespace bitgate {

std::vector<BenchItem> bench_selection(const BenchOptions& o) {
    validate_selection(CheckOptions{.families = o.families, .variants = o.variants});  // unknown names
    const std::string root = o.root.empty() ? default_root() : o.root;
    // Where CUDA is built a variant is timed only if it has a kernel; in a host-only build no
    // variant has one, and the selection is judged on the catalogs alone (the run then stops
    // for want of a GPU, after the names were checked).
    bool kernels = false;
    for (const FamilySpec* f : families())
        for (const VariantSpec& v : f->variants) kernels |= bool(v.launch);
    std::vector<BenchItem> items;
    std::set<std::string> hit_family, hit_variant;
    for (const FamilySpec* f : families()) {
        if (!selected(o.families, f->name)) continue;
        for (CatalogLine& l : read_family_catalog(*f, shapes_path(root, f->name))) {
            if (!l.bench) continue;
            BenchItem item{.line = std::move(l)};
            for (const VariantSpec& v : f->variants) {
                if (v.mutant || (kernels && !v.launch) || !selected(o.variants, v.name) ||
                    (!item.line.variants.empty() && !selected(item.line.variants, v.name)) ||
                    !shape_problem(*f, &v, item.line.shape).empty())
                    continue;
                item.variants.push_back(&v);
                hit_family.insert(f->name), hit_variant.insert(v.name);
            }
            if (!item.variants.empty()) items.push_back(std::move(item));
        }
    }
    const std::string sel = (o.families.empty() ? std::string() : " --family " + joined(o.families, ",")) +
                            (o.variants.empty() ? std::string() : " --variant " + joined(o.variants, ","));
    for (const auto& n : o.families)
        if (!hit_family.count(n))
            throw BadInput("bench" + sel + ": family " + n + " has no catalog line marked bench for the selected variants (" +
                           shapes_path(root, n) + ")");
    for (const auto& n : o.variants)
        if (!hit_variant.count(n))
            throw BadInput("bench" + sel + ": variant " + n + " has no kernel timed on a catalog line marked bench in the selected families");
    if (items.empty()) throw BadInput("bench" + sel + ": no catalog line marked bench in " + root + "/shapes");
    return items;
}

}  // namespace bitgate
