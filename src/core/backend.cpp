// Default bodies of the task-vector kernels, which only the CPU backend has: another backend refuses the methods
// that need them (merge runs those methods on the CPU backend anyway, see task_backend).

#include "wavg/backend.hpp"

#include <string>

#include "wavg/error.hpp"

namespace wavg {

namespace {
[[noreturn]] void missing(const Backend& b, const char* kernel) {
  fail("", std::string("the ") + b.name() + " backend has no " + kernel + " kernel; use the CPU backend");
}
}  // namespace

void Backend::update_gram(const BlockInputs&, double*) { missing(*this, "update_gram"); }
void Backend::magnitude_histogram(const BlockInputs&, std::size_t, std::uint64_t*) {
  missing(*this, "magnitude_histogram");
}
void Backend::magnitude_candidates(const BlockInputs&, std::size_t, std::size_t, std::uint64_t,
                                   std::vector<Magnitude>&) {
  missing(*this, "magnitude_candidates");
}
void Backend::random_mask_l1(const BlockInputs&, const TaskCombineParams&, std::uint64_t, double*) {
  missing(*this, "random_mask_l1");
}
void Backend::task_combine(const BlockInputs&, const TaskCombineParams&, std::uint64_t, DType, void*) {
  missing(*this, "task_combine");
}

}  // namespace wavg
