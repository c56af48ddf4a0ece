// `bitgate model ...`: the verb group of model files and the forward pass.
#include "cli.hpp"
#include "cli_model.hpp"

namespace bitgate {

void add_model_verbs(CLI::App& app, int& rc) {
    CLI::App* model = app.add_subcommand("model", "Model weights and the end-to-end forward pass");
    model->require_subcommand(1);
    model::add_forward_verbs(*model, rc);
}

}  // namespace bitgate
