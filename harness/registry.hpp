// Lookups over the families registered at start-up (harness/include/bitgate/spec.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bitgate/spec.hpp"

namespace bitgate {

// Families in name order. Mutant variants are included only where a mutant target is linked.
std::vector<const FamilySpec*> families();
// Throws BadInput naming the known families when `name` is not one.
const FamilySpec& family(const std::string& name);
const VariantSpec& variant(const FamilySpec& f, const std::string& name);
// Variants that are not mutants, in declaration order.
std::vector<const VariantSpec*> real_variants(const FamilySpec& f);
// Mutant variants over all families: 0 unless a mutant target is linked.
size_t mutants_linked();
// Parse "k=896 n=12" against the family's dims; throws BadInput(where + ": ...") on a bad token,
// a missing or unknown dimension, or a shape the family rejects.
Shape parse_shape(const FamilySpec& f, const std::vector<std::string>& tokens, const std::string& where);
// "" when valid for the family and the variant, else why not. Size limits come first (each
// dimension at most its Dim::max, their product at most kDimProductMax, the buffers of a case
// together at most max_case_bytes()), so family validity and byte formulas never see a shape
// that could overflow.
std::string shape_problem(const FamilySpec& f, const VariantSpec* v, const Shape& s);
// The limit on the bytes of all tensors of one case: 16 GiB, or BITGATE_MAX_CASE_BYTES.
uint64_t max_case_bytes();
// The bytes of every tensor of a case, summed with overflow checks; nullopt when the sum overflows.
std::optional<uint64_t> case_bytes(const FamilySpec& f, const Shape& s);
const TensorSpec* tensor(const FamilySpec& f, const std::string& name);
// The variant's host model; a kernel mutant without one uses the model of the variant it imitates.
const HostModel& model_of(const FamilySpec& f, const VariantSpec& v);

}  // namespace bitgate
