// Model weights: hyperparameters and named tensors in ggml order, from a GGUF file or a preset.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bitgate::model {

struct Hparams {
    std::string arch = "qwen2";
    int64_t n_layer = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0, n_vocab = 0, n_ctx = 0;
    float rope_base = 1000000.0f;
    float rms_eps = 1e-6f;
    bool tied = false;
};

enum class DType { f32, f16, q8_0 };

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
};

Model synth(std::string_view preset, uint64_t seed);  // "tiny" | "qwen2-0.5b" | "qwen2-7b", in memory
Model load_gguf(const std::string& path);             // BadInput "PATH: what is wrong" on bad files
void write_gguf(const Model& m, const std::string& path);

}  // namespace bitgate::model
