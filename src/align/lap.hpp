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
// The same for float scores; `scratch`, when given, lends its memory to the solver's n x n costs (a buffer the
// caller keeps anyway) and gets it back.
std::vector<std::uint32_t> solve_lap_max(const std::vector<float>& score, std::size_t n,
                                         std::vector<float>* scratch = nullptr);

}  // namespace wavg::align
