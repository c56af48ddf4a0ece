// The sequence driver shared by the host and device runners, and the checks before a run.
#include "forward.hpp"

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bitgate/inputs.hpp"
#include "errors.hpp"
#include "spkl.hpp"

namespace bitgate::model {

namespace {

const char* dtype_word(DType t) { return t == DType::f32 ? "f32" : t == DType::f16 ? "f16" : "q8_0"; }

}  // namespace

void check_weights(const Model& m, const Graph& g) {
    auto want = [&](const std::string& name, int64_t k, int64_t rows, bool matrix, bool q8_only) {
        const Tensor& t = m.at(name);
        int64_t count = 1;
        for (int64_t e : t.ne) count *= e;
        if (t.ne.empty() || t.ne[0] != k || count != k * rows)
            throw BadInput("model: tensor " + name + " has the wrong shape (want " + std::to_string(k) + " x " +
                           std::to_string(rows) + ")");
        if (!matrix && t.type != DType::f32)
            throw BadInput("model: tensor " + name + " is " + dtype_word(t.type) + " (norms and biases must be f32)");
        if (q8_only && t.type != DType::q8_0)
            throw BadInput("model: tensor " + name + " is " + dtype_word(t.type) + "; the " + g.path +
                           " path projects Q8_0 weights only");
    };
    const bool q8 = g.path != "reference";
    for (const Step& s : g.steps) {
        for (const std::string& in : s.in) {
            std::string name = in;
            if (name.rfind("f32:", 0) == 0) name = name.substr(4);
            if (name.find(".weight") == std::string::npos && name.find(".bias") == std::string::npos) continue;
            switch (s.op) {
                case Op::embed: want(name, s.k, g.hp.n_vocab, true, false); break;
                case Op::rms_norm:
                case Op::rms_norm_quant: want(name, s.k, 1, false, false); break;
                case Op::bias: want(name, s.k, 1, false, false); break;
                case Op::mmq:
                case Op::proj_q8_0:
                case Op::proj_q8_0_pair:
                case Op::proj_f32: want(name, s.k, s.rows, true, q8); break;
                case Op::mmq_add:
                case Op::proj_q8_0_add:  // the matrix, and the bias it adds (a residual is no tensor)
                    if (name.find(".bias") != std::string::npos)
                        want(name, s.rows, 1, false, false);
                    else
                        want(name, s.k, s.rows, true, q8);
                    break;
                default: break;
            }
        }
    }
}

std::vector<int32_t> seeded_tokens(int64_t count, int64_t n_vocab, uint64_t seed) {
    std::vector<int32_t> t(static_cast<size_t>(count));
    const uint64_t key = inputs::mix64(seed ^ inputs::name_hash("tokens"));
    for (int64_t i = 0; i < count; ++i)
        t[size_t(i)] = int32_t(inputs::mix64(key ^ inputs::mix64(uint64_t(i))) % uint64_t(n_vocab));
    return t;
}

std::vector<int32_t> read_tokens(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw BadInput(path + ": cannot open the token file");
    std::vector<int32_t> t;
    std::string w;
    while (f >> w) {
        size_t used = 0;
        long long v = -1;
        try {
            v = std::stoll(w, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != w.size() || v < 0 || v > INT32_MAX)
            throw BadInput(path + ": token " + std::to_string(t.size()) + " '" + w + "' is not a token id");
        t.push_back(int32_t(v));
    }
    return t;
}

SequenceResult run_sequence(const Model& m, Runner& r, const std::string& path, std::span<const int32_t> tokens,
                            int64_t prompt, int64_t decode) {
    const Hparams& hp = m.hp;
    if (prompt < 1) throw BadInput("--prompt must be at least 1");
    if (decode < 0) throw BadInput("--decode must not be negative");
    const int64_t total = prompt + decode;
    if (int64_t(tokens.size()) < total)
        throw BadInput("tokens: " + std::to_string(tokens.size()) + " ids, the run needs " + std::to_string(total));
    if (hp.n_ctx > 0 && total > hp.n_ctx)
        throw BadInput("prompt + decode = " + std::to_string(total) + " exceeds the context " + std::to_string(hp.n_ctx));
    if (total > kMaxPositions) throw BadInput("prompt + decode exceeds the 32768 positions rope is proven for");
    for (size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i] < 0 || tokens[i] >= hp.n_vocab)
            throw BadInput("tokens: token " + std::to_string(i) + ": id " + std::to_string(tokens[i]) +
                           " is outside [0, " + std::to_string(hp.n_vocab) + ")");
    const int64_t ctx = total;
    SequenceResult s;
    s.rows = total, s.vocab = hp.n_vocab;
    s.logits.resize(size_t(total * hp.n_vocab));
    for (int64_t i = 0; i < total; ++i) {
        s.tokens.push_back(uint32_t(tokens[size_t(i)]));
        s.targets.push_back(i + 1 < int64_t(tokens.size()) ? uint32_t(tokens[size_t(i + 1)]) : spkl::kNoTarget);
    }
    auto call = [&](Mode mode, int64_t n, int64_t pos) {
        const Graph g = build_graph(hp, path, mode, n, pos, ctx);
        if (s.calls.empty()) check_weights(m, g);
        CallStat st;
        st.mode = mode, st.n = n, st.pos = pos;
        st.predicted = int(predict_launches(hp, path, mode, n, pos).total());
        st.graph_steps = g.launches();
        const auto t0 = std::chrono::steady_clock::now();
        r.forward(g, tokens.data() + pos, s.logits.data() + pos * hp.n_vocab, st);
        st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        (mode == Mode::prefill ? s.prefill_seconds : s.decode_seconds) += st.seconds;
        s.calls.push_back(st);
    };
    call(Mode::prefill, prompt, 0);
    for (int64_t j = 0; j < decode; ++j) call(Mode::decode, 1, prompt + j);
    return s;
}

std::string logits_md5(const SequenceResult& s) {
    spkl::Md5 md5;
    md5.update(s.logits.data(), s.logits.size() * sizeof(float));
    return md5.hex();
}

}  // namespace bitgate::model
