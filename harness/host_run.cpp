#include "host_run.hpp"

#include <algorithm>
#include <cstring>

#include "diff.hpp"
#include "registry.hpp"

namespace bitgate {

std::vector<const TensorSpec*> tensors_of(const FamilySpec& f, Role role) {
    std::vector<const TensorSpec*> out;
    for (const auto& t : f.tensors)
        if (t.role == role) out.push_back(&t);
    return out;
}

std::vector<size_t> tensor_bytes(const FamilySpec& f, const Shape& s, Role role) {
    std::vector<size_t> out;
    for (const TensorSpec* t : tensors_of(f, role)) out.push_back(t->bytes(s));
    return out;
}

std::vector<Bytes> make_inputs(const FamilySpec& f, const Shape& s, uint64_t seed, const std::string& profile) {
    std::vector<Bytes> in;
    for (const TensorSpec* t : tensors_of(f, Role::input)) {
        Bytes b(t->bytes(s));
        t->generate(s, GenRequest{.seed = seed, .profile = profile, .tensor = t->name}, b);
        in.push_back(std::move(b));
    }
    return in;
}

void canonicalize_nans(uint8_t* f32, size_t bytes) {
    constexpr uint32_t canonical = 0x7fffffffu;
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
        uint32_t u;
        std::memcpy(&u, f32 + i, 4);
        if ((u & 0x7fffffffu) > 0x7f800000u) std::memcpy(f32 + i, &canonical, 4);
    }
}

uint64_t reuse_seed(uint64_t seed) { return seed ^ 0x5eed0fc0ffee5eedull; }

namespace {

// [guard][data][guard] in one allocation.
struct Guarded {
    Bytes mem;
    size_t size;
    Guarded(size_t n, uint8_t fill) : mem(n + 2 * kGuardBytes, kGuard), size(n) {
        std::fill_n(mem.begin() + kGuardBytes, n, fill);
    }
    uint8_t* data() { return mem.data() + kGuardBytes; }
    std::span<const uint8_t> view() const { return {mem.data() + kGuardBytes, size}; }
    bool guards_intact() const {
        auto ok = [](auto b, auto e) { return std::all_of(b, e, [](uint8_t x) { return x == kGuard; }); };
        return ok(mem.begin(), mem.begin() + kGuardBytes) && ok(mem.end() - kGuardBytes, mem.end());
    }
};

struct Attempt {
    std::vector<Guarded> in, out, work;
};

Attempt attempt(const FamilySpec& f, const VariantSpec& v, const Shape& s, const std::vector<Bytes>& in, uint8_t poison) {
    Attempt a;
    for (const Bytes& b : in) {
        a.in.emplace_back(b.size(), 0);
        std::memcpy(a.in.back().data(), b.data(), b.size());
    }
    for (size_t n : tensor_bytes(f, s, Role::output)) a.out.emplace_back(n, poison);
    for (size_t n : tensor_bytes(f, s, Role::workspace)) a.work.emplace_back(n, poison);
    HostIo io{.family = &f};
    for (auto& g : a.in) io.in.emplace_back(g.data(), g.size);
    for (auto& g : a.out) io.out.emplace_back(g.data(), g.size);
    for (auto& g : a.work) io.work.emplace_back(g.data(), g.size);
    model_of(f, v)(s, io);
    return a;
}

}  // namespace

ModelRun run_model(const FamilySpec& f, const VariantSpec& v, const Shape& s, const std::vector<Bytes>& in, bool coverage) {
    ModelRun r;
    Attempt a = attempt(f, v, s, in, kPoisonA);
    const auto ins = tensors_of(f, Role::input), outs = tensors_of(f, Role::output);
    auto note = [&](Difference d) {
        if (d.bytes == 0 && d.first.empty()) return;
        r.verdict = std::max(r.verdict, d.verdict);
        r.problems.push_back(std::move(d));
    };
    auto check_guards = [&](Attempt& x) {
        for (auto* group : {&x.in, &x.out, &x.work})
            for (size_t i = 0; i < group->size(); ++i)
                if (!(*group)[i].guards_intact())
                    note(Difference{.tensor = "guard", .verdict = Verdict::out_of_bounds, .bytes = 1,
                                    .first = {"the host model wrote outside a buffer"}});
    };
    check_guards(a);
    for (size_t i = 0; i < in.size(); ++i)
        note(diff_bytes(*ins[i], s, in[i], a.in[i].view(), Verdict::input_modified));
    if (coverage) {
        Attempt b = attempt(f, v, s, in, kPoisonB);
        check_guards(b);
        for (size_t i = 0; i < outs.size(); ++i)
            note(diff_bytes(*outs[i], s, a.out[i].view(), b.out[i].view(), Verdict::unwritten));
    }
    for (size_t i = 0; i < a.out.size(); ++i) {
        r.out.emplace_back(a.out[i].view().begin(), a.out[i].view().end());
        if (outs[i]->elem == Elem::f32) canonicalize_nans(r.out.back());
    }
    return r;
}

}  // namespace bitgate
