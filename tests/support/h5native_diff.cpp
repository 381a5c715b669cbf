#include "support/h5native_diff.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <set>

#include "hdf5/hdf5_reader.hpp"
#include "wavg/error.hpp"

namespace wavg::test {

namespace {

// A bounds-checked reader of the answer's little-endian fields, written here from the format's description.
class Fields {
 public:
  explicit Fields(std::string_view bytes) : m_bytes(bytes) {}
  std::uint64_t u64() {
    if (m_bytes.size() - m_at < 8) throw std::out_of_range("short");
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(m_bytes[m_at + static_cast<std::size_t>(i)]);
    m_at += 8;
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    if (n > m_bytes.size() - m_at) throw std::out_of_range("short");
    std::string s(m_bytes.substr(m_at, static_cast<std::size_t>(n)));
    m_at += static_cast<std::size_t>(n);
    return s;
  }
  bool done() const { return m_at == m_bytes.size(); }

 private:
  std::string_view m_bytes;
  std::size_t m_at = 8;  // after the magic
};

std::string dtype_text(std::uint64_t d) {
  return d <= static_cast<std::uint64_t>(DType::boolean) ? std::string(dtype_name(static_cast<DType>(d)))
                                                         : "dtype#" + std::to_string(d);
}

// Opens `path` with `walk`, or returns the Error's first problem in `error`.
std::unique_ptr<Hdf5Reader> open(const std::string& path, Hdf5Reader::Walk walk, std::string& error) {
  try {
    return std::make_unique<Hdf5Reader>(path, Hdf5Reader::Probe::no, walk);
  } catch (const Error& e) {
    error = e.problems().empty() ? "(no problem)" : e.problems().front().file + ": " + e.problems().front().what;
    return nullptr;
  }
}

Bytes read_range(Hdf5Reader& r, std::size_t i, std::uint64_t offset, std::uint64_t count) {
  Bytes out(count * dtype_size(r.tensors()[i].dtype));
  if (count > 0) r.read(i, offset, count, out.data());
  return out;
}

constexpr std::uint64_t k_max_compare_bytes = 64ull << 20;

// Checks that every tensor reads the same through both readers (whole, and a range inside), and as written.
void check_reads(Hdf5Reader& native, Hdf5Reader& library, const Written* written) {
  std::set<std::string> found;
  for (std::size_t i = 0; i < library.tensors().size() && i < native.tensors().size(); ++i) {
    const TensorInfo& t = library.tensors()[i];
    INFO("tensor " << t.name);
    found.insert(t.name);
    const TensorInfo& n = native.tensors()[i];
    if (n.name != t.name || n.dtype != t.dtype || n.shape != t.shape) {
      FAIL_CHECK("the native walk's tensor " << i << " is " << n.name << " " << dtype_name(n.dtype) << " "
                                             << shape_string(n.shape));
      continue;
    }
    // A damaged file may claim far more than it holds: what the readers do with that is checked on their first
    // elements, so that the comparison does not allocate what the file claims.
    const std::uint64_t count = std::min<std::uint64_t>(t.count(), k_max_compare_bytes / dtype_size(t.dtype));
    Bytes whole;
    try {
      whole = read_range(library, i, 0, count);
    } catch (const Error& e) {
      // Stored bytes the library refuses (a chunk that does not inflate, an address past the end) must not be served
      // by the native walk straight from the file, which a view would mean. They are not read again through the
      // library: the two readers share HDF5's one open file, and after a failed read HDF5 serves the same dataset
      // from its sieve buffer (zeros, no error).
      CHECK_MESSAGE(native.view(i, 0, count) == nullptr,
                    "the native walk reads bytes the library refused: "
                        << (e.problems().empty() ? "" : e.problems().front().what));
      continue;
    }
    CHECK(read_range(native, i, 0, count) == whole);
    if (count > 2) {
      const std::size_t elem = dtype_size(t.dtype);
      const Bytes inside(whole.begin() + static_cast<std::ptrdiff_t>(elem),
                         whole.end() - static_cast<std::ptrdiff_t>(elem));
      CHECK(read_range(native, i, 1, count - 2) == inside);
      CHECK(read_range(library, i, 1, count - 2) == inside);
    }
    if (!written) continue;
    const auto it = written->find(t.name);
    if (it == written->end()) {
      FAIL_CHECK("a tensor the test did not write");
    } else if (it->second) {
      CHECK(whole == *it->second);
    }
  }
  if (written)
    for (const auto& [name, bytes] : *written)
      if (!found.contains(name)) FAIL_CHECK("written tensor " << name << " was not found");
}

}  // namespace

std::optional<std::vector<std::string>> structure_lines(std::string_view answer) {
  std::vector<std::string> out;
  if (answer.substr(0, 8) != "wavgH5S2") return std::nullopt;
  try {
    Fields f(answer);
    out.push_back("layout " + f.str());
    for (std::uint64_t n = f.u64(); n-- > 0;) {
      std::string key = f.str();
      out.push_back("metadata " + key + " = " + f.str());
    }
    out.push_back(std::string("layer order ") + (f.u64() == 0 ? "model" : "per_kind"));
    for (std::uint64_t n = f.u64(); n-- > 0;) {
      std::string line = "layer " + f.str();
      line += " kind=" + f.str();
      line += " sub_objects=" + std::to_string(f.u64()) + " tensors=[";
      for (std::uint64_t k = f.u64(); k-- > 0;) line += std::to_string(f.u64()) + (k ? "," : "");
      out.push_back(line + "]");
    }
    for (std::uint64_t n = f.u64(); n-- > 0;) {
      std::string line = "tensor " + f.str();
      line += " dtype=" + dtype_text(f.u64());
      line += " numbers=" + std::to_string(f.u64());
      line += " role=" + std::to_string(f.u64());
      line += " role_by_rule=" + std::to_string(f.u64());
      line += " listed=" + std::to_string(f.u64()) + " shape=(";
      for (std::uint64_t k = f.u64(); k-- > 0;) line += std::to_string(f.u64()) + (k ? "," : "");
      const std::uint64_t at = f.u64();
      out.push_back(line + ") direct_offset=" + (at == ~std::uint64_t{0} ? "none" : std::to_string(at)));
    }
    if (!f.done()) return std::nullopt;
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
  return out;
}

std::string first_difference(std::string_view a, std::string_view b) {
  const auto la = structure_lines(a), lb = structure_lines(b);
  if (la && lb) {
    for (std::size_t i = 0; i < std::max(la->size(), lb->size()); ++i) {
      const std::string x = i < la->size() ? (*la)[i] : "(nothing)", y = i < lb->size() ? (*lb)[i] : "(nothing)";
      if (x != y) return "field " + std::to_string(i) + ": native '" + x + "', library '" + y + "'";
    }
    return "no field differs";
  }
  std::size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  return "byte " + std::to_string(at) + " (sizes " + std::to_string(a.size()) + ", " + std::to_string(b.size()) + ")";
}

WalkReport check_walks_agree(const std::string& path, std::optional<Expect> expect, const Written* written,
                             const std::string& refusal) {
  INFO("file " << path);
  WalkReport report;
  std::string library_error, native_error;
  const auto library = open(path, Hdf5Reader::Walk::library, library_error);
  const auto native = open(path, Hdf5Reader::Walk::native, native_error);
  if (!library) {
    report.refused = true;
    report.error = library_error;
    if (native) {
      const auto lines = structure_lines(native->structure());
      FAIL_CHECK("the library walk refused ("
                 << library_error << ") but the native walk took the file"
                 << std::string(native->walked_natively() ? " natively" : " through the library") << " as "
                 << (lines ? lines->front() : "?") << ", " << native->tensors().size() << " tensors");
    }
    if (!native) CHECK(native_error == library_error);
    if (expect) CHECK_MESSAGE(*expect == Expect::refused, "refused: " << library_error);
    if (!refusal.empty()) CHECK_MESSAGE(library_error.find(refusal) != std::string::npos, library_error);
    return report;
  }
  REQUIRE_MESSAGE(native, "the native walk refused what the library walk took: " << native_error);
  report.walked_natively = native->walked_natively();
  report.tensors = library->tensors().size();
  CHECK_FALSE(library->walked_natively());
  if (expect) {
    CHECK(*expect != Expect::refused);
    CHECK(native->walked_natively() == (*expect == Expect::native));
  }
  const std::string ns = native->structure(), ls = library->structure();
  CHECK_MESSAGE(ns == ls, "structures differ at " << first_difference(ns, ls));
  REQUIRE(native->tensors().size() == library->tensors().size());
  check_reads(*native, *library, written);
  return report;
}

}  // namespace wavg::test
