#include "device.hpp"

#include "errors.hpp"

namespace bitgate {

std::string gpu_missing() { return "bitgate was built without CUDA (host-only build)"; }
std::string gpu_name() { return ""; }
void require_gpu() { throw NoGpu(gpu_missing()); }

DeviceBuffer::DeviceBuffer(size_t) { require_gpu(); }
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : alloc_(o.alloc_), base_(o.base_), size_(o.size_) {}
void* DeviceBuffer::data() const { return nullptr; }
void DeviceBuffer::fill(uint8_t) {}
void DeviceBuffer::upload(std::span<const uint8_t>) {}
std::vector<uint8_t> DeviceBuffer::download() const { return {}; }
bool DeviceBuffer::guards_intact() const { return true; }
std::string device_sync() { return gpu_missing(); }
bool device_lost() { return false; }

}  // namespace bitgate
