// The host runner: every step through the families' bit-exact host models (refimpl/), in the
// graph's order. The reference path's f32 KV copy and attention are written here in double
// precision: they are the yardstick, not a model of any kernel.
#include <cmath>
#include <cstring>

#include "add.hpp"
#include "attention.hpp"
#include "bias.hpp"
#include "bitgate/f16.hpp"
#include "bitgate/formats.hpp"
#include "bitgate/proj_q8_0_order.hpp"
#include "embed.hpp"
#include "errors.hpp"
#include "forward.hpp"
#include "kv_store.hpp"
#include "mmq_q8_0.hpp"
#include "proj_f32.hpp"
#include "proj_q8_0.hpp"
#include "quantize_pad40_t.hpp"
#include "quantize_q8_0.hpp"
#include "rms_norm.hpp"
#include "rms_norm_q8_0.hpp"
#include "rope.hpp"
#include "swiglu.hpp"
#include "swiglu_q8_0.hpp"

namespace bitgate::model {

namespace {

// Dequantized f32 copy of a weight tensor (exact: ggml's (float)d * (float)q, f16 -> f32).
std::vector<float> dequantize(const Tensor& t) {
    int64_t count = 1;
    for (int64_t e : t.ne) count *= e;
    std::vector<float> out(static_cast<size_t>(count));
    if (t.type == DType::f32) {
        std::memcpy(out.data(), t.bytes.data(), out.size() * 4);
    } else if (t.type == DType::f16) {
        for (int64_t i = 0; i < count; ++i) {
            uint16_t h;
            std::memcpy(&h, t.bytes.data() + i * 2, 2);
            out[size_t(i)] = f16_to_f32(h);
        }
    } else {
        for (int64_t b = 0; b < count / QK8_0; ++b) {
            BlockQ8_0 blk;
            std::memcpy(&blk, t.bytes.data() + b * sizeof(BlockQ8_0), sizeof blk);
            const float d = f16_to_f32(blk.d);
            for (int j = 0; j < QK8_0; ++j) out[size_t(b * QK8_0 + j)] = d * float(blk.qs[j]);
        }
    }
    return out;
}

class HostRunner final : public Runner {
public:
    HostRunner(const Model& m, const std::string& path, int64_t ctx, const HostOptions& opt)
        : m_(m), ctx_(ctx), opt_(opt) {
        const Hparams& hp = m.hp;
        const int64_t hd = hp.n_embd / hp.n_head;
        const size_t elems = size_t(hp.n_head_kv * ctx * hd);
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string ls = std::to_string(l);
            if (path == "reference") {
                for (const char* t : {"k", "v"}) f32_cache_[std::string("cache.") + t + "." + ls].assign(elems, 0.0);
            } else {  // the halves of one cache.kv.L, as on the device (graph.hpp)
                std::vector<uint16_t>& kv = f16_kv_[ls];
                kv.assign(2 * elems, 0);
                f16_cache_["cache.kv." + ls] = kv.data();
                f16_cache_["cache.k." + ls] = kv.data();
                f16_cache_["cache.v." + ls] = kv.data() + elems;
            }
        }
        for (const WeightPack& pk : weight_packs(hp, path)) packs_[pk.name] = pk.parts;
    }
    std::string where() const override { return "host"; }

    void forward(const Graph& g, const int32_t* ids, float* logits, CallStat&) override {
        if (g.ctx != ctx_) throw BadInput("forward: graph built for another cache length");
        for (auto& [name, bytes] : g.buffers) buf_[name].resize((bytes + 3) / 4);
        views_ = g.views;
        std::vector<int32_t> pos(static_cast<size_t>(g.n));
        for (int64_t t = 0; t < g.n; ++t) pos[size_t(t)] = int32_t(g.pos + t);
        for (const Step& s : g.steps) run(g, s, ids, pos.data());
        std::memcpy(logits, buf_.at(g.logits).data(), size_t(g.n * g.hp.n_vocab) * 4);
    }

private:
    // An activation by name: a buffer, or a view into one (Graph::views).
    float* f(const std::string& n) {
        if (auto v = views_.find(n); v != views_.end()) return buf_.at(v->second.base).data() + v->second.offset / 4;
        return buf_.at(n).data();
    }
    bool is_act(const std::string& n) const { return buf_.count(n) || views_.count(n); }
    template <class T>
    T* as(const std::string& n) { return reinterpret_cast<T*>(f(n)); }
    const Tensor& w(const std::string& n) { return m_.at(n); }
    // A tensor's bytes, or a pack's: its parts back to back, built on first use.
    const uint8_t* wbytes(const std::string& n) {
        auto pk = packs_.find(n);
        if (pk == packs_.end()) return w(n).bytes.data();
        std::vector<uint8_t>& b = packed_[n];
        if (b.empty())
            for (const std::string& part : pk->second) b.insert(b.end(), w(part).bytes.begin(), w(part).bytes.end());
        return b.data();
    }
    const float* wf(const std::string& n) { return reinterpret_cast<const float*>(wbytes(n)); }
    const BlockQ8_0* wq(const std::string& n) { return reinterpret_cast<const BlockQ8_0*>(wbytes(n)); }
    // "f32:NAME": kept while the cache has room, else in the scratch buffer until the next call.
    const float* deq(const std::string& n) {
        if (auto it = deq_.find(n); it != deq_.end()) return it->second.data();
        std::vector<float> v = dequantize(w(n.substr(4)));
        if (deq_bytes_ + v.size() * 4 <= opt_.dequantized_cache_bytes) {
            deq_bytes_ += v.size() * 4;
            return deq_.emplace(n, std::move(v)).first->second.data();
        }
        deq_scratch_ = std::move(v);
        return deq_scratch_.data();
    }

    void run(const Graph& g, const Step& s, const int32_t* ids, const int32_t* pos) {
        const Hparams& hp = g.hp;
        switch (s.op) {
            case Op::embed: {
                const Tensor& t = w(s.in[0]);
                const void* p = t.bytes.data();
                if (t.type == DType::q8_0)
                    ref::embed_q8_0(static_cast<const BlockQ8_0*>(p), s.k, ids, s.n, f(s.out[0]));
                else if (t.type == DType::f16)
                    ref::embed_f16(static_cast<const uint16_t*>(p), s.k, ids, s.n, f(s.out[0]));
                else
                    ref::embed_f32(static_cast<const float*>(p), s.k, ids, s.n, f(s.out[0]));
                break;
            }
            case Op::rms_norm: ref::rms_norm_f32(f(s.in[0]), wf(s.in[1]), f(s.out[0]), s.n, s.k); break;
            case Op::rms_norm_quant:
                ref::rms_norm_quant_f32_t(f(s.in[0]), wf(s.in[1]), f(s.out[0]), s.n, s.k, as<uint8_t>(s.out[1]),
                                          as<uint32_t>(s.out[2]));
                break;
            case Op::rms_norm_q8_0:
                ref::rms_norm_q8_0(f(s.in[0]), wf(s.in[1]), f(s.out[0]), as<BlockQ8_0>(s.out[1]), s.n, s.k);
                break;
            case Op::quantize_pad40:
                ref::quantize_pad40_t(f(s.in[0]), s.n, s.k, as<uint8_t>(s.out[0]), as<uint32_t>(s.out[1]));
                break;
            case Op::mmq:
                ref::mmq_q8_0(as<uint8_t>(s.in[0]), as<uint32_t>(s.in[1]), wq(s.in[2]), f(s.out[0]), s.n, s.rows, s.k,
                              ref::MmqOrder::ascending, opt_.host_path);
                break;
            case Op::mmq_add: {
                // The GEMM into a scratch plane, then y = sum + a: the epilogue's one rounding, the
                // bias broadcast over tokens or the residual (which may be y itself).
                std::vector<float> sum(static_cast<size_t>(s.n * s.rows));
                ref::mmq_q8_0(as<uint8_t>(s.in[0]), as<uint32_t>(s.in[1]), wq(s.in[2]), sum.data(), s.n, s.rows, s.k,
                              ref::MmqOrder::ascending, opt_.host_path);
                if (is_act(s.in[3]))
                    ref::add_f32(sum.data(), f(s.in[3]), f(s.out[0]), s.n * s.rows);
                else
                    ref::bias_f32_to(sum.data(), wf(s.in[3]), f(s.out[0]), s.n, s.rows);
                break;
            }
            case Op::quantize_q8_0: ref::quantize_q8_0(f(s.in[0]), as<BlockQ8_0>(s.out[0]), s.k); break;
            case Op::proj_q8_0: {
                ref::ProjQ8Order order;
                order.width = proj_q8_0_v2_width(s.k / QK8_0);  // both paths project with v2
                ref::proj_q8_0(wq(s.in[1]), as<BlockQ8_0>(s.in[0]), f(s.out[0]), s.rows, s.k / QK8_0, order, 0,
                               opt_.host_path);
                break;
            }
            case Op::proj_q8_0_pair: {  // fused2: the two projections, each in v2's order
                ref::ProjQ8Order order;
                order.width = proj_q8_0_v2_width(s.k / QK8_0);
                for (int i = 0; i < 2; ++i)
                    ref::proj_q8_0(wq(s.in[1 + i]), as<BlockQ8_0>(s.in[0]), f(s.out[i]), s.rows, s.k / QK8_0, order, 0,
                                   opt_.host_path);
                break;
            }
            case Op::proj_q8_0_add: {
                // The projection into a scratch row, then y = sum + a: the epilogue's one rounding,
                // with y allowed to be a (the residual stream).
                ref::ProjQ8Order order;
                order.width = proj_q8_0_v2_width(s.k / QK8_0);
                std::vector<float> sum(static_cast<size_t>(s.rows));
                ref::proj_q8_0(wq(s.in[1]), as<BlockQ8_0>(s.in[0]), sum.data(), s.rows, s.k / QK8_0, order, 0,
                               opt_.host_path);
                const float* a = is_act(s.in[2]) ? f(s.in[2]) : wf(s.in[2]);
                ref::add_f32(sum.data(), a, f(s.out[0]), s.rows);
                break;
            }
            case Op::proj_f32: {
                const float* W = deq(s.in[1]);
                for (int64_t t = 0; t < s.n; ++t)
                    ref::proj_f32(W, f(s.in[0]) + t * s.k, f(s.out[0]) + t * s.rows, s.rows, s.k);
                break;
            }
            case Op::bias: ref::bias_f32(f(s.out[0]), wf(s.in[1]), s.rows, s.k); break;
            case Op::rope: ref::rope_neox(f(s.in[0]), s.n, s.rows, s.k, pos, hp.rope_base); break;
            case Op::kv_store:
                ref::kv_store_f16(f(s.in[0]), s.n, s.rows, s.k, f16_cache_.at(s.out[0]), g.ctx, s.pos0);
                break;
            case Op::kv_store_f32: {
                std::vector<double>& c = f32_cache_.at(s.out[0]);
                const float* kv = f(s.in[0]);
                for (int64_t t = 0; t < s.n; ++t)
                    for (int64_t h = 0; h < s.rows; ++h)
                        for (int64_t d = 0; d < s.k; ++d)
                            c[size_t((h * g.ctx + s.pos0 + t) * s.k + d)] = kv[(t * s.rows + h) * s.k + d];
                break;
            }
            case Op::attention:
                ref::attention_f16kv(f(s.in[0]), f16_cache_.at(s.in[1]), f16_cache_.at(s.in[2]), s.n,
                                     s.L, g.ctx, s.rows, s.h2, s.k, f(s.out[0]), opt_.host_path);
                break;
            case Op::attention_f32:
                attention_double(f(s.in[0]), f32_cache_.at(s.in[1]), f32_cache_.at(s.in[2]), s.n, s.L, g.ctx, s.rows,
                                 s.h2, s.k, f(s.out[0]));
                break;
            case Op::add: ref::add_f32(f(s.in[0]), f(s.in[1]), f(s.out[0]), s.n * s.k); break;
            case Op::swiglu: ref::swiglu_f32(f(s.in[0]), f(s.in[1]), f(s.out[0]), s.n, s.k); break;
            case Op::swiglu_q8_0:
                ref::swiglu_q8_0(f(s.in[0]), f(s.in[1]), f(s.out[0]), as<BlockQ8_0>(s.out[1]), s.n, s.k);
                break;
            case Op::swiglu_quant:
                ref::swiglu_quant_f32_t(f(s.in[0]), f(s.in[1]), f(s.out[0]), s.n, s.k, as<uint8_t>(s.out[1]),
                                        as<uint32_t>(s.out[2]));
                break;
        }
    }

    // Causal GQA softmax attention in double precision, the plain definition.
    static void attention_double(const float* q, const std::vector<double>& kc, const std::vector<double>& vc,
                                 int64_t nq, int64_t L, int64_t ctx, int64_t nh, int64_t nkv, int64_t hd, float* out) {
        const double scale = 1.0 / std::sqrt(double(hd));
        std::vector<double> s(static_cast<size_t>(L));
        for (int64_t i = 0; i < nq; ++i) {
            const int64_t last = L - nq + i;
            for (int64_t h = 0; h < nh; ++h) {
                const int64_t kh = h / (nh / nkv);
                const float* qr = q + (i * nh + h) * hd;
                double m = -INFINITY;
                for (int64_t j = 0; j <= last; ++j) {
                    double dot = 0;
                    for (int64_t d = 0; d < hd; ++d) dot += double(qr[d]) * kc[size_t((kh * ctx + j) * hd + d)];
                    s[size_t(j)] = dot * scale;
                    m = std::max(m, s[size_t(j)]);
                }
                double l = 0;
                for (int64_t j = 0; j <= last; ++j) l += (s[size_t(j)] = std::exp(s[size_t(j)] - m));
                for (int64_t d = 0; d < hd; ++d) {
                    double acc = 0;
                    for (int64_t j = 0; j <= last; ++j) acc += s[size_t(j)] * vc[size_t((kh * ctx + j) * hd + d)];
                    out[(i * nh + h) * hd + d] = float(acc / l);
                }
            }
        }
    }

    const Model& m_;
    int64_t ctx_;
    std::map<std::string, std::vector<float>> buf_;
    std::map<std::string, std::vector<uint16_t>> f16_kv_;  // a layer's f16 caches, k then v
    std::map<std::string, uint16_t*> f16_cache_;           // cache.kv.L, cache.k.L, cache.v.L
    std::map<std::string, Graph::View> views_;             // the current graph's
    std::map<std::string, std::vector<std::string>> packs_;
    std::map<std::string, std::vector<uint8_t>> packed_;
    std::map<std::string, std::vector<double>> f32_cache_;
    std::map<std::string, std::vector<float>> deq_;
    HostOptions opt_;
    size_t deq_bytes_ = 0;
    std::vector<float> deq_scratch_;
};

}  // namespace

std::unique_ptr<Runner> make_host_runner(const Model& m, const std::string& path, int64_t ctx,
                                         const HostOptions& opt) {
    return std::make_unique<HostRunner>(m, path, ctx, opt);
}

}  // namespace bitgate::model
