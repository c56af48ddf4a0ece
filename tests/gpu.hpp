// Device tests skip, loudly, where no GPU is usable: the host suite is what CI runs.
#pragma once
#include <gtest/gtest.h>

#include "device.hpp"

#define BITGATE_REQUIRE_GPU()                                                        \
    do {                                                                             \
        if (const std::string why = ::bitgate::gpu_missing(); !why.empty())          \
            GTEST_SKIP() << "device test skipped: " << why;                          \
    } while (0)
