// bitgate-host-bench: the host models that have several CPU paths (refimpl/host_path.hpp), timed
// on each path this CPU has at the Qwen2-7B shapes, with each path's output compared byte for byte
// with the first path's (exit 1 on a difference). The end-to-end figure is `bitgate model predict`'s
// tokens/s; this splits it by family. Random operands; the median of five calls is timed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "attention.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/proj_q8_0_order.hpp"
#include "host_path.hpp"
#include "mmq_q8_0.hpp"
#include "proj_q8_0.hpp"

using namespace bitgate;
using ref::HostPath;

namespace {

uint64_t state = 0x9e3779b97f4a7c15ull;
uint64_t next() {  // xorshift64: operands only, any values do
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

// The median of five timed calls after one untimed (the machine may be shared).
template <class F>
double seconds(F&& f) {
    f();
    std::vector<double> t;
    for (int i = 0; i < 5; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[2];
}

std::vector<HostPath> paths(std::initializer_list<HostPath> want) {
    std::vector<HostPath> out;
    for (HostPath p : want)
        if (ref::host_path_available(p)) out.push_back(p);
    return out;
}

// Times `run(path, out)` on every path; the outputs must be the first path's bytes.
template <class Run>
bool each_path(const char* what, const std::vector<HostPath>& ps, size_t out_floats, double work, const char* unit,
               Run&& run) {
    std::vector<float> first(out_floats), out(out_floats);
    bool same = true;
    for (size_t i = 0; i < ps.size(); ++i) {
        std::vector<float>& o = i == 0 ? first : out;
        const double s = seconds([&] { run(ps[i], o.data()); });
        const bool eq = i == 0 || std::memcmp(first.data(), out.data(), out_floats * 4) == 0;
        same = same && eq;
        std::printf("%-44s %-12s %8.4f s %8.1f %s%s\n", what, ref::host_path_name(ps[i]), s, work / s / 1e9, unit,
                    eq ? "" : "  BYTES DIFFER");
    }
    return same;
}

}  // namespace

int main() {
    bool ok = true;
    char what[96];
    // Shapes unpacked by hand, not as structured bindings: the lambdas below capture them (clang 14).
    for (const auto& shape : {std::tuple<int64_t, int64_t, int64_t>{512, 3584, 3584}, {512, 18944, 3584}, {512, 3584, 18944}}) {
        const int64_t n = std::get<0>(shape), N = std::get<1>(shape), K = std::get<2>(shape);
        std::vector<uint8_t> qs(pad40_qs_bytes(n, K));
        std::vector<uint32_t> sda(pad40_sda_bytes(n, K) / 4);
        for (auto& b : qs) b = uint8_t(next() % 255);  // quants in [-127, 127]
        for (auto& s : sda) s = 0x2000u | uint32_t(next() & 0x3ffu);
        std::vector<BlockQ8_0> w(static_cast<size_t>(N * K / 32));
        for (auto& b : w) {
            b.d = uint16_t(0x2000u | (next() & 0x3ffu));
            for (auto& q : b.qs) q = int8_t(next());
        }
        std::snprintf(what, sizeof what, "mmq_q8_0 n %lld, N %lld, K %lld", (long long)n, (long long)N, (long long)K);
        ok &= each_path(what, paths({HostPath::avx2, HostPath::avx512_vnni}), size_t(n * N), double(n) * N * K,
                        "G multiply-adds/s", [&](HostPath p, float* C) {
                            ref::mmq_q8_0(qs.data(), sda.data(), w.data(), C, n, N, K, ref::MmqOrder::ascending, p);
                        });
    }
    for (const auto& shape : {std::pair<int64_t, int64_t>{3584, 3584}, {18944, 3584}, {3584, 18944}, {152064, 3584}}) {
        const int64_t N = shape.first, K = shape.second;
        const int64_t bpr = K / 32;
        std::vector<BlockQ8_0> w(static_cast<size_t>(N * bpr)), x(static_cast<size_t>(bpr));
        for (auto& b : w) {
            b.d = uint16_t(0x2000u | (next() & 0x3ffu));
            for (auto& q : b.qs) q = int8_t(next());
        }
        for (auto& b : x) {
            b.d = uint16_t(0x2000u | (next() & 0x3ffu));
            for (auto& q : b.qs) q = int8_t(int(next() % 255) - 127);
        }
        const ref::ProjQ8Order order{.width = proj_q8_0_v2_width(int(bpr))};
        std::snprintf(what, sizeof what, "proj_q8_0 %lld x %lld", (long long)N, (long long)K);
        ok &= each_path(what, paths({HostPath::scalar, HostPath::avx2, HostPath::avx512_vnni}), size_t(N),
                        double(N * bpr * 34), "GB/s of weights", [&](HostPath p, float* y) {
                            ref::proj_q8_0(w.data(), x.data(), y, N, bpr, order, 0, p);
                        });
    }
    for (int64_t L : {512, 3325}) {
        const int64_t H = 28, KV = 4, D = 128;
        std::vector<float> q(static_cast<size_t>(L * H * D));
        for (auto& v : q) v = float(int(next() % 2001) - 1000) / 1000.0f;
        std::vector<uint16_t> k(static_cast<size_t>(KV * L * D)), v(k.size());
        for (auto& e : k) e = uint16_t(0x3000u | (next() & 0x83ffu));
        for (auto& e : v) e = uint16_t(0x3000u | (next() & 0x83ffu));
        std::snprintf(what, sizeof what, "attention prefill L %lld (28/4 heads, 128)", (long long)L);
        const double pairs = double(L) * double(L + 1) / 2;
        ok &= each_path(what, paths({HostPath::scalar, HostPath::fastest}), q.size(), 2.0 * double(H * D) * pairs,
                        "G fma/s", [&](HostPath p, float* out) {
                            ref::attention_f16kv(q.data(), k.data(), v.data(), L, L, L, H, KV, D, out, p);
                        });
    }
    std::printf(ok ? "every path gave the first path's bytes\n" : "FAIL: a path gave other bytes\n");
    return ok ? 0 : 1;
}
