// SHA-256 (FIPS 180-4) written out here rather than taken from a crypto library: wavg only fingerprints its inputs,
// and one small function is cheaper than a dependency. Files are hashed in 1 MiB reads.

#include "wavg/provenance.hpp"

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "wavg/error.hpp"
#include "wavg/version.hpp"

namespace wavg {

namespace {

constexpr std::array<std::uint32_t, 64> k_round{
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

class Sha256 {
 public:
  void update(const unsigned char* p, std::size_t n) {
    m_length += n;
    while (n > 0) {
      const std::size_t take = std::min(n, 64 - m_fill);
      std::memcpy(m_block + m_fill, p, take);
      m_fill += take;
      p += take;
      n -= take;
      if (m_fill == 64) {
        compress();
        m_fill = 0;
      }
    }
  }

  std::string hex() {
    const std::uint64_t bits = m_length * 8;
    const unsigned char one = 0x80, zero = 0;
    update(&one, 1);
    while (m_fill != 56) update(&zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(len, 8);
    std::string out;
    char buf[9];
    for (std::uint32_t h : m_h) {
      std::snprintf(buf, sizeof buf, "%08x", h);
      out += buf;
    }
    return out;
  }

 private:
  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress() {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (std::uint32_t{m_block[4 * i]} << 24) | (std::uint32_t{m_block[4 * i + 1]} << 16) |
             (std::uint32_t{m_block[4 * i + 2]} << 8) | std::uint32_t{m_block[4 * i + 3]};
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = m_h[0], b = m_h[1], c = m_h[2], d = m_h[3], e = m_h[4], f = m_h[5], g = m_h[6], h = m_h[7];
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k_round[i] + w[i];
      const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    m_h[0] += a; m_h[1] += b; m_h[2] += c; m_h[3] += d; m_h[4] += e; m_h[5] += f; m_h[6] += g; m_h[7] += h;
  }

  std::uint32_t m_h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char m_block[64] = {};
  std::size_t m_fill = 0;
  std::uint64_t m_length = 0;
};

}  // namespace

std::string sha256_bytes(const void* data, std::size_t size) {
  Sha256 h;
  h.update(static_cast<const unsigned char*>(data), size);
  return h.hex();
}

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot read: ") + std::strerror(errno ? errno : ENOENT));
  Sha256 h;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.update(reinterpret_cast<const unsigned char*>(buf.data()), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) fail(path, "read failed while hashing");
  return h.hex();
}

std::map<std::string, std::string> make_provenance(const std::string& command, const std::string& method,
                                                   const std::vector<std::string>& inputs,
                                                   const std::string& out_dtype) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& p : inputs)
    list.push_back({{"file", std::filesystem::path(p).filename().string()}, {"sha256", sha256_file(p)}});
  std::map<std::string, std::string> out{{"wavg_version", k_version},
                                         {"wavg_command", command},
                                         {"wavg_method", method},
                                         {"wavg_inputs", list.dump(-1, ' ', false,
                                                                   nlohmann::json::error_handler_t::replace)}};
  if (!out_dtype.empty()) out["wavg_out_dtype"] = out_dtype;
  return out;
}

}  // namespace wavg
