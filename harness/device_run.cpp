#include "device_run.hpp"

#include <algorithm>

#include "device.hpp"
#include "diff.hpp"

namespace bitgate {

namespace {

struct Buffers {
    const FamilySpec* family = nullptr;
    std::vector<DeviceBuffer> in, out, work;
    DeviceIo io() const {
        DeviceIo io{.family = family};
        for (auto& b : in) io.in.push_back(b.data());
        for (auto& b : out) io.out.push_back(b.data());
        for (auto& b : work) io.work.push_back(b.data());
        return io;
    }
};

}  // namespace

DeviceOutcome run_device(const DeviceCase& c) {
    const FamilySpec& f = *c.family;
    const Shape& s = c.shape;
    const DeviceLauncher& launch = c.variant->launch;
    const auto ins = tensors_of(f, Role::input), outs = tensors_of(f, Role::output), works = tensors_of(f, Role::workspace);

    DeviceOutcome r;
    auto note = [&](Difference d) {
        if (d.bytes == 0 && d.first.empty()) return;
        r.verdict = std::max(r.verdict, d.verdict);
        r.diffs.push_back(std::move(d));
    };

    Buffers b{.family = &f};
    for (const Bytes& x : *c.in) b.in.emplace_back(x.size());
    for (size_t n : tensor_bytes(f, s, Role::output)) b.out.emplace_back(n);
    for (size_t n : tensor_bytes(f, s, Role::workspace)) b.work.emplace_back(n);
    for (auto& w : b.work) w.fill(kPoisonA);

    // One run: inputs uploaded, outputs poisoned, launch, then every check that needs no model.
    auto run = [&](const std::vector<Bytes>& in, uint8_t poison, const char* name) -> std::vector<Bytes> {
        for (size_t i = 0; i < in.size(); ++i) {
            b.in[i].fill(0);
            b.in[i].upload(in[i]);
        }
        for (auto& o : b.out) o.fill(poison);
        if (c.variant->prepare) c.variant->prepare(s, b.io());
        launch(s, b.io());
        if (std::string err = device_sync(); !err.empty()) {
            note(Difference{.tensor = "launch", .verdict = Verdict::launch_error, .bytes = 1,
                            .first = {std::string("run ") + name + ": " + err}});
            return {};
        }
        auto guard = [&](const std::vector<DeviceBuffer>& bufs, const std::vector<const TensorSpec*>& ts) {
            for (size_t i = 0; i < bufs.size(); ++i)
                if (!bufs[i].guards_intact())
                    note(Difference{.tensor = ts[i]->name, .verdict = Verdict::out_of_bounds, .bytes = 1,
                                    .first = {std::string("run ") + name + ": a guard zone of " + ts[i]->name +
                                              " was overwritten (write before its start or past its end)"}});
        };
        guard(b.in, ins);
        guard(b.out, outs);
        guard(b.work, works);
        for (size_t i = 0; i < in.size(); ++i) {
            Difference d = diff_bytes(*ins[i], s, in[i], b.in[i].download(), Verdict::input_modified);
            if (d.bytes) d.first.insert(d.first.begin(), std::string("run ") + name + ": the kernel wrote into input " + ins[i]->name);
            note(std::move(d));
        }
        std::vector<Bytes> got;
        for (auto& o : b.out) got.push_back(o.download());
        return got;
    };

    try {
        std::vector<Bytes> a = run(*c.in, kPoisonA, "A");
        if (a.empty()) return r;
        std::vector<Bytes> bb = run(*c.in, kPoisonB, "B");
        if (bb.empty()) return r;
        for (size_t i = 0; i < outs.size(); ++i) {
            note(diff_bytes(*outs[i], s, a[i], bb[i], Verdict::unwritten));
            note(diff_bytes(*outs[i], s, (*c.expected)[i], a[i], Verdict::value_mismatch));
        }
        std::vector<Bytes> cc = run(*c.in_c, kPoisonA, "C");
        if (cc.empty()) return r;
        bool c_wrong = false;
        for (size_t i = 0; i < outs.size(); ++i) c_wrong |= cc[i] != (*c.expected_c)[i];
        if (c_wrong) {
            // Run D: the same new inputs in fresh buffers (addresses never used before). Right
            // there, the kernel kept something from run A keyed on where its data lived: stale
            // on reuse. Wrong there too, it is simply wrong on these values.
            Buffers fresh{.family = &f};
            for (const Bytes& x : *c.in_c) {
                fresh.in.emplace_back(x.size());
                fresh.in.back().fill(0);
                fresh.in.back().upload(x);
            }
            for (size_t n : tensor_bytes(f, s, Role::output)) { fresh.out.emplace_back(n); fresh.out.back().fill(kPoisonA); }
            for (size_t n : tensor_bytes(f, s, Role::workspace)) { fresh.work.emplace_back(n); fresh.work.back().fill(kPoisonA); }
            if (c.variant->prepare) c.variant->prepare(s, fresh.io());
            launch(s, fresh.io());
            bool d_right = device_sync().empty();
            for (size_t i = 0; i < outs.size() && d_right; ++i) d_right = fresh.out[i].download() == (*c.expected_c)[i];
            const Verdict v = d_right ? Verdict::stale_on_reuse : Verdict::value_mismatch;
            for (size_t i = 0; i < outs.size(); ++i) {
                Difference d = diff_bytes(*outs[i], s, (*c.expected_c)[i], cc[i], v);
                if (d.bytes) d.first.insert(d.first.begin(), d_right ? "run C (new inputs, same addresses) is wrong where run D (same inputs, fresh addresses) is right"
                                                                     : "run C and run D (new inputs) both differ from the model");
                note(std::move(d));
            }
        }
        r.out_a = std::move(a);
    } catch (const std::exception& e) {
        note(Difference{.tensor = "device", .verdict = Verdict::launch_error, .bytes = 1, .first = {e.what()}});
    }
    return r;
}

}  // namespace bitgate
