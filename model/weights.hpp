// Model weights of llama.cpp's qwen2 architecture: hyperparameters, tensors by their GGUF names,
// loaded from a GGUF file (memory-mapped, validated) or synthesized in memory from a preset.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf.hpp"

namespace bitgate::model {

struct Hparams {
    std::string arch = "qwen2";
    int64_t n_layer = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0, n_vocab = 0, n_ctx = 0;
    float rope_base = 1000000.0f;
    float rms_eps = 1e-6f;
    bool tied = false;  // no output.weight: the output projection is token_embd

    int64_t head_dim() const { return n_head ? n_embd / n_head : 0; }
};

enum class DType { f32, f16, q8_0 };
const char* dtype_name(DType t);        // "F32", "F16", "Q8_0"
uint32_t ggml_type(DType t);            // 0, 1, 8
// Bytes of a tensor of this type and shape (ne[0] a whole number of blocks; no overflow checks:
// shapes reaching here were validated).
uint64_t dtype_bytes(DType t, std::span<const int64_t> ne);

struct Tensor {
    std::string name;
    DType type;
    std::vector<int64_t> ne;  // ggml order: ne[0] = row length
    std::span<const uint8_t> bytes;
};

struct Model {
    Hparams hp;
    std::vector<Tensor> tensors;  // ggml/llama.cpp names, file order
    const Tensor& at(std::string_view name) const;  // BadInput naming the tensor if missing
    const Tensor* find(std::string_view name) const;
    std::shared_ptr<const void> storage;  // keeps the bytes alive (mmap or memory)
    std::string source;                   // the file the bytes are mapped from; empty in memory
    // Metadata other than the hyperparameters (general.name, tokenizer.*), carried to write_gguf.
    std::vector<gguf::KV> meta;
};

// The presets: "tiny" | "qwen2-0.5b" | "qwen2-7b". BadInput on any other name.
Hparams preset(std::string_view name);
inline constexpr std::string_view preset_names[] = {"tiny", "qwen2-0.5b", "qwen2-7b"};

// The tensors qwen2 needs for `hp`, in llama.cpp's file order, with their shapes. `embd` is the
// type of token_embd (and of output.weight); matrices are Q8_0, norms and biases F32.
struct TensorDesc {
    std::string name;
    DType type;
    std::vector<int64_t> ne;
};
std::vector<TensorDesc> qwen2_tensors(const Hparams& hp, DType embd = DType::q8_0);

Model synth(std::string_view preset, uint64_t seed);   // in memory
// The same for any qwen2 dimensions (n_embd and n_ff multiples of 32, n_vocab >= 259); `name`
// goes into general.name. Tests use it for models smaller than "tiny".
Model synth(const Hparams& hp, uint64_t seed, std::string_view name);
// round(127 a / amax) with halves away from zero, for 0 <= a <= amax <= 8192 (amax 0 gives 0): the
// integer quotient (254 a + amax) / (2 amax), taken as the truncated double quotient so that it
// vectorizes. That is exact: the numerator is below 2^21 and the divisor at most 2^14, so a
// quotient that is an integer is exact in double, and any other lies at least 2^-14 from the
// integers while the division's error is below 2^8 * 2^-53 (tests check every pair anyway).
// `divisor` is quantize_divisor(amax), apart so that a loop computes it once.
inline double quantize_divisor(int32_t amax) { return amax ? 2.0 * double(amax) : 1.0; }  // amax 0: 0 / 1
inline int32_t quantized_magnitude(int32_t a, int32_t amax, double divisor) {
    return static_cast<int32_t>(double(254 * a + amax) / divisor);
}
// The same bytes as synth(preset, seed).tensors[i], written into `out` (size dtype_bytes).
void synth_tensor(const TensorDesc& t, uint64_t seed, std::span<uint8_t> out);
// The metadata synth() puts in Model::meta: general.name and a byte-level BPE tokenizer.
std::vector<gguf::KV> synth_meta(std::string_view preset, const Hparams& hp);
// synth(preset, seed) written straight to a file, one tensor in memory at a time.
void synth_write(std::string_view preset, uint64_t seed, const std::string& path);

Model load_gguf(const std::string& path);              // BadInput "PATH: what is wrong" on bad files
// Refuses (BadInput) to write over m.source, the file its bytes are mapped from.
void write_gguf(const Model& m, const std::string& path);

// The checks load_gguf makes, on a parsed file: architecture, hyperparameters, every required
// tensor with its shape and a supported type. Used by load_gguf and the fuzz target.
Model model_from_gguf(const gguf::File& f, const std::string& path);
// The GGUF metadata of `hp` (general.architecture and the qwen2.* keys).
std::vector<gguf::KV> hparams_meta(const Hparams& hp);

}  // namespace bitgate::model
