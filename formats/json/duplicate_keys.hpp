#pragma once
// A SAX pass over JSON text that finds what nlohmann's DOM parser hides: a key given twice in one object (the DOM
// keeps the last silently) and where a syntax error lies. Used before parsing headers and indexes that must not be
// ambiguous (a safetensors header, a Hugging Face weight_map, a PEFT adapter_config.json). It also stops at nesting
// deeper than k_max_depth: nlohmann parses any depth without recursing, but copying or converting a document
// (json from ordered_json) recurses once per level, and 1,000,000 levels in 2 MB of config overflowed the stack.
// It can also list, in the text's order, the keys of the object under one top-level key (`ordered_under`): a
// reader that needs an object's order parses into json (a std::map) and takes the order from here, since
// nlohmann's ordered_json finds each key by a linear search and so parses an object of n keys in n^2/2 steps
// (100,000 leaves of an Orbax tree took 14 s).

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <vector>

namespace wavg {

// Records the first key that appears twice in one object, and the first syntax error or out-of-range number; stops
// (too_deep) at nesting deeper than k_max_depth, which no file it reads has.
class DuplicateKeys final : public nlohmann::json_sax<nlohmann::json> {
 public:
  static constexpr std::size_t k_max_depth = 64;
  std::string duplicate;
  bool too_deep = false;
  std::string error;
  std::size_t error_byte = 0;
  std::string ordered_under;         // a top-level key whose object's keys are listed in `ordered`
  std::vector<std::string> ordered;  // those keys, in the text's order

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    m_open.emplace_back();
    return deeper();
  }
  bool key(string_t& k) override {
    if (!m_open.empty() && !m_open.back().insert(k).second && duplicate.empty()) duplicate = k;
    if (m_depth == 1) m_in_ordered = !ordered_under.empty() && k == ordered_under;
    if (m_depth == 2 && m_in_ordered) ordered.push_back(k);
    return true;
  }
  bool end_object() override {
    if (!m_open.empty()) m_open.pop_back();
    --m_depth;
    return true;
  }
  bool start_array(std::size_t) override { return deeper(); }
  bool end_array() override {
    --m_depth;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& e) override {
    error_byte = position;
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column 3: ..."; keep the reason.
    const std::string what = e.what();
    const std::size_t colon = what.rfind(": ");
    error = e.id == 406 ? "a number out of range" : colon == std::string::npos ? what : what.substr(colon + 2);
    return false;
  }

 private:
  bool deeper() {
    too_deep = too_deep || ++m_depth > k_max_depth;
    return !too_deep;
  }

  std::vector<std::unordered_set<std::string>> m_open;
  std::size_t m_depth = 0;
  bool m_in_ordered = false;
};

}  // namespace wavg
