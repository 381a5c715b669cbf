// The names a pickle may mention beyond the unpickler's functions (see pickle_globals.hpp for why these).

#include "pytorch/pickle_globals.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace wavg::pytorch {

namespace {

// str(dtype) for every dtype torch.load(weights_only=True) accepts (torch/storage.py's dtype maps, torch 2.x's
// new dtypes, the sub-byte integers) and the quantization schemes it accepts.
constexpr std::array<std::string_view, 51> k_inert{"float16",
                                                   "float32",
                                                   "float64",
                                                   "bfloat16",
                                                   "complex32",
                                                   "complex64",
                                                   "complex128",
                                                   "bcomplex32",
                                                   "int8",
                                                   "int16",
                                                   "int32",
                                                   "int64",
                                                   "uint8",
                                                   "uint16",
                                                   "uint32",
                                                   "uint64",
                                                   "bool",
                                                   "quint8",
                                                   "qint8",
                                                   "qint32",
                                                   "quint4x2",
                                                   "quint2x4",
                                                   "float8_e4m3fn",
                                                   "float8_e5m2",
                                                   "float8_e4m3fnuz",
                                                   "float8_e5m2fnuz",
                                                   "float8_e8m0fnu",
                                                   "float4_e2m1fn_x2",
                                                   "bits1x8",
                                                   "bits2x4",
                                                   "bits4x2",
                                                   "bits8",
                                                   "bits16",
                                                   "int1",
                                                   "int2",
                                                   "int3",
                                                   "int4",
                                                   "int5",
                                                   "int6",
                                                   "int7",
                                                   "uint1",
                                                   "uint2",
                                                   "uint3",
                                                   "uint4",
                                                   "uint5",
                                                   "uint6",
                                                   "uint7",
                                                   "per_tensor_affine",
                                                   "per_tensor_symmetric",
                                                   "per_channel_affine",
                                                   "per_channel_symmetric"};

// Python 3.12's sys.stdlib_module_names without the private ones (every _module is refused), and the Python 2
// names pickles still spell (__builtin__, copy_reg, exceptions, commands).
constexpr std::string_view k_stdlib =
    " abc aifc antigravity argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii bisect"
    " builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections colorsys compileall"
    " concurrent configparser contextlib contextvars copy copyreg crypt csv ctypes curses dataclasses datetime dbm"
    " decimal difflib dis distutils doctest email encodings ensurepip enum errno faulthandler fcntl filecmp"
    " fileinput fnmatch fractions ftplib functools gc genericpath getopt getpass gettext glob graphlib grp gzip"
    " hashlib heapq hmac html http idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword"
    " lib2to3 linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib msvcrt"
    " multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse os ossaudiodev"
    " pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats"
    " pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource"
    " rlcompleter runpy sched secrets select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket"
    " socketserver spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep struct"
    " subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios textwrap this"
    " threading time timeit tkinter token tokenize tomllib trace traceback tracemalloc tty turtle turtledemo types"
    " typing unicodedata unittest urllib uu uuid venv warnings wave weakref webbrowser winreg winsound wsgiref"
    " xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo __builtin__ copy_reg exceptions commands popen2 ";

// Third-party packages whose names load or run code; torch itself is a model class only under torch.nn.
constexpr std::string_view k_runs_code = " numpy dill cloudpickle joblib pip setuptools pkg_resources IPython torch ";

bool listed(std::string_view list, std::string_view word) {
  std::string key = " ";
  key.append(word).push_back(' ');
  return list.find(key) != std::string_view::npos;
}

// Tells whether `dotted` is one or more Python identifiers (ASCII) joined by dots.
bool identifiers(std::string_view dotted) {
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
    const std::string_view part = dotted.substr(start, dot - start);
    if (part.empty() || std::isdigit(static_cast<unsigned char>(part[0]))) return false;
    for (const char c : part)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    if (dot == dotted.size()) return true;
    start = dot + 1;
  }
}

}  // namespace

bool inert_global(const std::string& full) {
  if (full.rfind("torch.", 0) != 0) return false;
  return std::find(k_inert.begin(), k_inert.end(), std::string_view(full).substr(6)) != k_inert.end();
}

bool torch_dtype(const std::string& full) { return inert_global(full) && full.rfind("torch.per_", 0) != 0; }

bool model_class(const std::string& module, const std::string& name) {
  if (!identifiers(module) || !identifiers(name)) return false;
  // __main__.os.system (protocol 4 spells attribute paths in the name) reaches a module through the script.
  const std::string_view first = std::string_view(name).substr(0, name.find('.'));
  if (name.find('.') != std::string::npos && (listed(k_stdlib, first) || listed(k_runs_code, first))) return false;
  if (module == "__main__" || module == "torch.nn" || module.rfind("torch.nn.", 0) == 0) return true;
  if (module == "argparse") return name == "Namespace";
  const std::string_view top = std::string_view(module).substr(0, module.find('.'));
  return top[0] != '_' && !listed(k_stdlib, top) && !listed(k_runs_code, top);
}

}  // namespace wavg::pytorch
