// The device side of the engine: whether a GPU is usable, guarded device buffers, and launching.
// Implemented in harness/cuda/ where CUDA is built and in harness/nocuda/ otherwise, so the
// engine above it is one code path.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bitgate {

// "" when a CUDA device is usable; otherwise why not ("built without CUDA", "no CUDA device").
std::string gpu_missing();
// "NVIDIA H200, sm_90, 132 SMs, 50 MiB L2" or "".
std::string gpu_name();
// Throws NoGpu (exit 3) naming why, where gpu_missing() says a device is not usable.
void require_gpu();

// [guard][data][guard] in device memory.
class DeviceBuffer {
public:
    explicit DeviceBuffer(size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept;

    void* data() const;
    size_t size() const { return size_; }
    void fill(uint8_t data_byte);                  // data := byte, guards := kGuard
    void upload(std::span<const uint8_t> bytes);   // data := bytes (guards untouched)
    std::vector<uint8_t> download() const;         // the data
    bool guards_intact() const;

private:
    void* alloc_ = nullptr;
    uint8_t* base_ = nullptr;  // the front guard
    size_t size_ = 0;
};

// Waits for the device; "" or the CUDA error (launch or asynchronous) in words.
std::string device_sync();
// True once a sticky error has made the context unusable: later device checks are skipped.
bool device_lost();

}  // namespace bitgate
