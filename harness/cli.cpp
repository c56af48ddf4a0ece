#include "cli.hpp"

#include <cstdio>
#include <exception>

#include "cli_lint.hpp"
#include "errors.hpp"
#include "report.hpp"

namespace bitgate {

namespace {
std::vector<std::string> g_command_line;  // set once per cli_main, read by reports
}

const std::vector<std::string>& command_line() { return g_command_line; }

void add_case_timeout(CLI::App* verb, double& seconds) {
    verb->add_option("--case-timeout", seconds,
                     "seconds a device case may run before the run stops as hung (exit 5); 0: never (default 300)");
}

double checked_case_timeout(double seconds) {
    if (!(seconds >= 0) || seconds > 1e9) {  // NaN fails the first test
        char text[32];
        std::snprintf(text, sizeof text, "%g", seconds);
        throw BadInput(std::string("--case-timeout: ") + text + " is not a number of seconds from 0 (never) to 1e9");
    }
    return seconds;
}

int cli_main(int argc, char** argv) {
    g_command_line.assign(argv, argv + argc);
    CLI::App app{"bitgate: bit-identity gate for quantized LLM-inference kernels"};
    app.set_version_flag("--version", std::string("bitgate ") + bitgate_version() + " (commit " + build_commit() + ")");
    app.require_subcommand(1);
    int rc = exit_ok;
    add_check_verbs(app, rc);
    add_prop_verb(app, rc);
    add_run_verb(app, rc);
    add_bench_verb(app, rc);
    add_lint_verb(app, rc);
    add_spkl_verbs(app, rc);
    add_model_verbs(app, rc);
    add_report_verbs(app, rc);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return exit_bad_input;
    } catch (const BadInput& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "bitgate: error: %s\n", e.what());  // made printable when it was thrown
        return exit_bad_input;
    } catch (const NoGpu& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "bitgate: a GPU is required: %s\n", printable(e.what()).c_str());
        return exit_no_gpu;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "bitgate: internal error: %s\n", printable(e.what()).c_str());
        return exit_internal;
    }
    return rc;
}

}  // namespace bitgate
