// Input fingerprints, computed on background threads: one per input (at most 64), each hashing its file from the
// engine's own mapping of it, a little ahead of the engine's reads (pread() for a file no reader maps). XXH3-128
// (libxxhash, about 15 GB/s a core) by default, so that the fingerprint costs little beside the merge's own I/O;
// OpenSSL's SHA-256 (SHA-NI / AVX2 paths picked at run time, about 1.5 GB/s a core) with --hash sha256, when a
// cryptographic digest is wanted.

#include "wavg/provenance.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>

#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/mapped_ranges.hpp"
#include "wavg/stdio_files.hpp"
#include "wavg/version.hpp"

namespace wavg {

namespace {

struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::string to_hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += k_hex[bytes[i] >> 4];
    out += k_hex[bytes[i] & 15];
  }
  return out;
}

// One running digest of the algorithm --hash names.
class Digest {
 public:
  virtual ~Digest() = default;
  virtual void update(const void* p, std::size_t n) = 0;
  virtual std::string hex() = 0;
};

class Sha256 final : public Digest {
 public:
  Sha256() : m_ctx(EVP_MD_CTX_new()) {
    if (!m_ctx || EVP_DigestInit_ex(m_ctx.get(), EVP_sha256(), nullptr) != 1)
      throw Error(ExitCode::runtime, "", "OpenSSL cannot start a SHA-256 digest");
  }
  void update(const void* p, std::size_t n) override {
    if (EVP_DigestUpdate(m_ctx.get(), p, n) != 1) throw Error(ExitCode::runtime, "", "SHA-256 update failed");
  }
  std::string hex() override {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(m_ctx.get(), digest, &n) != 1) throw Error(ExitCode::runtime, "", "SHA-256 failed");
    return to_hex(digest, n);
  }

 private:
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> m_ctx;
};

struct Xxh3StateFree {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};

class Xxh3 final : public Digest {
 public:
  Xxh3() : m_state(XXH3_createState()) {
    if (!m_state || XXH3_128bits_reset(m_state.get()) != XXH_OK)
      throw Error(ExitCode::runtime, "", "cannot start an XXH3-128 digest");
  }
  void update(const void* p, std::size_t n) override {
    if (XXH3_128bits_update(m_state.get(), p, n) != XXH_OK) throw Error(ExitCode::runtime, "", "XXH3 update failed");
  }
  // The canonical (big-endian) form, as xxhsum -H2 and Python's xxhash.xxh3_128().hexdigest() print it.
  std::string hex() override {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(m_state.get()));
    return to_hex(c.digest, sizeof c.digest);
  }

 private:
  std::unique_ptr<XXH3_state_t, Xxh3StateFree> m_state;
};

std::unique_ptr<Digest> make_digest(HashAlgo algo) {
  if (algo == HashAlgo::sha256) return std::make_unique<Sha256>();
  return std::make_unique<Xxh3>();
}

// The engine's furthest read is kept in units of 2^-32 of the plan's bytes.
constexpr double k_progress_one = 4294967296.0;
constexpr std::uint64_t k_hash_lead = 64u << 20;  // how far a paced hash may run ahead of the engine

// What the hash threads of one Provenance follow: the engine's furthest read, while pacing is on. A thread that is
// far enough ahead sleeps until the engine reads on (note_read_progress) instead of polling, so on a busy machine
// a waiting hash thread takes no turns on a core from the merge; the wait's timeout is only a safety net.
struct Pace {
  std::atomic<bool> on{true};
  std::uint64_t mapped_lead = 0;  // how far a thread hashing from the engine's mapping may run ahead (mapped_lead_for)
  std::atomic<std::uint64_t> progress{0};  // k_progress_one: all of it
  std::mutex mutex;
  std::condition_variable moved;
  std::atomic<std::uint64_t> woken{0};  // the progress at the last wake

  void wait_past(std::uint64_t seen) {
    std::unique_lock lock(mutex);
    moved.wait_for(lock, std::chrono::milliseconds(20), [&] { return progress.load() != seen || !on.load(); });
  }
  // Moves the progress to `v` and wakes the waiting threads once it moved `step` past the last wake.
  void advance_to(std::uint64_t v, std::uint64_t step) {
    std::uint64_t seen = progress.load(std::memory_order_relaxed);
    while (v > seen && !progress.compare_exchange_weak(seen, v)) {
    }
    // A waiting thread hashes a chunk when woken: waking it for every tiny tensor cost two futex calls and a
    // context switch each (a convert of 100k tensors: 27k calls, a quarter of its CPU time).
    if (v > seen && v >= woken.load(std::memory_order_relaxed) + step) {
      woken.store(v, std::memory_order_relaxed);
      wake();
    }
  }
  void end() {
    on = false;
    wake();
  }

 private:
  void wake() {
    { const std::lock_guard lock(mutex); }  // a thread between its check and its sleep has gone to sleep
    moved.notify_all();
  }
};

// How far ahead of the engine's progress (the end of the block it is reading) a thread hashing from the engine's
// own mapping may run: into the next block, so that it faults in pages the engine reads next (the engine then
// finds them mapped), while every page it holds ahead adds to the resident set. So the lead is a share of the
// engine's 64 MiB block, at most 8 MiB an input: 64 MiB more at most for any number of inputs (124M x 4 at 16 MiB
// an input: 185 MiB, TIES 230 MiB, against 121 and 145 without the fingerprint; 10M x 16 at 8 MiB: 284 MiB).
std::uint64_t mapped_lead_for(std::size_t inputs) {
  const std::uint64_t share = (64u << 20) / std::max<std::size_t>(inputs, 1);
  return std::clamp<std::uint64_t>(share, 1u << 20, 8u << 20);
}
constexpr std::uint64_t k_chunk = 1u << 20;

// Waits, while `pace` is on, until the engine's estimated position in the input (the whole input is `size` bytes)
// is within `lead` of `at`; returns that position (the input's size when pacing is off). False when `stop` rose.
bool follow_engine(Pace* pace, const std::atomic<bool>* stop, double size, double at, std::uint64_t lead,
                   double& engine_at) {
  for (;;) {
    if (stop && stop->load(std::memory_order_relaxed)) return false;
    if (!pace || !pace->on.load()) {
      engine_at = size;
      return true;
    }
    const std::uint64_t seen = pace->progress.load();
    engine_at = static_cast<double>(seen) / k_progress_one * size;
    if (at <= engine_at + static_cast<double>(lead)) return true;
    pace->wait_past(seen);
  }
}

// Hashes one file from the engine's read-only mapping of it: no copy, and the pages this thread touches ahead of
// the engine are the ones the engine then reads without a fault (from disk, this thread runs ahead and reads them
// in). What lies behind the engine is dropped from the resident set, since the engine may have passed before this
// thread touched it. False when `stop` rose.
bool hash_mapped(Digest& h, const MappedRegion& map, const std::atomic<bool>* stop, Pace* pace, double before,
                 double size) {
  std::uint64_t at = 0, released = 0;
  double engine_at = 0;
  while (at < map.size) {
    const std::uint64_t lead = pace ? pace->mapped_lead : 0;
    if (!follow_engine(pace, stop, size, before + static_cast<double>(at), lead, engine_at)) return false;
    const std::uint64_t n = std::min<std::uint64_t>(k_chunk, map.size - at);
    h.update(map.data + at, static_cast<std::size_t>(n));
    at += n;
    // While the engine runs, what lies a margin behind its position (its block may straddle it) goes in steps of
    // a few chunks; once it is done (or nothing paces this thread), every chunk goes as soon as it is hashed.
    const bool engine_runs = pace && pace->on.load();
    const double behind = engine_at - before - (engine_runs ? static_cast<double>(4u << 20) : 0.0);
    const std::uint64_t drop = behind <= 0 ? 0 : std::min(at, static_cast<std::uint64_t>(behind));
    if (drop > released && (!engine_runs || drop >= released + (2u << 20))) {
      release_mapped(map.data, map.size, released, drop);
      released = drop;
    }
  }
  return true;
}

// Hashes the concatenation of `paths` (one input: a file, or a TF.js model.json and its shards); returns an empty
// string when `stop` was raised before the end. A file the engine has mapped is hashed from that mapping
// (hash_mapped); any other in 1 MiB preads (a mapping of its own would cost its page faults twice, here and in the
// engine). While `pace` is on, stays within a lead of the engine's progress through the input.
std::string hash_files(HashAlgo algo, const std::vector<std::string>& paths, const std::atomic<bool>* stop,
                       Pace* pace = nullptr) {
  double size = 0;
  for (const std::string& path : paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) size += static_cast<double>(st.st_size);
  }
  const std::unique_ptr<Digest> h = make_digest(algo);
  std::vector<char> buf;
  double before = 0;  // bytes of the earlier files
  for (const std::string& path : paths) {
    if (const std::shared_ptr<const MappedRegion> map = find_mapping(path)) {
      if (!hash_mapped(*h, *map, stop, pace, before, size)) return {};
      before += static_cast<double>(map->size);
      continue;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path, std::string("cannot read: ") + std::strerror(errno));
    struct Close {
      int fd;
      ~Close() { ::close(fd); }
    } close_fd{fd};
    buf.resize(k_chunk);
    off_t at = 0;
    for (;;) {
      double engine_at = 0;
      if (!follow_engine(pace, stop, size, before + static_cast<double>(at), k_hash_lead, engine_at)) return {};
      const ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(path, std::string("read failed while hashing: ") + std::strerror(errno));
      if (n == 0) break;
      h->update(buf.data(), static_cast<std::size_t>(n));
      at += n;
    }
    before += static_cast<double>(at);
  }
  return h->hex();
}

std::size_t digest_chars(HashAlgo algo) { return algo == HashAlgo::sha256 ? 64 : 32; }

}  // namespace

struct Provenance::State {
  std::map<std::string, std::string> fixed;  // every entry but wavg_inputs
  bool record_inputs = false;                // wavg_inputs is written, even as an empty list (a model made by training)
  HashAlgo algo = HashAlgo::none;            // none: the inputs are named without a digest (--hash none)
  std::vector<std::string> inputs;           // as given on the command line; the --base input last, if any
  std::vector<std::vector<std::string>> files;  // what each input's digest covers
  bool has_base = false;                        // the last of `inputs` is the --base input (wavg_base)
  std::vector<std::string> digests;
  HashShare share;  // which inputs this process hashes
  std::vector<std::exception_ptr> errors;
  std::vector<std::thread> workers;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  Pace pace;
  std::once_flag joined;

  void work() {
    for (std::size_t i; (i = next.fetch_add(1)) < inputs.size();) {
      if (i % share.parts != share.part) continue;
      try {
        digests[i] = hash_files(algo, files[i], &stop, &pace);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  }
  // Waits for the hashing threads; hashes here what none of them took (none could start: see the constructor).
  // With --hash none there is nothing to take: no digest is written.
  void join() {
    pace.end();
    std::call_once(joined, [this] {
      for (auto& t : workers) t.join();
      if (!stop && algo != HashAlgo::none) work();
    });
  }
  // A run that fails before finish() must not wait for hashes nobody will read.
  ~State() {
    stop = true;
    join();
  }
  nlohmann::ordered_json item(std::size_t i, bool final) const {
    nlohmann::ordered_json out = {{"file", inputs[i]}};
    if (algo != HashAlgo::none) out[hash_algo_name(algo)] = final ? digests[i] : std::string(digest_chars(algo), '0');
    return out;
  }
  static std::string dump(const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  // wavg_inputs, and wavg_base when there is a base; `final`: with the digests, else zeros of their length.
  void add_entries(std::map<std::string, std::string>& out, bool final) const {
    if (!record_inputs) return;
    const std::size_t merged = inputs.size() - (has_base ? 1 : 0);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < merged; ++i) list.push_back(item(i, final));
    out["wavg_inputs"] = dump(list);
    if (has_base) out["wavg_base"] = dump(item(merged, final));
  }
};

Provenance::Provenance(std::map<std::string, std::string> entries) : m_state(std::make_shared<State>()) {
  m_state->fixed = std::move(entries);
}

Provenance::Provenance(const std::string& command, const std::string& method, const InputFiles& inputs,
                       const std::string& out_dtype, HashAlgo hash, const std::vector<std::string>& base,
                       HashShare share)
    : m_state(std::make_shared<State>()) {
  State& s = *m_state;
  WAVG_ASSERT(share.parts > 0 && share.part < share.parts);
  s.share = share;
  s.fixed = {{"wavg_version", k_version}, {"wavg_command", command}, {"wavg_method", method}};
  if (!out_dtype.empty()) s.fixed["wavg_out_dtype"] = out_dtype;
  s.record_inputs = true;
  s.algo = hash;
  s.files = inputs;
  // The base is hashed like one more input (the engine reads it alongside them, so the same pacing fits).
  s.has_base = !base.empty();
  if (s.has_base) s.files.push_back(base);
  for (const auto& files : s.files) {
    WAVG_ASSERT(!files.empty());
    s.inputs.push_back(as_given(files.front()));
  }
  s.digests.resize(s.files.size());
  s.errors.resize(s.files.size());
  // One thread per input, so that every file is hashed alongside the engine's reads of it (a thread mostly waits
  // for the engine); a very long input list shares 64 threads, and its later files are hashed after the merge.
  s.pace.mapped_lead = mapped_lead_for(s.files.size());
  const std::size_t threads = hash != HashAlgo::none ? std::min<std::size_t>(s.files.size(), 64) : 0;
  // A thread that cannot start (EAGAIN: no address space left for its stack, the process limit reached) leaves its
  // share to the others, or, when none started, to entries(), which hashes on the caller's thread after the merge:
  // the same digests, later.
  try {
    for (std::size_t t = 0; t < threads; ++t) s.workers.emplace_back([&s] { s.work(); });
  } catch (const std::system_error&) {
  }
}

void Provenance::add(const std::string& key, const std::string& value) {
  if (m_state) m_state->fixed[key] = value;
}

std::map<std::string, std::string> Provenance::entries() const {
  if (!m_state) return {};
  m_state->join();
  for (const auto& e : m_state->errors)
    if (e) std::rethrow_exception(e);
  auto out = m_state->fixed;
  m_state->add_entries(out, true);
  return out;
}

std::vector<std::string> Provenance::own_digests() const {
  if (!m_state) return {};
  m_state->join();
  for (const auto& e : m_state->errors)
    if (e) std::rethrow_exception(e);
  return m_state->digests;
}

void Provenance::join_digests(const std::vector<std::string>& digests) const {
  if (!m_state) return;
  m_state->join();
  WAVG_ASSERT(digests.size() == m_state->digests.size());
  for (std::size_t i = 0; i < digests.size(); ++i)
    if (!digests[i].empty()) m_state->digests[i] = digests[i];
}

std::map<std::string, std::string> Provenance::layout_entries() const {
  if (!m_state) return {};
  auto out = m_state->fixed;
  m_state->add_entries(out, false);
  return out;
}

void Provenance::note_read_progress(std::uint64_t done, std::uint64_t total) const {
  if (!m_state || total == 0) return;
  const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  // Wakes the hash threads every 256 KiB the engine reads, a quarter of the chunk a thread hashes at a time.
  const double step = std::max(1.0, static_cast<double>(256u << 10) / static_cast<double>(total) * k_progress_one);
  m_state->pace.advance_to(static_cast<std::uint64_t>(fraction * k_progress_one), static_cast<std::uint64_t>(step));
}

std::string hash_file(HashAlgo algo, const std::string& path) {
  WAVG_ASSERT(algo != HashAlgo::none);
  return hash_files(algo, {path}, nullptr);
}

std::string sha256_file(const std::string& path) { return hash_file(HashAlgo::sha256, path); }

const char* hash_algo_name(HashAlgo algo) {
  switch (algo) {
    case HashAlgo::xxh3_128: return "xxh3_128";
    case HashAlgo::sha256: return "sha256";
    case HashAlgo::none: break;
  }
  return "none";
}

Provenance make_provenance(const std::string& command, const std::string& method, const InputFiles& inputs,
                           const std::string& out_dtype, HashAlgo hash, const std::vector<std::string>& base,
                           HashShare share) {
  return Provenance(command, method, inputs, out_dtype, hash, base, share);
}

Provenance make_provenance(const std::string& command, const std::string& method,
                           const std::vector<std::string>& inputs, const std::string& out_dtype, HashAlgo hash) {
  InputFiles files;
  for (const std::string& path : inputs) files.push_back({path});
  return Provenance(command, method, files, out_dtype, hash);
}

}  // namespace wavg
