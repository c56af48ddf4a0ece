// The defective attention kernels behind mutants/attention.cpp: the real kernels
// (kernels/attention_kernels.cuh) compiled with one defect switched on.
#include "attention.cuh"

#include "../kernels/attention_launch.cuh"

namespace bitgate::cuda {

namespace {

using attn::Bug;

Bug bug_of(mutants::AttentionDefect d) {
    switch (d) {
        case mutants::AttentionDefect::non_causal: return Bug::non_causal;
        case mutants::AttentionDefect::kv_head_mod: return Bug::kv_head_mod;
        case mutants::AttentionDefect::tail_unwritten: return Bug::tail_unwritten;
        case mutants::AttentionDefect::skip_last_split: return Bug::skip_last_split;
        case mutants::AttentionDefect::read_past_L: return Bug::read_past_L;
    }
    return Bug::none;
}

}  // namespace

int mutants::attention_prefill_defective(AttentionDefect defect, const float* q, const uint16_t* kc,
                                         const uint16_t* vc, int64_t n_q, int64_t L, int64_t ctx, int64_t n_head,
                                         int64_t n_kv_head, int64_t D, float* out, cudaStream_t stream) {
    switch (bug_of(defect)) {
        case Bug::non_causal:
            return attn::launch_prefill<Bug::non_causal>(q, kc, vc, n_q, L, ctx, n_head, n_kv_head, D, out, stream);
        case Bug::kv_head_mod:
            return attn::launch_prefill<Bug::kv_head_mod>(q, kc, vc, n_q, L, ctx, n_head, n_kv_head, D, out, stream);
        case Bug::tail_unwritten:
            return attn::launch_prefill<Bug::tail_unwritten>(q, kc, vc, n_q, L, ctx, n_head, n_kv_head, D, out, stream);
        default: return 0;  // no prefill mutant has this defect
    }
}

int mutants::attention_decode_defective(AttentionDefect defect, const float* q, const uint16_t* kc, const uint16_t* vc,
                                        int64_t L, int64_t ctx, int64_t n_head, int64_t n_kv_head, int64_t D,
                                        float* out, float* work, cudaStream_t stream) {
    switch (bug_of(defect)) {
        case Bug::kv_head_mod:
            return attn::launch_decode<Bug::kv_head_mod>(q, kc, vc, L, ctx, n_head, n_kv_head, D, out, work, stream);
        case Bug::skip_last_split:
            return attn::launch_decode<Bug::skip_last_split>(q, kc, vc, L, ctx, n_head, n_kv_head, D, out, work, stream);
        case Bug::read_past_L:
            return attn::launch_decode<Bug::read_past_L>(q, kc, vc, L, ctx, n_head, n_kv_head, D, out, work, stream);
        default: return 0;  // no decode mutant has this defect
    }
}

}  // namespace bitgate::cuda
