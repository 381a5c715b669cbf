#pragma once
// The restricted unpickler's machine (pickle.hpp says what it accepts and why), private to formats/pytorch and
// shared by the two files that define it: pickle.cpp runs the opcodes (the stack, the memo, the names a pickle
// mentions, BUILD, the collection of unreachable values) and pickle_torch_calls.cpp gives the allowed globals
// their meaning when REDUCE calls them (OrderedDict, the tensor rebuilds, persistent ids naming storages).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "pytorch/pickle.hpp"
#include "pytorch/pickle_globals.hpp"

namespace wavg::pytorch::detail {

// Values made before the first collection of the unreachable ones (a state_dict of a few thousand tensors makes
// fewer: it is never collected).
constexpr std::size_t k_first_collect = 1 << 16;
// The integers from 0 that are one value each (see Machine::shared).
constexpr std::int64_t k_shared_ints = 256;

// Tells whether `name` is a global the machine gives a meaning to: a function it applies (call), a storage class,
// a tensor rebuild it refuses by kind, or an inert value (pickle_globals.hpp).
bool allowed_global(const std::string& name);

// One run of the unpickler over one pickle: the bytes it reads, its stack, marks and memo, the names the pickle
// mentions, and the values it made (m_result).
class Machine {
 public:
  Machine(const std::string& file, const unsigned char* data, std::size_t size,
          const std::vector<std::string>* value_names)
      : m_file(file), m_p(data), m_end(data + size), m_begin(data), m_value_names(value_names), m_frame_end(data) {}

  // Runs the opcodes to STOP and returns what they made.
  Pickle run();

 private:
  [[noreturn]] void bad(const std::string& what) const {
    refuse(m_file, "corrupt pickle at byte " + std::to_string(m_p - m_begin) + ": " + what);
  }

  const unsigned char* take(std::size_t n) {
    if (static_cast<std::size_t>(m_end - m_p) < n) bad("truncated (needs " + std::to_string(n) + " more bytes)");
    if (m_p < m_frame_end && static_cast<std::size_t>(m_frame_end - m_p) < n) bad("an opcode runs past its FRAME");
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
    const unsigned char* stop = m_p < m_frame_end ? m_frame_end : m_end;
    const void* nl = std::memchr(m_p, '\n', static_cast<std::size_t>(stop - m_p));
    if (!nl) bad(stop == m_end ? "a text argument has no end of line" : "an opcode runs past its FRAME");
    std::string s(reinterpret_cast<const char*>(m_p), static_cast<const unsigned char*>(nl) - m_p);
    m_p = static_cast<const unsigned char*>(nl) + 1;
    return s;
  }

  // Frees the values nothing on the stack or in the memo reaches any more (see pickle.cpp).
  void collect();

  Value* make(Kind k) { return m_result.arena.make(k); }
  Value* pop() {
    if (m_stack.empty() || (!m_marks.empty() && m_stack.size() == m_marks.back())) bad("pops an empty stack");
    Value* v = m_stack.back();
    m_stack.pop_back();
    return v;
  }
  // The value on top of the stack, above the last MARK (Python's unpickler sees only the values since it: DUP,
  // MEMOIZE or APPEND right after a MARK is its "stack underflow").
  Value* top() {
    if (m_stack.empty() || (!m_marks.empty() && m_stack.size() == m_marks.back())) bad("reads an empty stack");
    return m_stack.back();
  }
  // FRAME: the next `n` bytes are one frame, which no opcode may straddle and no FRAME may begin inside (Python's
  // pickle.py: "pickle exhausted before end of frame", "beginning of a new frame before end of current frame").
  void frame(std::uint64_t n) {
    if (m_p < m_frame_end) bad("a FRAME begins before the current frame ends");
    if (n > static_cast<std::uint64_t>(m_end - m_p))
      bad("a FRAME of " + std::to_string(n) + " bytes runs past the end of the pickle");
    m_frame_end = m_p + n;
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

  // Runs one opcode (pickle.cpp).
  void step(unsigned char op);
  // Returns what the allowed global `callable` makes of `args`. It and the four below (the tensor rebuilds' checks,
  // the storage a persistent id names) are in pickle_torch_calls.cpp.
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
  const unsigned char* m_frame_end;  // the end of the current FRAME (at or behind m_p: none)
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

}  // namespace wavg::pytorch::detail
