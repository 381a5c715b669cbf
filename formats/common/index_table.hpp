#pragma once
// A hash set of indices into a caller's array, keyed by what each index names there (a tensor's name, a storage's
// key, a tensor's view): the caller gives each lookup the key's hash and a test of "does index i hold this key".
//
// Why not std::unordered_set: a reader of 100,000 tensors asks three such questions per tensor, and a node-based
// table costs an allocation per entry and a cache miss per node on every lookup (about a fifth of reading a
// PyTorch file of 100k tensors, measured with perf). Here the slots are one array of (hash, index) probed linearly
// at most half full, so a lookup touches one slot run and reads the caller's array only when the full hashes match.

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace wavg {

class IndexTable {
 public:
  static constexpr std::uint32_t k_none = std::numeric_limits<std::uint32_t>::max();

  // Returns the index whose key has `hash` and for which same(index) is true, or k_none.
  template <class Same>
  std::uint32_t find(std::uint64_t hash, Same same) const {
    if (m_slots.empty()) return k_none;
    for (std::size_t at = hash & m_mask;; at = (at + 1) & m_mask) {
      const Slot& s = m_slots[at];
      if (s.index == k_none) return k_none;
      if (s.hash == hash && same(s.index)) return s.index;
    }
  }

  // Adds `index` under `hash` (the caller has checked that its key is not present).
  void insert(std::uint64_t hash, std::uint32_t index) {
    if (2 * (m_count + 1) > m_slots.size()) grow();
    place(hash, index);
    ++m_count;
  }

  // Returns the index already holding the key (hash, same), or adds `index` under it and returns k_none.
  template <class Same>
  std::uint32_t find_or_insert(std::uint64_t hash, std::uint32_t index, Same same) {
    const std::uint32_t found = find(hash, same);
    if (found == k_none) insert(hash, index);
    return found;
  }

  // Makes room for `n` entries without growing again.
  void reserve(std::size_t n) {
    while (2 * n > m_slots.size()) grow();
  }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t index = k_none;
  };
  void place(std::uint64_t hash, std::uint32_t index) {
    std::size_t at = hash & m_mask;
    while (m_slots[at].index != k_none) at = (at + 1) & m_mask;
    m_slots[at] = {hash, index};
  }
  void grow() {
    std::vector<Slot> old(std::max<std::size_t>(16, 2 * m_slots.size()));
    old.swap(m_slots);
    m_mask = m_slots.size() - 1;
    for (const Slot& s : old)
      if (s.index != k_none) place(s.hash, s.index);
  }

  std::vector<Slot> m_slots;
  std::size_t m_mask = 0;
  std::size_t m_count = 0;
};

// Returns a 64-bit hash of `bytes` whose low bits are well mixed (std::hash of a string_view is, in libstdc++).
inline std::uint64_t hash_bytes(std::string_view bytes) { return std::hash<std::string_view>{}(bytes); }

// Returns `hash` with the word `v` mixed in (splitmix64's finalizer over the sum), for keys made of numbers.
inline std::uint64_t hash_mix(std::uint64_t hash, std::uint64_t v) {
  std::uint64_t z = hash + 0x9e3779b97f4a7c15ull + v;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace wavg
