// Reading .keras archives with libzip (layout and limits in keras_archive.hpp).

#include <fcntl.h>
#include <unistd.h>
#include <zip.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hdf5/keras_layout.hpp"
#include "keras/keras_archive.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

constexpr std::uint64_t k_max_json = 64ull << 20;
constexpr std::uint64_t k_max_weights = 1ull << 40;
constexpr std::uint64_t k_max_ratio = 1000;
constexpr std::array<const char*, 3> k_entries{"metadata.json", "config.json", "model.weights.h5"};

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

std::string zip_message(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

// Reads entry `index` (already checked to declare `size` bytes) in chunks handed to `sink`, failing unless exactly
// `size` bytes come out: a lying local header or deflate stream is caught here, after at most `size` + 1 bytes.
template <class Sink>
void extract(zip_t* z, zip_uint64_t index, const std::string& path, const std::string& name, std::uint64_t size,
             Sink sink) {
  std::unique_ptr<zip_file_t, ZipFileCloser> f(zip_fopen_index(z, index, 0));
  if (!f) fail(path, name + ": " + zip_strerror(z));
  std::vector<char> buf(1 << 20);
  std::uint64_t got = 0;
  for (;;) {
    const std::uint64_t want = std::min<std::uint64_t>(buf.size(), size - got + 1);
    const zip_int64_t n = zip_fread(f.get(), buf.data(), want);
    if (n < 0) fail(path, name + ": " + zip_file_strerror(f.get()));
    if (n == 0) break;
    got += static_cast<std::uint64_t>(n);
    if (got > size) fail(path, name + ": holds more than the " + std::to_string(size) + " bytes its header declares");
    sink(buf.data(), static_cast<std::size_t>(n));
  }
  if (got != size)
    fail(path, name + ": holds " + std::to_string(got) + " bytes, not the " + std::to_string(size) + " declared");
}

}  // namespace

bool looks_like_keras(const SniffInput& input) {
  if (!input.text(4).starts_with("PK\x03\x04")) return false;
  // libzip reads the archive from the sniffers' mapping, without opening the file again.
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(input.bytes().data(), input.bytes().size(), 0, &error);
  zip_t* opened = source ? zip_open_from_source(source, ZIP_RDONLY, &error) : nullptr;
  if (source && !opened) zip_source_free(source);
  zip_error_fini(&error);
  std::unique_ptr<zip_t, ZipCloser> z(opened);
  if (!z) return true;  // a broken zip named .keras or not: the reader's own message says what is wrong
  for (const char* entry : k_entries)
    if (zip_name_locate(z.get(), entry, 0) >= 0) return true;
  return false;
}

KerasArchiveReader::KerasArchiveReader(std::string path) : ListedReader(std::move(path), FormatId::keras) {
  int code = 0;
  std::unique_ptr<zip_t, ZipCloser> z(zip_open(m_path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!z) fail(m_path, "not a readable zip archive (" + zip_message(code) + ")");
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  std::array<zip_uint64_t, 3> index{};
  std::array<std::uint64_t, 3> size{};
  std::array<bool, 3> seen{};
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0) fail(m_path, zip_strerror(z.get()));
    const std::string name = st.name ? st.name : "";
    std::size_t k = 0;
    while (k < k_entries.size() && name != k_entries[k]) ++k;
    if (k == k_entries.size())
      fail(m_path,
           "unexpected entry " + name + " (a .keras archive holds metadata.json, config.json and model.weights.h5)");
    if (seen[k]) fail(m_path, "the entry " + name + " appears twice");
    if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE)) fail(m_path, name + ": no declared size");
    const std::uint64_t limit = k == 2 ? k_max_weights : k_max_json;
    if (st.size > limit)
      fail(m_path,
           name + ": declares " + std::to_string(st.size) + " bytes, more than the limit of " + std::to_string(limit));
    if (st.comp_method == ZIP_CM_STORE ? st.comp_size != st.size : st.size > k_max_ratio * st.comp_size + (1u << 20))
      fail(m_path, name + ": declares " + std::to_string(st.size) + " bytes from " + std::to_string(st.comp_size) +
                       " compressed (refused as a zip bomb)");
    seen[k] = true;
    index[k] = static_cast<zip_uint64_t>(i);
    size[k] = st.size;
  }
  for (std::size_t k = 0; k < k_entries.size(); ++k)
    if (!seen[k]) fail(m_path, std::string("no ") + k_entries[k] + " in the archive");

  auto read_text = [&](std::size_t k, std::string& out) {
    extract(z.get(), index[k], m_path, k_entries[k], size[k],
            [&](const char* p, std::size_t len) { out.append(p, len); });
    if (!nlohmann::json::accept(out)) fail(m_path, std::string(k_entries[k]) + " is not valid JSON");
  };
  read_text(0, m_metadata_json);
  read_text(1, m_config);
  if (!nlohmann::json::parse(m_metadata_json).is_object()) fail(m_path, "metadata.json is not a JSON object");

  m_tmp.emplace("keras", ".weights.h5", m_path);
  const std::string& tmp = m_tmp->path();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) fail(m_path, "cannot write " + tmp + ": " + std::strerror(errno));
  try {
    extract(z.get(), index[2], m_path, k_entries[2], size[2], [&](const char* p, std::size_t len) {
      while (len > 0) {
        const ssize_t w = ::write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail(m_path, "cannot extract model.weights.h5 to " + tmp + ": " + std::strerror(errno));
        p += w;
        len -= static_cast<std::size_t>(w);
      }
    });
  } catch (...) {
    ::close(fd);
    throw;  // m_tmp removes the file
  }
  ::close(fd);
  try {
    m_weights = std::make_unique<Hdf5Reader>(tmp);
  } catch (const Error& e) {
    fail(m_path, "model.weights.h5: " + (e.problems().empty() ? std::string(e.what()) : e.problems()[0].what));
  }
  if (const auto optimizer = keras::optimizer_config(m_config)) m_weights->set_keras3_optimizer(*optimizer);
  m_layers = m_weights->model_layers();
  if (auto layers = keras::config_layers(m_config)) keras::order_keras3_layers(m_layers, *layers);
}

KerasArchiveReader::~KerasArchiveReader() = default;

std::map<std::string, std::string> KerasArchiveReader::metadata() const {
  std::map<std::string, std::string> out;
  const nlohmann::json meta = nlohmann::json::parse(m_metadata_json);
  for (const auto& [k, v] : meta.items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

}  // namespace wavg
