// `bitgate lint`: the PTX lint as a verb.
#pragma once

namespace CLI {
class App;
}

namespace bitgate {

// Adds `lint [--ptx PATH...]`; its callback sets rc (0 clean, 1 findings) or throws BadInput.
void add_lint_verb(CLI::App& app, int& rc);

}  // namespace bitgate
