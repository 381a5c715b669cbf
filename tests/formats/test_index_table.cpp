// The index table (formats/common/index_table.hpp): indices into a caller's array found by their keys, through
// growth and through hashes that collide.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/index_table.hpp"

using wavg::IndexTable;

TEST_CASE("index table finds each of 10,000 keys after growing, and no key it was not given") {
  std::vector<std::string> keys;
  IndexTable t;
  for (std::uint32_t i = 0; i < 10'000; ++i) {
    keys.push_back("conv" + std::to_string(i) + "/0");
    const auto same = [&](std::uint32_t j) { return keys[j] == keys.back(); };
    CHECK(t.find_or_insert(wavg::hash_bytes(keys.back()), i, same) == IndexTable::k_none);
  }
  for (std::uint32_t i = 0; i < keys.size(); i += 997) {
    const std::string key = "conv" + std::to_string(i) + "/0";
    CHECK(t.find(wavg::hash_bytes(key), [&](std::uint32_t j) { return keys[j] == key; }) == i);
  }
  const std::string absent = "conv10000/0";
  CHECK(t.find(wavg::hash_bytes(absent), [&](std::uint32_t j) { return keys[j] == absent; }) == IndexTable::k_none);
}

TEST_CASE("index table tells keys apart whose hashes are equal, and finds the first of two equal keys") {
  const std::vector<std::string> keys = {"a", "b", "a"};
  IndexTable t;
  const auto same_as = [&](const std::string& key) { return [&](std::uint32_t j) { return keys[j] == key; }; };
  CHECK(t.find_or_insert(42, 0, same_as(keys[0])) == IndexTable::k_none);
  CHECK(t.find_or_insert(42, 1, same_as(keys[1])) == IndexTable::k_none);  // same hash, another key
  CHECK(t.find_or_insert(42, 2, same_as(keys[2])) == 0);                   // "a" again: the first one
  CHECK(t.find(42, same_as("b")) == 1);
  CHECK(wavg::hash_mix(wavg::hash_mix(0, 1), 2) != wavg::hash_mix(wavg::hash_mix(0, 2), 1));
}
