// The restricted unpickler (see pickle.hpp for what it accepts and why it is hand-written).

#include "pytorch/pickle.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "pytorch/pickle_globals.hpp"
#include "wavg/error.hpp"

namespace wavg::pytorch {

namespace {

// Deep enough for any checkpoint (a state_dict nests 3 levels, an optimizer 5); refuses stack-exhausting inputs.
constexpr std::size_t k_max_stack = 1'000'000;
// Values made before the first collection of the unreachable ones (a state_dict of a few thousand tensors makes
// fewer: it is never collected).
constexpr std::size_t k_first_collect = 1 << 16;
// The integers from 0 that are one value each (see Machine::shared).
constexpr std::int64_t k_shared_ints = 256;

struct StorageClass {
  const char* name;
  DType dtype;
};

constexpr StorageClass k_storages[] = {
    {"torch.FloatStorage", DType::f32},     {"torch.DoubleStorage", DType::f64}, {"torch.HalfStorage", DType::f16},
    {"torch.BFloat16Storage", DType::bf16}, {"torch.LongStorage", DType::i64},   {"torch.IntStorage", DType::i32},
    {"torch.ShortStorage", DType::i16},     {"torch.CharStorage", DType::i8},    {"torch.ByteStorage", DType::u8},
    {"torch.BoolStorage", DType::boolean},
};
// Storage classes of dtypes wavg has no type for: a tensor over one is refused naming its dtype.
constexpr const char* k_no_type_storages[][2] = {
    {"torch.ComplexFloatStorage", "torch.complex64"}, {"torch.ComplexDoubleStorage", "torch.complex128"},
    {"torch.QUInt8Storage", "torch.quint8"},          {"torch.QInt8Storage", "torch.qint8"},
    {"torch.QInt32Storage", "torch.qint32"},          {"torch.QUInt4x2Storage", "torch.quint4x2"},
    {"torch.QUInt2x4Storage", "torch.quint2x4"},
};
// torch 2's storage of a dtype without a storage class of its own (uint16/32/64, float8, ...): its numel counts
// bytes, and _rebuild_tensor_v3 names the dtype the tensor views it as.
constexpr const char* k_untyped_storage = "torch.storage.UntypedStorage";

constexpr const char* k_functions[] = {
    "collections.OrderedDict",
    "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_tensor_v3",
    "torch._utils._rebuild_tensor",
    "torch._utils._rebuild_parameter",
    "torch._tensor._rebuild_from_type_v2",
    "torch.device",
    "torch.Size",
    "torch.Tensor",
    "torch.nn.parameter.Parameter",
    "__builtin__.set",
    "builtins.set",
    "torch.nn.backends.thnn._get_thnn_function_backend",
    "torch._utils._rebuild_parameter_with_state",
    "collections.Counter",
    "_codecs.encode",
    "__builtin__.bytearray",
    "builtins.bytearray",
    "__builtin__.complex",
    "builtins.complex",
    "torch.serialization._get_layout",
};

// Tensors torch.load(weights_only=True) rebuilds that are not a dense view of one typed storage.
constexpr const char* k_other_tensors[][2] = {
    {"torch._utils._rebuild_sparse_tensor", "a sparse tensor"},
    {"torch._utils._rebuild_sparse_csr_tensor", "a sparse CSR tensor"},
    {"torch._utils._rebuild_meta_tensor_no_storage", "a meta tensor (no data)"},
    {"torch._utils._rebuild_qtensor", "a quantized tensor"},
    {"torch._utils._rebuild_wrapper_subclass", "a tensor subclass without storage"},
    {"torch._utils._rebuild_device_tensor_from_numpy", "a tensor saved as a NumPy array"},
    {"torch._utils._rebuild_device_tensor_from_cpu_tensor", "a device tensor saved from a CPU copy"},
};

// What BUILD may give a tensor: nothing, an empty dict, or torch < 1.0's Parameter state (requires_grad, is_leaf,
// backward hooks) as a tuple of flags and Nones.
bool plain_tensor_state(const Value& state) {
  const auto empty = [](const Value& v) {
    return v.kind == Kind::none || v.kind == Kind::boolean || (v.kind == Kind::dict && v.items.empty());
  };
  if (state.kind != Kind::tuple) return empty(state);
  for (const Value* v : state.items)
    if (!empty(*v)) return false;
  return true;
}

bool allowed_global(const std::string& name) {
  for (const char* f : k_functions)
    if (name == f) return true;
  for (const auto& s : k_storages)
    if (name == s.name) return true;
  for (const auto& t : k_other_tensors)
    if (name == t[0]) return true;
  for (const auto& t : k_no_type_storages)
    if (name == t[0]) return true;
  return name == k_untyped_storage || inert_global(name);
}

// Decodes UTF-8 `text` to the bytes its code points name, for _codecs.encode(text, 'latin1'): protocol 2's
// spelling of a bytes value. Returns false when a code point is above U+00FF or the UTF-8 is malformed.
bool latin1(const std::string& text, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if ((c == 0xc2 || c == 0xc3) && (next & 0xc0) == 0x80) {  // U+0080 to U+00FF
      out.push_back(static_cast<char>(((c & 0x03) << 6) | (next & 0x3f)));
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

class Machine {
 public:
  Machine(const std::string& file, const unsigned char* data, std::size_t size,
          const std::vector<std::string>* value_names)
      : m_file(file), m_p(data), m_end(data + size), m_begin(data), m_value_names(value_names) {}

  Pickle run() {
    for (;;) {
      if (m_p == m_end) bad("ends without STOP");
      const unsigned char op = *m_p++;
      if (op == '.') break;
      step(op);
      if (m_stack.size() > k_max_stack) bad("nests too deeply");
      if (m_result.arena.size() >= m_next_collect) collect();
    }
    if (m_stack.size() != 1 || !m_marks.empty()) bad("leaves " + std::to_string(m_stack.size()) + " values at STOP");
    for (const auto& [name, made] : m_classes)
      if (!made) refuse_named(name);
    m_result.root = m_stack.back();
    m_result.consumed = static_cast<std::size_t>(m_p - m_begin);
    return std::move(m_result);
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    refuse(m_file, "corrupt pickle at byte " + std::to_string(m_p - m_begin) + ": " + what);
  }

  const unsigned char* take(std::size_t n) {
    if (static_cast<std::size_t>(m_end - m_p) < n) bad("truncated (needs " + std::to_string(n) + " more bytes)");
    const unsigned char* at = m_p;
    m_p += n;
    return at;
  }
  std::uint64_t le(std::size_t n) {
    const unsigned char* b = take(n);
    std::uint64_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | b[i];
    return v;
  }
  std::string line() {
    const void* nl = std::memchr(m_p, '\n', static_cast<std::size_t>(m_end - m_p));
    if (!nl) bad("a text argument has no end of line");
    std::string s(reinterpret_cast<const char*>(m_p), static_cast<const unsigned char*>(nl) - m_p);
    m_p = static_cast<const unsigned char*>(nl) + 1;
    return s;
  }

  // Frees the values nothing on the stack or in the memo reaches any more (a POP's, a memo entry's that was
  // replaced), between opcodes, when the arena has doubled since the last time: memory follows what the pickle
  // holds, not how many values its opcodes made. Amortised linear: each collection costs the arena it halves.
  void collect() {
    ++m_epoch;
    std::vector<const Value*> todo(m_stack.begin(), m_stack.end());
    todo.insert(todo.end(), std::begin(m_shared), std::end(m_shared));
    todo.insert(todo.end(), m_memo.begin(), m_memo.end());
    for (const auto& [index, v] : m_sparse_memo) todo.push_back(v);
    while (!todo.empty()) {
      const Value* v = todo.back();
      todo.pop_back();
      if (!v || v->mark == m_epoch) continue;
      v->mark = m_epoch;
      todo.insert(todo.end(), v->items.begin(), v->items.end());
      todo.push_back(v->state);
      if (v->tensor) todo.push_back(v->tensor->storage);
    }
    m_result.arena.sweep(m_epoch);
    m_next_collect = std::max<std::size_t>(2 * m_result.arena.size(), k_first_collect);
  }

  Value* make(Kind k) { return m_result.arena.make(k); }
  Value* pop() {
    if (m_stack.empty() || (!m_marks.empty() && m_stack.size() == m_marks.back())) bad("pops an empty stack");
    Value* v = m_stack.back();
    m_stack.pop_back();
    return v;
  }
  Value* top() {
    if (m_stack.empty()) bad("reads an empty stack");
    return m_stack.back();
  }
  std::vector<Value*> pop_mark() {
    if (m_marks.empty()) bad("has no MARK to pop to");
    std::vector<Value*> items(m_stack.begin() + static_cast<std::ptrdiff_t>(m_marks.back()), m_stack.end());
    m_stack.resize(m_marks.back());
    m_marks.pop_back();
    return items;
  }
  void push(Value* v) { m_stack.push_back(v); }
  void push_integer(std::int64_t i) {
    if (i >= 0 && i < k_shared_ints) {
      push(shared(static_cast<std::size_t>(i), Kind::integer, i));
      return;
    }
    Value* v = make(Kind::integer);
    v->integer = i;
    push(v);
  }
  // One value per small integer, None, True and False, made the first time and pushed again each time after:
  // values of these kinds never change once made, and a state_dict's pickle pushes five of them per tensor
  // (numel, offset, size, stride, requires_grad).
  Value* shared(std::size_t slot, Kind k, std::int64_t i) {
    Value*& v = m_shared[slot];
    if (!v) {
      v = make(k);
      v->integer = k == Kind::integer ? i : 0;
      v->boolean = k == Kind::boolean && i != 0;
    }
    return v;
  }
  void push_text(Kind k, std::size_t n) {
    Value* v = make(k);
    const unsigned char* b = take(n);
    v->text.assign(reinterpret_cast<const char*>(b), n);
    push(v);
  }
  void push_long(std::size_t n) {
    const unsigned char* b = take(n);
    if (n <= 8) {
      std::uint64_t u = 0;
      for (std::size_t i = n; i-- > 0;) u = (u << 8) | b[i];
      if (n > 0 && n < 8 && (b[n - 1] & 0x80)) u |= ~std::uint64_t{0} << (8 * n);  // sign-extend
      push_integer(static_cast<std::int64_t>(u));
      return;
    }
    Value* v = make(Kind::big_integer);
    v->text.assign(reinterpret_cast<const char*>(b), n);
    push(v);
  }
  // The memo: Python numbers its entries 0, 1, 2, ... (MEMOIZE: the count so far), which index a vector; an index
  // far beyond the entries stored (a hand-made pickle's) goes to a map, so that the vector stays within about twice
  // the entries. Each index lives in one of the two.
  void memo_put(std::uint64_t index) {
    Value* v = top();
    if (index >= m_memo.size() && index <= 2 * m_memo_count + 1024) {
      m_memo.resize(std::max<std::uint64_t>(index + 1, 2 * m_memo.size()));
      for (auto it = m_sparse_memo.begin(); it != m_sparse_memo.end();)
        if (it->first < m_memo.size()) {
          m_memo[it->first] = it->second;
          it = m_sparse_memo.erase(it);
        } else {
          ++it;
        }
    }
    Value*& slot = index < m_memo.size() ? m_memo[index] : m_sparse_memo[index];
    if (!slot) ++m_memo_count;
    slot = v;
  }
  void memo_get(std::uint64_t index) {
    Value* v = index < m_memo.size() ? m_memo[index] : nullptr;
    if (!v) {
      const auto it = m_sparse_memo.find(index);
      if (it == m_sparse_memo.end()) bad("reads memo entry " + std::to_string(index) + ", which was never stored");
      v = it->second;
    }
    push(v);
  }
  Value* container(Value* v, Kind k, const char* op) {
    if (v->kind != k) bad(std::string(op) + " on a " + describe(*v));
    return v;
  }
  [[noreturn]] void refuse_named(const std::string& full) const {
    refuse(m_file, "the pickle names the global " + full + ", which wavg refuses (it never runs pickled code)");
  }
  // A name outside the table called by REDUCE, or by NEWOBJ with arguments.
  [[noreturn]] void refuse_global(const std::string& full) const {
    if (full.rfind("torch.nn.", 0) == 0 || full.rfind("__main__.", 0) == 0)
      refuse(m_file, "is a whole-model pickle (torch.save(model)) that calls " + full +
                         " to rebuild an object; wavg never runs pickled code, save model.state_dict() instead");
    refuse_named(full);
  }
  void global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    // Not in the table: only a class name, which NEWOBJ may instantiate as data (see pickle.hpp), and only one a
    // model can hold (pickle_globals.hpp) or one the caller reads as a value; anything else is refused where it is
    // named.
    if (!allowed_global(full) && !value_name(full)) {
      if (!model_class(module, name)) refuse_named(full);
      m_classes.emplace(full, false);
    }
    Value* v = make(Kind::global);
    v->text = full;
    push(v);
  }
  // NEWOBJ(class, ()) of a name outside the table: the object as data, its attributes set by BUILD.
  Value* instantiate(const Value& cls, const Value& args) {
    if (args.kind != Kind::tuple || !args.items.empty()) refuse_global(cls.text);
    m_classes[cls.text] = true;
    Value* v = make(Kind::object);
    v->text = cls.text;
    return v;
  }

  bool value_name(const std::string& full) const {
    return m_value_names && std::find(m_value_names->begin(), m_value_names->end(), full) != m_value_names->end();
  }
  // REDUCE or NEWOBJ of a caller's value name: an object of that name holding its arguments.
  Value* value_object(const Value& cls, Value* args) {
    Value* v = make(Kind::object);
    v->text = cls.text;
    v->state = args;
    return v;
  }

  [[noreturn]] void refuse_no_type(const std::string& dtype, const std::string& where) const {
    refuse(m_file, "holds a tensor of dtype " + dtype + " (" + where + "), which wavg has no type for");
  }

  void step(unsigned char op);
  Value* call(const Value& callable, const Value& args);
  Value* rebuild_tensor(const std::string& f, const Value& args);
  Value* typed_view(const Value& storage, const Value& dtype);
  void plain_metadata(const Value& metadata);
  Value* persistent(const Value& pid);

  std::string m_file;
  const unsigned char* m_p;
  const unsigned char* m_end;
  const unsigned char* m_begin;
  const std::vector<std::string>* m_value_names;
  std::vector<Value*> m_stack;
  std::vector<std::size_t> m_marks;
  std::vector<Value*> m_memo;                               // see memo_put
  std::unordered_map<std::uint64_t, Value*> m_sparse_memo;  // the indices beyond the vector's reach
  std::uint64_t m_memo_count = 0;                           // the indices stored
  std::size_t m_next_collect = k_first_collect;             // the arena's size that calls collect()
  std::uint32_t m_epoch = 0;                                // collect()'s mark for the values it reached
  std::map<std::string, bool> m_classes;    // names outside the table, and whether NEWOBJ instantiated them
  Value* m_shared[k_shared_ints + 3] = {};  // see shared()
  Pickle m_result;
};

void Machine::step(unsigned char op) {
  switch (op) {
    case 0x80: take(1); break;                           // PROTO
    case 0x95: take(8); break;                           // FRAME: a hint, the bytes follow inline
    case '(': m_marks.push_back(m_stack.size()); break;  // MARK
    case '0': pop(); break;                              // POP
    case '1': pop_mark(); break;                         // POP_MARK
    case '2': push(top()); break;                        // DUP
    case 'N': push(shared(k_shared_ints, Kind::none, 0)); break;
    case 0x88: push(shared(k_shared_ints + 1, Kind::boolean, 1)); break;  // NEWTRUE
    case 0x89: push(shared(k_shared_ints + 2, Kind::boolean, 0)); break;  // NEWFALSE
    case 'K': push_integer(static_cast<std::int64_t>(le(1))); break;
    case 'M': push_integer(static_cast<std::int64_t>(le(2))); break;
    case 'J': push_integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(le(4)))); break;
    case 0x8a: push_long(static_cast<std::size_t>(le(1))); break;  // LONG1
    case 0x8b: {                                                   // LONG4
      const std::uint64_t n = le(4);
      if (n > static_cast<std::uint64_t>(m_end - m_p)) bad("LONG4 of " + std::to_string(n) + " bytes is truncated");
      push_long(static_cast<std::size_t>(n));
      break;
    }
    case 'I': {  // INT: protocol 0 text, also True/False as I01/I00
      const std::string s = line();
      char* end = nullptr;
      const long long v = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || *end) bad("INT argument is not a number");
      push_integer(v);
      break;
    }
    case 'G': {  // BINFLOAT, big-endian
      const unsigned char* b = take(8);
      std::uint64_t u = 0;
      for (int i = 0; i < 8; ++i) u = (u << 8) | b[i];
      Value* v = make(Kind::floating);
      v->floating = std::bit_cast<double>(u);
      push(v);
      break;
    }
    case 'X': push_text(Kind::string, static_cast<std::size_t>(le(4))); break;   // BINUNICODE
    case 0x8c: push_text(Kind::string, static_cast<std::size_t>(le(1))); break;  // SHORT_BINUNICODE
    case 0x8d:
    case 0x8e: {  // BINUNICODE8, BINBYTES8
      const std::uint64_t n = le(8);
      if (n > static_cast<std::uint64_t>(m_end - m_p)) bad("a string of " + std::to_string(n) + " bytes is truncated");
      push_text(op == 0x8d ? Kind::string : Kind::bytes, static_cast<std::size_t>(n));
      break;
    }
    case 'U':
    case 'C': push_text(op == 'U' ? Kind::string : Kind::bytes, static_cast<std::size_t>(le(1))); break;
    case 'T':
    case 'B': push_text(op == 'T' ? Kind::string : Kind::bytes, static_cast<std::size_t>(le(4))); break;
    case ')': push(make(Kind::tuple)); break;
    case ']': push(make(Kind::list)); break;
    case '}': push(make(Kind::dict)); break;
    case 't':
    case 'l':
    case 'd': {  // TUPLE, LIST, DICT from the mark
      Value* v = make(op == 't' ? Kind::tuple : op == 'l' ? Kind::list : Kind::dict);
      v->items = pop_mark();
      if (op == 'd' && v->items.size() % 2) bad("DICT with an odd number of items");
      push(v);
      break;
    }
    case 0x85:
    case 0x86:
    case 0x87: {  // TUPLE1..3
      const std::size_t n = op - 0x84u;
      Value* v = make(Kind::tuple);
      v->items.resize(n);
      for (std::size_t i = n; i-- > 0;) v->items[i] = pop();
      push(v);
      break;
    }
    case 'a': {
      Value* item = pop();
      container(top(), Kind::list, "APPEND")->items.push_back(item);
      break;
    }
    case 'e': {
      std::vector<Value*> items = pop_mark();
      Value* list = container(top(), Kind::list, "APPENDS");
      list->items.insert(list->items.end(), items.begin(), items.end());
      break;
    }
    case 's': {
      Value* value = pop();
      Value* key = pop();
      Value* dict = container(top(), Kind::dict, "SETITEM");
      dict->items.push_back(key);
      dict->items.push_back(value);
      break;
    }
    case 'u': {
      std::vector<Value*> items = pop_mark();
      if (items.size() % 2) bad("SETITEMS with an odd number of items");
      Value* dict = container(top(), Kind::dict, "SETITEMS");
      dict->items.insert(dict->items.end(), items.begin(), items.end());
      break;
    }
    case 'q': memo_put(le(1)); break;          // BINPUT
    case 'r': memo_put(le(4)); break;          // LONG_BINPUT
    case 0x94: memo_put(m_memo_count); break;  // MEMOIZE
    case 'h': memo_get(le(1)); break;          // BINGET
    case 'j': memo_get(le(4)); break;          // LONG_BINGET
    case 'p':
    case 'g': {  // PUT, GET: protocol 0 text
      const std::string s = line();
      char* end = nullptr;
      const unsigned long long i = std::strtoull(s.c_str(), &end, 10);
      if (s.empty() || *end) bad("memo index is not a number");
      op == 'p' ? memo_put(i) : memo_get(i);
      break;
    }
    case 'c': {  // GLOBAL "module\nname\n"
      const std::string module = line();
      global(module, line());
      break;
    }
    case 0x93: {  // STACK_GLOBAL
      Value* name = pop();
      Value* module = pop();
      if (module->kind != Kind::string || name->kind != Kind::string) bad("STACK_GLOBAL of non-strings");
      global(module->text, name->text);
      break;
    }
    case 'R':
    case 0x81: {  // REDUCE, NEWOBJ
      Value* args = pop();
      Value* callable = pop();
      const bool named = callable->kind == Kind::global && allowed_global(callable->text);
      if (callable->kind == Kind::global && value_name(callable->text))
        push(value_object(*callable, args));
      else if (callable->kind == Kind::global && !named && op == 0x81)
        push(instantiate(*callable, *args));
      else if (callable->kind == Kind::global && !named)
        refuse_global(callable->text);
      else
        push(call(*callable, *args));
      break;
    }
    case 'b': {  // BUILD: the state stays data
      Value* state = pop();
      Value* obj = top();
      if (obj->kind == Kind::dict || obj->kind == Kind::object)
        obj->state = state;
      else if (obj->kind != Kind::tensor || !plain_tensor_state(*state))
        bad("BUILD on a " + describe(*obj));
      break;
    }
    case 'Q': push(persistent(*pop())); break;  // BINPERSID
    default: {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", op);
      bad(std::string("opcode ") + hex + " is not one a checkpoint uses");
    }
  }
}

Value* Machine::call(const Value& callable, const Value& args) {
  if (callable.kind != Kind::global) bad("calls a " + describe(callable));
  if (args.kind != Kind::tuple) bad("calls " + callable.text + " with a " + describe(args));
  const std::string& f = callable.text;
  const auto& a = args.items;
  if (f == "collections.OrderedDict") {
    Value* d = make(Kind::dict);
    if (a.empty()) return d;
    if (a.size() != 1 || a[0]->kind != Kind::list) bad("OrderedDict with arguments other than a list of pairs");
    for (const Value* pair : a[0]->items) {
      if (pair->kind != Kind::tuple || pair->items.size() != 2) bad("OrderedDict with an item that is not a pair");
      d->items.push_back(pair->items[0]);
      d->items.push_back(pair->items[1]);
    }
    return d;
  }
  if (f == "torch._utils._rebuild_tensor_v2" || f == "torch._utils._rebuild_tensor_v3" ||
      f == "torch._utils._rebuild_tensor")
    return rebuild_tensor(f, args);
  if (f == "torch._utils._rebuild_parameter" || f == "torch._utils._rebuild_parameter_with_state") {
    if (a.empty() || a[0]->kind != Kind::tensor) bad("_rebuild_parameter of something other than a tensor");
    return a[0];  // a Parameter's Python attributes (_with_state) stay in the pickle, which the writer copies
  }
  for (const auto& t : k_other_tensors)
    if (f == t[0]) refuse(m_file, std::string("holds ") + t[1] + " (" + f + "), which wavg does not read");
  if (f == "_codecs.encode" || ((f == "builtins.bytearray" || f == "__builtin__.bytearray") && a.size() == 2)) {
    Value* b = make(Kind::bytes);
    if (a.size() != 2 || a[0]->kind != Kind::string || a[1]->kind != Kind::string ||
        (a[1]->text != "latin1" && a[1]->text != "latin-1") || !latin1(a[0]->text, b->text))
      bad(f + " of something other than a latin1 string");
    return b;
  }
  if (f == "builtins.bytearray" || f == "__builtin__.bytearray") {
    if (a.size() > 1 || (a.size() == 1 && a[0]->kind != Kind::bytes)) bad("bytearray of something other than bytes");
    return a.empty() ? make(Kind::bytes) : a[0];
  }
  if (f == "builtins.complex" || f == "__builtin__.complex") {  // kept as the tuple (real, imag)
    if (a.size() != 2 || a[0]->kind != Kind::floating || a[1]->kind != Kind::floating)
      bad("complex of something other than two floats");
    Value* c = make(Kind::tuple);
    c->items = a;
    return c;
  }
  if (f == "collections.Counter") {
    if (a.empty()) return make(Kind::dict);
    if (a.size() != 1 || a[0]->kind != Kind::dict) bad("Counter of something other than a dict");
    return a[0];
  }
  if (f == "torch.serialization._get_layout") {  // a layout, kept by its name (torch.strided)
    if (a.size() != 1 || a[0]->kind != Kind::string) bad("_get_layout of something other than a name");
    Value* v = make(Kind::global);
    v->text = a[0]->text;
    return v;
  }
  if (f == "torch.nn.parameter.Parameter") {  // torch < 1.0: Parameter(data[, requires_grad]) is its tensor
    if (a.empty() || a.size() > 2 || a[0]->kind != Kind::tensor || (a.size() == 2 && a[1]->kind != Kind::boolean))
      bad("Parameter of something other than a tensor");
    return a[0];
  }
  if (f == "torch._tensor._rebuild_from_type_v2") {
    if (a.size() < 3 || a[0]->kind != Kind::global || a[2]->kind != Kind::tuple ||
        (a[0]->text != "torch._utils._rebuild_tensor_v2" && a[0]->text != "torch._utils._rebuild_tensor_v3" &&
         a[0]->text != "torch._utils._rebuild_parameter") ||
        a[1]->kind != Kind::global || (a[1]->text != "torch.Tensor" && a[1]->text != "torch.nn.parameter.Parameter"))
      bad("_rebuild_from_type_v2 with arguments other than a tensor's");
    return call(*a[0], *a[2]);
  }
  if (f == "__builtin__.set" || f == "builtins.set") {
    if (a.empty()) return make(Kind::list);
    if (a.size() != 1 || a[0]->kind != Kind::list) bad("set of something other than a list");
    return a[0];
  }
  if (f == "torch.nn.backends.thnn._get_thnn_function_backend") {  // a torch < 1.0 module's _backend: a name
    if (!a.empty()) bad("_get_thnn_function_backend with arguments");
    Value* v = make(Kind::object);
    v->text = f;
    return v;
  }
  if (f == "torch.Size") {
    if (a.size() != 1 || a[0]->kind != Kind::tuple) bad("torch.Size of something other than a tuple");
    return a[0];
  }
  if (f == "torch.device") {
    Value* d = make(Kind::device);
    for (const Value* part : a) {
      if (part->kind != Kind::string && part->kind != Kind::integer) bad("torch.device of an odd argument");
      d->text +=
          (d->text.empty() ? "" : ":") + (part->kind == Kind::string ? part->text : std::to_string(part->integer));
    }
    return d;
  }
  bad("calls " + f + ", which is only a name here");
}

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata]), the legacy
// _rebuild_tensor(storage, storage_offset, size, stride) and _rebuild_tensor_v3(storage, storage_offset, size, stride,
// requires_grad, backward_hooks, dtype[, metadata]), which torch.load reads as _rebuild_tensor_v2 of its untyped
// storage viewed as `dtype` (typed_view): so every kind goes through the same checks. The view must lie inside its
// storage.
Value* Machine::rebuild_tensor(const std::string& f, const Value& args) {
  const auto& a = args.items;
  const bool legacy = f == "torch._utils._rebuild_tensor", v3 = f == "torch._utils._rebuild_tensor_v3";
  const std::size_t least = legacy ? 4 : v3 ? 7 : 6, most = legacy ? 4 : least + 1;
  if (a.size() < least || a.size() > most)
    bad(f + " has " + std::to_string(a.size()) + " arguments, not " + std::to_string(least) +
        (most > least ? " or " + std::to_string(most) : ""));
  if (a[0]->kind != Kind::storage || a[1]->kind != Kind::integer || a[2]->kind != Kind::tuple ||
      a[3]->kind != Kind::tuple || a[2]->items.size() != a[3]->items.size())
    bad("a tensor's arguments are not (storage, offset, size, stride)");
  if (a.size() == most && !legacy) plain_metadata(*a.back());
  if (v3 != a[0]->storage->untyped)
    bad(f + (v3 ? " of a typed storage" : " of an UntypedStorage, which needs _rebuild_tensor_v3's dtype"));
  const Value& storage = v3 ? *typed_view(*a[0], *a[6]) : *a[0];
  Value* t = make(Kind::tensor);
  TensorRef& r = *t->tensor;
  r.storage = &storage;
  if (a[1]->integer < 0) bad("a tensor has a negative storage offset");
  r.offset = static_cast<std::uint64_t>(a[1]->integer);
  std::uint64_t last = r.offset;  // the highest element index the view touches
  bool empty = false;
  for (std::size_t i = 0; i < a[2]->items.size(); ++i) {
    const Value* d = a[2]->items[i];
    const Value* s = a[3]->items[i];
    if (d->kind != Kind::integer || s->kind != Kind::integer || d->integer < 0 || s->integer < 0)
      bad("a tensor's size or stride is not a non-negative integer");
    const auto dim = static_cast<std::uint64_t>(d->integer), stride = static_cast<std::uint64_t>(s->integer);
    r.shape.push_back(dim);
    r.stride.push_back(stride);
    if (dim == 0) empty = true;
    std::uint64_t reach = 0;
    if (dim > 0 && (__builtin_mul_overflow(dim - 1, stride, &reach) || __builtin_add_overflow(last, reach, &last)))
      bad("a tensor's size and stride overflow");
  }
  std::uint64_t count = 0;
  if (!checked_count(r.shape, dtype_size(storage.storage->dtype), count)) bad("a tensor's size overflows");
  if (!empty && last >= storage.storage->numel)
    bad("a tensor of size " + shape_string(r.shape) + " at offset " + std::to_string(r.offset) + " reaches element " +
        std::to_string(last) + " of storage " + storage.storage->key + ", which has " +
        std::to_string(storage.storage->numel) + " " + std::string(dtype_name(storage.storage->dtype)) + " elements");
  return t;
}

// _rebuild_tensor_v3's storage as torch.load views it: `dtype`'s elements in its bytes (a dtype wavg has no type for
// is refused by name; torch.load also drops a last partial element).
Value* Machine::typed_view(const Value& storage, const Value& dtype) {
  if (dtype.kind != Kind::global || !torch_dtype(dtype.text))
    bad("_rebuild_tensor_v3's dtype is a " + describe(dtype) + ", not a torch dtype");
  const std::optional<DType> type = dtype_from_name(std::string_view(dtype.text).substr(6));  // past "torch."
  if (!type) refuse_no_type(dtype.text, "torch._utils._rebuild_tensor_v3");
  const std::uint64_t elem = dtype_size(*type);
  Value* typed = make(Kind::storage);
  *typed->storage = *storage.storage;
  if (typed->storage->view_offset % elem) bad("a legacy storage view starts inside a " + dtype.text + " element");
  typed->storage->dtype = *type;
  typed->storage->numel /= elem;
  typed->storage->view_offset /= elem;
  return typed;
}

// A tensor's metadata (torch._utils.get_tensor_metadata): the flags of a view whose values torch.load negates or
// conjugates ({'neg': True}) when it rebuilds it; such a tensor's storage does not hold its values, so it is refused.
void Machine::plain_metadata(const Value& metadata) {
  if (metadata.kind == Kind::none) return;
  if (metadata.kind != Kind::dict) bad("a tensor's metadata is a " + describe(metadata) + ", not a dict");
  for (std::size_t i = 0; i + 1 < metadata.items.size(); i += 2) {
    const Value& key = *metadata.items[i];
    const Value& value = *metadata.items[i + 1];
    if (value.kind == Kind::boolean && !value.boolean) continue;
    refuse(m_file, "holds a tensor whose metadata sets " +
                       (key.kind == Kind::string ? "'" + key.text + "'" : describe(key)) + " to " + describe(value) +
                       " (a lazily negated or conjugated view), which wavg does not read");
  }
}

// ('storage', StorageClass, key, location, numel[, view_metadata]); view_metadata is the legacy format's
// (view_key, offset, size) for a storage that is a slice of another.
Value* Machine::persistent(const Value& pid) {
  const auto& a = pid.items;
  if (pid.kind == Kind::tuple && a.size() == 4 && a[0]->kind == Kind::string && a[0]->text == "module") {
    if (a[1]->kind != Kind::global) bad("a module persistent id does not name a class");
    return a[1];
  }
  if (pid.kind != Kind::tuple || a.size() < 5 || a.size() > 6 || a[0]->kind != Kind::string ||
      a[0]->text != "storage" || a[1]->kind != Kind::global || a[2]->kind != Kind::string ||
      a[3]->kind != Kind::string || a[4]->kind != Kind::integer || a[4]->integer < 0)
    bad("a persistent id is not ('storage', type, key, location, size)");
  Value* s = make(Kind::storage);
  const StorageClass* cls = nullptr;
  for (const auto& c : k_storages)
    if (a[1]->text == c.name) cls = &c;
  for (const auto& t : k_no_type_storages)
    if (a[1]->text == t[0]) refuse_no_type(t[1], t[0]);
  s->storage->untyped = a[1]->text == k_untyped_storage;
  if (!cls && !s->storage->untyped) bad("a persistent id names " + a[1]->text + ", not a storage type");
  s->storage->dtype = cls ? cls->dtype : DType::u8;
  s->storage->key = a[2]->text;
  s->storage->numel = static_cast<std::uint64_t>(a[4]->integer);
  if (a.size() == 6 && a[5]->kind != Kind::none) {
    const auto& v = a[5]->items;
    if (a[5]->kind != Kind::tuple || v.size() != 3 || v[0]->kind != Kind::string || v[1]->kind != Kind::integer ||
        v[2]->kind != Kind::integer || v[1]->integer < 0 || v[2]->integer < 0 ||
        static_cast<std::uint64_t>(v[1]->integer) > s->storage->numel ||
        static_cast<std::uint64_t>(v[2]->integer) > s->storage->numel - static_cast<std::uint64_t>(v[1]->integer))
      bad("a storage view is not (key, offset, size) inside its storage");
    s->storage->view_offset = static_cast<std::uint64_t>(v[1]->integer);
    s->storage->numel = static_cast<std::uint64_t>(v[2]->integer);
  }
  return s;
}

}  // namespace

Value* Arena::make(Kind k) {
  Value* v = m_values.make();
  v->mark = 0;
  v->kind = k;
  if (k == Kind::storage) v->storage = m_storages.make();
  if (k == Kind::tensor) v->tensor = m_tensors.make();
  return v;
}

void Arena::sweep(std::uint32_t epoch) {
  m_values.for_each([&](Value& v) {
    if (v.mark == epoch || v.mark == k_free) return;
    if (v.storage) m_storages.give_back(v.storage);
    if (v.tensor) m_tensors.give_back(v.tensor);
    m_values.give_back(&v);
    v.mark = k_free;
  });
}

Pickle unpickle(const std::string& file, const unsigned char* data, std::size_t size) {
  return Machine(file, data, size, nullptr).run();
}

Pickle unpickle(const std::string& file, const unsigned char* data, std::size_t size,
                const std::vector<std::string>& value_names) {
  return Machine(file, data, size, &value_names).run();
}

std::string printable(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text;
}

void refuse(const std::string& file, const std::string& what) { fail(file, printable(what)); }

const char* storage_class(DType t) {
  for (const auto& s : k_storages)
    if (s.dtype == t) return s.name;
  return nullptr;
}

std::string describe(const Value& v) {
  switch (v.kind) {
    case Kind::none: return "None";
    case Kind::boolean: return v.boolean ? "bool True" : "bool False";
    case Kind::integer: return "int " + std::to_string(v.integer);
    case Kind::big_integer: return "int of " + std::to_string(v.text.size()) + " bytes";
    case Kind::floating: {
      // The shortest of %.15g and %.17g that reads back as the same double, as Python's repr prints it.
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.15g", v.floating);
      if (std::strtod(buf, nullptr) != v.floating) std::snprintf(buf, sizeof buf, "%.17g", v.floating);
      return std::string("float ") + buf;
    }
    case Kind::string: return "str '" + (v.text.size() > 40 ? v.text.substr(0, 40) + "..." : v.text) + "'";
    case Kind::bytes: return "bytes of length " + std::to_string(v.text.size());
    case Kind::tuple: return "tuple of " + std::to_string(v.items.size());
    case Kind::list: return "list of " + std::to_string(v.items.size());
    case Kind::dict: return "dict of " + std::to_string(v.items.size() / 2);
    case Kind::global: return "name " + v.text;
    case Kind::storage: return "storage";
    case Kind::tensor: return "tensor";
    case Kind::device: return "device " + v.text;
    case Kind::object: return "object of " + v.text;
  }
  return "value";
}

}  // namespace wavg::pytorch
