// The restricted unpickler (formats/pytorch/pickle.hpp): pickles written byte by byte here, opcode by opcode as
// Python's pickle module writes them (protocol 2), and the values they must give or the errors they must raise.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pytorch/pickle.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using namespace wavg::pytorch;
using namespace std::string_literals;  // "..."s keeps the embedded zero bytes

namespace {

Pickle parse(const std::string& bytes) {
  return unpickle("x.pt", reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

// The one-line message unpickle() throws, or "" when it parses.
std::string error_of(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const Error& e) {
    REQUIRE(e.problems().size() == 1);
    return e.problems()[0].what;
  }
  return "";
}

// ('storage', torch.FloatStorage, '0', 'cpu', numel) followed by BINPERSID.
std::string float_storage(char numel) {
  return "(X\x07\0\0\0storage"s + "ctorch\nFloatStorage\n" +
         "X\x01\0\0\0"
         "0"s +
         "X\x03\0\0\0cpu"s + "K" + std::string(1, numel) + "tQ";
}

// _rebuild_tensor_v2(storage, 0, (size,), (1,), False, OrderedDict()).
std::string tensor_of(char numel, char size) {
  return "ctorch._utils\n_rebuild_tensor_v2\n" + std::string("(") + float_storage(numel) + "K" + std::string(1, '\0') +
         "K" + std::string(1, size) + "\x85K\x01\x85\x89" + "ccollections\nOrderedDict\n)R" + "tR";
}

// _rebuild_tensor_v3(('storage', torch.storage.UntypedStorage, '0', 'cpu', nbytes), 0, (size,), (1,), False,
// OrderedDict(), `dtype` + `more`) as torch 2 writes a uint16 tensor; `dtype` is the pickle of the dtype argument
// ("ctorch\nuint16\n"), `more` what follows it (metadata, or extra arguments).
std::string tensor_v3(char nbytes, char size, const std::string& dtype, const std::string& more = "") {
  return "ctorch._utils\n_rebuild_tensor_v3\n((X\x07\0\0\0storage"s + "ctorch.storage\nUntypedStorage\n" +
         "X\x01\0\0\0"
         "0"s +
         "X\x03\0\0\0cpu"s + "K" + std::string(1, nbytes) + "tQ" + "K" + std::string(1, '\0') + "K" +
         std::string(1, size) + "\x85K\x01\x85\x89" + "ccollections\nOrderedDict\n)R" + dtype + more + "tR";
}

}  // namespace

TEST_CASE("unpickler reads a dict of plain values with memo references") {
  // {'a': 7, 'b': [1.5, 'x'], 'c': <memo 1, the list again>, 'd': -1 (LONG1), 'e': None, 'f': True}
  const std::string p =
      "\x80\x02}q\x00(X\x01\0\0\0aK\x07X\x01\0\0\0b]q\x01(G\x3f\xf8\0\0\0\0\0\0"
      "X\x01\0\0\0xeX\x01\0\0\0ch\x01X\x01\0\0\0d\x8a\x01\xffX\x01\0\0\0eNX\x01\0\0\0f\x88u."s;
  const Pickle r = parse(p);
  REQUIRE(r.root->kind == Kind::dict);
  const auto& items = r.root->items;
  REQUIRE(items.size() == 12);
  CHECK(items[1]->integer == 7);
  REQUIRE(items[3]->kind == Kind::list);
  CHECK(items[3]->items[0]->floating == 1.5);
  CHECK(items[3]->items[1]->text == "x");
  CHECK(items[5] == items[3]);  // the memo gives the same object
  CHECK(items[7]->integer == -1);
  CHECK(items[9]->kind == Kind::none);
  CHECK(items[11]->boolean);
  CHECK(r.consumed == p.size());
}

TEST_CASE("unpickler builds a tensor view from _rebuild_tensor_v2 and a storage persistent id") {
  const Pickle r = parse("\x80\x02" + tensor_of(6, 4) + ".");
  REQUIRE(r.root->kind == Kind::tensor);
  const TensorRef& t = *r.root->tensor;
  CHECK(t.shape == Shape{4});
  CHECK(t.stride == std::vector<std::uint64_t>{1});
  CHECK(t.storage->storage->key == "0");
  CHECK(t.storage->storage->numel == 6);
  CHECK(t.storage->storage->dtype == DType::f32);
}

TEST_CASE("unpickler refuses a view that reaches past its storage") {
  CHECK(error_of("\x80\x02" + tensor_of(4, 5) + ".").find("reaches element 4 of storage 0, which has 4 float32") !=
        std::string::npos);
}

TEST_CASE("unpickler refuses every global outside the allow-list, naming it") {
  CHECK(error_of("\x80\x02"
                 "cposix\nsystem\n"
                 "X\x02\0\0\0id\x85R."s) ==
        "the pickle names the global posix.system, which wavg refuses (it never runs pickled code)");
  CHECK(error_of("\x80\x02"
                 "c__builtin__\neval\n.") ==
        "the pickle names the global __builtin__.eval, which wavg refuses (it never runs pickled code)");
  // STACK_GLOBAL (protocol 4) goes through the same check.
  CHECK(error_of("\x80\x04\x8c\x02os\x8c\x06system\x93."s).find("the global os.system,") != std::string::npos);
  // An allowed name that is not a function cannot be called.
  CHECK(error_of("\x80\x02"
                 "ctorch\nFloatStorage\n)R.")
            .find("only a name here") != std::string::npos);
}

TEST_CASE("unpickler makes a whole model's object from a class name without calling it, its state kept as data") {
  // NEWOBJ(__main__.Net, ()) then BUILD({'w': tensor, 'training': True}), as torch.save(model) writes a module.
  const Pickle r = parse(
      "\x80\x02"
      "c__main__\nNet\n)\x81}(X\x01\0\0\0w"s +
      tensor_of(2, 2) + "X\x08\0\0\0training\x88ub."s);
  REQUIRE(r.root->kind == Kind::object);
  CHECK(r.root->text == "__main__.Net");
  REQUIRE(r.root->state != nullptr);
  REQUIRE(r.root->state->items.size() == 4);
  CHECK(r.root->state->items[1]->kind == Kind::tensor);
  CHECK(r.root->state->items[3]->boolean);
  // set([]) (a module's _non_persistent_buffers_set) is a list.
  CHECK(parse("\x80\x02"
              "c__builtin__\nset\n]\x85R."s)
            .root->kind == Kind::list);
}

TEST_CASE("unpickler refuses a class name that is called, or named without being instantiated") {
  // NEWOBJ with arguments would run the class's __new__ on them; REDUCE would call it.
  CHECK(error_of("\x80\x02"
                 "c__main__\nNet\nK\x01\x85\x81."s) ==
        "is a whole-model pickle (torch.save(model)) that calls __main__.Net to rebuild an object; wavg never runs "
        "pickled code, save model.state_dict() instead");
  CHECK(error_of("\x80\x02"
                 "cposix\nsystem\n)\x81"
                 "cposix\nsystem\nX\x02\0\0\0id\x85R."s) ==
        "the pickle names the global posix.system, which wavg refuses (it never runs pickled code)");
  // A name only mentioned (a value, never an object's class) is refused at STOP.
  CHECK(error_of("\x80\x02"
                 "c__main__\nNet\n)\x81"
                 "c__main__\nhelper\n\x86."s) ==
        "the pickle names the global __main__.helper, which wavg refuses (it never runs pickled code)");
}

TEST_CASE("unpickler keeps a list that contains itself without looping or leaking") {
  const Pickle r = parse(
      "\x80\x02]q\x00h\x00"
      "a."s);
  REQUIRE(r.root->kind == Kind::list);
  CHECK(r.root->items.at(0) == r.root);
}

TEST_CASE("unpickler's memo: MEMOIZE numbers by the entries stored, far and re-stored indices read back") {
  // Python's pure unpickler (pickle._loads) reads this as (2, 4, 5, 7, 6, 8, 9): MEMOIZE stores at len(memo), a
  // BINPUT over an index does not grow it; indices 1100 and 0xf0000000 lie far beyond the entries stored then.
  const Pickle r = parse(
      "\x80\x04K\x01\x94"
      "0K\x02q\x00"
      "0K\x03rL\x04\0\0"
      "0K\x04r\xe8\x03\0\0"
      "0K\x05r\xe9\x03\0\0"
      "0K\x06\x94"
      "0K\x07rL\x04\0\0"
      "0K\x08\x94"
      "0K\tr\0\0\0\xf0"
      "0(h\x00j\xe8\x03\0\0j\xe9\x03\0\0jL\x04\0\0h\x04h\x05j\0\0\0\xf0t."s);
  REQUIRE(r.root->kind == Kind::tuple);
  std::vector<std::int64_t> got;
  for (const Value* v : r.root->items) got.push_back(v->integer);
  CHECK(got == std::vector<std::int64_t>{2, 4, 5, 7, 6, 8, 9});
}

TEST_CASE("unpickler refuses lengths past the end, missing memo entries, unknown opcodes and a missing STOP") {
  CHECK(error_of("\x80\x02X\xff\xff\xff\x7f"
                 "abc."s)
            .find("truncated") != std::string::npos);
  CHECK(error_of("\x80\x02\x8b\xff\xff\xff\xff."s).find("truncated") != std::string::npos);
  CHECK(error_of("\x80\x02h\x05.").find("memo entry 5, which was never stored") != std::string::npos);
  CHECK(error_of("\x80\x02\xff.").find("opcode 0xff") != std::string::npos);
  CHECK(error_of("\x80\x02K\x01").find("ends without STOP") != std::string::npos);
  CHECK(error_of("\x80\x02"
                 "a.")
            .find("empty stack") != std::string::npos);
  CHECK(error_of("\x80\x02K\x01K\x02.").find("leaves 2 values") != std::string::npos);
}

// Each refused here is refused by Python's unpickler too (as checked with Python 3.11: the C module's pickle.loads
// and pickle.py's _Unpickler, whose messages follow each case), so wavg reads no pickle that torch.load refuses.
TEST_CASE("unpickler is as strict as Python's: nothing below a MARK is reached, FRAMEs hold their opcodes") {
  const auto frame = [](std::uint64_t n) {
    std::string s = "\x95"s;
    for (int i = 0; i < 8; ++i) s += static_cast<char>((n >> (8 * i)) & 0xff);
    return s;
  };
  // 1, MARK, MEMOIZE (DUP, BINPUT, APPEND to a list below the MARK), TUPLE, TUPLE2: "unexpected MARK found" (C),
  // IndexError (pickle.py); the memo, DUP or APPEND would have taken the value below the MARK.
  CHECK(error_of("\x80\x04K\x01(\x94t\x86."s).find("reads an empty stack") != std::string::npos);
  CHECK(error_of("\x80\x02K\x01(2t\x86."s).find("reads an empty stack") != std::string::npos);
  CHECK(error_of("\x80\x02K\x01(q\x00t\x86."s).find("reads an empty stack") != std::string::npos);
  CHECK(error_of("\x80\x02](K\x01" "at\x86."s).find("reads an empty stack") != std::string::npos);
  // A FRAME longer than the bytes left: "pickle data was truncated" (C).
  CHECK(error_of("\x80\x04"s + frame(100) + "K\x01.").find("FRAME of 100 bytes runs past the end") !=
        std::string::npos);
  // BININT2's argument half inside its FRAME: "pickle exhausted before end of frame" (pickle.py).
  CHECK(error_of("\x80\x04"s + frame(2) + "M\x01\x00."s).find("runs past its FRAME") != std::string::npos);
  // A FRAME inside a FRAME: "beginning of a new frame before end of current frame" (pickle.py).
  CHECK(error_of("\x80\x04"s + frame(11) + frame(2) + "K\x01.").find("FRAME begins before") != std::string::npos);
  // PUT -1: "negative PUT argument" (both).
  CHECK(error_of("\x80\x02K\x01p-1\n."s).find("memo index is not a number") != std::string::npos);
  // What Python reads, read alike: a FRAME holding whole opcodes, and reads after a FRAME has ended.
  CHECK(parse("\x80\x04"s + frame(3) + "K\x01.").root->integer == 1);
  CHECK(parse("\x80\x04"s + frame(2) + "K\x01\x85.").root->items.size() == 1);
}

TEST_CASE("unpickler reads the values torch.load(weights_only=True) accepts: dtypes, bytes, complex, Counter") {
  // {'dtype': torch.float16} as torch.save writes it: the dtype is a GLOBAL left on the stack, never called.
  const Pickle d = parse("\x80\x02}X\x05\0\0\0dtypectorch\nfloat16\ns."s);
  REQUIRE(d.root->items.size() == 2);
  CHECK(d.root->items[1]->kind == Kind::global);
  CHECK(d.root->items[1]->text == "torch.float16");
  // b'ab\xff': protocol 2 writes _codecs.encode('ab\u00ff', 'latin1'), the text in UTF-8.
  const Pickle b = parse(
      "\x80\x02"
      "c_codecs\nencode\nX\x04\0\0\0ab\xc3\xbfX\x06\0\0\0latin1\x86R."s);
  REQUIRE(b.root->kind == Kind::bytes);
  CHECK(b.root->text == "ab\xff");
  // complex(1.0, 2.0) and Counter({'x': 1}).
  const std::string complex = "c__builtin__\ncomplex\nG\x3f\xf0\0\0\0\0\0\0G\x40\0\0\0\0\0\0\0\x86R"s;
  CHECK(parse("\x80\x02" + complex + ".").root->items.size() == 2);
  CHECK(parse("\x80\x02"
              "ccollections\nCounter\n}X\x01\0\0\0xK\x01s\x85R."s)
            .root->kind == Kind::dict);
  // A code point above U+00FF is no latin1 byte, and a sparse tensor is named for what it is.
  CHECK(error_of("\x80\x02"
                 "c_codecs\nencode\nX\x03\0\0\0\xe2\x82\xacX\x06\0\0\0latin1\x86R."s)
            .find("latin1") != std::string::npos);
  CHECK(error_of("\x80\x02"
                 "ctorch._utils\n_rebuild_sparse_tensor\n)R."s) ==
        "holds a sparse tensor (torch._utils._rebuild_sparse_tensor), which wavg does not read");
}

TEST_CASE("unpickler instantiates only classes a model can hold: torch.nn, __main__ and a user package's") {
  CHECK(parse("\x80\x02"
              "cnet\nNet\n)\x81."s)
            .root->text == "net.Net");
  CHECK(parse("\x80\x02"
              "ctorch.nn.modules.linear\nLinear\n)\x81."s)
            .root->kind == Kind::object);
  CHECK(parse("\x80\x02"
              "cargparse\nNamespace\n)\x81."s)
            .root->kind == Kind::object);
  // NEWOBJ with no arguments of the standard library's classes, torch's own internals, or a module reached
  // through the script's: refused where the pickle names them.
  for (const char* name : {"subprocess\nPopen", "os\n_Environ", "builtins\nobject", "sys\nflags", "_io\nFileIO",
                           "torch._C\nGenerator", "numpy\nndarray", "__main__\nos.system", "net\nNet;rm"}) {
    const std::string global(name);
    const std::string full = global.substr(0, global.find('\n')) + "." + global.substr(global.find('\n') + 1);
    CHECK(error_of("\x80\x02"
                   "c" +
                   global + "\n)\x81."s) ==
          "the pickle names the global " + full + ", which wavg refuses (it never runs pickled code)");
  }
}

TEST_CASE("values nothing reaches any more are freed: memory follows the structure, not the opcodes") {
  // 1,000,000 times "push None, pop" and memo entry 0 replaced, then {'a': [7, <memo 0>]}: 2 MB of opcodes whose
  // values (about 250 bytes each) would otherwise all be kept, 250 MB; the result holds a handful.
  std::string p = "\x80\x02"s;
  for (int i = 0; i < 1'000'000; ++i) p += "N0";
  for (int i = 0; i < 200'000; ++i)
    p += "K\x05q\x00"
         "0"s;
  p += "}X\x01\0\0\0a](K\x07h\x00"
       "e"s +
       "s."s;
  const Pickle r = parse(p);
  CHECK(r.arena.size() < 150'000);
  REQUIRE(r.root->kind == Kind::dict);
  REQUIRE(r.root->items.size() == 2);
  const Value& list = *r.root->items[1];
  REQUIRE(list.items.size() == 2);
  CHECK(list.items[0]->integer == 7);
  CHECK(list.items[1]->integer == 5);  // the memo's last value survived every collection
}

TEST_CASE("unpickler reads _rebuild_tensor_v3 as its untyped storage viewed as the dtype it names") {
  // 8 bytes viewed as 4 uint16 (torch.save of torch.zeros(4, dtype=torch.uint16)); a 9-byte storage holds 2 uint32,
  // as torch.load's TypedStorage drops the last partial element.
  const Pickle r = parse("\x80\x02" + tensor_v3(8, 4, "ctorch\nuint16\n") + ".");
  REQUIRE(r.root->kind == Kind::tensor);
  const TensorRef& t = *r.root->tensor;
  CHECK(t.shape == Shape{4});
  CHECK(t.storage->storage->dtype == DType::u16);
  CHECK(t.storage->storage->numel == 4);
  CHECK(t.storage->storage->key == "0");
  CHECK(t.storage->storage->untyped);
  const Pickle u = parse("\x80\x02" + tensor_v3(9, 2, "ctorch\nuint32\n") + ".");
  CHECK(u.root->tensor->storage->storage->dtype == DType::u32);
  CHECK(u.root->tensor->storage->storage->numel == 2);
  // Metadata None, or {} (torch.save of a plain tensor), reads; wrapped by _rebuild_from_type_v2 as well.
  CHECK(parse("\x80\x02" + tensor_v3(8, 1, "ctorch\nuint64\n", "N") + ".").root->kind == Kind::tensor);
  CHECK(parse("\x80\x02" + tensor_v3(8, 1, "ctorch\nuint64\n", "}") + ".").root->kind == Kind::tensor);
}

TEST_CASE("unpickler refuses a hostile _rebuild_tensor_v3 in one line: dtype, arguments, storage") {
  // A dtype wavg has no type for is named; a dtype argument that is no torch dtype is a corrupt pickle.
  CHECK(error_of("\x80\x02" + tensor_v3(4, 4, "ctorch\nfloat8_e4m3fn\n") + ".") ==
        "holds a tensor of dtype torch.float8_e4m3fn (torch._utils._rebuild_tensor_v3), which wavg has no type for");
  CHECK(error_of("\x80\x02" + tensor_v3(8, 4, "X\x06\0\0\0uint16"s) + ".")
            .find("_rebuild_tensor_v3's dtype is a str 'uint16', not a torch dtype") != std::string::npos);
  CHECK(error_of("\x80\x02" + tensor_v3(8, 4, "ctorch\nper_tensor_affine\n") + ".")
            .find("dtype is a name torch.per_tensor_affine, not a torch dtype") != std::string::npos);
  CHECK(error_of("\x80\x02" + tensor_v3(8, 4, "ctorch\nuint16Storage\n") + ".")
            .find("the global torch.uint16Storage, which wavg refuses") != std::string::npos);
  // 6 arguments (no dtype) and 9.
  CHECK(error_of("\x80\x02" + tensor_v3(8, 4, "") + ".")
            .find("torch._utils._rebuild_tensor_v3 has 6 arguments, not 7 or 8") != std::string::npos);
  CHECK(error_of("\x80\x02" + tensor_v3(8, 4, "ctorch\nuint16\n", "NN") + ".")
            .find("_rebuild_tensor_v3 has 9 arguments, not 7 or 8") != std::string::npos);
  // A storage shorter than the view: 7 bytes hold 3 uint16, the view needs 4; an offset of 1 past 6 bytes.
  CHECK(error_of("\x80\x02" + tensor_v3(7, 4, "ctorch\nuint16\n") + ".")
            .find("reaches element 3 of storage 0, which has 3 uint16 elements") != std::string::npos);
  CHECK(error_of("\x80\x02" + tensor_v3(7, 1, "ctorch\nuint64\n") + ".")
            .find("reaches element 0 of storage 0, which has 0 uint64 elements") != std::string::npos);
  // torch.save's complex64 storage class is read as the numbers' parts (tensor.hpp): 2 numbers are 4 float32
  // parts, the view (2,) over them (2, 2) with strides doubled; a view past its numbers is refused in parts.
  std::string complex = tensor_of(2, 2);
  complex.replace(complex.find("FloatStorage"), 12, "ComplexFloatStorage");
  const Pickle c = parse("\x80\x02" + complex + ".");
  const TensorRef& parts = *c.root->tensor;
  CHECK(parts.storage->storage->complex);
  CHECK(parts.storage->storage->dtype == DType::f32);
  CHECK(parts.storage->storage->numel == 4);
  CHECK(parts.shape == Shape{2, 2});
  CHECK(parts.stride == std::vector<std::uint64_t>{2, 1});
  std::string past = tensor_of(2, 3);
  past.replace(past.find("FloatStorage"), 12, "ComplexFloatStorage");
  CHECK(error_of("\x80\x02" + past + ".").find("reaches element 5 of storage 0, which has 4 float32") !=
        std::string::npos);
  // v3 of a typed storage, v2 of an untyped one: torch writes neither.
  std::string typed = tensor_of(4, 4);
  typed.replace(typed.find("_v2"), 3, "_v3");
  typed.insert(typed.size() - 2, "ctorch\nfloat32\n");
  CHECK(error_of("\x80\x02" + typed + ".").find("_rebuild_tensor_v3 of a typed storage") != std::string::npos);
  std::string untyped = tensor_v3(8, 4, "");
  untyped.replace(untyped.find("_v3"), 3, "_v2");
  CHECK(error_of("\x80\x02" + untyped + ".").find("_rebuild_tensor_v2 of an UntypedStorage") != std::string::npos);
}

TEST_CASE("unpickler refuses a tensor whose metadata makes torch.load negate or conjugate it") {
  // torch.save(torch.arange(3.)._neg_view()) stores 0, 1, 2 with metadata {'neg': True}: torch.load gives -0, -1, -2.
  std::string neg = tensor_of(3, 3);
  neg.insert(neg.size() - 2, "}X\x03\0\0\0neg\x88s"s);
  CHECK(error_of("\x80\x02" + neg + ".") ==
        "holds a tensor whose metadata sets 'neg' to bool True (a lazily negated or conjugated view), which wavg does "
        "not read");
  CHECK(error_of("\x80\x02" + tensor_v3(8, 4, "ctorch\nuint16\n", "}X\x04\0\0\0conj\x88s"s) + ".")
            .find("sets 'conj' to bool True") != std::string::npos);
  // A flag set False changes nothing; metadata that is no dict is a corrupt pickle.
  CHECK(parse("\x80\x02" + tensor_v3(8, 4, "ctorch\nuint16\n", "}X\x03\0\0\0neg\x89s"s) + ".").root->kind ==
        Kind::tensor);
  CHECK(error_of("\x80\x02" + tensor_v3(8, 4, "ctorch\nuint16\n", "K\x01") + ".")
            .find("a tensor's metadata is a int 1, not a dict") != std::string::npos);
  // The legacy _rebuild_tensor takes exactly 4 arguments, _rebuild_tensor_v2 6 or 7.
  std::string five = tensor_of(3, 3);
  five.insert(five.size() - 2, "NN");
  CHECK(error_of("\x80\x02" + five + ".").find("_rebuild_tensor_v2 has 8 arguments, not 6 or 7") != std::string::npos);
}
