#include "bench.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
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

struct Events {
    cudaEvent_t a, b;
    Events() { must(cudaEventCreate(&a), "event"); must(cudaEventCreate(&b), "event"); }
    ~Events() { cudaEventDestroy(a); cudaEventDestroy(b); }
    float ms() const { float t = 0; must(cudaEventElapsedTime(&t, a, b), "elapsed"); return t; }
};

double percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

cudaDeviceProp props() {
    cudaDeviceProp p{};
    must(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
    return p;
}

}  // namespace

double measure_read_ceiling() {
    const size_t bytes = size_t(4) << 30;
    void* buf = nullptr;
    uint32_t* sink = nullptr;
    must(cudaMalloc(&buf, bytes), "cudaMalloc");
    must(cudaMalloc(&sink, 4), "cudaMalloc");
    must(cudaMemset(buf, 0x3c, bytes), "cudaMemset");
    const int sms = props().multiProcessorCount;
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

std::vector<BenchRow> run_bench(const BenchOptions& o, double ceiling) {
    const std::string root = o.root.empty() ? default_root() : o.root;
    std::vector<CatalogLine> lines;
    for (const FamilySpec* f : families()) {
        if (!o.families.empty() && std::find(o.families.begin(), o.families.end(), f->name) == o.families.end()) continue;
        for (auto& l : read_family_catalog(*f, shapes_path(root, f->name)))
            if (l.bench) lines.push_back(std::move(l));
    }
    const cudaDeviceProp p = props();
    std::vector<BenchRow> rows;
    for (const CatalogLine& l : lines) {
        const FamilySpec& f = *l.family;
        const std::string profile = l.profiles.empty() ? "uniform" : l.profiles.front();
        const auto in = make_inputs(f, l.shape, l.seeds.front(), profile);
        size_t set_bytes = 0;
        for (const auto& b : in) set_bytes += b.size();
        const auto outs = tensor_bytes(f, l.shape, Role::output), works = tensor_bytes(f, l.shape, Role::workspace);
        for (size_t n : outs) set_bytes += n;
        for (size_t n : works) set_bytes += n;
        // Enough copies that consecutive calls never find their data in L2.
        size_t free_b = 0, total_b = 0;
        must(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        int rot = int(std::clamp<size_t>((4 * size_t(p.l2CacheSize) + set_bytes - 1) / std::max<size_t>(set_bytes, 1), 2, 64));
        while (rot > 1 && set_bytes * rot > free_b * 6 / 10) --rot;
        std::vector<std::vector<void*>> bufs(rot);
        std::vector<DeviceIo> ios(rot, DeviceIo{.family = &f});
        for (int r = 0; r < rot; ++r) {
            for (const auto& b : in) {
                void* d; must(cudaMalloc(&d, b.size()), "cudaMalloc");
                must(cudaMemcpy(d, b.data(), b.size(), cudaMemcpyHostToDevice), "upload");
                bufs[r].push_back(d); ios[r].in.push_back(d);
            }
            for (size_t n : outs) { void* d; must(cudaMalloc(&d, n), "cudaMalloc"); bufs[r].push_back(d); ios[r].out.push_back(d); }
            for (size_t n : works) { void* d; must(cudaMalloc(&d, n), "cudaMalloc"); must(cudaMemset(d, 0, n), "memset"); bufs[r].push_back(d); ios[r].work.push_back(d); }
        }
        for (const VariantSpec& v : f.variants) {
            if (v.mutant || !v.launch) continue;
            if (!o.variants.empty() && std::find(o.variants.begin(), o.variants.end(), v.name) == o.variants.end()) continue;
            if (!l.variants.empty() && std::find(l.variants.begin(), l.variants.end(), v.name) == l.variants.end()) continue;
            if (!shape_problem(f, &v, l.shape).empty()) continue;
            const DeviceLauncher& launch = v.launch;
            BenchRow row{.family = f.name, .variant = v.name, .shape = l.shape.str(), .rotation = rot};
            Events ev;
            if (v.prepare)
                for (int r = 0; r < rot; ++r) row.prepare_launches = v.prepare(l.shape, ios[r]);
            for (int i = 0; i < 3; ++i) row.launches = launch(l.shape, ios[i % rot]);
            must(cudaDeviceSynchronize(), "warm-up");
            must(cudaGetLastError(), "warm-up launch");
            std::vector<double> t;
            double spent = 0;
            for (int i = 0; (i < o.min_iters || spent < o.target_ms) && i < 2000; ++i) {
                must(cudaEventRecord(ev.a), "record");
                launch(l.shape, ios[i % rot]);
                must(cudaEventRecord(ev.b), "record");
                must(cudaEventSynchronize(ev.b), "sync");
                t.push_back(ev.ms());
                spent += t.back();
            }
            must(cudaGetLastError(), "bench launch");
            row.iters = int(t.size());
            row.median_us = percentile(t, 0.5) * 1e3;
            row.p10_us = percentile(t, 0.1) * 1e3;
            row.p90_us = percentile(t, 0.9) * 1e3;
            row.bytes = f.bytes_moved ? f.bytes_moved(l.shape) : double(set_bytes);
            row.gbps = row.bytes / (row.median_us * 1e-6) / 1e9;
            row.pct_ceiling = 100.0 * row.gbps / ceiling;
            if (f.ops) {
                row.ops = f.ops(l.shape);
                row.ops_rate = row.ops / (row.median_us * 1e-6);
                row.ops_unit = f.ops_unit;
            }
            rows.push_back(row);
        }
        for (auto& set : bufs)
            for (void* d : set) cudaFree(d);
    }
    return rows;
}

}  // namespace bitgate
