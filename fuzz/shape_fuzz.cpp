// Fuzz target: `--shape` strings. Input: "FAMILY\n" then the shape text. A shape the engine
// accepts is then run through every real variant's host model with generated inputs, under a
// 1 MiB case limit: a size the engine let through must be one the models handle.
#include <cstdlib>

#include "fuzz_input.hpp"
#include "host_run.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bitgate;
    static const bool limited = ::setenv("BITGATE_MAX_CASE_BYTES", "1048576", 1) == 0;
    (void)limited;
    std::string_view rest;
    const FamilySpec* f = fuzz::split_family(std::string_view(reinterpret_cast<const char*>(data), size), rest);
    if (!f) return 0;
    std::vector<std::string> words;  // split as `run` splits --shape: spaces and commas
    std::string cur;
    for (char c : rest) {
        if (c == ' ' || c == ',') { if (!cur.empty()) words.push_back(cur); cur.clear(); }
        else cur += c;
    }
    if (!cur.empty()) words.push_back(cur);
    Shape s;
    try {
        s = parse_shape(*f, words, "--shape");
    } catch (const BadInput&) {
        return 0;
    }
    const std::vector<Bytes> in = make_inputs(*f, s, 1, f->profiles.front());
    for (const VariantSpec* v : real_variants(*f))
        if (shape_problem(*f, v, s).empty()) {
            const ModelRun r = run_model(*f, *v, s, in, false);
            if (r.verdict != Verdict::ok) std::abort();  // a model wrote outside a buffer or into an input
        }
    return 0;
}
