// Bad input end to end: every user mistake raises arrayc::Error naming the op and the shapes or
// dtypes, at build time; afterwards the library keeps working.
#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class BadInput : public DeviceTest {
 protected:
  // A small computation after each error: the library must still work.
  void still_works() {
    Array x = random_array(DType::Float32, {2, 3}, 99);
    EXPECT_MATCHES_REFERENCE(arrayc::sum(x * 2.0f + 1.0f, {1}, false));
  }
};
ARRAYC_DEVICE_SUITE(BadInput);

TEST_P(BadInput, BroadcastShapeMismatch) {
  Array a = zeros({2, 3}), b = zeros({4});
  EXPECT_ARRAYC_ERROR(a + b, "add", "[2, 3]", "[4]", "cannot be broadcast");
  still_works();
  EXPECT_ARRAYC_ERROR(a * zeros({3, 2}), "mul", "[2, 3]", "[3, 2]");
  EXPECT_ARRAYC_ERROR(where(zeros({2}, DType::Bool), a, b), "where", "[2]", "[2, 3]", "[4]");
  EXPECT_ARRAYC_ERROR(broadcast_to(a, {3, 3}), "broadcast_to", "[2, 3]", "[3, 3]");
  EXPECT_ARRAYC_ERROR(arrayc::arange(3) + arrayc::arange(4), "add", "[3]", "[4]");
  still_works();
}

TEST_P(BadInput, DotInnerDimensions) {
  EXPECT_ARRAYC_ERROR(dot(zeros({2, 3}), zeros({4, 5})), "dot", "inner dimensions", "[2, 3]", "[4, 5]");
  still_works();
  EXPECT_ARRAYC_ERROR(dot(zeros({3}), zeros({4})), "dot", "[3]", "[4]");
  EXPECT_ARRAYC_ERROR(matmul(zeros({2, 2, 3}), zeros({2, 4, 3})), "matmul", "inner dimensions", "[2, 2, 3]");
  EXPECT_ARRAYC_ERROR(matmul(zeros({2, 2, 3}), zeros({3, 3, 4})), "matmul", "batch dimensions", "[3, 3, 4]");
  EXPECT_ARRAYC_ERROR(dot(zeros({2, 2, 2}), zeros({2, 2})), "dot", "[2, 2, 2]");
  EXPECT_ARRAYC_ERROR(matmul(zeros({}), zeros({2})), "matmul", "at least one dimension");
  still_works();
}

TEST_P(BadInput, DtypeNotAccepted) {
  Array b = ones({3}, DType::Bool);
  EXPECT_ARRAYC_ERROR(negative(b), "neg", "bool", "not accepted");
  still_works();
  EXPECT_ARRAYC_ERROR(-b, "neg", "bool");
  EXPECT_ARRAYC_ERROR(b - b, "sub", "bool", "not accepted");
  EXPECT_ARRAYC_ERROR(subtract(b, ones({3}, DType::Bool)), "sub", "bool");
  EXPECT_ARRAYC_ERROR(arrayc::pow(b, b), "pow", "bool");
  EXPECT_ARRAYC_ERROR(dot(b, b), "dot", "bool");
  EXPECT_ARRAYC_ERROR(uniform({3}, 1, 0, 1, DType::Int32), "uniform", "int32");
  EXPECT_ARRAYC_ERROR(normal({3}, 1, 0, 1, DType::Bool), "normal", "bool");
  still_works();
}

TEST_P(BadInput, ReductionAxes) {
  Array x = zeros({2, 3});
  EXPECT_ARRAYC_ERROR(sum(x, {2}), "sum", "axis 2", "out of range", "[2, 3]");
  still_works();
  EXPECT_ARRAYC_ERROR(mean(x, {-3}), "mean", "axis -3", "[2, 3]");
  EXPECT_ARRAYC_ERROR(prod(x, {0, 0}), "prod", "axis 0 given twice");
  EXPECT_ARRAYC_ERROR(max(x, {0, 5}, true), "max", "axis 5");
  EXPECT_ARRAYC_ERROR(sum(zeros({}), {0}), "sum", "rank 0");
  still_works();
}

TEST_P(BadInput, MaxOfEmpty) {
  EXPECT_ARRAYC_ERROR(max(zeros({0, 3}), {0}), "max", "zero-size axis 0", "[0, 3]");
  still_works();
  EXPECT_ARRAYC_ERROR(min(zeros({4, 0}, DType::Int32)), "min", "zero-size", "[4, 0]");
  EXPECT_ARRAYC_ERROR(max(zeros({0})), "max", "[0]");
  still_works();
}

TEST_P(BadInput, HostDataOfTheWrongSize) {
  EXPECT_ARRAYC_ERROR(arrayc::array(std::vector<float>{1, 2, 3, 4, 5}, {2, 3}), "array", "5", "[2, 3]");
  still_works();
  EXPECT_ARRAYC_ERROR(arrayc::array(std::vector<int32_t>{}, {1}), "array", "[1]");
  EXPECT_ARRAYC_ERROR(arrayc::array(std::vector<double>{1}, {-1}), "array", "[-1]");
  still_works();
}

TEST_P(BadInput, ReshapeAndTranspose) {
  Array x = zeros({2, 3});
  EXPECT_ARRAYC_ERROR(reshape(x, {4}), "reshape", "[2, 3]", "[4]");
  still_works();
  EXPECT_ARRAYC_ERROR(reshape(x, {4, -1}), "reshape", "[2, 3]", "[4, -1]");
  EXPECT_ARRAYC_ERROR(reshape(x, {-1, -1}), "reshape", "more than one -1");
  EXPECT_ARRAYC_ERROR(transpose(x, {0}), "transpose", "length 1", "rank 2", "[2, 3]");
  still_works();
  EXPECT_ARRAYC_ERROR(transpose(x, {1, 1}), "transpose", "axis 1 repeated");
  EXPECT_ARRAYC_ERROR(transpose(x, {0, 2}), "transpose", "axis 2", "out of range", "[2, 3]");
  EXPECT_ARRAYC_ERROR(expand_dims(x, 3), "expand_dims", "axis 3", "[2, 3]");
  still_works();
}

TEST_P(BadInput, CreationArguments) {
  EXPECT_ARRAYC_ERROR(zeros({2, -1}), "[2, -1]");
  EXPECT_ARRAYC_ERROR(arange(0.0, 1.0, 0.0), "arange", "step");
  EXPECT_ARRAYC_ERROR(arrayc::array(std::vector<float>{1, 2}).item<float>(), "item", "[2]");
  still_works();
}

// Element counts and byte sizes past int64 (and size_t): every way of making such an array, with
// the extents in every position, raises at build time naming the op and the shape; a zero extent
// beside huge ones is an empty array.
TEST_P(BadInput, SizesPastInt64) {
  const int64_t big = int64_t{1} << 32, huge = int64_t{1} << 62;
  const std::vector<Shape> too_many = {{big, big}, {huge, 4}, {4, huge}, {3, huge, huge}, {2, 2, huge, 2},
                                       {INT64_MAX, 2}, {INT64_MAX, INT64_MAX}};
  for (const Shape& s : too_many) {
    SCOPED_TRACE(shape_str(s));
    const std::string shape = "shape " + shape_str(s) + " has more than 2^63 - 1 elements";
    for (DType t : kAllDTypes) {
      EXPECT_ARRAYC_ERROR(zeros(s, t), "full: " + shape);
      EXPECT_ARRAYC_ERROR(full(s, 2.0, t), "full: " + shape);
    }
    EXPECT_ARRAYC_ERROR(normal(s, 1), "normal: " + shape);
    EXPECT_ARRAYC_ERROR(broadcast_to(zeros({1}), s), "broadcast_to: " + shape);
    EXPECT_ARRAYC_ERROR(reshape(zeros({0}), s), "reshape: " + shape);
    Shape empty = s;
    empty.push_back(0);
    EXPECT_EQ(zeros(empty).size(), 0);
    EXPECT_EQ(shape_numel(empty), 0);
    EXPECT_ARRAYC_ERROR(shape_numel(s), shape);
  }
  // Two broadcasts whose result is too large.
  EXPECT_ARRAYC_ERROR(zeros({big, 1}) + zeros({1, big}), "add: shape [4294967296, 4294967296] has more than 2^63 - 1 elements");
  // Counts that fit, bytes that do not: by dtype size.
  for (DType t : {DType::Int32, DType::Float32, DType::Int64, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    int64_t n = (int64_t{1} << 62) / static_cast<int64_t>(dtype_size(t)) * 2;  // 2^63 bytes
    EXPECT_ARRAYC_ERROR(zeros({n}, t), "full: a " + std::string(dtype_name(t)) + " array of shape [" + std::to_string(n) + "]",
                        "would take more than 2^63 - 1 bytes");
    EXPECT_ARRAYC_ERROR(ones({2, n / 2}, t), "full: a", "would take more than 2^63 - 1 bytes");
    EXPECT_NO_THROW(zeros({n / 2}, t));  // 2^62 bytes: can be built (not evaluated here)
  }
  // A cast widens: bool [2^62] takes 2^62 bytes, float32 of it 2^64.
  EXPECT_ARRAYC_ERROR(cast(zeros({huge}, DType::Bool), DType::Float32), "cast: a float32 array of shape [4611686018427387904]");
  EXPECT_ARRAYC_ERROR(zeros({huge}, DType::Bool) + 1.5f, "would take more than 2^63 - 1 bytes");
  // Sizes that fit but that no machine has (2^49 bytes): an error when allocated.
  EXPECT_ARRAYC_ERROR((full({int64_t{1} << 47}, 1.0) + 1.0f).eval(), "out of memory allocating 562949953421312 bytes");
  still_works();
}

// Enum values outside DType and Device::Kind (casts from integers) reached the emitter and
// crashed in LLVM: every entry point that takes one raises, naming the op and the value.
TEST_P(BadInput, EnumValuesOutsideTheEnums) {
  Array x = random_array(DType::Float32, {2, 3}, 5);
  for (int v : {13, 17, 200, 255}) {  // 0-12 are dtypes (dtype.h)
    SCOPED_TRACE(v);
    DType t = static_cast<DType>(v);
    std::string bad = "dtype " + std::to_string(v) +
                      " is not one of bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, "
                      "bfloat16, float32, float64";
    EXPECT_ARRAYC_ERROR(zeros({2}, t), "full: " + bad);
    EXPECT_ARRAYC_ERROR(ones({2}, t), "full: " + bad);
    EXPECT_ARRAYC_ERROR(full({2, 2}, 3.0, t), "full: " + bad);
    EXPECT_ARRAYC_ERROR(arange(5, t), "arange: " + bad);
    EXPECT_ARRAYC_ERROR(arange(0.0, 5.0, 0.5, t), "arange: " + bad);
    EXPECT_ARRAYC_ERROR(normal({2}, 1, 0.0, 1.0, t), "normal: " + bad);
    EXPECT_ARRAYC_ERROR(uniform({2}, 1, 0.0, 1.0, t), "uniform: " + bad);
    EXPECT_ARRAYC_ERROR(cast(x, t), "cast: " + bad);
  }
  for (int v : {2, 7, 255}) {
    SCOPED_TRACE(v);
    Device d{static_cast<Device::Kind>(v), 0};
    std::string bad = "device kind " + std::to_string(v) + " is not CPU or GPU";
    EXPECT_ARRAYC_ERROR(zeros({2}, DType::Float32, d), "full: " + bad);
    EXPECT_ARRAYC_ERROR(arange(5, DType::Int64, d), "arange: " + bad);
    EXPECT_ARRAYC_ERROR(normal({2}, 1, 0.0, 1.0, DType::Float32, d), "normal: " + bad);
    EXPECT_ARRAYC_ERROR(array(std::vector<float>{1, 2}, {2}, d), "array: " + bad);
    EXPECT_ARRAYC_ERROR(x.to(d), "to: " + bad);
    EXPECT_ARRAYC_ERROR(set_default_device(d), "set_default_device: " + bad);
    EXPECT_ARRAYC_ERROR(synchronize(d), "synchronize: " + bad);
  }
  EXPECT_ARRAYC_ERROR(zeros({2}, DType::Float32, Device{Device::Kind::CPU, -1}), "full: device index -1 is negative");
  still_works();
}

TEST_P(BadInput, DevicesDoNotMix) {
  if (gpu_count() == 0) {
    EXPECT_ARRAYC_ERROR(gpu(0), "gpu");
    still_works();
    return;
  }
  Array c = zeros({3}, DType::Float32, cpu());
  Array g = zeros({3}, DType::Float32, gpu(0));
  EXPECT_ARRAYC_ERROR(c + g, "add", "different devices", "cpu", "gpu:0");
  still_works();
}

}  // namespace
