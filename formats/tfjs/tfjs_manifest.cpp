// Reading and checking a TF.js model.json: every member the reader relies on, before any shard byte is read
// (tfjs.hpp).

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "common/companion_path.hpp"
#include "tfjs/tfjs.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

namespace {

using Json = nlohmann::json;

std::string group_name(std::size_t g) { return "weightsManifest group " + std::to_string(g + 1); }

std::string text_of(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::string read_model_json(const std::string& path) {
  constexpr std::uint64_t limit = k_max_model_json;
  const int fd = open_regular_file(path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    fail(path, std::strerror(e));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > limit) {
    ::close(fd);
    fail(path, "model.json is " + std::to_string(size) + " bytes, over the limit of " + std::to_string(limit));
  }
  std::string text(size, '\0');
  std::uint64_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, text.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      fail(path, n == 0 ? "file shrank while being read" : std::strerror(errno));
    }
    got += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  return text;
}

std::vector<std::string> tfjs_listed_shards(const std::string& path) {
  std::vector<std::string> out;
  try {
    const Json doc = Json::parse(read_model_json(path));
    for (const Json& group : doc.at("weightsManifest"))
      for (const Json& p : group.at("paths"))
        if (p.is_string() && relative_path_problem(p.get<std::string>()).empty()) out.push_back(p.get<std::string>());
  } catch (const std::exception&) {
    return {};  // not a TF.js model.json we can read: nothing of it to remove
  }
  return out;
}

void TfjsReader::parse(const std::string& text) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    const bool utf8 = std::strstr(e.what(), "UTF-8") != nullptr;
    fail(m_path, std::string(utf8 ? "model.json is not valid UTF-8" : "model.json is not valid JSON") + " (at byte " +
                     std::to_string(e.byte) + ")");
  } catch (const Json::out_of_range&) {
    fail(m_path, "model.json holds a number too large for a double");
  }
  if (!doc.is_object()) fail(m_path, "model.json is not a JSON object");
  const auto manifest = doc.find("weightsManifest");
  if (manifest == doc.end() || !manifest->is_array()) fail(m_path, "weightsManifest is not an array");

  const auto format = doc.find("format");
  if (format == doc.end())
    m_layout = "weights manifest";
  else if (*format == "layers-model")
    m_layout = "layers model";
  else if (*format == "graph-model")
    m_layout = "graph model";
  else
    fail(m_path, "unknown format " + format->dump() + " (TF.js has \"layers-model\" and \"graph-model\")");

  for (const char* key : {"format", "generatedBy", "convertedBy"})
    if (const auto it = doc.find(key); it != doc.end() && !it->is_null()) m_metadata[key] = text_of(*it);
  if (const auto udm = doc.find("userDefinedMetadata"); udm != doc.end() && udm->is_object())
    for (auto it = udm->begin(); it != udm->end(); ++it) {
      if (it.key() == "wavg" && it->is_object())
        for (auto p = it->begin(); p != it->end(); ++p) m_metadata[p.key()] = text_of(*p);
      else
        m_metadata[it.key()] = text_of(*it);
    }

  m_groups.resize(manifest->size());
  std::set<std::string> names;
  for (std::size_t g = 0; g < manifest->size(); ++g) {
    const Json& group = (*manifest)[g];
    if (!group.is_object()) fail(m_path, group_name(g) + " is not an object");
    open_group(g, &group);
    const auto weights = group.find("weights");
    if (weights == group.end() || !weights->is_array()) fail(m_path, group_name(g) + ": weights is not an array");
    std::uint64_t at = 0;
    for (const Json& w : *weights) {
      add_weight(g, &w, at);
      if (!names.insert(m_tensors.back().name).second)
        fail(m_path, "weight " + m_tensors.back().name + " appears twice in weightsManifest");
    }
    if (at != m_groups[g].bytes)
      fail(m_path, group_name(g) + ": its shards hold " + std::to_string(m_groups[g].bytes) +
                       " bytes but its weights need " + std::to_string(at));
  }
}

void TfjsReader::open_group(std::size_t g, const void* group_json) {
  const Json& group = *static_cast<const Json*>(group_json);
  const auto paths = group.find("paths");
  if (paths == group.end() || !paths->is_array()) fail(m_path, group_name(g) + ": paths is not an array");
  Group& out = m_groups[g];
  // Shards must lie in model.json's directory or below it. A shard that is a symbolic link, or sits in a
  // directory that is one, is followed nowhere: the last component is opened with O_NOFOLLOW, and the file
  // actually opened must resolve to a path inside the model's directory.
  std::error_code ec;
  const std::string model_dir = std::filesystem::canonical(m_dir.empty() ? "." : m_dir, ec).string();
  if (ec) fail(m_path, "cannot resolve the model's directory: " + ec.message());
  for (const Json& p : *paths) {
    if (!p.is_string()) fail(m_path, group_name(g) + ": paths holds something other than a string");
    const std::string rel = p.get<std::string>();
    if (const std::string bad = relative_path_problem(rel); !bad.empty())
      fail(m_path, group_name(g) + ": shard path " + rel + " " + bad + " (shards must lie beside model.json)");
    const std::string shard_path = m_dir + rel;
    std::string why;
    const int fd = try_open_regular_file(shard_path, FollowLinks::no, why);
    if (fd < 0)  // "is a FIFO, not a regular file", "is a symbolic link", or the system's reason
      fail(m_path, "shard " + rel + ": " + why +
                       (why.rfind("is ", 0) == 0 ? " (shards must be regular files beside model.json)" : ""));
    const std::string real = resolved_path_of(fd);
    if (real.size() <= model_dir.size() + 1 || real.compare(0, model_dir.size(), model_dir) != 0 ||
        (model_dir != "/" && real[model_dir.size()] != '/')) {
      ::close(fd);
      fail(m_path, "shard " + rel + " resolves to " + real + ", outside the model's directory " + model_dir +
                       " (through a symbolic link)");
    }
    // One file as two shards (by name or by a hard link) is no model TF.js writes, and it let a few bytes of
    // model.json list a shard 200,000 times: as many mappings, until the system refused them (4 s, "out of memory").
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !m_shard_files.emplace(st.st_dev, st.st_ino).second) {
      ::close(fd);
      fail(m_path, group_name(g) + ": shard " + rel + " is listed twice in weightsManifest");
    }
    std::optional<MappedFile> file;
    try {
      file.emplace(shard_path, fd);
    } catch (const Error& e) {
      ::close(fd);
      fail(m_path, "shard " + rel + ": " + e.problems().front().what);
    }
    ::close(fd);  // the mapping keeps the file
    Shard s{std::move(*file), out.bytes};
    out.bytes += s.file.size();
    out.shards.push_back(std::move(s));
  }
}

void TfjsReader::add_weight(std::size_t g, const void* weight_json, std::uint64_t& at) {
  const Json& w = *static_cast<const Json*>(weight_json);
  if (!w.is_object() || !w.contains("name") || !w["name"].is_string())
    fail(m_path, group_name(g) + ": a weight has no name string");
  TensorInfo info;
  info.name = w["name"].get<std::string>();
  const std::string what = "weight " + info.name;
  const auto dt = w.find("dtype");
  if (dt == w.end() || !dt->is_string()) fail(m_path, what + ": dtype is not a string");
  const std::string dname = dt->get<std::string>();
  if (dname == "float32")
    info.dtype = DType::f32;
  else if (dname == "int32")
    info.dtype = DType::i32;
  else if (dname == "bool")
    info.dtype = DType::boolean;
  else if (dname == "string" || dname == "complex64")
    fail(m_path, what + ": dtype " + dname + " is not supported (wavg reads float32, int32 and bool)");
  else
    fail(m_path, what + ": unknown dtype " + dname);
  const auto shape = w.find("shape");
  if (shape == w.end() || !shape->is_array()) fail(m_path, what + ": shape is not an array");
  for (const Json& d : *shape) {
    if (!d.is_number_unsigned()) fail(m_path, what + ": shape holds something other than a non-negative integer");
    info.shape.push_back(d.get<std::uint64_t>());
  }

  Weight weight{g, at, TfjsStored::plain, 1.0, 0.0};
  std::size_t stored_size = dtype_size(info.dtype);
  if (const auto q = w.find("quantization"); q != w.end()) {
    if (!q->is_object() || !q->contains("dtype") || !(*q)["dtype"].is_string())
      fail(m_path, what + ": quantization has no dtype string");
    const std::string qd = (*q)["dtype"].get<std::string>();
    if (qd == "float16") {
      if (info.dtype != DType::f32) fail(m_path, what + ": float16 quantization of a " + dname + " weight");
      weight.stored = TfjsStored::float16;
      stored_size = 2;
    } else if (qd == "uint8" || qd == "uint16") {
      if (info.dtype == DType::boolean) fail(m_path, what + ": quantization of a bool weight");
      for (const char* key : {"scale", "min"}) {
        const auto v = q->find(key);
        if (v == q->end() || !v->is_number() || !std::isfinite(v->get<double>()))
          fail(m_path, what + ": quantization " + key + " is not a finite number");
      }
      weight.scale = (*q)["scale"].get<double>();
      weight.min = (*q)["min"].get<double>();
      weight.stored = qd == "uint8" ? TfjsStored::uint8_affine : TfjsStored::uint16_affine;
      stored_size = qd == "uint8" ? 1 : 2;
      const double top = (qd == "uint8" ? 255.0 : 65535.0) * weight.scale + weight.min;
      const double lo = std::min(weight.min, top), hi = std::max(weight.min, top);
      if (info.dtype == DType::i32 && (lo < -2147483648.0 || hi > 2147483647.0))
        fail(m_path, what + ": quantization range exceeds int32");
      if (info.dtype == DType::f32 && std::max(std::fabs(lo), std::fabs(hi)) > 3.4028234663852886e38)
        fail(m_path, what + ": quantization range exceeds float32");
    } else {
      fail(m_path, what + ": unknown quantization dtype " + qd);
    }
  }
  std::uint64_t count = 0;
  if (!checked_count(info.shape, stored_size, count) || count * stored_size > ~at)
    fail(m_path, what + ": shape " + shape_string(info.shape) + " overflows");
  at += count * stored_size;
  m_tensors.push_back(std::move(info));
  m_weights.push_back(weight);
}

}  // namespace wavg
