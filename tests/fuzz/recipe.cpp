// Fuzzes merge --recipe's reader of mergekit YAML (src/cli/recipe*.cpp): the recipe read and checked, as merge
// does before it opens any model.

#include "cli/recipe.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "recipe.yml");
  wavg::fuzz::refusals_only([&] { (void)wavg::cli::read_recipe(dir + "/recipe.yml"); });
  return 0;
}
