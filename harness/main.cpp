#include "cli.hpp"

int main(int argc, char** argv) { return bitgate::cli_main(argc, argv); }
