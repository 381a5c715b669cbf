// What the restricted unpickler's allowed globals mean when a pickle calls them (pickle.hpp lists them): the
// allow-lists, collections.OrderedDict and the other plain values, torch's tensor rebuilds (_rebuild_tensor_v2,
// _v3, the legacy _rebuild_tensor, _rebuild_parameter, _rebuild_from_type_v2) with their checks that a view lies
// inside its storage, and the persistent ids that name storages. Kept apart from the opcode machine (pickle.cpp):
// this half is torch's call semantics, written as data transformations; nothing is imported or run.

#include "pytorch/pickle_machine.hpp"

#include <optional>
#include <string>
#include <string_view>

#include "pytorch/pickle.hpp"
#include "pytorch/pickle_globals.hpp"

namespace wavg::pytorch {

namespace {

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
// Storage classes of complex numbers, and the torch dtypes of the same (a v3 view), by the type of their parts.
constexpr StorageClass k_complex_storages[] = {{"torch.ComplexFloatStorage", DType::f32},
                                               {"torch.ComplexDoubleStorage", DType::f64}};
constexpr StorageClass k_complex_dtypes[] = {{"torch.complex64", DType::f32}, {"torch.complex128", DType::f64}};
// Storage classes of dtypes wavg has no type for: a tensor over one is refused naming its dtype.
constexpr const char* k_no_type_storages[][2] = {
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

}  // namespace

namespace detail {

bool allowed_global(const std::string& name) {
  for (const char* f : k_functions)
    if (name == f) return true;
  for (const auto& s : k_storages)
    if (name == s.name) return true;
  for (const auto& s : k_complex_storages)
    if (name == s.name) return true;
  for (const auto& t : k_other_tensors)
    if (name == t[0]) return true;
  for (const auto& t : k_no_type_storages)
    if (name == t[0]) return true;
  return name == k_untyped_storage || inert_global(name);
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
  for (std::size_t i = 0; i < a[2]->items.size(); ++i) {
    const Value* d = a[2]->items[i];
    const Value* s = a[3]->items[i];
    if (d->kind != Kind::integer || s->kind != Kind::integer || d->integer < 0 || s->integer < 0)
      bad("a tensor's size or stride is not a non-negative integer");
    r.shape.push_back(static_cast<std::uint64_t>(d->integer));
    r.stride.push_back(static_cast<std::uint64_t>(s->integer));
  }
  // Complex numbers as their parts (StorageRef::complex): offsets and strides count numbers, the storage parts.
  if (storage.storage->complex) {
    if (__builtin_mul_overflow(r.offset, 2, &r.offset)) bad("a tensor's storage offset overflows");
    for (auto& stride : r.stride)
      if (__builtin_mul_overflow(stride, 2, &stride)) bad("a tensor's stride overflows");
    r.shape.push_back(2);
    r.stride.push_back(1);
  }
  std::uint64_t last = r.offset;  // the highest element index the view touches
  bool empty = false;
  for (std::size_t i = 0; i < r.shape.size(); ++i) {
    const std::uint64_t dim = r.shape[i], stride = r.stride[i];
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
  std::optional<DType> type = dtype_from_name(std::string_view(dtype.text).substr(6));  // past "torch."
  bool complex = false;
  for (const auto& c : k_complex_dtypes)
    if (dtype.text == c.name) type = c.dtype, complex = true;
  if (!type) refuse_no_type(dtype.text, "torch._utils._rebuild_tensor_v3");
  const std::uint64_t elem = dtype_size(*type) * (complex ? 2 : 1);
  Value* typed = make(Kind::storage);
  *typed->storage = *storage.storage;
  if (typed->storage->view_offset % elem) bad("a legacy storage view starts inside a " + dtype.text + " element");
  typed->storage->dtype = *type;
  typed->storage->complex = complex;
  // In parts for complex numbers (a last partial number dropped, as torch.load drops a partial element).
  typed->storage->numel = typed->storage->numel / elem * (complex ? 2 : 1);
  typed->storage->view_offset = typed->storage->view_offset / elem * (complex ? 2 : 1);
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
  for (const auto& c : k_complex_storages)
    if (a[1]->text == c.name) cls = &c, s->storage->complex = true;
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
  // Complex numbers in parts (StorageRef::complex).
  if (s->storage->complex && (__builtin_mul_overflow(s->storage->numel, 2, &s->storage->numel) ||
                              __builtin_mul_overflow(s->storage->view_offset, 2, &s->storage->view_offset)))
    bad("a storage's size overflows");
  return s;
}

}  // namespace detail

const char* storage_class(DType t, Numbers numbers) {
  if (numbers == Numbers::complex) {
    for (const auto& s : k_complex_storages)
      if (s.dtype == t) return s.name;
    return nullptr;
  }
  for (const auto& s : k_storages)
    if (s.dtype == t) return s.name;
  return nullptr;
}

}  // namespace wavg::pytorch
