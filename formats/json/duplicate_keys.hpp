#pragma once
// A SAX pass over JSON text that finds what nlohmann's DOM parser hides: a key given twice in one object (the DOM
// keeps the last silently) and where a syntax error lies. Used before parsing headers and indexes that must not be
// ambiguous (a safetensors header, a Hugging Face weight_map).

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <vector>

namespace wavg {

// Records the first key that appears twice in one object, and the first syntax error or out-of-range number.
class DuplicateKeys final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::string duplicate;
  std::string error;
  std::size_t error_byte = 0;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    m_open.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!m_open.empty() && !m_open.back().insert(k).second && duplicate.empty()) duplicate = k;
    return true;
  }
  bool end_object() override {
    if (!m_open.empty()) m_open.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& e) override {
    error_byte = position;
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column 3: ..."; keep the reason.
    const std::string what = e.what();
    const std::size_t colon = what.rfind(": ");
    error = e.id == 406 ? "a number out of range" : colon == std::string::npos ? what : what.substr(colon + 2);
    return false;
  }

 private:
  std::vector<std::unordered_set<std::string>> m_open;
};

}  // namespace wavg
