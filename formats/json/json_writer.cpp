// The wavg JSON writer: values arrive in blocks, in any order, and are kept in binary; finish() writes the
// document in one pass through a buffer flushed every megabyte.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "json/json.hpp"
#include "json/json_text.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg {

namespace {

constexpr std::size_t k_flush = 1 << 20;

class JsonWriter final : public Writer {
 public:
  JsonWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec,
             JsonEncoding encoding)
      : m_display(display_path), m_spec(spec), m_encoding(encoding) {
    if (spec.template_input && spec.template_input->format() == FormatId::json)
      m_metadata = spec.template_input->metadata();

    for (const TensorInfo& t : spec.tensors) m_data.emplace_back(t.bytes());
    m_fd = ::open(tmp_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (m_fd < 0) fail(m_display, std::strerror(errno));
  }

  ~JsonWriter() override {
    if (m_fd >= 0) ::close(m_fd);
  }

  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const std::size_t elem = dtype_size(m_spec.tensors[index].dtype);
    if (count) std::memcpy(m_data[index].data() + offset * elem, src, count * elem);
  }

  void finish() override {
    for (const auto& [k, v] : m_spec.provenance.entries()) m_metadata[k] = v;
    m_out = "{\"format\": \"wavg-json\", \"version\": 1,\n \"metadata\": {";
    bool first = true;
    for (const auto& [k, v] : m_metadata) {
      m_out += first ? "\n  " : ",\n  ";
      first = false;
      m_out += quote(k) + ": " + quote(v);
    }
    m_out += first ? "},\n \"tensors\": [" : "\n },\n \"tensors\": [";
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i) {
      const TensorInfo& t = m_spec.tensors[i];
      m_out += i ? ",\n  {\"name\": " : "\n  {\"name\": ";
      m_out += quote(t.name);
      m_out += ", \"dtype\": \"" + std::string(dtype_name(t.dtype)) + "\", \"shape\": [";
      for (std::size_t d = 0; d < t.shape.size(); ++d) m_out += (d ? ", " : "") + std::to_string(t.shape[d]);
      m_out += "],";
      write_values(t, m_data[i]);
      m_out += "}";
      std::vector<unsigned char>().swap(m_data[i]);
    }
    m_out += m_spec.tensors.empty() ? "]}\n" : "\n ]}\n";
    flush();
    close_output(m_fd, m_display);
  }

 private:
  std::string quote(const std::string& s) {
    try {
      return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    } catch (const nlohmann::json::exception&) {
      fail(m_display, "a tensor name or metadata entry is not valid UTF-8; wavg JSON cannot hold it");
    }
  }

  void write_values(const TensorInfo& t, const std::vector<unsigned char>& data) {
    if (m_encoding == JsonEncoding::base64) {
      m_out += " \"encoding\": \"base64\", \"data\": \"";
      // Whole groups of 3 bytes per chunk, so the chunks join into one valid base64 string.
      constexpr std::size_t chunk = 3 * (k_flush / 4);
      for (std::size_t at = 0; at < data.size(); at += chunk) {
        json::append_base64(m_out, data.data() + at, std::min(chunk, data.size() - at));
        if (m_out.size() >= k_flush) flush();
      }
      m_out += "\"";
      return;
    }
    m_out += "\n   \"data\": [";
    const std::size_t elem = dtype_size(t.dtype);
    const std::size_t n = data.size() / elem;
    for (std::size_t k = 0; k < n; ++k) {
      if (k) m_out += ',';
      const unsigned char* e = data.data() + k * elem;
      if (t.dtype == DType::boolean)
        m_out += e[0] ? "true" : "false";
      else if (is_float(t.dtype))
        json::append_float(m_out, t.dtype, e);
      else
        json::append_integer(m_out, t.dtype, e);
      if (m_out.size() >= k_flush) flush();
    }
    m_out += "]";
  }

  void flush() {
    const char* p = m_out.data();
    std::size_t left = m_out.size();
    while (left > 0) {
      const ssize_t n = ::write(m_fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(m_display, std::string("write failed: ") + std::strerror(errno));
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    m_out.clear();
  }

  std::string m_display;
  const OutputSpec& m_spec;
  JsonEncoding m_encoding;
  std::map<std::string, std::string> m_metadata;
  std::vector<std::vector<unsigned char>> m_data;
  std::string m_out;
  int m_fd = -1;
};

}  // namespace

std::unique_ptr<Writer> create_json_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec, JsonEncoding encoding) {
  return std::make_unique<JsonWriter>(tmp_path, display_path, spec, encoding);
}

}  // namespace wavg
