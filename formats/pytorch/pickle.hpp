#pragma once
// A restricted unpickler for the pickles inside torch.save files (data.pkl of the zip format, the pickle sequence
// of the legacy format).
//
// Hand-written because no Debian package offers a Python-pickle reader that executes nothing: a pickle is a
// program for a stack machine whose REDUCE opcode calls any importable function. This one keeps the machine and
// replaces "import and call" with a table: GLOBAL resolves only the names below, REDUCE applies only their
// meaning, written here as data transformations, and every other name is refused (Error naming the global) while
// parsing, before any tensor is read. Nothing is imported, nothing is run.
//
//   collections.OrderedDict                 -> a dict (empty, or from a list of pairs)
//   torch._utils._rebuild_tensor_v2         -> a tensor view (storage, offset, size, stride, ...)
//   torch._utils._rebuild_tensor            -> the same, legacy format
//   torch._utils._rebuild_tensor_v3         -> the same over an UntypedStorage viewed as its dtype argument (torch
//                                              2: uint16/32/64; one wavg has no type for, float8, complex32,
//                                              bits, is refused naming it)
//   torch._utils._rebuild_parameter         -> its tensor (a Parameter is a tensor with requires_grad)
//   torch._tensor._rebuild_from_type_v2     -> applies its function (one of the above) to its arguments
//   torch.{Float,Double,Half,BFloat16,Long,Int,Short,Char,Byte,Bool}Storage, torch.storage.UntypedStorage
//                                           -> a storage's element type (uint8), inside a persistent id
//   torch.{ComplexFloat,ComplexDouble}Storage -> complex numbers, carried as their parts (float32 or float64; a
//                                              tensor's view gains a last dimension of 2, its strides doubled)
//   torch.{QUInt8,QInt8,QInt32,QUInt4x2,QUInt2x4}Storage
//                                           -> refused in a persistent id, naming the dtype wavg has no type for
//   torch.device, torch.Size                -> a plain value (a location string; a tuple)
//   torch.Tensor, torch.nn.parameter.Parameter
//                                           -> inert names, accepted only as _rebuild_from_type_v2's type, and
//                                              Parameter(tensor[, requires_grad]) as its tensor (torch < 1.0)
//   __builtin__.set, builtins.set           -> a list (a module's _non_persistent_buffers_set)
//   torch.nn.backends.thnn._get_thnn_function_backend
//                                           -> an object of that name, uncalled (a torch < 1.0 module's _backend)
//   torch._utils._rebuild_parameter_with_state -> its tensor (the Parameter's Python attributes stay in the pickle)
//   _codecs.encode(text, 'latin1'), bytearray -> bytes (protocol 2's spelling of bytes)
//   complex(re, im), collections.Counter    -> the tuple (re, im); a dict
//   torch.serialization._get_layout(name)   -> the layout's name
//   torch.float16, torch.int64, ... and torch.per_tensor_affine, ... (pickle_globals.hpp)
//                                           -> inert values ({'dtype': torch.float16} in a checkpoint)
//   torch._utils's sparse, quantized, meta and NumPy tensor rebuilds
//                                           -> refused saying which kind of tensor it is
// A tensor's metadata argument (v2, v3) may only be None or flags set False: {'neg': True} marks a view whose values
// torch.load negates, which its storage does not hold, and is refused.
//
// A whole-model pickle (torch.save(model)) names the model's classes (__main__.Net, torch.nn.modules.conv.Conv2d)
// and makes each object with NEWOBJ(class, ()) and BUILD(attribute dict). A name a model can hold (torch.nn.*,
// __main__.*, a user package's; never os, subprocess, builtins, sys: pickle_globals.hpp) is therefore accepted as an
// inert class name, any other refused where the pickle names it, and the accepted ones only to be instantiated that
// way: NEWOBJ with no arguments gives an object value
// (the class's name and, after BUILD, its attributes as data), nothing is imported and no __new__ or
// __setstate__ runs. Called by REDUCE, or NEWOBJ with arguments, such a name is refused there (posix.system); a
// name the pickle mentions but never instantiates is refused at STOP. Either way nothing has been read yet.
//
// Opcodes: protocols 0 to 5 as Python writes them for dicts, lists, tuples, numbers, strings and bytes, plus
// GLOBAL/STACK_GLOBAL, REDUCE, BUILD (its state is kept as data), NEWOBJ of the names above, and BINPERSID/PERSID,
// whose id ('storage', StorageClass, key, location, numel[, view]) becomes a storage reference, and whose legacy
// ('module', class, source file, source) (torch < 1.6 saving a model's classes with their source) the class name. Every
// length is checked against the bytes left before it is used, so no allocation is driven by an unchecked number: each
// opcode creates at most one value, and the values live in one arena owned by the result, so a pickle that makes a list
// contain itself cannot leak; values nothing reaches any more (popped, replaced in the memo) are freed as the
// arena grows, so memory follows the pickle's structure, not the count of its opcodes.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wavg/tensor.hpp"

namespace wavg::pytorch {

enum class Kind {
  none,
  boolean,
  integer,
  big_integer,
  floating,
  string,
  bytes,
  tuple,
  list,
  dict,
  global,
  storage,
  tensor,
  device,
  object
};

struct Value;

// What a persistent id names: a storage of `numel` elements under `key` (data/<key> in the zip format, the key in
// the legacy storage table). A legacy view starts `view_offset` elements into its root storage. An UntypedStorage
// (`untyped`) is uint8, its numel its bytes, as the legacy format's record counts them; a _rebuild_tensor_v3 tensor
// views a copy of it typed as its dtype (numel and view_offset in that dtype's elements).
struct StorageRef {
  DType dtype = DType::f32;
  std::string key;
  std::uint64_t numel = 0;
  std::uint64_t view_offset = 0;
  bool untyped = false;
  // A ComplexFloatStorage or ComplexDoubleStorage (or a v3 view as complex64/128): `dtype` is a part's, float32 or
  // float64, and numel and view_offset count parts, two per number (tensor.hpp's Numbers).
  bool complex = false;
};

struct TensorRef {
  const Value* storage = nullptr;  // a Kind::storage value
  std::uint64_t offset = 0;        // in elements, from the start of the storage
  Shape shape;
  std::vector<std::uint64_t> stride;
};

// One value of the pickle. A storage's and a tensor's facts live beside the values (Arena), so that the values that
// are neither (eight of a state_dict's ten per tensor) are half as large (about 100 bytes, not 200).
struct Value {
  Kind kind = Kind::none;
  bool boolean = false;
  mutable bool seen = false;       // a reader's mark while it walks the values (the PyTorch reader: named)
  mutable std::uint32_t mark = 0;  // the unpickler's last collection that reached it (Arena::k_free: unused)
  std::int64_t integer = 0;
  double floating = 0;
  std::string text;               // string, bytes, a global's or an object's class dotted name, a big integer's
                                  // bytes, a device
  std::vector<Value*> items;      // tuple and list; a dict's keys and values alternately
  const Value* state = nullptr;   // what BUILD gave a dict (an OrderedDict's attributes, such as _metadata) or
                                  // an object (its attributes)
  StorageRef* storage = nullptr;  // Kind::storage: what its persistent id names
  TensorRef* tensor = nullptr;    // Kind::tensor: its view
};

// The values one pickle made, and their storages' and tensors' facts, in blocks that never move (values point at
// each other): one allocation per block rather than per value (a state_dict's pickle makes about ten values per
// tensor). A value the unpickler finds unreachable is reset and made again from the free list, so the blocks hold at
// most the most values in use.
class Arena {
 public:
  static constexpr std::uint32_t k_free = UINT32_MAX;  // the mark of a value on the free list

  // Returns a value of kind `k`, every other member at its default (a storage's or a tensor's facts made too).
  Value* make(Kind k);
  // Resets every value in use whose mark is not `epoch` and puts it on the free list.
  void sweep(std::uint32_t epoch);
  // Returns how many values are in use.
  std::size_t size() const { return m_values.used(); }
  // Calls f(const Value&) for each value in use, in the order they were first made.
  template <class F>
  void for_each(F f) const {
    m_values.for_each([&](const Value& v) {
      if (v.mark != k_free) f(v);
    });
  }

 private:
  // Blocks of k_block objects that never move (values point at each other and at their facts): one allocation per
  // block rather than per object, and a free list of the objects given back.
  template <class T>
  class Pool {
   public:
    T* make() {
      T* t = nullptr;
      if (!m_free.empty()) {
        t = m_free.back();
        m_free.pop_back();
      } else {
        if (m_filled == k_block) {
          m_blocks.push_back(std::make_unique<T[]>(k_block));
          m_filled = 0;
        }
        t = &m_blocks.back()[m_filled++];
      }
      ++m_used;
      return t;
    }
    // Resets `t` (freeing what it holds now: memory follows the objects in use) and puts it on the free list.
    void give_back(T* t) {
      *t = T{};
      m_free.push_back(t);
      --m_used;
    }
    std::size_t used() const { return m_used; }
    template <class F>
    void for_each(F f) const {
      for (std::size_t b = 0; b < m_blocks.size(); ++b)
        for (std::size_t i = 0; i < (b + 1 == m_blocks.size() ? m_filled : k_block); ++i) f(m_blocks[b][i]);
    }
    template <class F>
    void for_each(F f) {
      for (std::size_t b = 0; b < m_blocks.size(); ++b)
        for (std::size_t i = 0; i < (b + 1 == m_blocks.size() ? m_filled : k_block); ++i) f(m_blocks[b][i]);
    }

   private:
    static constexpr std::size_t k_block = 1024;
    std::vector<std::unique_ptr<T[]>> m_blocks;
    std::size_t m_filled = k_block;  // objects handed out from the last block
    std::size_t m_used = 0;
    std::vector<T*> m_free;
  };
  Pool<Value> m_values;
  Pool<StorageRef> m_storages;
  Pool<TensorRef> m_tensors;
};

struct Pickle {
  const Value* root = nullptr;
  std::size_t consumed = 0;  // bytes up to and including STOP
  Arena arena;
};

// Unpickles the pickle at the start of [data, data + size). Throws Error (exit 1) naming `file` for a refused
// global, an unknown opcode, a truncated or inconsistent pickle.
Pickle unpickle(const std::string& file, const unsigned char* data, std::size_t size);

// Unpickles as above, also accepting `value_names`: globals a caller's format pickles as plain values (DCP's
// metadata names torch.float32 and pathlib.PosixPath). Each is kept as a Kind::global value; REDUCE or NEWOBJ of
// one gives a Kind::object of that name whose state is its argument tuple. Nothing is imported or run; the caller
// interprets these values and refuses what it does not expect.
Pickle unpickle(const std::string& file, const unsigned char* data, std::size_t size,
                const std::vector<std::string>& value_names);

// Returns `text` with control characters replaced by '?', so that a name taken from a file keeps an error message
// on one line.
std::string printable(std::string text);

// Throws Error (exit 1) about `file` with printable(what).
[[noreturn]] void refuse(const std::string& file, const std::string& what);

// Returns the storage class torch names for a dtype ("torch.FloatStorage"; of complex numbers whose parts are `t`,
// "torch.ComplexFloatStorage"), or nullptr (unsigned 16 to 64 bits).
const char* storage_class(DType t, Numbers numbers = Numbers::real);

// Returns a short description of a non-tensor value for messages and -v ("int 7", "str 'adam'", "list of 3").
std::string describe(const Value& v);

}  // namespace wavg::pytorch
