// Fuzz target: any bytes as the JSON `bench plot` draws (what `bitgate bench --json` wrote). It must
// give a picture and its gnuplot script, or BadInput; a crash, a sanitizer report or a JSON library
// exception (which the CLI would report as an internal error, exit 4) is a finding. The script must
// also keep every string literal closed on its line: names come from the file, and an unbalanced
// quote would let a file's text run as gnuplot commands.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "bench_plot.hpp"
#include "errors.hpp"

namespace {

void draw(const nlohmann::json& j, const bitgate::BenchPlotOptions& o) {
    try {
        const std::string script = bitgate::bench_gnuplot(bitgate::bench_picture(j, "bench.json", o));
        size_t quotes = 0;
        for (char c : script) {
            if (c == '\'') ++quotes;
            if (c == '\n' && quotes % 2 != 0) std::abort();  // a literal left open at the end of a line
        }
        if (quotes % 2 != 0) std::abort();
    } catch (const bitgate::BadInput&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(data, data + size);
    } catch (const nlohmann::json::exception&) {
        return 0;  // `bench plot` reports this as "not JSON" (a syntax error, a number out of range)
    }
    draw(j, {});
    draw(j, {.compute_peaks = {"mmq_q8_0=1979"}});  // the compute-peak path
    return 0;
}
