// A stand-in for libFuzzer where the compiler has none (g++): replays the seed corpus, then
// deterministic mutations of it, through the target's LLVMFuzzerTestOneInput, so each target still
// runs under AddressSanitizer and UBSan. Takes libFuzzer's spelling of what it uses:
//   TARGET [-max_total_time=SECONDS] [-runs=N] [-seed=S] [-timeout=SECONDS] [-rss_limit_mb=MB]
//          CORPUS_DIR_OR_FILE...
// On a crash (a sanitizer report, an uncaught exception), an input that runs longer than -timeout,
// or one after which the process's peak memory passed -rss_limit_mb (a reader that allocates what a
// header claims instead of what the file holds), the input is written to ./crash-<target>-<run>
// and printed in hex.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <csignal>
#include <sys/resource.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Present when a sanitizer runtime is linked in; weak, so the driver also links without one.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace {

std::string g_target = "target";
uint64_t g_run = 0;
const std::string* g_current = nullptr;

void dump_current() {
    if (!g_current) return;
    const std::string path = "crash-" + g_target + "-" + std::to_string(g_run);
    std::ofstream(path, std::ios::binary).write(g_current->data(), std::streamsize(g_current->size()));
    std::fprintf(stderr, "fuzz driver: run %llu crashed; input (%zu bytes) in %s:",
                 static_cast<unsigned long long>(g_run), g_current->size(), path.c_str());
    for (unsigned char c : *g_current) std::fprintf(stderr, " %02x", c);
    std::fprintf(stderr, "\n");
}

struct Rng {  // splitmix64: the same mutations on every machine
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    size_t below(size_t n) { return n ? size_t(next() % n) : 0; }
};

// Binary formats keep counts and sizes in little-endian words: values that break them.
const uint64_t kWords[] = {0, 1, 2, 0x7f, 0xff, 0x100, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff,
                           0x100000000ull, 0x7fffffffffffffffull, 0xffffffffffffffffull};

// Tokens that break readers of numbers, sizes and line structure.
const char* const kTokens[] = {"18446744073709551615", "18446744073709551616", "9223372036854775807",
                               "4611686018427387904", "4294967296", "2147483648", "2147483647", "-1", "0",
                               "1e3", "0x10", "nan", "inf", "=", ",", "-", "\n", "\r\n", "\t", " ", "#", "@catalog",
                               "@catalog x opt-in", "seed=", "seeds=", "profile=", "profiles=", "variants=",
                               "k=", "n=", "d=", "bench", "\xff\xfe", std::string_view("\0", 1).data()};

std::string mutate(std::string s, const std::vector<std::string>& corpus, Rng& r) {
    const int steps = 1 + int(r.below(4));
    for (int i = 0; i < steps; ++i) {
        const size_t at = r.below(s.size() + 1);
        switch (r.below(8)) {
            case 0:
                if (!s.empty()) s[r.below(s.size())] ^= char(1u << r.below(8));
                break;
            case 1: {
                const char* t = kTokens[r.below(std::size(kTokens))];
                s.insert(at, *t ? std::string(t) : std::string(1, '\0'));
                break;
            }
            case 2:
                if (!s.empty()) s.erase(at == s.size() ? at - 1 : at, 1 + r.below(8));
                break;
            case 3:
                if (!s.empty()) {
                    const size_t from = r.below(s.size());
                    s.insert(at, s.substr(from, 1 + r.below(16)));
                }
                break;
            case 4: {
                const std::string& other = corpus[r.below(corpus.size())];
                s = s.substr(0, at) + other.substr(std::min(other.size(), r.below(other.size() + 1)));
                break;
            }
            case 5:
                s.resize(at);
                break;
            case 6: {  // a 4- or 8-byte little-endian word written over the bytes at `at`
                const uint64_t w = r.below(4) ? kWords[r.below(std::size(kWords))] : r.next();
                const size_t n = r.below(2) ? 8 : 4;
                for (size_t k = 0; k < n && at + k < s.size(); ++k) s[at + k] = char(w >> (8 * k));
                break;
            }
            default:
                if (!s.empty()) s[r.below(s.size())] = char(r.next());
                break;
        }
        if (s.size() > 4096) s.resize(4096);
    }
    return s;
}

std::vector<std::string> load(const std::vector<std::string>& paths) {
    std::vector<std::filesystem::path> files;
    for (const auto& p : paths) {
        if (std::filesystem::is_directory(p)) {
            for (const auto& e : std::filesystem::directory_iterator(p))
                if (e.is_regular_file()) files.push_back(e.path());
        } else {
            files.emplace_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> out;
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 10;
    uint64_t runs = UINT64_MAX, seed = 1, rss_limit_mb = 0;
    unsigned timeout = 0;
    std::vector<std::string> paths;
    g_target = std::filesystem::path(argv[0]).filename().string();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.rfind("-max_total_time=", 0) == 0) seconds = std::atof(a.c_str() + 16);
        else if (a.rfind("-runs=", 0) == 0) runs = std::strtoull(a.c_str() + 6, nullptr, 10);
        else if (a.rfind("-seed=", 0) == 0) seed = std::strtoull(a.c_str() + 6, nullptr, 10);
        else if (a.rfind("-timeout=", 0) == 0) timeout = unsigned(std::strtoul(a.c_str() + 9, nullptr, 10));
        else if (a.rfind("-rss_limit_mb=", 0) == 0) rss_limit_mb = std::strtoull(a.c_str() + 14, nullptr, 10);
        else if (a.empty() || a[0] != '-') paths.push_back(a);
    }
    std::vector<std::string> corpus = load(paths);
    if (corpus.empty()) corpus.emplace_back();
    std::set_terminate([] {
        dump_current();
        std::abort();
    });
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback([] { dump_current(); });

    const auto t0 = std::chrono::steady_clock::now();
    if (timeout)
        std::signal(SIGALRM, [](int) {
            std::fprintf(stderr, "fuzz driver: run %llu took longer than -timeout\n", static_cast<unsigned long long>(g_run));
            dump_current();
            std::_Exit(1);
        });
    auto run = [timeout, rss_limit_mb](const std::string& input) {
        g_current = &input;
        if (timeout) alarm(timeout);
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
        if (timeout) alarm(0);
        // The peak only grows: the first input that passes the limit is the one that raised it.
        rusage u{};
        if (rss_limit_mb && getrusage(RUSAGE_SELF, &u) == 0 && uint64_t(u.ru_maxrss) / 1024 > rss_limit_mb) {
            std::fprintf(stderr, "fuzz driver: run %llu: peak memory %ld MB, above -rss_limit_mb=%llu\n",
                         static_cast<unsigned long long>(g_run), u.ru_maxrss / 1024, static_cast<unsigned long long>(rss_limit_mb));
            dump_current();
            std::_Exit(1);
        }
        g_current = nullptr;
        ++g_run;
    };
    for (const std::string& c : corpus) run(c);
    Rng r{seed};
    while (g_run < runs &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
        const std::string input = mutate(corpus[r.below(corpus.size())], corpus, r);
        run(input);
    }
    std::printf("fuzz driver: %s: %llu runs (%zu seeds, deterministic mutations, seed %llu), no finding\n",
                g_target.c_str(), static_cast<unsigned long long>(g_run), corpus.size(),
                static_cast<unsigned long long>(seed));
    return 0;
}
