// The `bitgate model` verb group. add_model_verbs (declared in cli.hpp) creates the group and
// calls each add_model_*_verbs below; a new subcommand is one more function here and one call.
#pragma once
#include <CLI/CLI.hpp>

namespace bitgate {

void add_model_file_verbs(CLI::App& model, int& rc);     // model synth, model info
void add_model_forward_verbs(CLI::App& model, int& rc);  // model run, ab, predict, paths, bench (cli_forward.cpp)

}  // namespace bitgate
