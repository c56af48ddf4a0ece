// One variant of one case on the device: three runs in guarded buffers (DESIGN "One check").
#pragma once
#include <string>
#include <vector>

#include "bitgate/spec.hpp"
#include "host_run.hpp"
#include "verdict.hpp"

namespace bitgate {

struct DeviceCase {
    const FamilySpec* family;
    const VariantSpec* variant;
    Shape shape;
    const std::vector<Bytes>* in;          // run A and B inputs
    const std::vector<Bytes>* expected;    // their model outputs
    const std::vector<Bytes>* in_c;        // run C inputs (new values, same addresses)
    const std::vector<Bytes>* expected_c;  // their model outputs
};

struct DeviceOutcome {
    Verdict verdict = Verdict::ok;
    std::vector<Difference> diffs;
    std::string note;
    std::vector<Bytes> out_a;  // run A's outputs, for cross-variant claims
};

// Runs A (poison A), B (poison B), C (new inputs at the same addresses). Needs a launcher.
DeviceOutcome run_device(const DeviceCase& c);

}  // namespace bitgate
