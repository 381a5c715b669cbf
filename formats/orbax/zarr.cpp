// Zarr metadata and chunk decoding (layout in zarr.hpp): the metadata parsed strictly with nlohmann, the chunks
// decompressed by Debian's libzstd, zlib and (when built with it) libblosc, each into exactly the chunk's bytes.

#include "orbax/zarr.hpp"

#include <zlib.h>
#include <zstd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#ifdef WAVG_HAVE_BLOSC
#include <blosc.h>
#endif

#include "tensorflow/crc32c.hpp"
#include "wavg/dispatch_float.hpp"
#include "wavg/element_math.hpp"
#include "wavg/error.hpp"

namespace wavg::orbax {

static_assert(std::endian::native == std::endian::little, "zarr chunks are read as little-endian");

namespace {

using nlohmann::json;

constexpr std::size_t k_max_rank = 64;

[[noreturn]] void bad(const std::string& file, const std::string& what) { fail(file, what); }

Shape dims(const std::string& file, const json& j, const char* field) {
  if (!j.is_array() || j.size() > k_max_rank) bad(file, std::string(field) + " is not a list of dimensions");
  Shape s;
  for (const json& d : j) {
    if (!d.is_number_unsigned()) bad(file, std::string(field) + " holds " + d.dump() + ", not a dimension");
    s.push_back(d.get<std::uint64_t>());
  }
  return s;
}

// numpy's type strings (v2) and zarr v3's names, for the dtypes wavg reads.
DType v2_dtype(const std::string& file, const std::string& d) {
  if (d == "bfloat16") return DType::bf16;
  static const std::pair<const char*, DType> k_types[] = {
      {"f2", DType::f16}, {"f4", DType::f32}, {"f8", DType::f64}, {"i1", DType::i8},  {"i2", DType::i16},
      {"i4", DType::i32}, {"i8", DType::i64}, {"u1", DType::u8},  {"u2", DType::u16}, {"u4", DType::u32},
      {"u8", DType::u64}, {"b1", DType::boolean}};
  if (d.size() == 3)
    for (const auto& [code, dtype] : k_types)
      if (d.compare(1, 2, code) == 0) {
        if (d[0] == '<' || (d[0] == '|' && dtype_size(dtype) == 1)) return dtype;
        if (d[0] == '>') bad(file, "big-endian data ('" + d + "') are not supported");
      }
  bad(file, "dtype '" + clipped(d, 40) + "' is not one wavg reads");
}

DType v3_dtype(const std::string& file, const std::string& d) {
  static const std::pair<const char*, DType> k_types[] = {
      {"float16", DType::f16}, {"bfloat16", DType::bf16}, {"float32", DType::f32}, {"float64", DType::f64},
      {"int8", DType::i8},     {"int16", DType::i16},     {"int32", DType::i32},   {"int64", DType::i64},
      {"uint8", DType::u8},    {"uint16", DType::u16},    {"uint32", DType::u32},  {"uint64", DType::u64},
      {"bool", DType::boolean}};
  for (const auto& [name, dtype] : k_types)
    if (d == name) return dtype;
  bad(file, "data_type '" + clipped(d, 40) + "' is not one wavg reads");
}

// One element of the fill value, in the array's dtype: null is zero (tensorstore's reading of it).
std::vector<unsigned char> fill_value(const std::string& file, const json& j, DType t) {
  std::vector<unsigned char> out(dtype_size(t), 0);
  if (j.is_null()) return out;
  double v = 0;
  if (j.is_boolean())
    v = j.get<bool>();
  else if (j.is_number())
    v = j.get<double>();
  else if (j.is_string() && j == "NaN")
    v = std::numeric_limits<double>::quiet_NaN();
  else if (j.is_string() && j == "Infinity")
    v = INFINITY;
  else if (j.is_string() && j == "-Infinity")
    v = -INFINITY;
  else
    bad(file, "fill_value " + clipped(j.dump(), 40) + " is not a number");
  if (is_float(t)) {
    dispatch_float(t, [&]<DType T>() { store<T>(out.data(), 0, v); });
    return out;
  }
  // Integers and bools from the JSON integer itself (a float64 holds them only to 2^53), little-endian, truncated
  // to the element's width as numpy casts.
  if (!j.is_number_integer() && !j.is_boolean()) bad(file, "fill_value " + clipped(j.dump(), 40) + " for an integer array");
  const std::uint64_t i = j.is_boolean()            ? j.get<bool>()
                          : j.is_number_unsigned() ? j.get<std::uint64_t>()
                                                   : static_cast<std::uint64_t>(j.get<std::int64_t>());
  std::memcpy(out.data(), &i, out.size());
  return out;
}

Compression compressor(const std::string& file, const json& c, const char* key) {
  if (c.is_null()) return Compression::none;
  if (!c.is_object() || !c.contains(key) || !c[key].is_string()) bad(file, "a compressor without its " + std::string(key));
  const std::string id = c[key];
  if (id == "zstd") return Compression::zstd;
  if (id == "gzip") return Compression::gzip;
  if (id == "zlib") return Compression::zlib;
  if (id == "blosc") {
    if (!have_blosc()) bad(file, "its chunks are blosc-compressed and this wavg was built without libblosc");
    return Compression::blosc;
  }
  bad(file, "compressor '" + clipped(id, 40) + "' is not one wavg reads (zstd, gzip, zlib, blosc)");
}

// A v3 codec list for one chunk: "bytes", then at most one compressor, then optionally "crc32c".
void chunk_codecs(const std::string& file, const json& codecs, ZarrArray& a) {
  if (!codecs.is_array() || codecs.empty()) bad(file, "codecs is not a list");
  std::size_t i = 0;
  const auto name = [&](std::size_t k) -> std::string {
    if (!codecs[k].is_object() || !codecs[k].contains("name") || !codecs[k]["name"].is_string())
      bad(file, "a codec without a name");
    return codecs[k]["name"];
  };
  if (name(0) == "transpose") bad(file, "a transposed array (codec transpose) is not supported");
  if (name(0) != "bytes") bad(file, "codec '" + clipped(name(0), 40) + "' before 'bytes' is not supported");
  const json& conf = codecs[0].value("configuration", json::object());
  if (conf.is_object() && conf.contains("endian") && conf["endian"] != "little" && dtype_size(a.dtype) > 1)
    bad(file, "big-endian data are not supported");
  for (i = 1; i < codecs.size(); ++i) {
    const std::string n = name(i);
    if (n == "crc32c" && i + 1 == codecs.size()) {
      a.crc32c = true;
    } else if (a.compression == Compression::none && (n == "zstd" || n == "gzip" || n == "blosc")) {
      a.compression = compressor(file, codecs[i], "name");
    } else {
      bad(file, "codec '" + clipped(n, 40) + "' is not one wavg reads here (zstd, gzip, blosc, crc32c)");
    }
  }
}

std::uint64_t le64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

bool have_blosc() {
#ifdef WAVG_HAVE_BLOSC
  return true;
#else
  return false;
#endif
}

ZarrArray parse_zarr(const std::string& file, std::string_view text, int format) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) bad(file, "is not a JSON object");
  ZarrArray a;
  a.format = format;
  try {
    if (j.value("zarr_format", 0) != format) bad(file, "zarr_format is not " + std::to_string(format));
    a.shape = dims(file, j.at("shape"), "shape");
    if (format == 2) {
      a.chunk = dims(file, j.at("chunks"), "chunks");
      if (!j.at("dtype").is_string()) bad(file, "dtype is not a string (a structured array?)");
      a.dtype = v2_dtype(file, j["dtype"]);
      a.compression = compressor(file, j.value("compressor", json()), "id");
      if (!j.value("filters", json()).is_null()) bad(file, "filters are not supported");
      if (j.value("order", "C") != "C" && a.shape.size() > 1) bad(file, "Fortran order is not supported");
      const std::string sep = j.value("dimension_separator", ".");
      if (sep != "." && sep != "/") bad(file, "dimension_separator '" + clipped(sep, 8) + "'");
      a.separator = sep[0];
      a.fill = fill_value(file, j.value("fill_value", json()), a.dtype);
    } else {
      if (j.value("node_type", "") != "array") bad(file, "node_type is not \"array\"");
      if (!j.at("data_type").is_string()) bad(file, "data_type is not a string");
      a.dtype = v3_dtype(file, j["data_type"]);
      const json& grid = j.at("chunk_grid");
      if (grid.value("name", "") != "regular") bad(file, "the chunk grid is not regular");
      a.chunk = dims(file, grid.at("configuration").at("chunk_shape"), "chunk_shape");
      const json& keys = j.value("chunk_key_encoding", json{{"name", "default"}});
      const std::string kname = keys.value("name", "");
      if (kname != "default" && kname != "v2") bad(file, "chunk_key_encoding '" + clipped(kname, 20) + "'");
      a.v3_default_keys = kname == "default";
      const std::string sep = keys.value("configuration", json::object()).value("separator", a.v3_default_keys ? "/" : ".");
      if (sep != "." && sep != "/") bad(file, "chunk key separator '" + clipped(sep, 8) + "'");
      a.separator = sep[0];
      a.fill = fill_value(file, j.value("fill_value", json()), a.dtype);
      const json& codecs = j.at("codecs");
      if (codecs.is_array() && codecs.size() == 1 && codecs[0].is_object() &&
          codecs[0].value("name", "") == "sharding_indexed") {
        const json& c = codecs[0].at("configuration");
        a.sharded = true;
        const Shape inner = dims(file, c.at("chunk_shape"), "the inner chunk_shape");
        if (inner.size() != a.chunk.size()) bad(file, "the inner chunk_shape has another rank than the shards");
        a.shard.resize(inner.size());
        for (std::size_t d = 0; d < inner.size(); ++d) {
          if (inner[d] == 0 || a.chunk[d] % inner[d] != 0) bad(file, "a shard is not a whole number of inner chunks");
          a.shard[d] = a.chunk[d] / inner[d];
        }
        a.chunk = inner;
        chunk_codecs(file, c.at("codecs"), a);
        const json& index = c.value("index_codecs", json::array());
        for (std::size_t i = 0; i < index.size(); ++i) {
          const std::string n = index[i].value("name", "");
          if (n == "crc32c" && i + 1 == index.size())
            a.index_crc32c = true;
          else if (n != "bytes" || i != 0)
            bad(file, "index codec '" + clipped(n, 20) + "' is not supported");
        }
        const std::string where = c.value("index_location", "end");
        if (where != "end" && where != "start") bad(file, "index_location '" + clipped(where, 20) + "'");
        a.index_at_start = where == "start";
      } else {
        chunk_codecs(file, codecs, a);
      }
    }
  } catch (const json::exception& e) {
    bad(file, std::string("malformed metadata: ") + e.what());
  }
  if (a.chunk.size() != a.shape.size())
    bad(file, "its chunks have " + std::to_string(a.chunk.size()) + " dimensions, its shape " +
                  std::to_string(a.shape.size()));
  for (const auto c : a.chunk)
    if (c == 0) bad(file, "a chunk dimension is 0");
  std::uint64_t count = 0;
  if (!checked_count(a.shape, dtype_size(a.dtype), count)) bad(file, "its shape overflows");
  Shape per_file = a.chunk;
  for (std::size_t d = 0; d < a.shard.size(); ++d)
    if (a.shard[d] > UINT64_MAX / per_file[d]) bad(file, "its shard shape overflows");
  if (!checked_count(a.chunk, dtype_size(a.dtype), count)) bad(file, "its chunk shape overflows");
  return a;
}

Shape chunk_grid(const ZarrArray& a) {
  Shape g(a.shape.size());
  for (std::size_t d = 0; d < g.size(); ++d) g[d] = a.shape[d] / a.chunk[d] + (a.shape[d] % a.chunk[d] != 0);
  return g;
}

std::string chunk_key(const ZarrArray& a, const Shape& index) {
  std::string key = a.v3_default_keys ? "c" : "";
  for (std::size_t d = 0; d < index.size(); ++d) {
    const std::uint64_t i = a.sharded ? index[d] / a.shard[d] : index[d];
    if (!key.empty()) key += a.separator;
    key += std::to_string(i);
  }
  return key.empty() ? "0" : key;
}

std::optional<std::span<const unsigned char>> shard_entry(const std::string& file, const ZarrArray& a,
                                                          std::span<const unsigned char> shard, const Shape& index) {
  std::uint64_t entries = 1, at = 0;
  for (std::size_t d = 0; d < a.shard.size(); ++d) {
    entries *= a.shard[d];  // fits: checked with the chunk shape in parse_zarr
    at = at * a.shard[d] + index[d] % a.shard[d];
  }
  if (entries > (shard.size() - 4 * a.index_crc32c) / 16) fail(file, "a shard too short for its index");
  const std::uint64_t index_bytes = entries * 16 + 4 * a.index_crc32c;
  const unsigned char* idx = a.index_at_start ? shard.data() : shard.data() + shard.size() - index_bytes;
  if (a.index_crc32c) {
    std::uint32_t stored;
    std::memcpy(&stored, idx + entries * 16, 4);
    if (crc32c::extend(0, idx, entries * 16) != stored) fail(file, "a shard's index fails its CRC-32C (corrupt)");
  }
  const std::uint64_t offset = le64(idx + at * 16), nbytes = le64(idx + at * 16 + 8);
  if (offset == UINT64_MAX && nbytes == UINT64_MAX) return std::nullopt;
  if (offset > shard.size() || nbytes > shard.size() - offset)
    fail(file, "a shard's inner chunk lies at bytes " + std::to_string(offset) + "+" + std::to_string(nbytes) +
                   ", past its " + std::to_string(shard.size()) + " bytes");
  return shard.subspan(offset, nbytes);
}

void decode_chunk(const std::string& file, const ZarrArray& a, std::span<const unsigned char> stored,
                  std::span<unsigned char> out) {
  if (a.crc32c) {
    if (stored.size() < 4) fail(file, "a chunk shorter than its CRC-32C");
    std::uint32_t crc;
    std::memcpy(&crc, stored.data() + stored.size() - 4, 4);
    stored = stored.first(stored.size() - 4);
    if (crc32c::extend(0, stored.data(), stored.size()) != crc) fail(file, "a chunk fails its CRC-32C (corrupt)");
  }
  const auto wrong_size = [&](std::uint64_t got) {
    fail(file, "a chunk decompresses to " + std::to_string(got) + " bytes; the chunk shape needs " +
                   std::to_string(out.size()));
  };
  switch (a.compression) {
    case Compression::none:
      if (stored.size() != out.size()) wrong_size(stored.size());
      std::memcpy(out.data(), stored.data(), out.size());
      return;
    case Compression::zstd: {
      std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> z(ZSTD_createDCtx(), ZSTD_freeDCtx);
      if (!z) throw std::bad_alloc();
      ZSTD_inBuffer in{stored.data(), stored.size(), 0};
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      std::size_t status = 1;
      while (in.pos < in.size) {
        status = ZSTD_decompressStream(z.get(), &o, &in);
        if (ZSTD_isError(status)) fail(file, std::string("a chunk's zstd data: ") + ZSTD_getErrorName(status));
        if (o.pos == o.size && in.pos < in.size) {
          // Full: one more byte would say whether the data go on.
          unsigned char extra;
          ZSTD_outBuffer more{&extra, 1, 0};
          status = ZSTD_decompressStream(z.get(), &more, &in);
          if (ZSTD_isError(status)) fail(file, std::string("a chunk's zstd data: ") + ZSTD_getErrorName(status));
          if (more.pos) wrong_size(out.size() + 1);
        }
      }
      if (status != 0 || o.pos != out.size()) wrong_size(o.pos);
      return;
    }
    case Compression::gzip:
    case Compression::zlib: {
      z_stream s{};
      if (inflateInit2(&s, a.compression == Compression::gzip ? 16 + MAX_WBITS : MAX_WBITS) != Z_OK)
        throw std::bad_alloc();
      std::uint64_t done = 0;
      int rc = Z_OK;
      std::size_t in_at = 0;
      unsigned char extra;
      while (rc == Z_OK) {
        const std::size_t in_n = std::min<std::size_t>(stored.size() - in_at, 1u << 30);
        s.next_in = const_cast<unsigned char*>(stored.data() + in_at);
        s.avail_in = static_cast<uInt>(in_n);
        const bool room = done < out.size();
        s.next_out = room ? out.data() + done : &extra;
        s.avail_out = room ? static_cast<uInt>(std::min<std::uint64_t>(out.size() - done, 1u << 30)) : 1;
        rc = inflate(&s, Z_NO_FLUSH);
        in_at += in_n - s.avail_in;
        const std::uint64_t produced = (room ? std::min<std::uint64_t>(out.size() - done, 1u << 30) : 1) - s.avail_out;
        if (!room && produced) {
          inflateEnd(&s);
          wrong_size(out.size() + 1);
        }
        done += produced;
        if (rc == Z_BUF_ERROR && s.avail_in == 0 && in_at == stored.size()) break;
      }
      inflateEnd(&s);
      if (rc != Z_STREAM_END) fail(file, "a chunk's " + std::string(a.compression == Compression::gzip ? "gzip" : "zlib") + " data are corrupt or cut short");
      if (done != out.size()) wrong_size(done);
      return;
    }
    case Compression::blosc: {
#ifdef WAVG_HAVE_BLOSC
      std::size_t nbytes = 0;
      if (blosc_cbuffer_validate(stored.data(), stored.size(), &nbytes) != 0) fail(file, "a chunk's blosc data are corrupt");
      if (nbytes != out.size()) wrong_size(nbytes);
      const int n = blosc_decompress_ctx(stored.data(), out.data(), out.size(), 1);
      if (n < 0 || static_cast<std::size_t>(n) != out.size()) fail(file, "a chunk's blosc data are corrupt");
      return;
#else
      fail(file, "its chunks are blosc-compressed and this wavg was built without libblosc");
#endif
    }
  }
}

}  // namespace wavg::orbax
