// Pictures through gnuplot: a caller writes a gnuplot script (data inline as datablocks), this
// runs it with the SVG terminal and writes the picture. gnuplot is an outside program (Debian
// package gnuplot-nox), looked up on PATH when a picture is asked for; without it the verb stops
// with one line naming it (BadInput, exit 2), before any long work where the verb can check first.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace bitgate::plot {

// The executable gnuplot on PATH, or "" when there is none.
std::string find_gnuplot();
// Throws BadInput("OPTION needs gnuplot (Debian package gnuplot-nox), which is not on PATH").
void require_gnuplot(std::string_view option);
// Throws BadInput("OPTION PATH: ...") when the picture could not be written there (its directory is
// missing or not writable): checked before long work, so that a typo costs nothing.
void require_writable(std::string_view option, const std::string& out);
// A gnuplot string literal that holds `s` exactly: single quotes, '' for a quote (gnuplot does no
// backslash processing there). Control characters become spaces.
std::string quote(std::string_view s);
// A number for a datablock: "%.9g", and NaN (gnuplot's missing point) for a value that is not finite.
std::string num(double v);
// Runs `body` (everything after the terminal and output lines) with gnuplot's SVG terminal at this
// size and writes the SVG to `out` (whole or not at all; never over one of `inputs`). `option`
// names the request in errors.
void render_svg(std::string_view option, const std::string& body, const std::string& out, int width, int height,
                const std::vector<std::string>& inputs = {});

}  // namespace bitgate::plot
