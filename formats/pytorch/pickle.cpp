// The restricted unpickler's opcode machine (see pickle.hpp for what it accepts and why it is hand-written): the
// opcodes, the collection of the values nothing reaches any more, the arena that holds them and the functions
// pickle.hpp declares. What the allowed globals do when called is in pickle_torch_calls.cpp; the Machine class both
// define is in pickle_machine.hpp.

#include "pytorch/pickle.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "pytorch/pickle_machine.hpp"
#include "wavg/error.hpp"

namespace wavg::pytorch {

namespace detail {

namespace {

// Deep enough for any checkpoint (a state_dict nests 3 levels, an optimizer 5); refuses stack-exhausting inputs.
constexpr std::size_t k_max_stack = 1'000'000;

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

}  // namespace

Pickle Machine::run() {
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

// Frees the values nothing on the stack or in the memo reaches any more (a POP's, a memo entry's that was
// replaced), between opcodes, when the arena has doubled since the last time: memory follows what the pickle
// holds, not how many values its opcodes made. Amortised linear: each collection costs the arena it halves.
void Machine::collect() {
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

void Machine::step(unsigned char op) {
  switch (op) {
    case 0x80: take(1); break;                           // PROTO
    case 0x95: frame(le(8)); break;                      // FRAME: the bytes follow inline
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
      if (s.empty() || *end || s[0] == '-' || s[0] == '+' || s[0] == ' ') bad("memo index is not a number");
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

}  // namespace detail

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
  return detail::Machine(file, data, size, nullptr).run();
}

Pickle unpickle(const std::string& file, const unsigned char* data, std::size_t size,
                const std::vector<std::string>& value_names) {
  return detail::Machine(file, data, size, &value_names).run();
}

std::string printable(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text;
}

void refuse(const std::string& file, const std::string& what) { fail(file, printable(what)); }

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
    case Kind::string: return "str '" + clipped(v.text, 40) + "'";
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
