// The device runner: the graph's steps through the families' plain launchers, captured into one
// CUDA graph per forward call. The launch count measured is the captured graph's kernel nodes,
// whatever the launchers report. Decode captures a fresh graph per token: the cache length L and
// the decode attention's split count are host arguments of the launchers, so each length is its
// own graph (the positions and ids are device buffers written before the capture).
#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "add.cuh"
#include "attention.cuh"
#include "bias.cuh"
#include "bitgate/formats.hpp"
#include "device.hpp"
#include "embed.cuh"
#include "errors.hpp"
#include "forward.hpp"
#include "kv_store.cuh"
#include "mmq_q8_0.cuh"
#include "proj_q8_0.cuh"
#include "quantize_pad40_t.cuh"
#include "quantize_q8_0.cuh"
#include "rms_norm.cuh"
#include "rms_norm_q8_0.cuh"
#include "rope.cuh"
#include "sm_count.cuh"
#include "swiglu.cuh"
#include "swiglu_q8_0.cuh"

namespace bitgate::model {

namespace {

void ck(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("device forward: ") + what + ": " + cudaGetErrorString(e));
}

// Sets the SM-count override for the lifetime of a call and clears it after.
struct SmScope {
    explicit SmScope(int sms) { cuda::set_sm_count_override(sms); }
    ~SmScope() { cuda::set_sm_count_override(0); }
};

class DeviceRunner final : public Runner {
public:
    DeviceRunner(const Model& m, const std::string& path, int64_t ctx, const DeviceOptions& opt)
        : m_(m), ctx_(ctx), opt_(opt) {
        if (const std::string why = gpu_missing(); !why.empty()) throw NoGpu(why);
        if (!path_info(path).device) throw BadInput("path " + path + " runs on the host only");
        ck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
        // Weights once, each in its own allocation (256-byte aligned, as the launchers want), but
        // the path's packs: their parts back to back in one allocation, each part's name pointing
        // into it (every part a multiple of 256 bytes, graph.hpp).
        // Everything on stream_ (non-blocking: no ordering with the legacy default stream).
        std::map<std::string, std::string> pack_of;
        for (const WeightPack& pk : weight_packs(m.hp, path))
            for (const std::string& part : pk.parts) pack_of[part] = pk.name;
        for (const Tensor& t : m.tensors)
            if (!pack_of.count(t.name)) weights_[t.name] = upload(t.bytes.data(), t.bytes.size());
        for (const WeightPack& pk : weight_packs(m.hp, path)) {
            size_t bytes = 0;
            for (const std::string& part : pk.parts) {
                if (m.at(part).bytes.size() % 256 != 0) throw BadInput("model: " + part + " is not a multiple of 256 bytes");
                bytes += m.at(part).bytes.size();
            }
            char* base = static_cast<char*>(upload(nullptr, bytes));
            weights_[pk.name] = base;
            for (const std::string& part : pk.parts) {
                const auto& b = m.at(part).bytes;
                ck(cudaMemcpyAsync(base, b.data(), b.size(), cudaMemcpyHostToDevice, stream_), "weight upload");
                weights_[part] = base;
                base += b.size();
            }
        }
        // A layer's f16 caches: the halves of one allocation (cache.kv.L, k first).
        const Hparams& hp = m.hp;
        const size_t cache_bytes = size_t(hp.n_head_kv * ctx * (hp.n_embd / hp.n_head)) * 2;
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string ls = std::to_string(l);
            char* p = static_cast<char*>(upload(nullptr, 2 * cache_bytes, "cache allocation"));
            ck(cudaMemsetAsync(p, 0, 2 * cache_bytes, stream_), "cache clear");
            caches_["cache.kv." + ls] = p;
            caches_["cache.k." + ls] = p;
            caches_["cache.v." + ls] = p + cache_bytes;
        }
        work_bytes_ = cuda::attention_decode_workspace_bytes(ctx, hp.n_head, hp.n_embd / hp.n_head);
        if (work_bytes_ > 0) ck(cudaMalloc(&work_, work_bytes_), "attention workspace");
        ck(cudaStreamSynchronize(stream_), "weight upload");
    }
    ~DeviceRunner() override {
        cudaStreamSynchronize(stream_);
        for (void* p : allocations_) cudaFree(p);
        for (auto& [n, b] : bufs_) cudaFree(b.first);
        if (work_) cudaFree(work_);
        cudaStreamDestroy(stream_);
    }
    std::string where() const override { return gpu_name(); }

    void forward(const Graph& g, const int32_t* ids, float* logits, CallStat& st) override {
        SmScope sms(opt_.sm_count);
        prepare(g, ids);
        warm_up(g);
        cudaGraph_t graph = nullptr;
        ck(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), "begin capture");
        try {
            for (const Step& s : g.steps) enqueue(g, s);
        } catch (...) {
            cudaStreamEndCapture(stream_, &graph);
            if (graph) cudaGraphDestroy(graph);
            throw;
        }
        ck(cudaStreamEndCapture(stream_, &graph), "end capture");
        st.measured = kernel_nodes(graph);
        cudaGraphExec_t exec = nullptr;
        ck(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
        ck(cudaGraphLaunch(exec, stream_), "graph launch");
        ck(cudaStreamSynchronize(stream_), "forward");
        ck(cudaMemcpyAsync(logits, bufs_.at(g.logits).first, size_t(g.n * g.hp.n_vocab) * 4, cudaMemcpyDeviceToHost,
                           stream_),
           "logits download");
        ck(cudaStreamSynchronize(stream_), "logits download");
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }

    BenchStats bench(const Graph& g, int reps) {
        SmScope sms(opt_.sm_count);
        std::vector<int32_t> ids(size_t(g.n), 0);
        prepare(g, ids.data());
        warm_up(g);
        BenchStats b;
        b.reps = reps;
        cudaGraph_t graph = nullptr;
        ck(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), "begin capture");
        for (const Step& s : g.steps) enqueue(g, s);
        ck(cudaStreamEndCapture(stream_, &graph), "end capture");
        b.kernel_nodes = kernel_nodes(graph);
        cudaGraphExec_t exec = nullptr;
        ck(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0), cudaEventCreate(&e1);
        ck(cudaGraphLaunch(exec, stream_), "warm-up");
        cudaEventRecord(e0, stream_);
        for (int r = 0; r < reps; ++r) ck(cudaGraphLaunch(exec, stream_), "graph launch");
        cudaEventRecord(e1, stream_);
        ck(cudaStreamSynchronize(stream_), "bench");
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        b.graph_ms = double(ms) / reps;
        // Eager run with an event after every step: the per-family shares.
        std::vector<cudaEvent_t> ev(g.steps.size() + 1);
        for (auto& e : ev) cudaEventCreate(&e);
        for (int r = 0; r < reps; ++r) {
            cudaEventRecord(ev[0], stream_);
            for (size_t i = 0; i < g.steps.size(); ++i) {
                enqueue(g, g.steps[i]);
                cudaEventRecord(ev[i + 1], stream_);
            }
            ck(cudaStreamSynchronize(stream_), "eager run");
            for (size_t i = 0; i < g.steps.size(); ++i) {
                float t = 0;
                cudaEventElapsedTime(&t, ev[i], ev[i + 1]);
                b.family_ms[g.steps[i].family] += double(t) / reps;
            }
        }
        for (auto& e : ev) cudaEventDestroy(e);
        cudaEventDestroy(e0), cudaEventDestroy(e1);
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        return b;
    }

private:
    // A device allocation of `bytes` (freed with the runner), filled from `src` unless null.
    void* upload(const void* src, size_t bytes, const char* what = "weight allocation") {
        void* p = nullptr;
        ck(cudaMalloc(&p, bytes), what);
        allocations_.push_back(p);
        if (src) ck(cudaMemcpyAsync(p, src, bytes, cudaMemcpyHostToDevice, stream_), "weight upload");
        return p;
    }

    // The first graph of each kind runs eagerly once before its capture, so that launchers which
    // set function attributes or query occupancy on first use do so outside the capture. The run
    // is the same computation on the same inputs: it stores the same cache values at the same
    // positions, which the captured run then stores again.
    void warm_up(const Graph& g) {
        const std::pair<int, int> kind{int(g.mode), g.launches()};
        if (!warmed_.insert(kind).second) return;
        for (const Step& s : g.steps) enqueue(g, s);
        ck(cudaStreamSynchronize(stream_), "warm-up run");
    }

    static int kernel_nodes(cudaGraph_t graph) {
        size_t count = 0;
        ck(cudaGraphGetNodes(graph, nullptr, &count), "graph nodes");
        std::vector<cudaGraphNode_t> nodes(count);
        if (count) ck(cudaGraphGetNodes(graph, nodes.data(), &count), "graph nodes");
        int kernels = 0;
        for (cudaGraphNode_t n : nodes) {
            cudaGraphNodeType t;
            ck(cudaGraphNodeGetType(n, &t), "node type");
            if (t == cudaGraphNodeTypeKernel) ++kernels;
        }
        return kernels;
    }

    void prepare(const Graph& g, const int32_t* ids) {
        if (g.ctx != ctx_) throw BadInput("forward: graph built for another cache length");
        views_ = g.views;
        for (auto& [name, bytes] : g.buffers) {
            auto& b = bufs_[name];
            if (b.second < bytes) {
                if (b.first) cudaFree(b.first);
                ck(cudaMalloc(&b.first, bytes), "activation allocation");
                b.second = bytes;
            }
        }
        std::vector<int32_t> pos(static_cast<size_t>(g.n));
        for (int64_t t = 0; t < g.n; ++t) pos[size_t(t)] = int32_t(g.pos + t);
        // On the runner's stream, which does not wait for the legacy default stream: a plain
        // cudaMemcpy from pageable memory may return before its DMA lands, and a graph launched on
        // stream_ could then read the previous call's tokens or positions. The synchronize keeps
        // pos (a local) alive until the copy has read it.
        ck(cudaMemcpyAsync(bufs_.at("ids").first, ids, size_t(g.n) * 4, cudaMemcpyHostToDevice, stream_), "ids upload");
        ck(cudaMemcpyAsync(bufs_.at("pos").first, pos.data(), size_t(g.n) * 4, cudaMemcpyHostToDevice, stream_),
           "pos upload");
        ck(cudaStreamSynchronize(stream_), "ids and pos upload");
    }

    // An activation by name: a buffer, or a view into one (Graph::views).
    void* act(const std::string& n) {
        if (auto v = views_.find(n); v != views_.end()) return static_cast<char*>(bufs_.at(v->second.base).first) + v->second.offset;
        return bufs_.at(n).first;
    }
    bool is_act(const std::string& n) const { return bufs_.count(n) || views_.count(n); }
    float* f(const std::string& n) { return static_cast<float*>(act(n)); }
    template <class T>
    T* as(const std::string& n) { return static_cast<T*>(act(n)); }
    const void* w(const std::string& n) {
        auto it = weights_.find(n);
        if (it == weights_.end()) throw BadInput("model has no tensor " + n);
        return it->second;
    }
    const float* wf(const std::string& n) { return static_cast<const float*>(w(n)); }
    const BlockQ8_0* wq(const std::string& n) { return static_cast<const BlockQ8_0*>(w(n)); }
    uint16_t* cache(const std::string& n) { return static_cast<uint16_t*>(caches_.at(n)); }

    void enqueue(const Graph& g, const Step& s) {
        cudaStream_t st = stream_;
        const int32_t* ids = as<int32_t>("ids");
        const int32_t* pos = as<int32_t>("pos");
        switch (s.op) {
            case Op::embed: {
                const Tensor& t = m_.at(s.in[0]);
                if (t.type == DType::q8_0)
                    cuda::embed_q8_0(wq(s.in[0]), s.k, ids, s.n, f(s.out[0]), st);
                else if (t.type == DType::f16)
                    cuda::embed_f16(static_cast<const uint16_t*>(w(s.in[0])), s.k, ids, s.n, f(s.out[0]), st);
                else
                    cuda::embed_f32(wf(s.in[0]), s.k, ids, s.n, f(s.out[0]), st);
                break;
            }
            case Op::rms_norm: cuda::rms_norm_f32(f(s.in[0]), wf(s.in[1]), f(s.out[0]), s.n, s.k, st); break;
            case Op::rms_norm_quant:
                cuda::rms_norm_quant_f32_t(f(s.in[0]), wf(s.in[1]), f(s.out[0]), s.n, s.k, as<uint8_t>(s.out[1]),
                                           as<uint32_t>(s.out[2]), st);
                break;
            case Op::rms_norm_q8_0:
                cuda::rms_norm_q8_0(f(s.in[0]), wf(s.in[1]), f(s.out[0]), as<BlockQ8_0>(s.out[1]), s.n, s.k, st);
                break;
            case Op::quantize_pad40:
                cuda::quantize_pad40_t(f(s.in[0]), s.n, s.k, as<uint8_t>(s.out[0]), as<uint32_t>(s.out[1]), st);
                break;
            case Op::mmq:
                cuda::mmq_q8_0(as<uint8_t>(s.in[0]), as<uint32_t>(s.in[1]), wq(s.in[2]), f(s.out[0]), s.n, s.rows, s.k,
                               cuda::MmqTiling::automatic, st);
                break;
            case Op::mmq_add: {
                const bool residual = is_act(s.in[3]);  // else the bias, a weight tensor
                cuda::mmq_q8_0_add(as<uint8_t>(s.in[0]), as<uint32_t>(s.in[1]), wq(s.in[2]),
                                   residual ? nullptr : wf(s.in[3]), residual ? f(s.in[3]) : nullptr, f(s.out[0]), s.n,
                                   s.rows, s.k, cuda::MmqTiling::automatic, st);
                break;
            }
            case Op::quantize_q8_0: cuda::quantize_q8_0(f(s.in[0]), as<BlockQ8_0>(s.out[0]), s.k, st); break;
            case Op::proj_q8_0:
                cuda::proj_q8_0_v2(wq(s.in[1]), as<BlockQ8_0>(s.in[0]), f(s.out[0]), s.rows, s.k, st);
                break;
            case Op::proj_q8_0_pair: {
                const BlockQ8_0* ws[2] = {wq(s.in[1]), wq(s.in[2])};
                float* ys[2] = {f(s.out[0]), f(s.out[1])};
                cuda::proj_q8_0_fused2(ws, as<BlockQ8_0>(s.in[0]), ys, s.rows, s.k, st);
                break;
            }
            case Op::proj_q8_0_add:
                cuda::proj_q8_0_v2_add(wq(s.in[1]), as<BlockQ8_0>(s.in[0]), is_act(s.in[2]) ? f(s.in[2]) : wf(s.in[2]),
                                       f(s.out[0]), s.rows, s.k, st);
                break;
            case Op::bias: cuda::bias_f32(f(s.out[0]), wf(s.in[1]), s.rows, s.k, st); break;
            case Op::rope: cuda::rope_neox(f(s.in[0]), s.n, s.rows, s.k, pos, g.hp.rope_base, st); break;
            case Op::kv_store: cuda::kv_store_f16(f(s.in[0]), s.n, s.rows, s.k, cache(s.out[0]), g.ctx, s.pos0, st); break;
            case Op::attention:
                if (s.variant == "decode")
                    cuda::attention_decode(f(s.in[0]), cache(s.in[1]), cache(s.in[2]), s.L, g.ctx, s.rows, s.h2, s.k,
                                           f(s.out[0]), static_cast<float*>(work_), st);
                else
                    cuda::attention_prefill(f(s.in[0]), cache(s.in[1]), cache(s.in[2]), s.n, s.L, g.ctx, s.rows, s.h2,
                                            s.k, f(s.out[0]), st);
                break;
            case Op::add: cuda::add_f32(f(s.in[0]), f(s.in[1]), f(s.out[0]), s.n * s.k, st); break;
            case Op::swiglu: cuda::swiglu_f32(f(s.in[0]), f(s.in[1]), f(s.out[0]), s.n, s.k, st); break;
            case Op::swiglu_q8_0:
                cuda::swiglu_q8_0(f(s.in[0]), f(s.in[1]), f(s.out[0]), as<BlockQ8_0>(s.out[1]), s.n, s.k, st);
                break;
            case Op::swiglu_quant:
                cuda::swiglu_quant_f32_t(f(s.in[0]), f(s.in[1]), f(s.out[0]), s.n, s.k, as<uint8_t>(s.out[1]),
                                         as<uint32_t>(s.out[2]), st);
                break;
            case Op::proj_f32:
            case Op::kv_store_f32:
            case Op::attention_f32: throw BadInput(std::string("step ") + op_name(s.op) + " runs on the host only");
        }
    }

    const Model& m_;
    int64_t ctx_;
    DeviceOptions opt_;
    cudaStream_t stream_ = nullptr;
    std::map<std::string, void*> weights_, caches_;
    std::map<std::string, std::pair<void*, size_t>> bufs_;
    std::map<std::string, Graph::View> views_;  // the current graph's
    std::vector<void*> allocations_;            // weights and caches
    void* work_ = nullptr;
    size_t work_bytes_ = 0;
    std::set<std::pair<int, int>> warmed_;
};

}  // namespace

std::unique_ptr<Runner> make_device_runner(const Model& m, const std::string& path, int64_t ctx,
                                           const DeviceOptions& opt) {
    return std::make_unique<DeviceRunner>(m, path, ctx, opt);
}

BenchStats device_bench(const Model& m, const Graph& g, int reps, const DeviceOptions& opt) {
    DeviceRunner r(m, g.path, g.ctx, opt);
    return r.bench(g, reps);
}

}  // namespace bitgate::model
