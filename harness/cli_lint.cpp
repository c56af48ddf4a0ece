#include "cli_lint.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "errors.hpp"
#include "ptx_lint.hpp"

#ifndef BITGATE_PTX_DIR
#define BITGATE_PTX_DIR "ptx"
#endif

namespace bitgate {

void add_lint_verb(CLI::App& app, int& rc) {
    auto paths = std::make_shared<std::vector<std::string>>();
    CLI::App* lint = app.add_subcommand(
        "lint", "Check the kernels' PTX against the bit-exactness contract (no .approx, no .ftz, no float "
                "atomics, every float add/sub/mul rounded explicitly)");
    lint->add_option("--ptx", *paths, "PTX files or directories of *.ptx (default: this build's " BITGATE_PTX_DIR ")");
    lint->callback([paths, &rc] {
        const std::vector<std::string> where = paths->empty() ? std::vector<std::string>{BITGATE_PTX_DIR} : *paths;
        LintReport all;
        for (const auto& p : where) {
            LintReport r = lint_path(p);
            all.kernels += r.kernels;
            all.files += r.files;
            for (auto& f : r.findings) all.findings.push_back(std::move(f));
        }
        for (const auto& f : all.findings) std::cout << format_finding(f) << '\n';
        std::cout << "lint: " << all.kernels << " kernels in " << all.files << " files, " << all.findings.size()
                  << " findings" << std::endl;
        rc = all.findings.empty() ? exit_ok : exit_failed;
    });
}

}  // namespace bitgate
