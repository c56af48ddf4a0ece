#include "workers.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "errors.hpp"
#include "gpus.hpp"
#include "shards.hpp"

extern char** environ;

namespace bitgate {

std::string Spread::what(int w) const {
    if (!gpus) return "worker " + std::to_string(w);
    if (workers == n_gpus) return "GPU " + std::to_string(w);
    return "worker " + std::to_string(w) + " (GPU " + std::to_string(gpu_of_worker(w, n_gpus)) + ")";
}

namespace {

constexpr int kMaxWorkers = 1024;

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string t; std::getline(in, t, ',');) out.push_back(t);
    return out;
}

}  // namespace

Spread resolve_spread(const std::string& gpus, int workers) {
    Spread s;
    if (workers != -1 && (workers < 1 || workers > kMaxWorkers))
        throw BadInput("--workers " + std::to_string(workers) + ": expected 1 to " + std::to_string(kMaxWorkers));
    if (gpus.empty()) {
        s.workers = workers == -1 ? 0 : workers;
        return s;
    }
    int want = 0;
    if (gpus != "all" && (!whole_number(gpus, want) || want < 1))
        throw BadInput("--gpus " + gpus + ": expected all or a number of GPUs (at least 1)");
    const auto too_few = [&](int n) {
        return BadInput("--workers " + std::to_string(workers) + " with --gpus " + gpus + ": fewer workers than the " +
                        std::to_string(n) + " GPUs (each GPU needs one at least)");
    };
    if (workers != -1 && gpus != "all" && workers < want) throw too_few(want);  // before looking for GPUs
    const VisibleGpus v = visible_gpus();
    if (!v.built_with_cuda)
        throw BadInput("--gpus " + gpus + ": " + v.why_none + ": there are no GPUs to spread over (--workers N spreads over processes)");
    if (v.count == 0) throw NoGpu("--gpus " + gpus + ": " + v.why_none);
    if (gpus == "all") want = v.count;
    if (want > v.count)
        throw BadInput("--gpus " + gpus + ": only " + std::to_string(v.count) + " GPU" + (v.count == 1 ? " is" : "s are") + " visible");
    if (workers != -1 && workers < want) throw too_few(want);  // --gpus all: now that the count is known
    std::vector<std::string> parent;
    if (const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES"); cvd && *cvd) parent = split_commas(cvd);
    s.workers = workers == -1 ? want : workers;
    s.gpus = true;
    s.n_gpus = want;
    s.visible = visible_of_workers(parent, want, s.workers);
    for (int w = 0; w < s.workers; ++w) s.gpu_names.push_back(v.names[size_t(gpu_of_worker(w, want))]);
    return s;
}

std::vector<std::string> visible_of_workers(const std::vector<std::string>& parent, int gpus, int workers) {
    std::vector<std::string> out;
    for (int w = 0; w < workers; ++w) {
        const int i = gpu_of_worker(w, gpus);
        out.push_back(size_t(i) < parent.size() ? parent[size_t(i)] : std::to_string(i));
    }
    return out;
}

std::vector<std::string> strip_options(const std::vector<std::string>& argv, const std::vector<std::string>& with_value,
                                       const std::vector<std::string>& flags) {
    std::vector<std::string> out;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        bool drop = false;
        for (const auto& n : with_value) {
            if (a == n) {
                drop = true;
                ++i;  // and its value
                break;
            }
            if (a.rfind(n + "=", 0) == 0) drop = true;
        }
        for (const auto& f : flags) drop |= a == f;
        if (!drop) out.push_back(a);
    }
    return out;
}

TempDir::TempDir(const char* tag) {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/bitgate-" + tag + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw BadInput(tmpl + ": cannot make a directory for the workers' reports (" + std::strerror(errno) + ")");
    path_ = buf.data();
}

TempDir::~TempDir() {
    if (keep_) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

std::vector<WorkerExit> run_workers(const Spread& s, const std::vector<std::vector<std::string>>& argvs, const std::string& dir) {
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) throw std::runtime_error("cannot find this executable (/proc/self/exe) to start the workers");
    self[n] = '\0';
    const pid_t parent = getpid();

    // Everything the child needs is made here: after fork it only calls what is safe there.
    struct Child {
        std::vector<std::string> args, env;
        std::vector<char*> argp, envp;
        std::string log;
        int fd = -1;
        pid_t pid = -1;
        std::chrono::steady_clock::time_point t0;
    };
    std::vector<Child> kids(argvs.size());
    for (size_t w = 0; w < argvs.size(); ++w) {
        Child& k = kids[w];
        k.args = argvs[w];
        for (char** e = environ; *e; ++e)
            if (!(s.gpus && std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) == 0)) k.env.push_back(*e);
        if (s.gpus) k.env.push_back("CUDA_VISIBLE_DEVICES=" + s.visible[w]);
        for (auto& a : k.args) k.argp.push_back(a.data());
        k.argp.push_back(nullptr);
        for (auto& e : k.env) k.envp.push_back(e.data());
        k.envp.push_back(nullptr);
        k.log = dir + "/worker-" + std::to_string(w) + ".log";
        k.fd = ::open(k.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (k.fd < 0) throw BadInput(k.log + ": cannot create the worker's log (" + std::strerror(errno) + ")");
    }
    std::fflush(stdout);
    std::fflush(stderr);
    for (Child& k : kids) {
        k.t0 = std::chrono::steady_clock::now();
        k.pid = fork();
        if (k.pid < 0) throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
        if (k.pid == 0) {
#ifdef __linux__
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent) _exit(128 + SIGTERM);
#endif
            dup2(k.fd, 1);
            dup2(k.fd, 2);
            execve(self, k.argp.data(), k.envp.data());
            const char msg[] = "bitgate: cannot start the worker (execve failed)\n";
            (void)!write(2, msg, sizeof msg - 1);
            _exit(127);
        }
        ::close(k.fd);
    }
    std::vector<WorkerExit> out(kids.size());
    size_t left = kids.size();
    while (left) {
        int st = 0;
        const pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(std::string("waiting for the workers: ") + std::strerror(errno));
        }
        for (size_t w = 0; w < kids.size(); ++w) {
            if (kids[w].pid != pid) continue;
            WorkerExit& e = out[w];
            e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - kids[w].t0).count();
            if (WIFEXITED(st)) e.rc = WEXITSTATUS(st);
            else if (WIFSIGNALED(st)) {
                e.signal = WTERMSIG(st);
                e.rc = 128 + e.signal;
            }
            std::ifstream f(kids[w].log, std::ios::binary);
            e.log.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
            --left;
        }
    }
    return out;
}

void print_log_tail(std::FILE* out, const std::string& log, const std::string& prefix, size_t lines) {
    std::vector<std::string> all;
    std::stringstream in(log);
    for (std::string l; std::getline(in, l);) all.push_back(l);
    for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
        std::fprintf(out, "%s %s\n", prefix.c_str(), all[i].c_str());
}

}  // namespace bitgate
