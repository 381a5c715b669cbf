// Default bodies of the optional backend kernels: a backend that lacks them refuses the methods that need them.

#include "wavg/backend.hpp"

#include <string>

#include "wavg/error.hpp"

namespace wavg {

namespace {
[[noreturn]] void missing(const Backend& b, const char* kernel) {
  fail("", std::string("the ") + b.name() + " backend has no " + kernel + " kernel; use the CPU backend");
}
}  // namespace

void Backend::update_sum_squares(const BlockInputs&, double*) { missing(*this, "update_sum_squares"); }
void Backend::update_sq_distances(const BlockInputs&, const double*, double*) {
  missing(*this, "update_sq_distances");
}
void Backend::update_combine(const BlockInputs&, const double*, double, double*) {
  missing(*this, "update_combine");
}
void Backend::update_order_statistic(const BlockInputs&, const double*, const double*, OrderStat, std::uint32_t,
                                     double*) {
  missing(*this, "update_order_statistic");
}
void Backend::add_gaussian_noise(double*, std::uint64_t, double, std::uint64_t, std::uint64_t, std::uint64_t) {
  missing(*this, "add_gaussian_noise");
}
void Backend::server_step(const ServerStepParams&, std::uint64_t, const double*, const void*, DType, double*,
                          double*, DType, void*) {
  missing(*this, "server_step");
}
void Backend::update_gram(const BlockInputs&, double*) { missing(*this, "update_gram"); }
void Backend::magnitude_histogram(const BlockInputs&, std::size_t, std::uint64_t*) {
  missing(*this, "magnitude_histogram");
}
void Backend::magnitude_candidates(const BlockInputs&, std::size_t, std::size_t, std::uint64_t,
                                   std::vector<Magnitude>&) {
  missing(*this, "magnitude_candidates");
}
void Backend::task_combine(const BlockInputs&, const TaskCombineParams&, std::uint64_t, DType, void*) {
  missing(*this, "task_combine");
}

}  // namespace wavg
