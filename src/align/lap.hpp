#pragma once
// A dense linear assignment solver (Jonker-Volgenant), for the permutation search of weight matching.

#include <cstdint>
#include <vector>

namespace wavg::align {

// Returns the assignment `row -> column` of an n x n row-major matrix `score` that maximises the summed score (of
// the scores rounded to float after scaling by a power of two: lap.cpp). Every score must be finite (the caller
// checks). Costs O(n^3) at worst, far less on the matrices weight matching
// makes.
std::vector<std::uint32_t> solve_lap_max(const std::vector<double>& score, std::size_t n);
std::vector<std::uint32_t> solve_lap_max(const std::vector<float>& score, std::size_t n);

}  // namespace wavg::align
