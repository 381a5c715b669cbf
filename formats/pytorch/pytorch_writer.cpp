// Writing torch.save files (layout and the three cases in pytorch.hpp): the file is laid out and sized before any
// value arrives, input 1's bytes are copied where they are kept (only there), and every block is written in place
// with pwrite(). The ranks of a distributed merge lay out the same file and write their shares into it; rank 0 also
// copies and writes what the engine does not, and joins the others' CRC-32 spans (entry_crcs.hpp) to the headers.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "pytorch/pickle_writer.hpp"
#include "pytorch/pytorch.hpp"
#include "pytorch/shared_views.hpp"
#include "wavg/error.hpp"

namespace wavg::pytorch {

// _rebuild_tensor_v2(storage KEY, 0, shape, row-major stride, False, OrderedDict()), as torch.save writes a tensor; a
// dtype without a storage class (uint16/32/64) as torch 2 writes it:
// _rebuild_tensor_v3(UntypedStorage KEY of its bytes, 0, shape, stride, False, OrderedDict(), torch.DTYPE). Complex
// numbers (carried as parts, tensor.hpp) in a ComplexFloatStorage or ComplexDoubleStorage, counted and shaped as
// numbers.
void pickle_tensor(std::string& p, const TensorInfo& t, const std::string& key) {
  const char* cls = storage_class(t.dtype, t.numbers);
  const bool complex = t.numbers == Numbers::complex;
  WAVG_ASSERT(!complex || (cls && !t.shape.empty() && t.shape.back() == 2));
  const Shape shape(t.shape.begin(), t.shape.end() - (complex ? 1 : 0));
  pickle_global(p, "torch._utils", cls ? "_rebuild_tensor_v2" : "_rebuild_tensor_v3");
  p += "((";
  pickle_string(p, "storage");
  if (cls)
    pickle_global(p, "torch", cls + 6);  // past "torch."
  else
    pickle_global(p, "torch.storage", "UntypedStorage");
  pickle_string(p, key);
  pickle_string(p, "cpu");
  pickle_uint(p, cls ? t.count() / (complex ? 2 : 1) : t.bytes());
  p += "tQ";
  pickle_uint(p, 0);
  std::vector<std::uint64_t> stride(shape.size());
  std::uint64_t s = 1;
  for (std::size_t d = shape.size(); d-- > 0;) stride[d] = s, s *= shape[d];
  pickle_tuple(p, shape);
  pickle_tuple(p, stride);
  pickle_bool(p, false);
  pickle_global(p, "collections", "OrderedDict");
  p += ")R";
  if (!cls) pickle_global(p, "torch", std::string(dtype_name(t.dtype)));
  p += "tR";
}

namespace {

// OrderedDict([(name, tensor i), ...]) (pickle_tensor).
std::string state_dict_pickle(const std::vector<TensorInfo>& tensors) {
  std::string p = "\x80\x02";
  pickle_global(p, "collections", "OrderedDict");
  p += ")R(";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    pickle_string(p, tensors[i].name);
    pickle_tensor(p, tensors[i], std::to_string(i));
  }
  p += "u.";
  return p;
}

std::string provenance_json(const std::map<std::string, std::string>& entries) {
  return nlohmann::json(entries).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

class PytorchWriter final : public Writer {
 public:
  PytorchWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : m_display(display_path), m_spec(spec) {
    // A distributed merge's other ranks (OutputSpec::part) lay out the same file and write only their values into
    // it: rank 0 has copied what the engine does not write, and writes the headers.
    m_fd = ::open(tmp_path.c_str(), O_RDWR | (spec.part ? 0 : O_TRUNC) | O_CLOEXEC);
    if (m_fd < 0) fail(m_display, std::strerror(errno));
    m_zip = std::make_unique<ZipWriter>(m_fd, m_display);
    m_targets.resize(spec.tensors.size());
    m_prefilled.assign(spec.tensors.size(), false);
    const auto* input1 = dynamic_cast<const PytorchReader*>(spec.template_input);
    if (input1)  // template_index looks names up here: a search per output tensor was quadratic
      for (std::size_t i = 0; i < input1->tensors().size(); ++i) m_input1_index.emplace(input1->tensors()[i].name, i);
    if (input1) refuse_dropped_state(*input1);
    if (input1 && input1->container() == Container::legacy)
      lay_out_legacy(*input1);
    else if (input1)
      lay_out_zip(*input1);
    else
      lay_out_plain();
    if (input1) watch_shared_views(*input1);
  }

  ~PytorchWriter() override {
    if (m_fd >= 0) ::close(m_fd);
  }

  bool holds_template_values(std::size_t index) const override { return m_prefilled[index]; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const Target& t = m_targets[index];
    const TensorInfo& info = m_spec.tensors[index];
    const std::size_t elem = dtype_size(info.dtype);
    if (m_shared && m_shared->watched(index)) m_shared->before_write(index, offset, count, src);
    if (t.contiguous) {
      m_zip->pwrite_all(src, count * elem, t.begin + offset * elem);
      return;
    }
    // A strided view (rare, and small in practice): element by element.
    const auto* in = static_cast<const unsigned char*>(src);
    for (std::uint64_t i = 0; i < count; ++i) {
      std::uint64_t flat = offset + i, at = 0;
      for (std::size_t d = info.shape.size(); d-- > 0;) {
        at += (flat % info.shape[d]) * t.stride[d];
        flat /= info.shape[d];
      }
      m_zip->pwrite_all(in + i * elem, elem, t.begin + at * elem);
    }
  }

  std::string finish_part() override {
    if (::fsync(m_fd) != 0) fail(m_display, std::string("cannot sync the output: ") + std::strerror(errno));
    std::string spans = m_is_zip ? m_zip->crc_spans() : std::string();
    close_output();
    return spans;
  }

  void join_part(const std::string& part) override {
    if (m_is_zip) m_zip->join_crcs(part);
  }

  void finish() override {
    if (m_shared) m_shared->at_finish();
    if (m_provenance_size) {
      const std::string text = provenance_json(m_spec.provenance.entries());
      if (text.size() != m_provenance_size) fail(m_display, "the provenance changed length after the layout");
      m_zip->pwrite_all(text.data(), text.size(), m_provenance_at);
    }
    if (m_is_zip) m_zip->finish();
    close_output();
  }

 private:
  void close_output() {
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) fail(m_display, std::string("cannot close the output: ") + std::strerror(errno));
  }

  struct Target {
    std::uint64_t begin = 0;
    std::vector<std::uint64_t> stride;
    bool contiguous = true;
    std::uint64_t source = 0;  // input 1's file offset of the same element 0 (a template's tensors only)
  };

  // Input 1's pickle is copied whole, so optimizer state cannot leave it (--optimizer-state drop).
  void refuse_dropped_state(const PytorchReader& input1) const {
    const std::unordered_set<std::string_view> dropped(m_spec.dropped.begin(), m_spec.dropped.end());
    for (const TensorInfo& t : input1.tensors())
      if (t.role == Role::optimizer_state && dropped.contains(t.name))
        fail(m_display, t.name +
                            ": a .pt output keeps input 1's pickle, so --optimizer-state drop cannot leave "
                            "optimizer state out; use --optimizer-state first, or write .safetensors");
  }

  // Input 1's tensor of the same name, which must have the output's dtype and shape: its storage is kept.
  std::size_t template_index(const PytorchReader& input1, std::size_t out) const {
    const TensorInfo& t = m_spec.tensors[out];
    const auto& in = input1.tensors();
    const auto found = m_input1_index.find(t.name);
    WAVG_ASSERT(found != m_input1_index.end() && "output tensor missing from input 1");
    const std::size_t i = found->second;
    if (in[i].dtype != t.dtype || in[i].shape != t.shape || in[i].numbers != t.numbers)
      fail(m_display, t.name + ": the output's " + element_type_name(t) + " " + shape_string(stored_shape(t)) +
                          " differs from input 1's " + element_type_name(in[i]) + " " + shape_string(stored_shape(in[i])) +
                          "; a .pt output keeps input 1's storages "
                          "(write .safetensors to change dtypes)");
    // A tie of input 1 that the plan undid (the inputs disagree on it) would make two means share one storage.
    if (!in[i].alias_of.empty() && t.alias_of != in[i].alias_of)
      throw Error(ExitCode::incompatible, m_display,
                  t.name + " and " + in[i].alias_of + " share one storage in " + input1.path() +
                      " but not in every input, so each needs its own mean; a .pt output keeps input 1's "
                      "storages: write .safetensors, which holds them apart");
    return i;
  }

  void lay_out_zip(const PytorchReader& input1) {
    const auto& entries = input1.entries();
    const std::string provenance_name = input1.top() + "/wavg.json";
    std::vector<std::size_t> kept;  // input 1's entries, in order, without an older wavg.json
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (entries[i].name != provenance_name) kept.push_back(i);
    for (std::size_t i : kept) m_zip->add(entries[i].name, entries[i].size);
    add_provenance(provenance_name);
    const std::vector<std::uint64_t> at = m_zip->lay_out();
    std::vector<std::uint64_t> new_offset(entries.size());
    for (std::size_t k = 0; k < kept.size(); ++k) new_offset[kept[k]] = at[k];
    m_provenance_at = at.back();

    // A storage that one output tensor covers whole is written by the engine; every other entry is copied.
    std::vector<bool> covered(entries.size(), false);
    for (std::size_t o = 0; o < m_spec.tensors.size(); ++o) {
      const std::size_t i = template_index(input1, o);
      const Placement& p = input1.placement(i);
      m_targets[o] = {p.begin - entries[p.entry].data_offset + new_offset[p.entry], p.stride, p.contiguous, p.begin};
      if (p.contiguous && p.begin == entries[p.entry].data_offset && m_spec.tensors[o].bytes() == entries[p.entry].size)
        covered[p.entry] = true;
    }
    for (std::size_t i : kept)
      if (!covered[i] && !m_spec.part)  // rank 0 copies them
        copy_from(input1.file(), entries[i].data_offset, entries[i].size, new_offset[i]);
    for (std::size_t o = 0; o < m_spec.tensors.size(); ++o)
      m_prefilled[o] = !covered[input1.placement(template_index(input1, o)).entry];
    m_is_zip = true;
  }

  // The file keeps input 1's bytes except where the engine writes: every contiguous tensor is written whole by it
  // (averaged, or copied from its input), so only the bytes around them are copied here, not the whole file first.
  // A strided view keeps input 1's bytes (prefilled) unless averaged, as before; the result is the same bytes.
  void lay_out_legacy(const PytorchReader& input1) {
    const MappedFile& file = input1.file();
    m_is_zip = false;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> written;  // [begin, end) the engine fills
    for (std::size_t o = 0; o < m_spec.tensors.size(); ++o) {
      const Placement& p = input1.placement(template_index(input1, o));
      m_targets[o] = {p.begin, p.stride, p.contiguous, p.begin};
      m_prefilled[o] = !p.contiguous;
      const std::uint64_t bytes = m_spec.tensors[o].bytes();
      if (p.contiguous && bytes > 0) written.emplace_back(p.begin, p.begin + bytes);
    }
    if (m_spec.part) return;  // rank 0 sizes the file and copies the rest
    if (::ftruncate(m_fd, static_cast<off_t>(file.size())) != 0)
      fail(m_display, std::string("cannot size the output: ") + std::strerror(errno));
    std::sort(written.begin(), written.end());
    std::uint64_t at = 0;  // copied up to here
    for (const auto& [begin, end] : written) {
      if (begin > at) copy_from(file, at, begin - at, at);
      at = std::max(at, end);
    }
    if (at < file.size()) copy_from(file, at, file.size() - at, at);
  }

  // Input 1's output tensors as views of the output file, with input 1's bytes of each.
  void watch_shared_views(const PytorchReader& input1) {
    std::vector<OutputView> views;
    for (const Target& t : m_targets)
      views.push_back({t.begin, &t.stride, t.contiguous, input1.file().data() + t.source});
    m_shared = std::make_unique<SharedViews>(m_spec.tensors, std::move(views), m_display, input1.path());
    // SharedViews checks the writes of one process; the ranks of a distributed merge write apart.
    if (m_spec.part)
      for (std::size_t o = 0; o < m_spec.tensors.size(); ++o)
        if (m_shared->watched(o))
          throw Error(ExitCode::usage, m_display,
                      m_spec.tensors[o].name + " shares elements with another tensor in " + input1.path() +
                          ", which one process checks as it writes them: write this .pt without mpirun, or merge "
                          "to .safetensors");
  }

  // Copies `n` bytes of input 1 from `begin` to `at` of the output, a piece at a time, each piece dropped from the
  // resident set once written: a storage that several tensors view (not covered) is copied whole, and through the
  // mapping it stayed resident (a .pt merge's peak RSS rose by its size, 125 to 340 MiB).
  void copy_from(const MappedFile& file, std::uint64_t begin, std::uint64_t n, std::uint64_t at) {
    constexpr std::uint64_t k_piece = std::uint64_t{16} << 20;
    for (std::uint64_t done = 0; done < n; done += k_piece) {
      const std::uint64_t len = std::min(k_piece, n - done);
      m_zip->pwrite_all(file.data() + begin + done, len, at + done);
      file.release(begin + done, begin + done + len);
    }
  }

  void lay_out_plain() {
    const std::string pickle = state_dict_pickle(m_spec.tensors);
    m_zip->add("archive/data.pkl", pickle.size());
    m_zip->add("archive/byteorder", 6);
    for (std::size_t o = 0; o < m_spec.tensors.size(); ++o)
      m_zip->add("archive/data/" + std::to_string(o), m_spec.tensors[o].bytes());
    m_zip->add("archive/version", 2);
    add_provenance("archive/wavg.json");
    const std::vector<std::uint64_t> at = m_zip->lay_out();
    for (std::size_t o = 0; o < m_spec.tensors.size(); ++o) m_targets[o].begin = at[2 + o];
    m_provenance_at = at.back();
    m_is_zip = true;
    if (m_spec.part) return;
    m_zip->pwrite_all(pickle.data(), pickle.size(), at[0]);
    m_zip->pwrite_all("little", 6, at[1]);
    m_zip->pwrite_all("3\n", 2, at[at.size() - 2]);
  }

  void add_provenance(const std::string& name) {
    m_provenance_size = provenance_json(m_spec.provenance.layout_entries()).size();
    m_zip->add(name, m_provenance_size);
  }

  std::string m_display;
  const OutputSpec& m_spec;
  int m_fd = -1;
  std::unique_ptr<ZipWriter> m_zip;
  std::vector<Target> m_targets;
  std::vector<bool> m_prefilled;
  std::unique_ptr<SharedViews> m_shared;  // input 1's views that share elements
  std::unordered_map<std::string_view, std::size_t> m_input1_index;  // input 1's tensors by name
  bool m_is_zip = true;
  std::uint64_t m_provenance_at = 0, m_provenance_size = 0;
};

}  // namespace

std::unique_ptr<Writer> create_pytorch_writer(const std::string& tmp_path, const std::string& display_path,
                                              const OutputSpec& spec) {
  return std::make_unique<PytorchWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg::pytorch
