#include "plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "errors.hpp"
#include "outfile.hpp"

extern char** environ;

namespace bitgate::plot {

std::string find_gnuplot() {
    const char* path = std::getenv("PATH");
    if (!path) return "";
    std::string_view rest = path;
    while (true) {
        const size_t colon = rest.find(':');
        std::string dir(rest.substr(0, colon));
        if (dir.empty()) dir = ".";
        const std::string exe = dir + "/gnuplot";
        struct stat st{};
        if (stat(exe.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(exe.c_str(), X_OK) == 0) return exe;
        if (colon == std::string_view::npos) return "";
        rest.remove_prefix(colon + 1);
    }
}

void require_gnuplot(std::string_view option) {
    if (find_gnuplot().empty())
        throw BadInput(std::string(option) + " needs gnuplot (Debian package gnuplot-nox), which is not on PATH");
}

void require_writable(std::string_view option, const std::string& out) {
    const auto slash = out.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : out.substr(0, slash);
    struct stat st{};
    if (out.empty() || (slash != std::string::npos && slash + 1 == out.size()))
        throw BadInput(std::string(option) + " '" + out + "': not a file name");
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw BadInput(std::string(option) + " " + out + ": directory " + dir + " does not exist");
    if (access(dir.c_str(), W_OK | X_OK) != 0)
        throw BadInput(std::string(option) + " " + out + ": directory " + dir + " is not writable");
}

std::string quote(std::string_view s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'') q += "''";
        else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) q += ' ';
        else q += c;
    }
    return q + "'";
}

std::string num(double v) {
    if (!std::isfinite(v)) return "NaN";
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

namespace {

// A file of our own in the temporary directory, removed when this goes.
struct TempFile {
    std::string path;
    explicit TempFile(const char* suffix) {
        const char* dir = std::getenv("TMPDIR");
        std::string t = std::string(dir && *dir ? dir : "/tmp") + "/bitgate-plot-XXXXXX" + suffix;
        const int fd = mkstemps(t.data(), static_cast<int>(std::string_view(suffix).size()));
        if (fd < 0) throw BadInput(t + ": cannot create a temporary file for gnuplot");
        close(fd);
        path = t;
    }
    ~TempFile() { unlink(path.c_str()); }
    std::string read() const {
        std::ifstream f(path, std::ios::binary);
        std::ostringstream s;
        s << f.rdbuf();
        return s.str();
    }
};

}  // namespace

void render_svg(std::string_view option, const std::string& body, const std::string& out, int width, int height,
                const std::vector<std::string>& inputs) {
    const std::string exe = find_gnuplot();
    OutFile target(out, inputs);  // a path that cannot be written, or an input, fails before gnuplot runs
    if (exe.empty()) require_gnuplot(option);
    TempFile script(".gp"), svg(".svg"), err(".txt");
    {
        std::ofstream f(script.path);
        // noenhanced: labels are shown as written (no _ subscripts, no ^ superscripts).
        f << "set terminal svg size " << width << "," << height
          << " dynamic noenhanced font 'sans,11' background rgb 'white'\n"
          << "set output " << quote(svg.path) << "\n"
          << body << "\nunset output\n";
        if (!f.flush()) throw BadInput(script.path + ": cannot write the gnuplot script");
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, err.path.c_str(), O_WRONLY | O_TRUNC, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char*> argv = {const_cast<char*>(exe.c_str()), const_cast<char*>(script.path.c_str()), nullptr};
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw BadInput(std::string(option) + ": cannot start " + exe);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string picture = svg.read();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || picture.find("</svg>") == std::string::npos) {
        // gnuplot's own words: its last line that says something is what it could not do.
        std::istringstream lines(err.read());
        std::string line, why;
        while (std::getline(lines, line))
            if (const auto a = line.find_first_not_of(" ^\t"); a != std::string::npos) why = line.substr(a);
        throw BadInput(std::string(option) + ": gnuplot could not draw " + out + (why.empty() ? "" : ": " + why));
    }
    target.write(picture.data(), picture.size());
    target.commit();
}

}  // namespace bitgate::plot
