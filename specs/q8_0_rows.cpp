#include "q8_0_rows.hpp"

#include "bitgate/formats.hpp"

namespace bitgate::specs {

TensorSpec q8_0_rows(const std::string& name, const std::string& cols) {
    return {.name = name, .role = Role::output, .elem = Elem::q8_0,
            .bytes = [cols](const Shape& s) { return size_t(s["n"]) * size_t(s[cols] / QK8_0) * sizeof(BlockQ8_0); },
            .decode = [cols](const Shape& s, size_t off) {
                const size_t b = off / sizeof(BlockQ8_0), w = off % sizeof(BlockQ8_0), per = size_t(s[cols] / QK8_0);
                return "token " + std::to_string(b / per) + " block " + std::to_string(b % per) +
                       (w < 2 ? " d byte " + std::to_string(w) : " qs[" + std::to_string(w - 2) + "]");
            }};
}

}  // namespace bitgate::specs
