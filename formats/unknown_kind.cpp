// Naming the kind of a file no codec reads (the kinds are listed in unknown_kind.hpp).

#include "unknown_kind.hpp"

#include <zip.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

namespace wavg {

namespace {

constexpr std::uintmax_t k_max_json = 64u << 20;  // JSON files larger than this are not parsed for a message

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};

std::string zip_kind(const std::string& path) {
  int code = 0;
  std::unique_ptr<zip_t, ZipCloser> z(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!z) return "a zip archive that cannot be opened";
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  std::string first, pickle;
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(z.get(), static_cast<zip_uint64_t>(i), 0);
    if (!name) continue;
    const std::string s = name;
    if (first.empty()) first = s;
    if (is_torchscript_entry(s)) return torchscript_kind();
    if (pickle.empty() && (s == "data.pkl" || (s.size() > 9 && s.compare(s.size() - 9, 9, "/data.pkl") == 0)))
      pickle = s;
  }
  // torch.save writes TOP/data.pkl first (the PyTorch codec's sniff); an archive holding it later is not its own.
  if (!pickle.empty())
    return "a zip archive holding " + pickle + " whose first entry is " + first +
           ", not laid out as torch.save "
           "writes (TOP/data.pkl first)";
  return "a zip archive that is not a Keras .keras model (its first entry is " +
         (first.empty() ? std::string("none") : first) + ")";
}

std::string json_kind(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > k_max_json) return {};
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object()) return {};
  if (doc.contains("weight_map") && doc["weight_map"].is_object())
    return "a Hugging Face sharded-checkpoint index (weight_map of " + std::to_string(doc["weight_map"].size()) +
           " tensors), which holds no weights: give wavg the shard files it names";
  if (doc.contains("modelTopology"))
    return "a TensorFlow.js model.json without a weightsManifest, which holds no weights";
  if (doc.contains("class_name") && doc.contains("config"))
    return "a Keras model architecture (model.to_json()), which holds no weights: give wavg the weights file";
  return "a JSON document that is not a checkpoint (neither wavg JSON nor TensorFlow.js)";
}

std::string first_bytes(const char* buf, std::streamsize n) {
  std::string s;
  for (std::streamsize i = 0; i < n && i < 8; ++i) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(buf[i]));
    if (i) s += ' ';
    s += hex;
  }
  return s;
}

}  // namespace

bool is_torchscript_entry(const std::string& name) {
  return name == "constants.pkl" || (name.size() > 14 && name.compare(name.size() - 14, 14, "/constants.pkl") == 0) ||
         name.find("/code/__torch__/") != std::string::npos;
}

std::string torchscript_kind() {
  return "a TorchScript archive (torch.jit.save: its code/ and constants.pkl entries), which wavg does not read; "
         "torch.save(torch.jit.load(FILE).state_dict(), ...) gives a file it reads";
}

std::string describe_unknown(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char buf[16] = {};
  in.read(buf, sizeof buf);
  const auto n = in.gcount();
  const std::string prefix = "not a checkpoint wavg can read: it is ";
  if (n == 0) return "not a checkpoint wavg can read (looked like an empty file)";
  const auto starts = [&](const char* magic, std::size_t len) {
    return static_cast<std::size_t>(n) >= len && std::memcmp(buf, magic, len) == 0;
  };
  if (starts("PK\x03\x04", 4)) return prefix + zip_kind(path);
  // The PyTorch codec claims a file holding the whole magic pickle; one cut inside it reaches here.
  if (starts("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8", 12))
    return n < 15 ? "a legacy PyTorch checkpoint (torch.save before PyTorch 1.6) cut short: it ends after " +
                        std::to_string(n) + " bytes, inside its magic number"
                  : std::string(
                        "a legacy PyTorch checkpoint (torch.save before PyTorch 1.6) whose magic number is "
                        "corrupt");
  if (n >= 2 && static_cast<unsigned char>(buf[0]) == 0x80 && buf[1] >= 2 && buf[1] <= 5)
    return prefix + "a Python pickle, which wavg does not read (pickles can run code)";
  if (starts("\x93NUMPY", 6)) return prefix + "a NumPy .npy array, which wavg does not read";
  std::size_t i = 0;
  while (i < static_cast<std::size_t>(n) && std::isspace(static_cast<unsigned char>(buf[i]))) ++i;
  if (i < static_cast<std::size_t>(n) && buf[i] == '{')
    if (std::string kind = json_kind(path); !kind.empty()) return prefix + kind;
  return "not a checkpoint wavg can read (looked like bytes " + first_bytes(buf, n) + ")";
}

}  // namespace wavg
