// The verbs under `bitgate model`, each file adding its own.
#pragma once
#include <CLI/CLI.hpp>

namespace bitgate::model {

void add_forward_verbs(CLI::App& model, int& rc);  // run, ab, predict, paths, bench

}  // namespace bitgate::model
