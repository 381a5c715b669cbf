// NumPy .npy headers and .npz archives: headers numpy 1.24 wrote (np.save, bytes copied here), the writer's header
// compared with them byte for byte, and refusals of headers a strict reader must not accept.
#include <doctest/doctest.h>

#include "npz/npz.hpp"
#include "wavg/error.hpp"

using namespace wavg;

namespace {

// np.save's header for a float32 array of shape (3, 4): 128 bytes, the data 64-aligned.
const std::string k_f32_3x4 = std::string("\x93NUMPY\x01\x00v\x00", 10) +
                              "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" + std::string(58, ' ') +
                              "\n";
// np.save's header for np.zeros((), np.float64) and np.zeros(5, bool).
const std::string k_f64_scalar = std::string("\x93NUMPY\x01\x00v\x00", 10) +
                                 "{'descr': '<f8', 'fortran_order': False, 'shape': (), }" + std::string(62, ' ') +
                                 "\n";
const std::string k_bool_5 = std::string("\x93NUMPY\x01\x00v\x00", 10) +
                             "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }" + std::string(60, ' ') + "\n";

NpyHeader parse(const std::string& h) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(h.data());
  return parse_npy_header("x.npz", "w.npy", bytes, npy_header_length("x.npz", "w.npy", bytes, h.size()));
}

std::string parse_error(const std::string& dict) {
  std::string text = dict + "\n";
  std::string h = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(text.size() & 0xff) +
                  static_cast<char>(text.size() >> 8) + text;
  try {
    parse(h);
  } catch (const Error& e) {
    return e.problems()[0].what;
  }
  return "";
}

}  // namespace

TEST_CASE("npy header: numpy's headers parse to their dtype, shape and data offset") {
  const NpyHeader a = parse(k_f32_3x4);
  CHECK(a.info.dtype == DType::f32);
  CHECK(a.info.shape == Shape{3, 4});
  CHECK(a.data_begin == 128);
  CHECK(parse(k_f64_scalar).info.shape.empty());
  CHECK(parse(k_f64_scalar).info.dtype == DType::f64);
  CHECK(parse(k_bool_5).info.dtype == DType::boolean);
  CHECK(parse(k_bool_5).info.shape == Shape{5});
}

TEST_CASE("npy header: the writer's header is numpy's, byte for byte") {
  CHECK(npy_header({"w", DType::f32, {3, 4}}) == k_f32_3x4);
  CHECK(npy_header({"w", DType::f64, {}}) == k_f64_scalar);
  CHECK(npy_header({"w", DType::boolean, {5}}) == k_bool_5);
}

TEST_CASE("npy header: a strict parse refuses what numpy would not write") {
  const std::string shape = "'shape': (2,), }";
  CHECK(parse_error("{'descr': '<f4', 'fortran_order': False, " + shape).empty());
  CHECK(parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }") ==
        "w.npy: bad .npy header: expected ',' after the one dimension of a tuple at character 52 of "
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }");
  CHECK(parse_error("{'descr': '>f4', 'fortran_order': False, " + shape).find("big-endian") != std::string::npos);
  CHECK(parse_error("{'descr': '|O', 'fortran_order': False, " + shape).find("object arrays") != std::string::npos);
  CHECK(parse_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }").find("Fortran") != std::string::npos);
  CHECK(parse_error("{'descr': '<f4', 'fortran_order': True, " + shape).empty());  // 1-d: the same bytes
  CHECK(parse_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, " + shape).find("twice") !=
        std::string::npos);
  CHECK(parse_error("{'descr': '<f4', 'fortran_order': 0, " + shape).find("True or False") != std::string::npos);
  CHECK(parse_error("{'descr': '<f4', 'shape': (2,), }").find("lacks fortran_order") != std::string::npos);
  CHECK(parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x").find("end of the header") !=
        std::string::npos);
  CHECK(parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }").find("overflows") !=
        std::string::npos);
}
