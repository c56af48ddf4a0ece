// `bitgate model run | ab | predict | paths | bench`: the forward pass from the command line.
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "cli_model.hpp"
#include "device.hpp"
#include "errors.hpp"
#include "forward.hpp"
#include "outfile.hpp"
#include "spkl.hpp"
#include "spkl_diff.hpp"

namespace bitgate::model {

namespace {

struct Source {
    std::string file, synthetic;
    uint64_t seed = 1;
    std::string describe() const {
        return file.empty() ? "synthetic " + synthetic + " (seed " + std::to_string(seed) + ")" : file;
    }
    // The hyperparameters, checked for the forward, without making a preset's weights (the 7B
    // preset takes about 40 s and 8 GB): so that arguments and the GPU are judged first. A file
    // is loaded here (memory-mapped, validated) and kept for load().
    const Hparams& hparams() const {
        if (!hp) {
            if (file.empty() == synthetic.empty()) throw BadInput("give a GGUF file or --synthetic PRESET (one of them)");
            if (file.empty()) {
                hp = preset(synthetic);
            } else {
                mapped = std::make_shared<Model>(load_gguf(file));
                hp = mapped->hp;
            }
            check_hparams(*hp, describe());  // before anything is printed or sized from the model
        }
        return *hp;
    }
    Model load() const {
        hparams();
        return mapped ? *mapped : synth(synthetic, seed);
    }

private:
    mutable std::optional<Hparams> hp;
    mutable std::shared_ptr<const Model> mapped;
};

struct RunArgs {
    Source src;
    int64_t prompt = 16, decode = 0;
    std::string tokens, path = "fast", out, expect_md5, a = "baseline", b = "fast", out_a, out_b,
        host_path = "fastest";
    bool device = false, host = false;
    int sm_count = 0;
    uint64_t token_seed = 7;
};

void add_source(CLI::App* c, RunArgs& a) {
    c->add_option("gguf", a.src.file, "GGUF model file");
    c->add_option("--synthetic", a.src.synthetic, "In-memory preset instead of a file: tiny, qwen2-0.5b, qwen2-7b");
    c->add_option("--seed", a.src.seed, "Seed of the synthetic weights (default 1)");
}

void add_run_options(CLI::App* c, RunArgs& a, bool with_place) {
    add_source(c, a);
    c->add_option("--prompt", a.prompt, "Prompt tokens, one prefill (default 16)");
    c->add_option("--decode", a.decode, "Tokens decoded one at a time after the prompt (default 0)");
    c->add_option("--tokens", a.tokens, "A file of token ids (whitespace-separated text); default: from --token-seed");
    c->add_option("--token-seed", a.token_seed, "Seed of the default tokens (default 7)");
    c->add_option("--host-path", a.host_path,
                  "Host runs: fastest, scalar, avx2 or avx512_vnni (the host models' instructions; same bytes)");
    if (with_place) {
        c->add_flag("--device", a.device, "Run on the GPU (the default when one is usable)");
        c->add_flag("--host", a.host, "Run the host models");
        c->add_option("--sm-count", a.sm_count, "Device: dispatch as if the card had this many SMs");
    }
}

// --host-path: a name host_path.hpp knows, and a path this CPU has.
ref::HostPath host_path_option(const RunArgs& a) {
    ref::HostPath p;
    if (!ref::host_path_from_name(a.host_path, p))
        throw BadInput("--host-path '" + a.host_path + "': unknown (fastest, scalar, avx2, avx512_vnni)");
    if (!ref::host_path_available(p)) throw BadInput("--host-path " + a.host_path + ": this CPU does not have it");
    return p;
}

// The arguments a run needs checked before anything is sized from them (the KV caches, the token
// stream): bad ones are one line and exit 2, not an allocation that fails.
void check_run_args(const RunArgs& a, const Hparams& hp) {
    if (a.prompt < 1) throw BadInput("--prompt " + std::to_string(a.prompt) + ": must be at least 1");
    if (a.decode < 0) throw BadInput("--decode " + std::to_string(a.decode) + ": must not be negative");
    if (a.decode > hp.n_ctx - a.prompt)  // no overflow: n_ctx and prompt are both positive
        throw BadInput("--prompt " + std::to_string(a.prompt) + " + --decode " + std::to_string(a.decode) +
                       " exceeds the model's context " + std::to_string(hp.n_ctx));
    if (a.decode > kMaxPositions - a.prompt)
        throw BadInput("--prompt " + std::to_string(a.prompt) + " + --decode " + std::to_string(a.decode) + " exceeds the " +
                       std::to_string(kMaxPositions) + " positions rope's table is proven for (docs/rope.md)");
    if (a.sm_count < 0) throw BadInput("--sm-count " + std::to_string(a.sm_count) + ": must be positive (0: the card's own)");
    (void)host_path_option(a);
}

// --expect-md5 as md5sum spells it: 32 hex digits (either case), kept in lower case.
std::string md5_option(const std::string& s) {
    std::string out = s;
    bool ok = s.size() == 32;
    for (char& c : out) {
        ok = ok && std::isxdigit(static_cast<unsigned char>(c));
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    if (!s.empty() && !ok) throw BadInput("--expect-md5 '" + s + "': not an md5 (32 hex digits)");
    return out;
}

// The run's tokens: from --tokens (checked here, so that its errors name the file) or seeded.
std::vector<int32_t> tokens_for(const RunArgs& a, const Hparams& hp) {
    if (a.tokens.empty()) return seeded_tokens(a.prompt + a.decode + 1, hp.n_vocab, a.token_seed);
    const std::vector<int32_t> t = read_tokens(a.tokens);
    const int64_t need = a.prompt + a.decode;
    if (int64_t(t.size()) < need)
        throw BadInput(a.tokens + ": " + std::to_string(t.size()) + " ids, --prompt + --decode need " + std::to_string(need));
    for (size_t i = 0; i < t.size(); ++i)
        if (t[i] >= hp.n_vocab)
            throw BadInput(a.tokens + ": token " + std::to_string(i) + ": id " + std::to_string(t[i]) + " is outside [0, " +
                           std::to_string(hp.n_vocab) + ")");
    return t;
}

bool on_device(const RunArgs& a) {
    if (a.device && a.host) throw BadInput("--device and --host exclude each other");
    if (a.host) return false;
    if (a.device) return true;
    return gpu_missing().empty();
}

std::unique_ptr<Runner> runner_for(const Model& m, const RunArgs& a, const std::string& path, bool device) {
    const int64_t ctx = a.prompt + a.decode;
    if (device) {
        if (!path_info(path).device) throw BadInput("path " + path + " runs on the host only");
        return make_device_runner(m, path, ctx, DeviceOptions{a.sm_count});
    }
    HostOptions opt;
    opt.host_path = host_path_option(a);
    return make_host_runner(m, path, ctx, opt);
}

// The files a run reads: an output must never replace one of them.
std::vector<std::string> run_inputs(const RunArgs& a) {
    std::vector<std::string> in;
    for (const std::string& f : {a.src.file, a.tokens})
        if (!f.empty()) in.push_back(f);
    return in;
}

void write_spkl(const SequenceResult& s, const std::string& out, const std::string& id, const std::vector<std::string>& inputs) {
    spkl::Header h;
    h.dtype = spkl::Dtype::f32;
    h.flags = spkl::kFlagTokens | spkl::kFlagTargets;
    h.vocab = uint32_t(s.vocab);
    h.rows = uint64_t(s.rows);
    h.model = id;
    spkl::Writer w(out, h, s.tokens, s.targets, inputs);
    for (int64_t r = 0; r < s.rows; ++r) w.write_row(s.logits.data() + r * s.vocab);
    w.finish();
}

// Launches per family of one graph.
std::string by_family(const Graph& g) {
    std::map<std::string, int> c;
    for (const Step& s : g.steps) c[s.family] += s.launches;
    std::string out;
    for (auto& [f, n] : c) out += (out.empty() ? "" : ", ") + f + " " + std::to_string(n);
    return out;
}

// Prints the launch accounting of each distinct call shape; false when a count disagrees.
bool report_launches(const Model& m, const std::string& path, const SequenceResult& s, std::FILE* o) {
    bool ok = true;
    int last_decode_predicted = -1;
    for (size_t i = 0; i < s.calls.size(); ++i) {
        const CallStat& c = s.calls[i];
        const bool mismatch = c.graph_steps != c.predicted || (c.measured >= 0 && c.measured != c.predicted);
        ok = ok && !mismatch;
        const bool first_decode = c.mode == Mode::decode && (i == 1 || c.predicted != last_decode_predicted);
        if (c.mode == Mode::decode) last_decode_predicted = c.predicted;
        if (c.mode != Mode::prefill && !first_decode && !mismatch) continue;
        const LaunchFormula f = predict_launches(m.hp, path, c.mode, c.n, c.pos);
        const Graph g = build_graph(m.hp, path, c.mode, c.n, c.pos, s.rows);
        std::fprintf(o, "launches %s n=%lld pos=%lld: predicted %s\n", c.mode == Mode::prefill ? "prefill" : "decode",
                     (long long)c.n, (long long)c.pos, f.str().c_str());
        std::fprintf(o, "  graph description %d", c.graph_steps);
        if (c.measured >= 0) std::fprintf(o, ", measured kernel nodes %d", c.measured);
        std::fprintf(o, "%s\n", mismatch ? "  MISMATCH" : "");
        if (mismatch)
            std::fprintf(o, "  residual: graph - predicted = %d%s\n", c.graph_steps - c.predicted,
                         c.measured >= 0 ? (", measured - predicted = " + std::to_string(c.measured - c.predicted)).c_str()
                                         : "");
        std::fprintf(o, "  by family: %s\n", by_family(g).c_str());
    }
    return ok;
}

struct Ran {
    SequenceResult s;
    std::string md5, where;
    bool launches_ok = true;
};

Ran run_one(const Model& m, const RunArgs& a, std::span<const int32_t> toks, const std::string& path, bool device,
            std::FILE* o) {
    path_info(path);
    auto r = runner_for(m, a, path, device);
    Ran out;
    out.where = r->where();
    out.s = run_sequence(m, *r, path, toks, a.prompt, a.decode);
    out.md5 = logits_md5(out.s);
    std::fprintf(o, "path %s on %s%s\n", path.c_str(), out.where.c_str(),
                 a.sm_count ? (" as if " + std::to_string(a.sm_count) + " SMs").c_str() : "");
    out.launches_ok = report_launches(m, path, out.s, o);
    const double pt = out.s.prefill_seconds, dt = out.s.decode_seconds;
    std::fprintf(o, "tokens/s: prefill %.1f (%lld tokens, %.3f s)", pt > 0 ? double(a.prompt) / pt : 0.0,
                 (long long)a.prompt, pt);
    if (a.decode > 0) std::fprintf(o, ", decode %.1f (%lld tokens, %.3f s)", double(a.decode) / dt, (long long)a.decode, dt);
    std::fprintf(o, "%s\n", device ? "  (each call includes capture and instantiation)" : "");
    return out;
}

void print_model(const Model& m, const Source& src) {
    const Hparams& h = m.hp;
    std::printf("model %s: %s, %lld layers, n_embd %lld, n_ff %lld, heads %lld/%lld, vocab %lld%s\n",
                src.describe().c_str(), h.arch.c_str(), (long long)h.n_layer, (long long)h.n_embd, (long long)h.n_ff,
                (long long)h.n_head, (long long)h.n_head_kv, (long long)h.n_vocab, h.tied ? ", tied" : "");
}

int cmd_run(const RunArgs& a, bool predict) {
    const std::string expect_md5 = md5_option(a.expect_md5);
    refuse_outputs({{"--out", a.out}}, run_inputs(a));
    path_info(a.path);  // a bad name or flag is one line, before the model is loaded or described
    const bool device = predict ? false : on_device(a);
    check_run_args(a, a.src.hparams());
    const std::vector<int32_t> toks = tokens_for(a, a.src.hparams());
    if (device) require_gpu();
    const Model m = a.src.load();
    print_model(m, a.src);
    Ran r = run_one(m, a, toks, a.path, device, stdout);
    if (!a.out.empty()) {
        write_spkl(r.s, a.out, "bitgate " + a.src.describe() + " path " + a.path + " on " + r.where, run_inputs(a));
        std::printf("logits: %lld rows x %lld -> %s\n", (long long)r.s.rows, (long long)r.s.vocab, a.out.c_str());
    }
    std::printf("%s  logits (%lld rows x %lld f32)%s\n", r.md5.c_str(), (long long)r.s.rows, (long long)r.s.vocab,
                predict ? ": the md5 a device run must print" : "");
    int rc = exit_ok;
    if (!r.launches_ok) {
        std::printf("FAIL: launch count differs from the prediction\n");
        rc = exit_failed;
    }
    if (!expect_md5.empty() && expect_md5 != r.md5) {
        std::printf("FAIL: md5 %s, expected %s\n", r.md5.c_str(), expect_md5.c_str());
        rc = exit_failed;
    }
    return rc;
}

bool is_claim_pair(const std::string& x, const std::string& y) { return x != "reference" && y != "reference"; }

int cmd_ab(const RunArgs& a) {
    // One file for both would hold only the second run, and the comparison would read it twice.
    refuse_outputs({{"--out-a", a.out_a}, {"--out-b", a.out_b}}, run_inputs(a));
    const bool dev_a = path_info(a.a).device, dev_b = path_info(a.b).device;
    const bool device = on_device(a);
    check_run_args(a, a.src.hparams());
    const std::vector<int32_t> toks = tokens_for(a, a.src.hparams());
    if (device && (dev_a || dev_b)) require_gpu();  // exit 3 before the weights are made
    const Model m = a.src.load();
    print_model(m, a.src);
    const auto tmp = std::filesystem::temp_directory_path();
    const std::string stem = "bitgate-ab-" + std::to_string(::getpid());
    const std::string fa = a.out_a.empty() ? (tmp / (stem + "-a.spkl")).string() : a.out_a;
    const std::string fb = a.out_b.empty() ? (tmp / (stem + "-b.spkl")).string() : a.out_b;
    // A host-only path (reference) runs on the host whatever the other one does.
    Ran ra = run_one(m, a, toks, a.a, dev_a && device, stdout);
    Ran rb = run_one(m, a, toks, a.b, dev_b && device, stdout);
    write_spkl(ra.s, fa, "bitgate path " + a.a, run_inputs(a));
    write_spkl(rb.s, fb, "bitgate path " + a.b, run_inputs(a));
    spkl::DiffOptions opt;
    const spkl::DiffResult d = spkl::diff(fa, fb, opt);
    std::printf("%s  %s (path %s)\n%s  %s (path %s)\n", ra.md5.c_str(), fa.c_str(), a.a.c_str(), rb.md5.c_str(),
                fb.c_str(), a.b.c_str());
    const bool same = ra.s.logits.size() == rb.s.logits.size() &&
                      std::memcmp(ra.s.logits.data(), rb.s.logits.data(), ra.s.logits.size() * 4) == 0;
    if (same) {
        std::printf("cmp: logits identical (%lld rows x %lld)\n", (long long)ra.s.rows, (long long)ra.s.vocab);
    } else {
        std::printf("cmp: logits differ in %llu of %llu rows; first at row %lld vocab id %u (%a vs %a)\n",
                    (unsigned long long)d.rows_differ, (unsigned long long)d.rows, (long long)d.first_diff_row,
                    d.first_diff_id, double(d.first_diff_a), double(d.first_diff_b));
    }
    std::printf("top-1 agreement %.6f, mean KLD %.6g (se %.3g), max KLD %.6g\n", d.top1, d.kld_mean, d.kld_se, d.kld.max);
    // Launch delta of the first call (the prefill), measured where measured, else described.
    const CallStat &ca = ra.s.calls.front(), &cb = rb.s.calls.front();
    const int ma = ca.measured >= 0 ? ca.measured : ca.graph_steps, mb = cb.measured >= 0 ? cb.measured : cb.graph_steps;
    std::printf("launch delta (prefill, %s - %s): %s %d, predicted %d\n", a.a.c_str(), a.b.c_str(),
                ca.measured >= 0 ? "measured" : "graph", ma - mb, ca.predicted - cb.predicted);
    if (ra.s.calls.size() > 1) {
        const CallStat &da = ra.s.calls[1], &db = rb.s.calls[1];
        const int xa = da.measured >= 0 ? da.measured : da.graph_steps, xb = db.measured >= 0 ? db.measured : db.graph_steps;
        std::printf("launch delta (first decode, %s - %s): %d, predicted %d\n", a.a.c_str(), a.b.c_str(), xa - xb,
                    da.predicted - db.predicted);
    }
    if (a.out_a.empty()) std::filesystem::remove(fa);
    if (a.out_b.empty()) std::filesystem::remove(fb);
    int rc = exit_ok;
    if (!ra.launches_ok || !rb.launches_ok) {
        std::printf("FAIL: launch count differs from the prediction\n");
        rc = exit_failed;
    }
    if (is_claim_pair(a.a, a.b)) {
        std::printf("claim (%s and %s give the same logits bytes): %s\n", a.a.c_str(), a.b.c_str(),
                    same ? "HOLDS" : "BROKEN");
        if (!same) rc = exit_failed;
    } else {
        std::printf("no bit claim between %s and %s (reference is the quality yardstick)\n", a.a.c_str(), a.b.c_str());
    }
    return rc;
}

int cmd_paths(const Source& src) {
    std::unique_ptr<Model> m;
    if (!src.file.empty() || !src.synthetic.empty()) m = std::make_unique<Model>(src.load());
    for (const PathInfo& p : paths()) {
        std::printf("%-10s %s%s\n", p.name.c_str(), p.summary.c_str(), p.device ? "" : " [host only]");
        if (m) {
            std::printf("  prefill n=512:  %s\n", predict_launches(m->hp, p.name, Mode::prefill, 512, 0).str().c_str());
            std::printf("  decode pos=100: %s\n", predict_launches(m->hp, p.name, Mode::decode, 1, 100).str().c_str());
            std::printf("  decode pos=200: %s\n", predict_launches(m->hp, p.name, Mode::decode, 1, 200).str().c_str());
        }
    }
    return exit_ok;
}

struct BenchArgs {
    Source src;
    std::string path = "fast";
    int64_t prefill = 512, context = 1024;
    int reps = 10, sm_count = 0;
};

int cmd_bench(const BenchArgs& a) {
    if (!path_info(a.path).device) throw BadInput("path " + a.path + " runs on the host only; bench times baseline or fast");
    if (a.sm_count < 0) throw BadInput("--sm-count " + std::to_string(a.sm_count) + ": must be positive (0: the card's own)");
    const Hparams& hp = a.src.hparams();
    if (a.prefill < 1 || a.context < 0 || a.reps < 1) throw BadInput("bench: --prefill >= 1, --context >= 0, --reps >= 1");
    // The decode step writes position `context`, so it needs context + 1 positions.
    if (a.prefill > hp.n_ctx || a.context >= hp.n_ctx)
        throw BadInput("bench: --prefill " + std::to_string(a.prefill) + " and --context " + std::to_string(a.context) +
                       " need at most " + std::to_string(hp.n_ctx) + " positions (the model's context); the decode " +
                       "step takes context + 1");
    require_gpu();
    const Model m = a.src.load();
    print_model(m, a.src);
    const DeviceOptions opt{a.sm_count};
    auto shares = [](const BenchStats& b) {
        double total = 0;
        for (auto& [f, ms] : b.family_ms) total += ms;
        std::string s;
        for (auto& [f, ms] : b.family_ms)
            s += "    " + f + ": " + std::to_string(ms) + " ms (" + std::to_string(total > 0 ? 100 * ms / total : 0) + "%)\n";
        return s;
    };
    const Graph gp = build_graph(m.hp, a.path, Mode::prefill, a.prefill, 0, a.prefill);
    check_weights(m, gp);
    const BenchStats bp = device_bench(m, gp, a.reps, opt);
    std::printf("prefill n=%lld path %s: %.3f ms per forward, %.1f tokens/s (%d kernel nodes, %d reps)\n",
                (long long)a.prefill, a.path.c_str(), bp.graph_ms, 1000.0 * double(a.prefill) / bp.graph_ms,
                bp.kernel_nodes, bp.reps);
    std::printf("  time by family (eager run, events per step):\n%s", shares(bp).c_str());
    const Graph gd = build_graph(m.hp, a.path, Mode::decode, 1, a.context, a.context + 1);
    const BenchStats bd = device_bench(m, gd, a.reps, opt);
    std::printf("decode at context %lld path %s: %.3f ms per token, %.1f tokens/s (%d kernel nodes, %d reps)\n",
                (long long)a.context, a.path.c_str(), bd.graph_ms, 1000.0 / bd.graph_ms, bd.kernel_nodes, bd.reps);
    std::printf("  time by family (eager run, events per step):\n%s", shares(bd).c_str());
    return exit_ok;
}

}  // namespace

}  // namespace bitgate::model

namespace bitgate {

using namespace model;

void add_model_forward_verbs(CLI::App& model, int& rc) {
    auto run = std::make_shared<RunArgs>();
    CLI::App* c = model.add_subcommand("run", "Prefill a prompt, decode tokens, write the logits (.spkl) and their md5");
    add_run_options(c, *run, true);
    c->add_option("--path", run->path, "baseline, fast or reference (default fast)");
    c->add_option("--out", run->out, "Write the logits of every scored position here (.spkl)");
    c->add_option("--expect-md5", run->expect_md5, "Exit 1 unless the logits md5 is this");
    c->callback([run, &rc] { rc = cmd_run(*run, false); });

    auto ab = std::make_shared<RunArgs>();
    c = model.add_subcommand("ab", "Run two paths on one machine; compare bytes, top-1, KLD and launches");
    add_run_options(c, *ab, true);
    c->add_option("--a", ab->a, "First path (default baseline)");
    c->add_option("--b", ab->b, "Second path (default fast)");
    c->add_option("--out-a", ab->out_a, "Keep the first path's logits here");
    c->add_option("--out-b", ab->out_b, "Keep the second path's logits here");
    c->callback([ab, &rc] { rc = cmd_ab(*ab); });

    auto pr = std::make_shared<RunArgs>();
    c = model.add_subcommand("predict", "The host run: the md5 a device run of the same arguments must print");
    add_run_options(c, *pr, false);
    c->add_option("--path", pr->path, "baseline, fast or reference (default fast)");
    c->add_option("--out", pr->out, "Write the logits here (.spkl)");
    c->add_option("--expect-md5", pr->expect_md5, "Exit 1 unless the logits md5 is this");
    c->callback([pr, &rc] { rc = cmd_run(*pr, true); });

    auto pa = std::make_shared<Source>();
    c = model.add_subcommand("paths", "The forward paths, what each fuses, and (with a model) their launch formulas");
    c->add_option("gguf", pa->file, "GGUF model file");
    c->add_option("--synthetic", pa->synthetic, "In-memory preset: tiny, qwen2-0.5b, qwen2-7b");
    c->add_option("--seed", pa->seed, "Seed of the synthetic weights");
    c->callback([pa, &rc] { rc = cmd_paths(*pa); });

    auto be = std::make_shared<BenchArgs>();
    c = model.add_subcommand("bench", "Device: prefill and decode tokens/s, time shares per family");
    c->add_option("gguf", be->src.file, "GGUF model file");
    c->add_option("--synthetic", be->src.synthetic, "In-memory preset: tiny, qwen2-0.5b, qwen2-7b");
    c->add_option("--seed", be->src.seed, "Seed of the synthetic weights");
    c->add_option("--path", be->path, "baseline or fast (default fast)");
    c->add_option("--prefill", be->prefill, "Prompt tokens of the timed prefill (default 512)");
    c->add_option("--context", be->context, "Cached positions of the timed decode (default 1024)");
    c->add_option("--reps", be->reps, "Timed replays (default 10)");
    c->add_option("--sm-count", be->sm_count, "Dispatch as if the card had this many SMs");
    c->callback([be, &rc] { rc = cmd_bench(*be); });
}

}  // namespace bitgate
