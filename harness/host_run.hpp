// Inputs for a case, and host-model runs in guarded, poisoned buffers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bitgate/spec.hpp"
#include "verdict.hpp"

namespace bitgate {

using Bytes = std::vector<uint8_t>;

// Guard and poison patterns shared by host and device runs.
inline constexpr size_t kGuardBytes = 256;
inline constexpr uint8_t kGuard = 0xE7, kPoisonA = 0xA5, kPoisonB = 0x5A;

std::vector<size_t> tensor_bytes(const FamilySpec& f, const Shape& s, Role role);
std::vector<const TensorSpec*> tensors_of(const FamilySpec& f, Role role);

// The input tensors of a case, in declared order: a pure function of (seed, profile, name, shape).
std::vector<Bytes> make_inputs(const FamilySpec& f, const Shape& s, uint64_t seed, const std::string& profile);
// Every NaN of an f32 buffer as 0x7fffffff. The host models run on x86, where a NaN result keeps
// the payload and sign of a NaN operand; CUDA's f32 arithmetic returns the canonical NaN
// 0x7fffffff. run_model writes the NaNs of every f32 output this way (finite bytes never change),
// so the payload-sensitive byte comparison holds the kernel to the device's NaN, not x86's.
void canonicalize_nans(uint8_t* f32, size_t bytes);
inline void canonicalize_nans(Bytes& f32) { canonicalize_nans(f32.data(), f32.size()); }
// The same rule for a host model's output held as floats (the tests of its CPU paths).
inline void canonicalize_nans(std::vector<float>& f32) {
    canonicalize_nans(reinterpret_cast<uint8_t*>(f32.data()), f32.size() * sizeof(float));
}
// The seed of run C (new inputs at the same addresses).
uint64_t reuse_seed(uint64_t seed);

struct ModelRun {
    std::vector<Bytes> out;
    Verdict verdict = Verdict::ok;
    std::vector<Difference> problems;  // unwritten bytes, guard or input damage
};

// Runs the variant's model once with outputs poisoned A; with `coverage`, again with poison B,
// and reports every byte the model did not write. Guards and inputs are checked either way.
ModelRun run_model(const FamilySpec& f, const VariantSpec& v, const Shape& s, const std::vector<Bytes>& in, bool coverage);

}  // namespace bitgate
