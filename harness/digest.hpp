// xxh3-128 digests in xxHash's canonical (big-endian) hex: stable across platforms.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace bitgate {

std::string digest128(std::span<const uint8_t> bytes);

}  // namespace bitgate
