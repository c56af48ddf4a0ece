#include "host_path.hpp"

namespace bitgate::ref {

bool host_path_available(HostPath p) {
    switch (p) {
        case HostPath::fastest:
        case HostPath::scalar: return true;
#if defined(__x86_64__) && defined(__GNUC__)
        case HostPath::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case HostPath::avx512_vnni:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni") &&
                   __builtin_cpu_supports("fma");
#else
        default: return false;
#endif
    }
    return false;
}

const char* host_path_name(HostPath p) {
    switch (p) {
        case HostPath::fastest: return "fastest";
        case HostPath::scalar: return "scalar";
        case HostPath::avx2: return "avx2";
        case HostPath::avx512_vnni: return "avx512_vnni";
    }
    return "?";
}

bool host_path_from_name(std::string_view name, HostPath& out) {
    for (HostPath p : {HostPath::fastest, HostPath::scalar, HostPath::avx2, HostPath::avx512_vnni})
        if (name == host_path_name(p)) {
            out = p;
            return true;
        }
    return false;
}

}  // namespace bitgate::ref
