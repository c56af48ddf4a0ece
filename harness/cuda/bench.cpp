#include "bench.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "catalog.hpp"
#include "check.hpp"
#include "errors.hpp"
#include "host_run.hpp"
#include "registry.hpp"

namespace bitgate::cuda {
void read_ceiling(const void* p, size_t bytes, uint32_t* sink, int sms);
}

namespace bitgate {

namespace {

void must(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

std::string error_words(cudaError_t e) { return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")"; }

struct Events {
    cudaEvent_t a, b;
    Events() { must(cudaEventCreate(&a), "event"); must(cudaEventCreate(&b), "event"); }
    ~Events() { cudaEventDestroy(a); cudaEventDestroy(b); }
    float ms() const { float t = 0; must(cudaEventElapsedTime(&t, a, b), "elapsed"); return t; }
};

// A stream of its own for the graph: created blocking, so that a launcher which enqueues on the
// legacy default stream instead of io.stream breaks the capture (an implicit dependency on a
// capturing stream is an error) rather than running outside the graph unseen.
struct Stream {
    cudaStream_t s = nullptr;
    Stream() { must(cudaStreamCreate(&s), "stream"); }
    ~Stream() { cudaStreamDestroy(s); }
};

struct Graph {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    ~Graph() {
        if (exec) cudaGraphExecDestroy(exec);
        if (g) cudaGraphDestroy(g);
    }
};

// Every copy of a case's buffers in one allocation, each buffer at a multiple of 256 bytes as
// cudaMalloc would place it (launchers that pick a path by alignment see what they see in use).
struct Pool {
    void* base = nullptr;
    ~Pool() { if (base) cudaFree(base); }
};

size_t align256(size_t n) { return (n + 255) / 256 * 256; }

double percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

int current_device() {
    int dev = 0;
    must(cudaGetDevice(&dev), "cudaGetDevice");
    return dev;
}

int kernel_nodes(cudaGraph_t graph) {
    size_t count = 0;
    must(cudaGraphGetNodes(graph, nullptr, &count), "graph nodes");
    std::vector<cudaGraphNode_t> nodes(count);
    if (count) must(cudaGraphGetNodes(graph, nodes.data(), &count), "graph nodes");
    int kernels = 0;
    for (cudaGraphNode_t n : nodes) {
        cudaGraphNodeType t;
        must(cudaGraphNodeGetType(n, &t), "node type");
        if (t == cudaGraphNodeTypeKernel) ++kernels;
    }
    return kernels;
}

void summarize(BenchTiming& t, const std::vector<double>& us, double bytes, double ops, double ceiling) {
    t.available = true;
    t.median_us = percentile(us, 0.5);
    t.p10_us = percentile(us, 0.1);
    t.p90_us = percentile(us, 0.9);
    t.fig = figures(t.median_us, bytes, ops, ceiling);
}

// Captures `calls` calls, call i on buffer set i % sets, into g. "" or why the calls cannot be
// captured. Thread-local capture mode: a launcher that waits for the device, copies to the host
// or allocates with cudaMalloc inside its call makes the capture fail, and its isolated time
// then holds work that a graph would silently leave out; so it gets no back-to-back figure.
std::string capture(const DeviceLauncher& launch, const Shape& s, const std::vector<DeviceIo>& sets, int calls, int launches,
                    cudaStream_t stream, cudaGraph_t& g) {
    must(cudaGetLastError(), "before capture");
    must(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
    std::string why;
    for (int i = 0; i < calls && why.empty(); ++i) {
        DeviceIo io = sets[size_t(i) % sets.size()];
        io.stream = stream;
        try {
            if (const int n = launch(s, io); n != launches)
                why = "call " + std::to_string(i) + " reported " + std::to_string(n) + " launches where the isolated calls reported " +
                      std::to_string(launches);
        } catch (const std::exception& e) {
            why = e.what();
        }
        if (!why.empty()) break;
        if (cudaError_t e = cudaPeekAtLastError(); e != cudaSuccess) why = error_words(e);
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        if (why.empty() && (cudaStreamIsCapturing(stream, &status) != cudaSuccess || status != cudaStreamCaptureStatusActive))
            why = "the launcher's calls invalidated the capture";
    }
    const cudaError_t end = cudaStreamEndCapture(stream, &g);
    if (why.empty() && end != cudaSuccess) why = error_words(end);
    (void)cudaGetLastError();  // a refused capture's errors are not sticky: clear them
    if (why.empty()) {
        const int k = kernel_nodes(g);
        if (k != calls * launches)
            why = "the graph holds " + std::to_string(k) + " kernels where " + std::to_string(calls) + " calls of " +
                  std::to_string(launches) + " launches were made (a launch went to another stream)";
    }
    must(cudaDeviceSynchronize(), "after capture");
    return why;
}

BenchTiming back_to_back(const DeviceLauncher& launch, const Shape& s, const std::vector<DeviceIo>& sets, const Rotation& rot,
                         size_t l2, int launches, double isolated_us, const BenchOptions& o, double bytes, double ops,
                         double ceiling) {
    BenchTiming t;
    if (std::string why = back_to_back_blocker(rot, l2, launches); !why.empty()) {
        t.why = why;
        return t;
    }
    const int calls = calls_per_graph(rot.copies, isolated_us, launches);
    Stream stream;
    Graph graph;
    if (std::string why = capture(launch, s, sets, calls, launches, stream.s, graph.g); !why.empty()) {
        t.why = "the call cannot be captured in a CUDA graph: " + why;
        return t;
    }
    if (cudaError_t e = cudaGraphInstantiate(&graph.exec, graph.g, 0); e != cudaSuccess) {
        (void)cudaGetLastError();
        t.why = "the graph cannot be instantiated: " + error_words(e);
        return t;
    }
    must(cudaGraphLaunch(graph.exec, stream.s), "graph launch");  // uploads the graph; warms up
    must(cudaStreamSynchronize(stream.s), "back-to-back warm-up");
    Events ev;
    std::vector<double> us;
    double spent = 0;
    for (int i = 0; (i < 10 || spent < o.target_ms) && i < 1000; ++i) {
        must(cudaEventRecord(ev.a, stream.s), "record");
        must(cudaGraphLaunch(graph.exec, stream.s), "graph launch");
        must(cudaEventRecord(ev.b, stream.s), "record");
        must(cudaEventSynchronize(ev.b), "sync");
        const double ms = ev.ms();
        us.push_back(ms * 1e3 / calls);
        spent += ms;
    }
    must(cudaGetLastError(), "back-to-back replay");
    summarize(t, us, bytes, ops, ceiling);
    t.samples = int(us.size());
    t.calls = calls;
    return t;
}

}  // namespace

double measure_read_ceiling() {
    const size_t bytes = size_t(4) << 30;
    void* buf = nullptr;
    uint32_t* sink = nullptr;
    must(cudaMalloc(&buf, bytes), "cudaMalloc");
    must(cudaMalloc(&sink, 4), "cudaMalloc");
    must(cudaMemset(buf, 0x3c, bytes), "cudaMemset");
    int sms = 0;
    must(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, current_device()), "SM count");
    Events ev;
    std::vector<double> t;
    for (int i = 0; i < 12; ++i) {
        must(cudaEventRecord(ev.a), "record");
        cuda::read_ceiling(buf, bytes, sink, sms);
        must(cudaEventRecord(ev.b), "record");
        must(cudaEventSynchronize(ev.b), "sync");
        if (i >= 2) t.push_back(ev.ms());
    }
    must(cudaGetLastError(), "read ceiling launch");
    cudaFree(buf);
    cudaFree(sink);
    return double(bytes) / (percentile(t, 0.5) * 1e-3) / 1e9;
}

std::string back_to_back_capture_problem(const DeviceLauncher& launch, const Shape& s, const std::vector<DeviceIo>& sets,
                                         int calls, int launches) {
    Stream stream;
    Graph graph;
    return capture(launch, s, sets, calls, launches, stream.s, graph.g);
}

size_t device_l2_bytes() {
    int l2 = 0;
    must(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, current_device()), "L2 size");
    return size_t(l2);
}

std::vector<BenchRow> run_bench(const std::vector<BenchItem>& items, const BenchOptions& o, double ceiling) {
    const size_t l2 = device_l2_bytes();
    std::vector<BenchRow> rows;
    for (const BenchItem& item : items) {
        const CatalogLine& l = item.line;
        const FamilySpec& f = *l.family;
        const std::string profile = l.profiles.empty() ? "uniform" : l.profiles.front();
        const auto in = make_inputs(f, l.shape, l.seeds.front(), profile);
        const auto outs = tensor_bytes(f, l.shape, Role::output), works = tensor_bytes(f, l.shape, Role::workspace);
        size_t set_bytes = 0, stride = 0;
        for (const auto& b : in) set_bytes += b.size(), stride += align256(b.size());
        for (size_t n : outs) set_bytes += n, stride += align256(n);
        for (size_t n : works) set_bytes += n, stride += align256(n);
        // Enough copies that a call's data has left L2 by the time its turn comes again.
        size_t free_b = 0, total_b = 0;
        must(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        const Rotation rot = plan_rotation(stride, l2, free_b * 6 / 10);
        Pool pool;
        must(cudaMalloc(&pool.base, std::max<size_t>(stride, 1) * size_t(rot.copies)), "cudaMalloc");
        must(cudaMemset(pool.base, 0, stride * size_t(rot.copies)), "memset");
        std::vector<DeviceIo> ios(size_t(rot.copies), DeviceIo{.family = &f});
        for (int r = 0; r < rot.copies; ++r) {
            auto* p = static_cast<unsigned char*>(pool.base) + size_t(r) * stride;
            for (const auto& b : in) {
                must(cudaMemcpy(p, b.data(), b.size(), cudaMemcpyHostToDevice), "upload");
                ios[size_t(r)].in.push_back(p);
                p += align256(b.size());
            }
            for (size_t n : outs) ios[size_t(r)].out.push_back(p), p += align256(n);
            for (size_t n : works) ios[size_t(r)].work.push_back(p), p += align256(n);
        }
        for (const VariantSpec* vp : item.variants) {
            const VariantSpec& v = *vp;
            const DeviceLauncher& launch = v.launch;
            BenchRow row{.family = f.name, .variant = v.name, .shape = l.shape.str(), .rotation = rot.copies,
                         .rotation_bytes = rot.bytes};
            row.bytes = f.bytes_moved ? f.bytes_moved(l.shape) : double(set_bytes);
            if (f.ops) {
                row.ops = f.ops(l.shape);
                row.ops_unit = f.ops_unit;
            }
            if (v.prepare)
                for (const DeviceIo& io : ios) row.prepare_launches = v.prepare(l.shape, io);
            for (int i = 0; i < 3; ++i) row.launches = launch(l.shape, ios[size_t(i % rot.copies)]);
            must(cudaDeviceSynchronize(), "warm-up");
            must(cudaGetLastError(), "warm-up launch");
            // Isolated: each call alone between two events on the default stream.
            Events ev;
            std::vector<double> us;
            double spent = 0;
            for (int i = 0; (i < o.min_iters || spent < o.target_ms) && i < 2000; ++i) {
                must(cudaEventRecord(ev.a), "record");
                launch(l.shape, ios[size_t(i % rot.copies)]);
                must(cudaEventRecord(ev.b), "record");
                must(cudaEventSynchronize(ev.b), "sync");
                us.push_back(ev.ms() * 1e3);
                spent += us.back() * 1e-3;
            }
            must(cudaGetLastError(), "bench launch");
            summarize(row.isolated, us, row.bytes, row.ops, ceiling);
            row.isolated.samples = int(us.size());
            row.back_to_back = back_to_back(launch, l.shape, ios, rot, l2, row.launches, row.isolated.median_us, o, row.bytes,
                                            row.ops, ceiling);
            rows.push_back(row);
        }
    }
    return rows;
}

}  // namespace bitgate
