// The `bitgate spkl` verbs: info, diff, kld, from-npy, to-npy, synth, bench.
// (The lead's harness/cli.hpp declares the same function; this header stands in until then.)
#pragma once

namespace CLI {
class App;
}

namespace bitgate {

// Adds the `spkl` subcommand; its callbacks set rc (0 ran and held, 1 a requested condition
// failed) and throw bitgate::BadInput on bad files (exit 2 in main).
void add_spkl_verbs(CLI::App& app, int& rc);

}  // namespace bitgate
