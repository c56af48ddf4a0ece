#include "digest.hpp"

#include <xxhash.h>

namespace bitgate {

std::string digest128(std::span<const uint8_t> bytes) {
    const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    static const char* hex = "0123456789abcdef";
    std::string s(32, '0');
    for (int i = 0; i < 16; ++i) {
        s[2 * i] = hex[c.digest[i] >> 4];
        s[2 * i + 1] = hex[c.digest[i] & 15];
    }
    return s;
}

}  // namespace bitgate
