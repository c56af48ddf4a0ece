#include "quantize_pad40_t.cuh"

#include "bitgate/pad40.hpp"
#include "pdl.cuh"
#include "quantize_pad40_t_kernel.cuh"

namespace bitgate::cuda {

void quantize_pad40_t(const float* x, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda, cudaStream_t stream) {
    const int64_t nchunk = pad40_nchunk(d), tiles = pad40_ntb(n) * nchunk;
    if (tiles == 0) return;
    if (pad40q::lanes_for(tiles) == 4)
        launch_dependent(pad40q::quantize_pad40_t_kernel<4>, dim3(unsigned(tiles)), dim3(4 * kPad40Tokens), 0, stream, x,
                         n, d, nchunk, qs, sda);
    else
        launch_dependent(pad40q::quantize_pad40_t_kernel<2>, dim3(unsigned(tiles)), dim3(2 * kPad40Tokens), 0, stream, x,
                         n, d, nchunk, qs, sda);
}

}  // namespace bitgate::cuda
