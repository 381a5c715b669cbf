// A recipe's tokenizer and the embeddings rebuilt to it (recipe_tokenizer.hpp). Each model is wrapped in a Reader
// whose embedding tensors have the output's rows: a row the model has is read from it, a default row is computed
// when first asked for (in double, from the models' rows) and kept for the other models, which read the same
// block next, and a padding row is the mean of the model's rebuilt rows, computed once per tensor. The kept
// default rows are dropped whenever they pass k_default_cache_bytes: a union that adds a whole vocabulary would
// otherwise hold every added row of every embedding in double (358 MiB on an 87M model); a dropped row is computed
// again, to the same bits, when asked for again.

#include "cli/recipe_tokenizer.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/recipe_chat.hpp"
#include "wavg/dispatch_float.hpp"
#include "wavg/element_math.hpp"
#include "wavg/embeddings.hpp"
#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

// Tokenizer files in std::map's key order: nlohmann's ordered_json finds a key by a linear search, so parsing a
// vocabulary of n tokens took n^2 / 2 string comparisons (minutes for Llama-3's 128,256; 76 s for 100,000 tokens
// here). tokenizers and transformers read these objects by key, so the order they are written in is no matter.
using Json = nlohmann::json;

constexpr std::uint64_t k_default_cache_bytes = 16 << 20;

// The file `folder`/`name` as JSON (discarded when it is not), or nothing when there is no such file.
std::optional<Json> read_json(const std::string& folder, const std::string& name) {
  const auto text = read_tokenizer_file(std::filesystem::path(folder) / name);
  if (!text) return std::nullopt;
  return Json::parse(*text, nullptr, false);
}

// `count` elements of float tensor `index` of `r` from `offset`, as doubles.
std::vector<double> read_values(Reader& r, std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const DType dtype = r.tensors()[index].dtype;
  std::vector<unsigned char> raw(count * dtype_size(dtype));
  r.read(index, offset, count, raw.data());
  std::vector<double> out(count);
  dispatch_float(dtype, [&]<DType T>() {
    for (std::uint64_t i = 0; i < count; ++i) out[i] = load<T>(raw.data(), i);
  });
  return out;
}

// A model's tokenizer: its tokens and their ids (plain and added), and config.json's vocab_size.
struct Vocab {
  std::string folder;
  Json json;                          // tokenizer.json
  std::map<std::string, long> ids;    // get_vocab(): token -> id
  std::map<std::string, Json> added;  // content -> its added_tokens entry
  long size = 0;                      // config.json's vocab_size, else the token count
};

long config_vocab_size(const std::string& folder) {
  const std::optional<Json> config = read_json(folder, "config.json");
  if (config && config->is_object() && config->contains("vocab_size") && (*config)["vocab_size"].is_number_integer())
    return (*config)["vocab_size"].get<long>();
  return 0;
}

Vocab read_vocab(const std::string& folder) {
  Vocab v;
  v.folder = folder;
  const std::string path = folder + "/tokenizer.json";
  std::optional<Json> json = read_json(folder, "tokenizer.json");
  if (!json)
    throw Error(ExitCode::incompatible, folder,
                "has no tokenizer.json: a recipe's tokenizer merge reads transformers' fast tokenizers (save one "
                "with AutoTokenizer.from_pretrained(...).save_pretrained(folder))");
  v.json = std::move(*json);
  const auto bad = [&](const std::string& what) { throw Error(ExitCode::incompatible, path, what); };
  if (!v.json.is_object() || !v.json.contains("model") || !v.json["model"].is_object())
    bad("is not a tokenizer.json (no model object)");
  const Json& vocab = v.json["model"]["vocab"];
  if (vocab.is_object()) {
    for (const auto& [token, id] : vocab.items()) {
      if (!id.is_number_integer() || id.get<long>() < 0) bad("model.vocab: token ids must be whole numbers >= 0");
      v.ids.emplace(token, id.get<long>());
    }
  } else if (vocab.is_array()) {  // Unigram: [[token, score], ...], the id its position
    for (std::size_t i = 0; i < vocab.size(); ++i) {
      if (!vocab[i].is_array() || vocab[i].empty() || !vocab[i][0].is_string()) bad("model.vocab: [token, score] pairs");
      v.ids.emplace(vocab[i][0].get<std::string>(), static_cast<long>(i));
    }
  } else {
    bad("model.vocab is neither an object nor a list");
  }
  if (v.json.contains("added_tokens") && v.json["added_tokens"].is_array())
    for (const Json& e : v.json["added_tokens"]) {
      if (!e.is_object() || !e.contains("id") || !e["id"].is_number_integer() || !e.contains("content") ||
          !e["content"].is_string())
        bad("added_tokens: each entry needs an id and a content");
      v.ids[e["content"].get<std::string>()] = e["id"].get<long>();
      v.added.emplace(e["content"].get<std::string>(), e);
    }
  v.size = config_vocab_size(folder);
  if (v.size == 0) v.size = static_cast<long>(v.ids.size());
  return v;
}

// mergekit's get_stripped_tokenizer: the tokens at or past vocab_size left out (of a BPE tokenizer only).
bool strip(Vocab& v) {
  std::set<std::string> unused;
  for (const auto& [token, id] : v.ids)
    if (id >= v.size) unused.insert(token);
  if (unused.empty()) return false;
  Json& model = v.json["model"];
  if (model.value("type", "") != "BPE")
    throw Error(ExitCode::incompatible, v.folder + "/tokenizer.json",
                "has tokens at or past config.json's vocab_size, and only a BPE tokenizer's can be left out (as "
                "mergekit's tokenizer merge says too)");
  for (const std::string& t : unused) {
    v.ids.erase(t);
    v.added.erase(t);
    model["vocab"].erase(t);
  }
  Json kept = Json::array();
  for (const Json& e : v.json["added_tokens"])
    if (e["id"].get<long>() < v.size) kept.push_back(e);
  v.json["added_tokens"] = kept;
  Json merges = Json::array();
  for (const Json& m : model.value("merges", Json::array())) {
    std::vector<std::string> parts;
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      parts = {s.substr(0, s.find(' ')), s.substr(s.find(' ') + 1)};
    } else {
      for (const Json& p : m) parts.push_back(p.get<std::string>());
    }
    if (std::none_of(parts.begin(), parts.end(), [&](const std::string& p) { return unused.count(p) > 0; }))
      merges.push_back(m);
  }
  model["merges"] = merges;
  return true;
}

// Tells whether a tensor is one mergekit's architectures mark is_embed: a token embedding or an LM head.
bool is_embedding(const TensorInfo& t) {
  if (t.shape.size() != 2 || !is_float(t.dtype)) return false;
  const EmbeddingKind kind = embedding_kind(t.name);
  return kind == EmbeddingKind::tokens || kind == EmbeddingKind::head;
}

}  // namespace

struct TokenizedModels::Impl {
  std::vector<std::string> paths;  // the models, base first when there is one
  std::vector<Reader*> readers;
  std::vector<Vocab> vocabs;
  std::vector<std::vector<long>> rows;  // per model, per output token: its row, or -1
  std::vector<std::string> tokens;      // per output id
  long base = -1;                       // the base's model index
  std::map<std::string, TokenSource> settings;
  Json out_json;                 // the output tokenizer.json
  std::vector<Json> new_added;  // the added_tokens entries the output gained
  bool changed = false;
  long rows_out = 0;
  std::mutex mutex;
  std::map<std::pair<std::string, long>, std::vector<double>> defaults;      // (tensor, token) -> row
  std::uint64_t default_bytes = 0;                                           // held by `defaults`
  std::map<std::pair<std::size_t, std::string>, std::vector<double>> means;  // (model, tensor) -> padding row

  std::size_t index_of(const std::string& model, const std::string& where) const {
    const auto it = std::find(paths.begin(), paths.end(), model);
    if (it == paths.end())
      throw Error(ExitCode::usage, where, "names " + model + ", which is none of the recipe's models");
    return static_cast<std::size_t>(it - paths.begin());
  }

  // The tensor named `name` of model k, or nothing.
  std::optional<std::size_t> tensor(std::size_t k, const std::string& name) const {
    const auto& ts = readers[k]->tensors();
    for (std::size_t i = 0; i < ts.size(); ++i)
      if (ts[i].name == name) return i;
    return std::nullopt;
  }

  // Refuses a row that model k's tensor `info` does not have (its tokenizer names more rows than it holds).
  void check_row(std::size_t k, const TensorInfo& info, long row) const {
    if (row < 0 || static_cast<std::uint64_t>(row) >= info.shape[0])
      throw Error(ExitCode::incompatible, paths[k],
                  info.name + " has " + std::to_string(info.shape[0]) + " rows; its tokenizer names row " +
                      std::to_string(row));
  }

  std::vector<double> source_row(std::size_t k, const std::string& name, long row) const {
    const auto t = tensor(k, name);
    if (!t) throw Error(ExitCode::incompatible, paths[k], "has no tensor " + name + " for a token's row");
    const TensorInfo& info = readers[k]->tensors()[*t];
    check_row(k, info, row);
    return read_values(*readers[k], *t, static_cast<std::uint64_t>(row) * info.shape[1], info.shape[1]);
  }

  // mergekit's default row for output token `id` of tensor `name` (the rule at the top of recipe_tokenizer.hpp).
  std::vector<double> default_row(const std::string& name, long id, std::uint64_t width) {
    const std::string& token = tokens[static_cast<std::size_t>(id)];
    std::vector<std::size_t> have;
    for (std::size_t k = 0; k < paths.size(); ++k)
      if (rows[k][static_cast<std::size_t>(id)] >= 0 && tensor(k, name)) have.push_back(k);
    const auto own = [&](std::size_t k) { return source_row(k, name, rows[k][static_cast<std::size_t>(id)]); };
    if (const auto it = settings.find(token); it != settings.end()) {
      const TokenSource& s = it->second;
      if (s.kind == TokenSource::Kind::zero) return std::vector<double>(width, 0.0);
      const std::size_t k = index_of(s.model, "tokens." + token);
      if (s.kind == TokenSource::Kind::model) {
        if (rows[k][static_cast<std::size_t>(id)] < 0)
          throw Error(ExitCode::incompatible, paths[k], "has no token '" + token + "' (tokens." + token + ".source)");
        return own(k);
      }
      long row = s.token_id.value_or(-1);
      if (s.token) {
        const auto t = vocabs[k].ids.find(*s.token);
        if (t == vocabs[k].ids.end())
          throw Error(ExitCode::incompatible, paths[k], "has no token '" + *s.token + "' (tokens." + token + ")");
        row = t->second;
      }
      return source_row(k, name, row);
    }
    if (have.empty()) return std::vector<double>(width, 0.0);
    if (have.size() == 1) return own(have.front());
    if (base >= 0 && std::find(have.begin(), have.end(), static_cast<std::size_t>(base)) != have.end())
      return own(static_cast<std::size_t>(base));
    std::vector<double> sum(width, 0.0);
    for (std::size_t k : have) {
      const std::vector<double> r = own(k);
      for (std::uint64_t j = 0; j < width; ++j) sum[j] += r[j];
    }
    for (double& x : sum) x /= static_cast<double>(have.size());
    return sum;
  }

  // Model k's rebuilt row `id` of tensor `name`, as doubles.
  std::vector<double> row(std::size_t k, const std::string& name, long id, std::uint64_t width) {
    const long vocab = static_cast<long>(tokens.size());
    if (id >= vocab) {  // padding: the mean of the rebuilt rows
      std::lock_guard<std::mutex> lock(mutex);
      auto& mean = means[{k, name}];
      if (mean.empty()) {
        mean.assign(width, 0.0);
        for (long i = 0; i < vocab; ++i) {
          const std::vector<double> r = row_locked(k, name, i, width);
          for (std::uint64_t j = 0; j < width; ++j) mean[j] += r[j];
        }
        for (double& x : mean) x /= static_cast<double>(vocab);
      }
      return mean;
    }
    std::lock_guard<std::mutex> lock(mutex);
    return row_locked(k, name, id, width);
  }

  // Model k's own row for output row `id`, or -1 where the row is a default or padding.
  long own_row(std::size_t k, long id) const {
    if (id >= static_cast<long>(tokens.size())) return -1;
    const auto s = settings.find(tokens[static_cast<std::size_t>(id)]);
    return s != settings.end() && s->second.force ? -1 : rows[k][static_cast<std::size_t>(id)];
  }

  std::vector<double> row_locked(std::size_t k, const std::string& name, long id, std::uint64_t width) {
    if (const long own = own_row(k, id); own >= 0) return source_row(k, name, own);
    if (const auto it = defaults.find({name, id}); it != defaults.end()) return it->second;
    // A row's doubles, its key's name and about 128 bytes of map node and allocations around them.
    const std::uint64_t bytes = width * sizeof(double) + name.size() + 128;
    if (default_bytes + bytes > k_default_cache_bytes) {
      defaults.clear();
      default_bytes = 0;
    }
    default_bytes += bytes;
    return defaults[{name, id}] = default_row(name, id, width);
  }
};

namespace {

// Model k with its embeddings rebuilt to the output's rows.
class TokenizedModel final : public Reader {
 public:
  TokenizedModel(TokenizedModels::Impl& impl, std::size_t k) : m_impl(impl), m_k(k), m_r(*impl.readers[k]) {
    m_tensors = m_r.tensors();
    for (TensorInfo& t : m_tensors)
      if (is_embedding(t)) t.shape[0] = static_cast<std::uint64_t>(impl.rows_out);
  }
  const std::string& path() const override { return m_r.path(); }
  std::vector<std::string> files() const override { return m_r.files(); }
  FormatId format() const override { return m_r.format(); }
  std::string format_name() const override { return m_r.format_name(); }
  std::string layout() const override { return m_r.layout(); }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  std::map<std::string, std::string> metadata() const override { return m_r.metadata(); }
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    if (!is_embedding(m_tensors[index])) return m_r.read(index, offset, count, dst);
    const TensorInfo& t = m_tensors[index];
    const std::uint64_t width = t.shape[1], size = dtype_size(t.dtype);
    auto* out = static_cast<unsigned char*>(dst);
    std::vector<unsigned char> buf(width * size);
    for (std::uint64_t at = offset; at < offset + count;) {
      const std::uint64_t r = at / width, from = at % width, n = std::min(width - from, offset + count - at);
      if (const long own = m_impl.own_row(m_k, static_cast<long>(r)); own >= 0) {  // the model's row, as stored
        m_impl.check_row(m_k, m_r.tensors()[index], own);
        m_r.read(index, static_cast<std::uint64_t>(own) * width + from, n, out + (at - offset) * size);
        at += n;
        continue;
      }
      const std::vector<double> values = m_impl.row(m_k, t.name, static_cast<long>(r), width);
      dispatch_float(t.dtype, [&]<DType T>() {
        for (std::uint64_t j = 0; j < width; ++j) store<T>(buf.data(), j, values[j]);
      });
      std::memcpy(out + (at - offset) * size, buf.data() + from * size, n * size);
      at += n;
    }
  }
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    return is_embedding(m_tensors[index]) ? nullptr : m_r.view(index, offset, count);
  }
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    if (!is_embedding(m_tensors[index])) m_r.release(index, offset, count);
  }

 private:
  TokenizedModels::Impl& m_impl;
  std::size_t m_k;
  Reader& m_r;
  std::vector<TensorInfo> m_tensors;
};

// An added_tokens entry for `token` at `id`: `like`'s settings (another model's added token), else a plain token's
// as transformers' add_tokens makes it.
Json added_entry(const std::string& token, long id, const Json* like) {
  Json e = like ? *like
                : Json{{"id", 0},          {"content", token},    {"single_word", false}, {"lstrip", false},
                       {"rstrip", false},  {"normalized", true},  {"special", false}};
  e["id"] = id;
  return e;
}

}  // namespace

TokenizedModels::TokenizedModels(const TokenizerRecipe& recipe,
                                 const std::vector<std::pair<std::string, Reader*>>& models, const std::string& base)
    : m_impl(std::make_unique<Impl>()) {
  Impl& m = *m_impl;
  for (const auto& [path, reader] : models) {
    m.paths.push_back(path);
    m.readers.push_back(reader);
    m.vocabs.push_back(read_vocab(path));
  }
  for (const auto& [token, s] : recipe.tokens) m.settings[token] = s;
  for (const auto& [token, s] : recipe.tokens)
    if (s.kind != TokenSource::Kind::zero) m.index_of(s.model, "tokens." + token);
  if (!base.empty()) m.base = static_cast<long>(m.index_of(base, "base_model"));
  const std::size_t first = m.base >= 0 ? static_cast<std::size_t>(m.base) : 0;
  bool stripped = strip(m.vocabs[first]);  // the base's, as mergekit's get_stripped_tokenizer

  // The output's tokens, by id.
  Vocab out;
  if (recipe.source == "base" || recipe.source == "union") {
    out = m.vocabs[first];
  } else {
    out = read_vocab(recipe.source);
    stripped = false;
  }
  m_donor = out.folder;
  long next = 0;
  for (const auto& [token, id] : out.ids) next = std::max(next, id + 1);
  const auto add = [&](const std::string& token, const Json* like) {
    if (out.ids.count(token)) return;
    out.ids[token] = next;
    m.new_added.push_back(added_entry(token, next++, like));
  };
  if (recipe.source == "union") {
    std::vector<std::string> plain;
    std::vector<const Json*> added;
    std::set<std::string> seen_added;
    for (std::size_t k = 0; k < m.vocabs.size(); ++k) {
      const Vocab& v = m.vocabs[k == 0 ? first : (k == first ? 0 : k)];
      std::vector<std::pair<long, std::string>> by_id;
      for (const auto& [token, id] : v.ids)
        if (id < v.size) by_id.emplace_back(id, token);
      std::sort(by_id.begin(), by_id.end());
      for (const auto& [id, token] : by_id) {
        if (!v.added.count(token)) {
          plain.push_back(token);
        } else if (seen_added.insert(token).second) {
          added.push_back(&v.added.at(token));
        }
      }
    }
    for (const std::string& token : plain)
      if (!seen_added.count(token)) add(token, nullptr);
    for (const Json* e : added) add((*e)["content"].get<std::string>(), e);
  }
  for (const auto& [token, s] : recipe.tokens) add(token, nullptr);
  m.changed = stripped || !m.new_added.empty();
  if (m.changed) m.out_json = std::move(out.json);
  for (Vocab& v : m.vocabs) v.json = Json();  // only their ids are read from here on
  for (const Json& e : m.new_added) m.out_json["added_tokens"].push_back(e);

  m.tokens.assign(static_cast<std::size_t>(next), std::string());
  std::vector<bool> named(static_cast<std::size_t>(next), false);
  for (const auto& [token, id] : out.ids) {
    m.tokens[static_cast<std::size_t>(id)] = token;
    named[static_cast<std::size_t>(id)] = true;
  }
  if (std::find(named.begin(), named.end(), false) != named.end())
    throw Error(ExitCode::incompatible, out.folder + "/tokenizer.json",
                "its token ids leave gaps; the rows of a tokenizer merge are its ids 0 to " + std::to_string(next - 1));
  for (std::size_t k = 0; k < m.paths.size(); ++k) {
    const Vocab& v = m.vocabs[k];
    std::vector<long>& p = m.rows.emplace_back(m.tokens.size(), -1);
    for (std::size_t i = 0; i < m.tokens.size(); ++i)
      if (const auto it = v.ids.find(m.tokens[i]); it != v.ids.end() && it->second < v.size) p[i] = it->second;
  }
  m_rows = next;
  if (recipe.pad_to_multiple_of > 0 && m_rows % recipe.pad_to_multiple_of)
    m_rows += recipe.pad_to_multiple_of - m_rows % recipe.pad_to_multiple_of;
  m.rows_out = m_rows;
}

TokenizedModels::~TokenizedModels() = default;

std::unique_ptr<Reader> TokenizedModels::model(const std::string& path) const {
  return std::make_unique<TokenizedModel>(*m_impl, m_impl->index_of(path, "the merge"));
}

std::vector<std::pair<std::string, std::string>> TokenizedModels::files() const {
  if (!m_impl->changed) return {};
  std::vector<std::pair<std::string, std::string>> out{{"tokenizer.json", m_impl->out_json.dump(2) + "\n"}};
  if (m_impl->new_added.empty()) return out;
  std::optional<Json> read = read_json(m_donor, "tokenizer_config.json");
  if (!read) return out;
  Json& config = *read;
  if (!config.is_object() || !config.contains("added_tokens_decoder") || !config["added_tokens_decoder"].is_object())
    return out;
  for (const Json& e : m_impl->new_added) {
    Json d = e;
    d.erase("id");
    config["added_tokens_decoder"][std::to_string(e["id"].get<long>())] = d;
  }
  out.emplace_back("tokenizer_config.json", config.dump(2) + "\n");
  return out;
}

std::string with_vocab_size(const std::string& config, long rows) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(config, nullptr, false);  // keeps config.json's order
  if (!json.is_object() || !json.contains("vocab_size") || json["vocab_size"] == rows) return config;
  json["vocab_size"] = rows;
  return json.dump(2) + "\n";
}

}  // namespace wavg::cli
