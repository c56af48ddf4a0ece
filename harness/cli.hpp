// The `bitgate` command line. Each verb group lives in its own file and adds itself here.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bitgate {

int cli_main(int argc, char** argv);
// The arguments of this invocation (for reports); empty outside cli_main.
const std::vector<std::string>& command_line();

// --case-timeout SECONDS on the verbs that run device cases (check, prop): a device case still
// running after that many seconds stops the run with exit 5 (harness/watchdog.hpp); 0: never.
void add_case_timeout(CLI::App* verb, double& seconds);
// The value, or BadInput when it is negative or not a number.
double checked_case_timeout(double seconds);

// Verb groups. Each adds a subcommand whose callback sets `rc` (0 held, 1 failed); bad input is
// thrown as BadInput, a missing GPU as NoGpu.
void add_check_verbs(CLI::App& app, int& rc);   // check, golden, list
void add_prop_verb(CLI::App& app, int& rc);     // prop
void add_run_verb(CLI::App& app, int& rc);      // run
void add_bench_verb(CLI::App& app, int& rc);    // bench
void add_spkl_verbs(CLI::App& app, int& rc);    // spkl info|diff|kld|from-npy|to-npy|from-llama-kld|to-llama-kld|synth|bench (spkl/)
void add_model_verbs(CLI::App& app, int& rc);
void add_report_verbs(CLI::App& app, int& rc);  // report merge (harness/report_merge.cpp)   // model synth|info|run|ab|predict|paths|bench (model/cli_model.cpp)

}  // namespace bitgate
