// For device tests that check launches as the forward runs them, inside a CUDA graph: capture
// what `launches` enqueues on stream s, replay the graph `reps` times, wait for the stream.
#pragma once
#include <cuda_runtime.h>

#include <functional>

namespace bitgate::test {

inline cudaError_t replay_in_graph(cudaStream_t s, const std::function<void()>& launches, int reps = 1) {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) return e;
    launches();
    if ((e = cudaStreamEndCapture(s, &g)) != cudaSuccess) return e;
    if ((e = cudaGraphInstantiate(&exec, g, 0)) == cudaSuccess) {
        for (int rep = 0; rep < reps && e == cudaSuccess; ++rep) e = cudaGraphLaunch(exec, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        cudaGraphExecDestroy(exec);
    }
    cudaGraphDestroy(g);
    return e;
}

}  // namespace bitgate::test
