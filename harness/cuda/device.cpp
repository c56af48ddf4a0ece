#include "device.hpp"

#include <cuda_runtime.h>

#include <set>
#include <stdexcept>

#include "errors.hpp"
#include "host_run.hpp"

namespace bitgate {

namespace {
bool g_lost = false;

void must(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        if (e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorMisalignedAddress ||
            e == cudaErrorIllegalInstruction || e == cudaErrorHardwareStackError)
            g_lost = true;
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
    }
}
}  // namespace

namespace {

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

// Where no driver is installed at all, the runtime reports cudaErrorInsufficientDriver ("CUDA
// driver version is insufficient for CUDA runtime version"), which reads as advice to upgrade a
// driver the machine does not have: the message names the underlying reason instead.
std::string gpu_missing() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorInsufficientDriver) {
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        if (driver == 0) return "no CUDA device (no NVIDIA driver is loaded on this machine)";
        return "no CUDA device (the NVIDIA driver supports CUDA " + cuda_version(driver) + ", this build needs " +
               cuda_version(runtime) + ")";
    }
    if (e == cudaErrorNoDevice) return "no CUDA device (the NVIDIA driver sees none)";
    if (e != cudaSuccess)
        return std::string("no CUDA device (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
    if (n == 0) return "no CUDA device (the NVIDIA driver sees none)";
    return "";
}

void require_gpu() {
    if (std::string why = gpu_missing(); !why.empty()) throw NoGpu(why);
}

std::string gpu_name() {
    if (!gpu_missing().empty()) return "";
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "";
    return std::string(p.name) + ", sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
           std::to_string(p.multiProcessorCount) + " SMs, " + std::to_string(p.l2CacheSize >> 20) + " MiB L2";
}

namespace {

// Every buffer's data starts at an address no earlier buffer of this process had, even when the
// allocator hands back the same block: state a kernel keeps keyed on an address can then only
// be met again in run C, where it is meant to be caught as stale_on_reuse.
constexpr size_t kSaltSpan = size_t(1) << 20, kSaltStep = 256;

uint8_t* fresh_address(void* alloc) {
    static std::set<uintptr_t> used;
    static size_t next = 0;
    for (size_t tries = 0; tries < kSaltSpan / kSaltStep; ++tries) {
        next = (next + kSaltStep) % kSaltSpan;
        auto* p = static_cast<uint8_t*>(alloc) + next;
        if (used.insert(reinterpret_cast<uintptr_t>(p)).second) return p;
    }
    return static_cast<uint8_t*>(alloc);  // every slot of this block seen: addresses may repeat
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : size_(bytes) {
    require_gpu();
    must(cudaMalloc(&alloc_, bytes + 2 * kGuardBytes + kSaltSpan), "cudaMalloc");
    base_ = fresh_address(alloc_);
}

DeviceBuffer::~DeviceBuffer() {
    if (alloc_) cudaFree(alloc_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : alloc_(o.alloc_), base_(o.base_), size_(o.size_) {
    o.alloc_ = nullptr;
    o.base_ = nullptr;
}

void* DeviceBuffer::data() const { return base_ + kGuardBytes; }

void DeviceBuffer::fill(uint8_t b) {
    must(cudaMemset(base_, kGuard, kGuardBytes), "cudaMemset");
    must(cudaMemset(base_ + kGuardBytes, b, size_), "cudaMemset");
    must(cudaMemset(base_ + kGuardBytes + size_, kGuard, kGuardBytes), "cudaMemset");
}

void DeviceBuffer::upload(std::span<const uint8_t> bytes) {
    must(cudaMemcpy(data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "cudaMemcpy to device");
}

std::vector<uint8_t> DeviceBuffer::download() const {
    std::vector<uint8_t> out(size_);
    must(cudaMemcpy(out.data(), data(), size_, cudaMemcpyDeviceToHost), "cudaMemcpy from device");
    return out;
}

bool DeviceBuffer::guards_intact() const {
    std::vector<uint8_t> g(kGuardBytes);
    for (const uint8_t* p : {base_, base_ + kGuardBytes + size_}) {
        must(cudaMemcpy(g.data(), p, kGuardBytes, cudaMemcpyDeviceToHost), "cudaMemcpy from device");
        for (uint8_t x : g)
            if (x != kGuard) return false;
    }
    return true;
}

std::string device_sync() {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) return "";
    if (e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorMisalignedAddress ||
        e == cudaErrorIllegalInstruction || e == cudaErrorHardwareStackError)
        g_lost = true;
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

bool device_lost() { return g_lost; }

}  // namespace bitgate
