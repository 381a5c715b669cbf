// The safetensors writer: the whole header is known from the OutputSpec before any value arrives, so the file is
// sized once, the header written at offset 0, and every block written in place with pwrite().

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "file_writer.hpp"
#include "safetensors/safetensors.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg {

namespace {

class SafetensorsWriter final : public FileWriter {
 public:
  SafetensorsWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : FileWriter(display_path, spec) {
    // Larger elements first so that 8-byte dtypes stay aligned, then by name: the layout does not depend on the
    // inputs' order of tensors.
    std::vector<std::size_t> order(spec.tensors.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const TensorInfo &x = spec.tensors[a], &y = spec.tensors[b];
      const auto sx = dtype_size(x.dtype), sy = dtype_size(y.dtype);
      return sx != sy ? sx > sy : x.name < y.name;
    });

    m_order = std::move(order);
    m_begin.resize(spec.tensors.size());
    std::uint64_t at = 0;
    for (std::size_t i : m_order) {
      m_begin[i] = at;
      at += spec.tensors[i].bytes();
    }
    m_tensor_members = tensor_members();
    // Laid out now with placeholder digests of the final length; finish() writes the header with the real ones.
    m_data_start = 8 + header(spec.provenance.layout_entries()).size();

    open_output(tmp_path, O_WRONLY);
    size_output(m_data_start + at);
    for (std::uint64_t begin : m_begin) m_data_at.push_back(m_data_start + begin);
  }

  void finish() override {
    const std::string text = header(m_spec.provenance.entries());
    if (8 + text.size() != m_data_start) fail(m_display, "the header changed length after the data was written");
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(text.size() >> (8 * i));
    pwrite_all(m_fd, len, 8, 0, m_display);
    pwrite_all(m_fd, text.data(), text.size(), 8, m_display);
    FileWriter::finish();
  }

 private:
  // The JSON header padded with spaces to a multiple of 8 bytes, so the data that follows stays aligned.
  std::string header(const std::map<std::string, std::string>& provenance) const {
    std::map<std::string, std::string> metadata = m_spec.metadata;
    if (m_spec.template_input && m_spec.template_input->format() == FormatId::safetensors)
      for (auto& [k, v] : m_spec.template_input->metadata()) metadata[k] = std::move(v);
    for (const auto& [k, v] : provenance) metadata[k] = v;
    std::string text = "{";
    if (!metadata.empty()) {
      append_string(text, "__metadata__");
      text += ':';
      try {
        text += nlohmann::ordered_json(metadata).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
      } catch (const nlohmann::json::exception&) {
        fail(m_display, "a tensor name or metadata entry is not valid UTF-8; safetensors cannot hold it");
      }
      if (!m_tensor_members.empty()) text += ',';
    }
    text += m_tensor_members;
    text += '}';
    text.append((8 - text.size() % 8) % 8, ' ');
    return text;
  }

  // The header's tensor members, in file order, as nlohmann::json's dump() writes them (no spaces); the same in
  // the constructor's header and in finish()'s, so made once. The object is written member by member: an
  // ordered_json's operator[] searches its members one by one, which made a header of n tensors cost n^2 (100k
  // tensors: minutes), and a json value per tensor cost a fifth of a convert of 100k tiny tensors.
  std::string tensor_members() const {
    std::string text;
    for (std::size_t i : m_order) {
      const TensorInfo& t = m_spec.tensors[i];
      if (t.name == "__metadata__") fail(m_display, "a tensor named __metadata__ cannot be held by safetensors");
      if (!text.empty()) text += ',';
      append_string(text, t.name);
      text += ":{\"dtype\":\"";
      text += safetensors_dtype_name(t.dtype);
      text += "\",\"shape\":[";
      for (std::size_t d = 0; d < t.shape.size(); ++d) (d ? text += ',' : text) += std::to_string(t.shape[d]);
      text += "],\"data_offsets\":[" + std::to_string(m_begin[i]) + ',' + std::to_string(m_begin[i] + t.bytes()) + "]}";
    }
    return text;
  }

  // Appends `s` as a JSON string, escaped as nlohmann::json's dump() escapes it (printable ASCII other than '"' and
  // '\\' stands for itself; anything else goes through dump(), which also refuses what is not UTF-8).
  void append_string(std::string& text, const std::string& s) const {
    if (std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; })) {
      text += '"';
      text += s;
      text += '"';
      return;
    }
    try {
      text += nlohmann::ordered_json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    } catch (const nlohmann::json::exception&) {
      fail(m_display, "a tensor name or metadata entry is not valid UTF-8; safetensors cannot hold it");
    }
  }

  std::vector<std::size_t> m_order;  // tensors in file order
  std::vector<std::uint64_t> m_begin;
  std::uint64_t m_data_start = 0;
  std::string m_tensor_members;  // tensor_members()
};

}  // namespace

std::unique_ptr<Writer> create_safetensors_writer(const std::string& tmp_path, const std::string& display_path,
                                                  const OutputSpec& spec) {
  return std::make_unique<SafetensorsWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg
