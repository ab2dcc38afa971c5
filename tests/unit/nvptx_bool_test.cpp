// Signed conversions of a bool to a float on NVPTX (issue 26): LLVM 19's backend lowers
// `sitofp i1 %b` as `selp 1, 0` then a signed convert (+1.0 for true, where -1.0 is right) when
// %b is not a comparison it can see. The optimizer makes such conversions from ours
// (expm1((int64)b - 1) of a transposed bool array gave expm1(1) in one element on an H100), so
// codegen/nvptx/bool_to_float.h rewrites them after optimizing. No GPU needed: these tests read
// the PTX.
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>

#include <regex>
#include <set>
#include <string>

#include "arrayc/arrayc.h"
#include "codegen/nvptx/ptx_compile.h"
#include "codegen/nvptx/ptx_kernel.h"
#include "support/data.h"
#include "support/pipeline.h"

namespace {

using namespace arrayc;

bool have_libdevice() try { return !detail::libdevice_path().empty(); } catch (const Error&) { return false; }

// The wrong lowering: a register set by `selp.* %r, 1, 0` (a bool as +1) then converted to a
// float as a signed integer. Returns the first such conversion, or "".
std::string bool_as_plus_one_signed(const std::string& ptx) {
  std::set<std::string> plus_one;
  std::regex selp(R"(selp\.[usb](16|32|64)\s+(%\w+),\s*1,\s*0,)");
  std::regex cvt(R"(cvt\.rn\.(f16|bf16|f32|f64)\.s(16|32|64)\s+%\w+,\s*(%\w+);)");
  for (auto i = std::sregex_iterator(ptx.begin(), ptx.end(), selp); i != std::sregex_iterator(); ++i)
    plus_one.insert((*i)[2]);
  for (auto i = std::sregex_iterator(ptx.begin(), ptx.end(), cvt); i != std::sregex_iterator(); ++i)
    if (plus_one.count((*i)[3])) return (*i)[0];
  return "";
}

// A kernel that converts a bool argument (an i1 the backend cannot see as a comparison), as a
// scalar or a vector of `lanes`, to `fty` with sitofp and stores it: the backend's bad case.
std::string ptx_of_bool_sitofp(llvm::Type* (*fty)(llvm::LLVMContext&), unsigned lanes) {
  std::string name = "bool_sitofp";
  detail::PtxKernel k = detail::compile_ptx(name, 90, [&](llvm::Module& m) {
    llvm::LLVMContext& ctx = m.getContext();
    llvm::Type* i8 = llvm::Type::getInt8Ty(ctx);
    llvm::Function* f = detail::declare_ptx_kernel(m, name, {llvm::PointerType::get(ctx, 0), i8}, 0);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    llvm::Value* bit = b.CreateTrunc(f->getArg(1), b.getInt1Ty());
    llvm::Type* ty = fty(ctx);
    if (lanes > 1) {
      bit = b.CreateVectorSplat(lanes, bit);
      ty = llvm::FixedVectorType::get(ty, lanes);
    }
    b.CreateStore(b.CreateSIToFP(bit, ty), f->getArg(0));
    b.CreateRetVoid();
  });
  return k.ptx;
}

TEST(NvptxBool, SignedBoolToFloatIsMinusOneInEveryFloatTypeAndWidth) {
  struct Case {
    const char* name;
    llvm::Type* (*ty)(llvm::LLVMContext&);
    const char* minus_one;  // the PTX literal of -1.0
  };
  const Case cases[] = {
      {"f16", [](llvm::LLVMContext& c) { return llvm::Type::getHalfTy(c); }, "0xBC00"},
      {"f32", [](llvm::LLVMContext& c) { return llvm::Type::getFloatTy(c); }, "0fBF800000"},
      {"f64", [](llvm::LLVMContext& c) { return llvm::Type::getDoubleTy(c); }, "0dBFF0000000000000"},
  };
  for (const Case& c : cases)
    for (unsigned lanes : {1u, 2u, 4u}) {
      SCOPED_TRACE(std::string(c.name) + " x" + std::to_string(lanes));
      std::string ptx = ptx_of_bool_sitofp(c.ty, lanes);
      EXPECT_EQ(bool_as_plus_one_signed(ptx), "") << ptx;
      EXPECT_NE(ptx.find(c.minus_one), std::string::npos) << ptx;
    }
}

// Generated kernels of the pipeline that turn bools into signed integers and then floats (the
// tester's expm1(transpose(b - 1)), negations, products by -1, casts through every signed
// integer type, to every float type), over transposed and contiguous bool arrays: no bool is
// converted as +1.
TEST(NvptxBool, PipelineKernelsNeverConvertABoolAsPlusOne) {
  if (!have_libdevice()) GTEST_SKIP() << "no libdevice";
  Array b = arrayc_test::random_array(DType::Bool, {5, 7}, 11).eval();
  int kernels = 0;
  for (const Array& v : {transpose(b), b, transpose(reshape(b, {7, 5}))})
    for (DType it : {DType::Int8, DType::Int16, DType::Int32, DType::Int64})
      for (DType ft : {DType::Float16, DType::Float32, DType::Float64}) {
        Array i = cast(v, it);
        for (const Array& y : {expm1(cast(i - full({}, 1, it), ft)), cast(-i, ft) * full({}, 2.5, ft),
                               exp(cast(i * full({}, -1, it), ft)), cast(i - full({}, 1, it), ft)}) {
          for (const detail::KernelStep& ks : arrayc_test::kernel_steps({y})) {
            SCOPED_TRACE(ks.kernel->str());
            std::string ptx = detail::emit_ptx(ks.kernel, 90, detail::EmitOptions{}).ptx;
            EXPECT_EQ(bool_as_plus_one_signed(ptx), "") << ptx;
            ++kernels;
          }
        }
      }
  EXPECT_GE(kernels, 3 * 4 * 3 * 4);
}

}  // namespace
