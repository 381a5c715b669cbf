#pragma once
// How MPI ranks average (--algorithm), apart from the MPI transport itself (mpi_reduce.hpp), so that the command
// line can name it without seeing MPI.

#include <array>

#include "wavg/names.hpp"

namespace wavg::train {

enum class Reduction { reduce_scatter, gather };
inline constexpr std::array<Named<Reduction>, 2> k_reduction_names{
    {{"reduce-scatter", Reduction::reduce_scatter}, {"gather", Reduction::gather}}};

}  // namespace wavg::train
