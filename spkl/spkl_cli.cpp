// The `bitgate spkl` verbs: info, diff, kld, from-npy, to-npy, from-llama-kld, to-llama-kld, synth, bench.
#include <CLI/CLI.hpp>
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.hpp"
#include "errors.hpp"
#include "spkl.hpp"
#include "spkl_diff.hpp"
#include "llama_kld.hpp"
#include "npy.hpp"
#include "outfile.hpp"
#include "plot.hpp"
#include "progress.hpp"
#include "spkl_plot.hpp"

namespace bitgate {
namespace {

using namespace spkl;

// Through OutFile: a full disk is a one-line error (exit 2), never a silent success, and never
// over one of the files read. Strings the files carry are valid UTF-8 (the readers check), so
// dump() cannot throw on them; replace is a second line of defence.
void write_json(const std::string& path, const nlohmann::json& j, const std::vector<std::string>& inputs) {
    write_file(path, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", inputs);
}

// A threshold: a finite, non-negative number (NaN would never fire, so it is refused).
std::string finite_non_negative(const std::string& s) {
    try {
        size_t used = 0;
        const double v = std::stod(s, &used);
        if (used == s.size() && std::isfinite(v) && v >= 0) return {};
    } catch (const std::exception&) {
    }
    return "must be a finite number >= 0, got '" + s + "'";
}

// "%g" with enough digits to tell two doubles apart.
std::string g17(double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

// ---- info ---------------------------------------------------------------------------------------

struct InfoArgs {
    std::vector<std::string> files;
    bool md5 = false;
    std::string json;
};

int run_info(const InfoArgs& a) {
    refuse_outputs({{"--json", a.json}}, a.files);  // before anything is printed
    nlohmann::json all = nlohmann::json::array();
    std::string first_bad;
    for (const std::string& path : a.files) {
        const FileCheck c = check_file(path, a.md5);
        const Header& h = c.header;
        if (!c.md5.empty()) std::printf("%s  %s\n", c.md5.c_str(), path.c_str());
        std::printf("file         : %s\n", path.c_str());
        std::printf("version      : %u\n", h.version);
        std::printf("dtype        : %s\n", dtype_name(h.dtype));
        std::printf("rows         : %llu\n", static_cast<unsigned long long>(h.rows));
        std::printf("vocab        : %u\n", h.vocab);
        std::printf("model        : \"%s\"\n", h.model.c_str());
        std::printf("token ids    : %s\n", h.has_tokens() ? "yes" : "no");
        std::printf("target ids   : %s\n", h.has_targets() ? "yes" : "no");
        std::printf("bytes        : %llu (logits at %llu)\n", static_cast<unsigned long long>(c.file_size),
                    static_cast<unsigned long long>(h.logits_offset()));
        if (c.digest_ok)
            std::printf("digest       : ok (xxh3-128 %s)\n", c.digest_stored.c_str());
        else
            std::printf("digest       : MISMATCH (stored %s, contents hash to %s)\n", c.digest_stored.c_str(),
                        c.digest_computed.c_str());
        if (a.files.size() > 1) std::printf("\n");
        nlohmann::json j = {{"path", path}, {"version", h.version}, {"dtype", dtype_name(h.dtype)},
                            {"rows", h.rows}, {"vocab", h.vocab}, {"model", h.model},
                            {"token_ids", h.has_tokens()}, {"target_ids", h.has_targets()},
                            {"bytes", c.file_size}, {"digest", c.digest_stored},
                            {"digest_computed", c.digest_computed}, {"digest_ok", c.digest_ok}};
        if (!c.md5.empty()) j["md5"] = c.md5;
        all.push_back(j);
        if (!c.digest_ok && first_bad.empty())
            first_bad = path + ": digest mismatch: stored xxh3 " + c.digest_stored + ", contents hash to " +
                        c.digest_computed;
    }
    if (!a.json.empty()) write_json(a.json, all.size() == 1 ? all[0] : all, a.files);
    std::fflush(stdout);
    if (!first_bad.empty()) throw BadInput(first_bad);
    return 0;
}

// ---- diff / kld ---------------------------------------------------------------------------------

struct DiffArgs {
    std::string a, b, json, plot;
    unsigned threads = 0;
    bool require_identical = false;
    double max_mean_kld = -1;  // < 0: not given
};

int run_diff(const DiffArgs& a, bool md5) {
    refuse_outputs({{"--json", a.json}, {"--plot", a.plot}}, {a.a, a.b});  // before the run
    if (!a.plot.empty()) {  // before the files are read, not after
        plot::require_gnuplot("--plot");
        plot::require_writable("--plot", a.plot);
    }
    DiffOptions opt;
    opt.threads = a.threads;
    opt.md5 = md5;
    Progress progress("rows");
    if (progress.on()) opt.progress = [&progress](uint64_t done, uint64_t total) { progress(done, total); };
    const DiffResult r = diff(a.a, a.b, opt);
    progress.clear();
    print_text(r, stdout);
    int rc = 0;
    std::vector<std::string> failed;
    if (a.require_identical && !r.files_identical) failed.push_back("the files are not identical (--require-identical)");
    if (a.max_mean_kld >= 0) {
        if (r.finite_rows != r.rows)
            failed.push_back("rows with NaN or infinite logits (--max-mean-kld)");
        else if (!(r.kld_mean <= a.max_mean_kld))
            failed.push_back("mean KLD " + g17(r.kld_mean) + " exceeds --max-mean-kld " + g17(a.max_mean_kld));
    }
    std::printf("\n");
    for (const std::string& f : failed) std::printf("FAIL: %s\n", f.c_str());
    if (!failed.empty()) rc = 1;
    if (!a.json.empty()) {
        nlohmann::json j = to_json(r);
        j["failed"] = failed;
        write_json(a.json, j, {a.a, a.b});
    }
    if (!a.plot.empty()) plot_diff(r, a.plot);
    std::fflush(stdout);
    return rc;
}

// ---- from-npy / to-npy --------------------------------------------------------------------------

struct FromNpyArgs {
    std::string in, out, model, dtype, tokens, targets;
};

int run_from_npy(const FromNpyArgs& a) {
    npy::Reader r(a.in);
    const npy::Header& arr = r.header();
    if (arr.dtype != "<f4" && arr.dtype != "<f2")
        throw BadInput(a.in + ": logits must be '<f4' or '<f2', the array is '" + arr.dtype + "'");
    if (arr.shape.size() != 2 || arr.shape[1] == 0 || arr.shape[1] > 0xffffffff)
        throw BadInput(a.in + ": logits must be a 2-D array (rows, vocab) with 0 < vocab < 2^32, the array is " +
                       npy::shape_str(arr.shape));
    Header h;
    h.rows = uint64_t(arr.shape[0]);
    h.vocab = static_cast<uint32_t>(arr.shape[1]);
    h.model = a.model;
    const Dtype in = arr.dtype == "<f4" ? Dtype::f32 : Dtype::f16;
    h.dtype = a.dtype.empty() ? in : parse_dtype(a.dtype);
    std::vector<uint32_t> tokens, targets;
    std::vector<std::string> inputs = {a.in};
    if (!a.tokens.empty()) tokens = npy::read_ids(a.tokens, h.rows, false), inputs.push_back(a.tokens);
    if (!a.targets.empty()) targets = npy::read_ids(a.targets, h.rows, true), inputs.push_back(a.targets);
    Writer w(a.out, h, tokens, targets, inputs, a.targets);
    // A row at a time; nothing for an array of no rows, whatever vocabulary its shape names.
    std::vector<uint8_t> raw(h.rows ? size_t(h.vocab) * dtype_size(in) : 0);
    std::vector<float> f32(h.rows && in != h.dtype ? h.vocab : 0);
    for (uint64_t row = 0; row < h.rows; ++row) {
        r.read(raw.data(), raw.size());
        if (in == h.dtype) {
            w.write_row_raw(raw.data());
        } else {
            to_f32(in, raw.data(), f32.data(), h.vocab);
            w.write_row(f32.data());
        }
    }
    w.finish();
    std::printf("%s: %llu rows x %u vocab, %s\n", a.out.c_str(), static_cast<unsigned long long>(h.rows), h.vocab,
                dtype_name(h.dtype));
    return 0;
}

struct ToNpyArgs {
    std::string in, out, dtype, tokens, targets;
};

int run_to_npy(const ToNpyArgs& a) {
    refuse_outputs({{"the output", a.out}, {"--tokens", a.tokens}, {"--targets", a.targets}}, {a.in});
    Reader r(a.in);
    const Header& h = r.header();
    // f32 stays f32 and f16 stays f16; bf16 (no NumPy dtype) becomes f32, exactly.
    Dtype out = h.dtype == Dtype::f16 ? Dtype::f16 : Dtype::f32;
    if (!a.dtype.empty()) {
        out = parse_dtype(a.dtype);
        if (out == Dtype::bf16) throw BadInput("--dtype bf16: NumPy has no bf16; use f32 or f16");
        if (out == Dtype::f16 && h.dtype != Dtype::f16)
            throw BadInput("--dtype f16: " + a.in + " holds " + dtype_name(h.dtype) + ", which f16 cannot hold exactly");
    }
    if (!a.tokens.empty() && !h.has_tokens()) throw BadInput(a.in + ": has no token ids (--tokens)");
    if (!a.targets.empty() && !h.has_targets()) throw BadInput(a.in + ": has no target ids (--targets)");
    const std::vector<std::string> inputs = {a.in};
    npy::Writer w(a.out, {int64_t(h.rows), int64_t(h.vocab)}, out == Dtype::f32 ? "<f4" : "<f2", inputs);
    // Large reads (4 MiB of logits at a time, across row boundaries), converted element by element.
    const size_t in_w = dtype_size(h.dtype);
    std::vector<uint8_t> raw(size_t{4} << 20);
    std::vector<float> f32(raw.size() / in_w);
    while (size_t n = r.read_logits(raw.data(), raw.size())) {
        if (h.dtype == out) {
            w.write(raw.data(), n);
        } else {
            to_f32(h.dtype, raw.data(), f32.data(), n / in_w);
            w.write(f32.data(), n / in_w * 4);
        }
    }
    r.finish();  // the digest is checked before the output is kept
    if (!a.tokens.empty()) npy::write_ids(a.tokens, r.token_ids(), false, inputs);
    if (!a.targets.empty()) npy::write_ids(a.targets, r.target_ids(), true, inputs);
    w.finish();
    std::printf("%s: (%llu, %u) %s\n", a.out.c_str(), static_cast<unsigned long long>(h.rows), h.vocab,
                out == Dtype::f32 ? "<f4" : "<f2");
    return 0;
}

// ---- llama.cpp KLD files ---------------------------------------------------------------------------

struct LlamaArgs {
    std::string in, out, model, tokens;
    int32_t n_ctx = 0;
};

int run_from_llama(const LlamaArgs& a) {
    const llama::KldHeader h = llama::to_spkl(a.in, a.out, a.model, a.tokens);
    std::printf("%s: %lld rows x %d vocab, f32 log-probabilities (n_ctx %d, %d chunks)\n", a.out.c_str(),
                static_cast<long long>(h.rows()), h.n_vocab, h.n_ctx, h.n_chunk);
    return 0;
}

int run_to_llama(const LlamaArgs& a) {
    llama::from_spkl(a.in, a.out, a.n_ctx, a.tokens);
    std::printf("%s: llama.cpp KLD file, n_ctx %d\n", a.out.c_str(), a.n_ctx);
    return 0;
}

// ---- synth: deterministic synthetic logits (benchmarks, examples) ---------------------------------

struct SynthArgs {
    std::string out, model = "synthetic", dtype = "f32";
    int64_t vocab = 0, rows = 0;  // signed: "-1" is refused, not read as 2^64 - 1
    uint64_t seed = 1, noise_seed = 2;
    double noise = 0;
    bool targets = false;
};

constexpr uint64_t kMaxSynthBytes = uint64_t{1} << 40;

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
// Uniform in [0, 1) from 24 bits of a hash: exact in float, no libm.
float unit_hi(uint64_t h) { return static_cast<float>(h >> 40) * (1.0f / 16777216.0f); }
float unit_lo(uint64_t h) { return static_cast<float>((h >> 16) & 0xffffff) * (1.0f / 16777216.0f); }

int run_synth(const SynthArgs& a) {
    if (a.vocab <= 0 || a.rows <= 0) throw BadInput("spkl synth: --vocab and --rows must be positive");
    // Bounded so that every logit stays finite in each dtype (|x| <= 18 + noise; f16 ends at 65504).
    if (!(a.noise >= 0 && a.noise <= 1000))
        throw BadInput("spkl synth: --noise " + std::to_string(a.noise) + ": expected an amplitude from 0 to 1000");
    if (a.vocab > 0xfffffffe) throw BadInput("spkl synth: --vocab " + std::to_string(a.vocab) + " does not fit the format (< 2^32)");
    Header h;
    h.vocab = static_cast<uint32_t>(a.vocab);
    h.rows = static_cast<uint64_t>(a.rows);
    h.dtype = parse_dtype(a.dtype);
    if (double(h.rows) * double(h.row_bytes()) > double(kMaxSynthBytes))
        throw BadInput("spkl synth: " + std::to_string(a.rows) + " rows x " + std::to_string(a.vocab) +
                       " vocab is more than the 1 TiB synth writes");
    h.model = a.model;
    h.flags = a.targets ? kFlagTargets : 0;
    std::vector<uint32_t> targets;
    if (a.targets)
        for (uint64_t r = 0; r < h.rows; ++r) targets.push_back(static_cast<uint32_t>(mix(a.seed ^ (r << 20)) % h.vocab));
    Writer w(a.out, h, {}, targets);
    std::vector<float> row(h.vocab);
    const float noise = static_cast<float>(a.noise);
    for (uint64_t r = 0; r < h.rows; ++r) {
        for (uint32_t i = 0; i < h.vocab; ++i) {
            // Roughly normal logits (sum of two uniforms), scale 6, plus a few peaked tokens per row.
            const uint64_t k = mix(a.seed * 0x100000001b3ull ^ (r * h.vocab + i));
            float x = (unit_hi(k) + unit_lo(k) - 1.0f) * 6.0f;
            if ((k & 0x3fff) == 0) x += 12.0f;
            if (noise != 0.0f) {
                const uint64_t m = mix(a.noise_seed * 0x100000001b3ull ^ (r * h.vocab + i));
                x += (unit_hi(m) - 0.5f) * 2.0f * noise;
            }
            row[i] = x;
        }
        w.write_row(row.data());
    }
    w.finish();
    std::printf("%s: %llu rows x %u vocab, %s, %llu bytes\n", a.out.c_str(), static_cast<unsigned long long>(h.rows),
                h.vocab, a.dtype.c_str(), static_cast<unsigned long long>(h.file_size()));
    return 0;
}

// ---- bench: throughput of diff on two files already on disk -----------------------------------------

struct BenchArgs {
    std::string a, b;
    unsigned threads = 0;
    int repeat = 3;
    bool no_md5 = false;
};

int run_bench(const BenchArgs& a) {
    DiffOptions opt;
    opt.threads = a.threads;
    opt.md5 = !a.no_md5;
    std::vector<DiffResult> runs;
    for (int i = 0; i < a.repeat; ++i) {
        DiffResult r = diff(a.a, a.b, opt);
        const double pair = static_cast<double>(r.size_a + r.size_b);
        std::printf("run %d: %.3f s, %u threads, %.0f MB/s of logits read (both files), %.0f MB/s per file, mean KLD %.18g\n",
                    i + 1, r.seconds, r.threads, pair / r.seconds / 1e6, pair / 2 / r.seconds / 1e6, r.kld_mean);
        r.per_row.shrink_to_fit();
        runs.push_back(std::move(r));
    }
    bool same = true;
    for (const DiffResult& r : runs) {
        same = same && std::bit_cast<uint64_t>(r.kld_mean) == std::bit_cast<uint64_t>(runs[0].kld_mean) &&
               r.md5_a == runs[0].md5_a && r.md5_b == runs[0].md5_b;
        for (size_t i = 0; same && i < r.per_row.size(); ++i)
            same = std::bit_cast<uint64_t>(r.per_row[i].kld) == std::bit_cast<uint64_t>(runs[0].per_row[i].kld) ||
                   (std::isnan(r.per_row[i].kld) && std::isnan(runs[0].per_row[i].kld));
    }
    std::printf("same bits on every run: %s\n", same ? "yes" : "NO");
    std::fflush(stdout);
    return same ? 0 : 1;
}

}  // namespace

void add_spkl_verbs(CLI::App& app, int& rc) {
    CLI::App* spkl = app.add_subcommand("spkl", "Logits files (.spkl): info, md5 and KL-divergence comparison");
    spkl->require_subcommand(1);

    auto info = std::make_shared<InfoArgs>();
    CLI::App* c = spkl->add_subcommand("info", "Header, rows, vocabulary and whether the digest holds");
    c->add_option("files", info->files, ".spkl files")->required();
    c->add_flag("--md5", info->md5, "Also print each file's md5, as md5sum does");
    c->add_option("--json", info->json, "Write the same as JSON to this file");
    c->callback([info, &rc] { rc = run_info(*info); });

    auto add_diff = [&](const char* name, const char* what, bool md5) {
        auto d = std::make_shared<DiffArgs>();
        CLI::App* s = spkl->add_subcommand(name, what);
        s->add_option("A", d->a, "reference .spkl or llama.cpp KLD file (the P of KL(P||Q))")->required();
        s->add_option("B", d->b, "candidate .spkl or llama.cpp KLD file")->required();
        s->add_option("--json", d->json, "Write everything, per-row values included, as JSON to this file");
        s->add_option("--plot", d->plot, "Draw KLD per position and the KLD histogram as SVG to this file (needs gnuplot)");
        s->add_option("--threads", d->threads, "Worker threads (default: all cores, at most 256); results do not depend on it")
            ->check(CLI::Range(0u, 4096u));
        if (md5) s->add_flag("--require-identical", d->require_identical, "Exit 1 unless the files are byte-identical");
        s->add_option("--max-mean-kld", d->max_mean_kld, "Exit 1 if the mean KLD exceeds this (or a row is NaN/inf)")
            ->check(CLI::Validator(finite_non_negative, "FINITE>=0"));
        s->callback([d, md5, &rc] { rc = run_diff(*d, md5); });
    };
    add_diff("diff", "md5 of both files, byte identity, top-1 agreement, KL(A||B) statistics, perplexity", true);
    add_diff("kld", "As diff without the md5s (faster): top-1 agreement and KL(A||B) statistics", false);

    auto fn = std::make_shared<FromNpyArgs>();
    c = spkl->add_subcommand("from-npy", "Convert a rows x vocab .npy (<f4 or <f2, C order) to .spkl");
    c->add_option("npy", fn->in, "input .npy")->required();
    c->add_option("out", fn->out, "output .spkl")->required();
    c->add_option("--model", fn->model, "Model identifier to record");
    c->add_option("--dtype", fn->dtype, "Stored dtype: f32, f16 or bf16 (default: the array's)");
    c->add_option("--tokens", fn->tokens, "1-D integer .npy of input token ids, one per row");
    c->add_option("--targets", fn->targets, "1-D integer .npy of target ids, one per row (-1: none)");
    c->callback([fn, &rc] { rc = run_from_npy(*fn); });

    auto tn = std::make_shared<ToNpyArgs>();
    c = spkl->add_subcommand("to-npy", "Convert a .spkl to a rows x vocab .npy (f32, or f16 for f16 files)");
    c->add_option("spkl", tn->in, "input .spkl")->required();
    c->add_option("out", tn->out, "output .npy")->required();
    c->add_option("--dtype", tn->dtype, "f32 or f16 (f16 only for f16 files)");
    c->add_option("--tokens", tn->tokens, "Also write the token ids to this .npy (<i8)");
    c->add_option("--targets", tn->targets, "Also write the target ids to this .npy (<i8, -1: none)");
    c->callback([tn, &rc] { rc = run_to_npy(*tn); });

    auto fl = std::make_shared<LlamaArgs>();
    c = spkl->add_subcommand("from-llama-kld", "Convert a llama-perplexity --kl-divergence-base file to .spkl (log-probs)");
    c->add_option("kld", fl->in, "input llama.cpp KLD file")->required();
    c->add_option("out", fl->out, "output .spkl")->required();
    c->add_option("--model", fl->model, "Model identifier to record");
    c->add_option("--tokens", fl->tokens, "Also write the whole token stream (n_chunk x n_ctx ids) to this .npy");
    c->callback([fl, &rc] { rc = run_from_llama(*fl); });

    auto tl = std::make_shared<LlamaArgs>();
    c = spkl->add_subcommand("to-llama-kld", "Convert a .spkl to a llama-perplexity --kl-divergence-base file (16-bit, lossy)");
    c->add_option("spkl", tl->in, "input .spkl (rows: the scored positions of every chunk, in order)")->required();
    c->add_option("out", tl->out, "output llama.cpp KLD file")->required();
    c->add_option("--n-ctx", tl->n_ctx, "Context length of the llama.cpp run")->required()->check(CLI::Range(2, 1 << 30));
    c->add_option("--tokens", tl->tokens, "The whole token stream (.npy, n_chunk x n_ctx ids)")->required();
    c->callback([tl, &rc] { rc = run_to_llama(*tl); });

    auto sy = std::make_shared<SynthArgs>();
    c = spkl->add_subcommand("synth", "Write deterministic synthetic logits (for benchmarks and examples)");
    c->add_option("out", sy->out, "output .spkl")->required();
    c->add_option("--vocab", sy->vocab, "Vocabulary size")->required();
    c->add_option("--rows", sy->rows, "Rows")->required();
    c->add_option("--seed", sy->seed, "Seed of the logits");
    c->add_option("--noise", sy->noise, "Add uniform noise of this amplitude (a second, 'quantized' file)");
    c->add_option("--noise-seed", sy->noise_seed, "Seed of the noise");
    c->add_option("--dtype", sy->dtype, "f32, f16 or bf16");
    c->add_option("--model", sy->model, "Model identifier to record");
    c->add_flag("--targets", sy->targets, "Record pseudo-random target ids");
    c->callback([sy, &rc] { rc = run_synth(*sy); });

    auto be = std::make_shared<BenchArgs>();
    c = spkl->add_subcommand("bench", "Time `spkl diff` on two files and check every run gives the same bits");
    c->add_option("A", be->a, "reference .spkl")->required();
    c->add_option("B", be->b, "candidate .spkl")->required();
    c->add_option("--threads", be->threads, "Worker threads (default: all cores, at most 256)")->check(CLI::Range(0u, 4096u));
    c->add_option("--repeat", be->repeat, "Runs")->check(CLI::PositiveNumber);
    c->add_flag("--no-md5", be->no_md5, "Time the KLD alone");
    c->callback([be, &rc] { rc = run_bench(*be); });
}

}  // namespace bitgate
