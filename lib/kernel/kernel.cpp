#include "kernel/kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "arrayc/error.h"
#include "kernel/schedule.h"

namespace arrayc::detail {
namespace {

std::string kinds_str(const std::vector<StrideKind>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += std::string(i ? "," : "") + (s[i] == StrideKind::Zero ? "0" : s[i] == StrideKind::Unit ? "1" : "s");
  return out + "]";
}

}  // namespace

bool constant_is_inlined(const Scalar& v, bool pow_exponent) {
  if (!is_parameter_value(v)) return true;
  return pow_exponent && is_float(v.dtype) && std::abs(v.f) <= 16 && std::floor(2 * v.f) == 2 * v.f;
}

int64_t constant_param_bits(const Scalar& v) {
  if (!is_float(v.dtype)) return v.i;
  int64_t bits;
  std::memcpy(&bits, &v.f, sizeof bits);
  return bits;
}

std::string Kernel::str() const {
  std::ostringstream os;
  os << "kernel " << name << " rank=" << rank;
  if (is_reduction) os << " reduce=" << op_name(reduce_op) << " reduce_rank=" << reduce_rank;
  if (row_chain) os << " rows";
  os << " ptrs=" << num_ptrs << " indexed=" << num_indexed << "\n";
  for (size_t i = 0; i < body.size(); ++i) {
    const KernelInstr& in = body[i];
    os << "  %" << i << " = ";
    if (in.leaf >= 0) {
      const KernelLeaf& lf = leaves[in.leaf];
      switch (lf.op) {
        case Op::Buffer: os << "load ptr" << lf.ptr; break;
        case Op::Constant:
          if (lf.param >= 0) os << "const $" << lf.param;
          else os << "const " << lf.value.str();
          break;
        case Op::Iota: os << "iota"; break;
        case Op::Gather: os << "gather ptr" << lf.ptr << " at %" << in.args[0] << " aux=idx" << lf.aux; break;
        default: os << op_name(lf.op) << " seed=$" << lf.param; break;  // a parameter (issue 26)
      }
      if (lf.index >= 0) os << " idx" << lf.index << " strides=" << kinds_str(lf.strides);
    } else {
      os << (op_kind(in.op) == OpKind::Reduce ? "row " : "") << op_name(in.op);
      for (size_t a = 0; a < in.args.size(); ++a) os << (a ? ", %" : " %") << in.args[a];
    }
    os << " : " << dtype_name(in.dtype) << "\n";
  }
  for (const KernelOutput& o : outputs)
    os << "  store ptr" << o.ptr << " idx" << o.index << " strides=" << kinds_str(o.strides) << " = %"
       << o.instr << " : " << dtype_name(o.dtype) << "\n";
  return os.str();
}

std::vector<std::vector<int>> Kernel::row_passes() const {
  std::vector<int> level(body.size(), 0);
  std::vector<std::vector<int>> passes;
  for (size_t i = 0; i < body.size(); ++i) {
    for (int a : body[i].args) level[i] = std::max(level[i], level[a]);
    if (body[i].leaf < 0 && op_kind(body[i].op) == OpKind::Reduce) {
      if (static_cast<int>(passes.size()) <= level[i]) passes.resize(level[i] + 1);
      passes[level[i]].push_back(static_cast<int>(i));
      ++level[i];
    }
  }
  return passes;
}

std::vector<bool> Kernel::instrs_needed(const std::vector<int>& wanted) const {
  std::vector<bool> need(body.size(), false);
  for (int i : wanted) need[i] = true;
  for (size_t i = body.size(); i-- > 0;)
    if (need[i] && !(body[i].leaf < 0 && op_kind(body[i].op) == OpKind::Reduce))
      for (int a : body[i].args) need[a] = true;
  return need;
}

bool Kernel::reduces_across_rows() const {
  if (!is_reduction || outer_rank() == 0 || reduce_rank == 0) return false;
  bool along_kept = false;
  for (const KernelLeaf& lf : leaves) {
    if (lf.strides.empty()) continue;
    if (lf.strides[rank - 1] == StrideKind::Unit) return false;
    along_kept = along_kept || lf.strides[outer_rank() - 1] == StrideKind::Unit;
  }
  return along_kept;
}

std::vector<int> product_inputs(const DotStep& d) {
  std::vector<int> out;
  for (size_t i = 0; i < d.epilogue.inputs.size(); ++i)
    if (d.epilogue.inputs[i].kind == Source::Kind::Product) out.push_back(static_cast<int>(i));
  ARRAYC_INTERNAL_CHECK(!out.empty(), "an epilogue that does not read its product");
  return out;
}

}  // namespace arrayc::detail
