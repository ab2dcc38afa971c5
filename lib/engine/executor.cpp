#include "engine/executor.h"

#include "ir/build.h"
#include "support/interrupt.h"

namespace arrayc::detail {
namespace {

char* base_pointer(const Source& src, const std::vector<StorageRef>& slots, const std::vector<ParamBinding>& params) {
  switch (src.kind) {
    case Source::Kind::Storage: return static_cast<char*>(src.storage->data);
    case Source::Kind::Slot: return static_cast<char*>(slots[src.index]->data);
    case Source::Kind::Param: {
      const ParamBinding& pb = params.at(src.index);
      return static_cast<char*>(pb.storage->data) + pb.offset * static_cast<int64_t>(dtype_size(pb.dtype));
    }
    case Source::Kind::Product: return nullptr;  // the product step's own scratch memory
  }
  return nullptr;
}

char* matrix_pointer(const MatrixOperand& m, DType t, const std::vector<StorageRef>& slots,
                     const std::vector<ParamBinding>& params) {
  return base_pointer(m.src, slots, params) + m.offset * static_cast<int64_t>(dtype_size(t));
}

}  // namespace

std::vector<NodeRef> run(const Program& p, const std::vector<ParamBinding>& params) {
  const Schedule& s = p.schedule;
  std::vector<StorageRef> slots(s.slots.size());
  std::vector<void*> ptrs;
  auto alloc = [&](int slot) {
    const Slot& sl = s.slots[slot];
    slots[slot] = allocate(sl.device, shape_numel(sl.shape) * dtype_size(sl.dtype));
  };
  for (size_t i = 0; i < s.steps.size(); ++i) {
    check_interrupt();  // arrayc::interrupt(): stop between steps
    const Step& step = s.steps[i];
    ptrs.clear();
    if (const auto* ks = std::get_if<KernelStep>(&step.op)) {
      for (int o : ks->outputs) alloc(o);
      for (const Source& src : ks->inputs) ptrs.push_back(base_pointer(src, slots, params));
      for (int o : ks->outputs) ptrs.push_back(slots[o]->data);
    } else if (const auto* as = std::get_if<AxisStep>(&step.op)) {  // scans and sorts
      alloc(as->output);
      ptrs = {base_pointer(as->src, slots, params) + as->in_offset * static_cast<int64_t>(dtype_size(as->in_dtype)),
              slots[as->output]->data};
      for (const AxisStep::Operand& o : as->more)  // a sparse scatter's index and updates
        ptrs.push_back(base_pointer(o.src, slots, params) + o.offset * static_cast<int64_t>(dtype_size(o.dtype)));
    } else {
      const DotStep& d = std::get<DotStep>(step.op);
      if (d.output >= 0) alloc(d.output);
      ptrs = {matrix_pointer(d.a, d.in_dtype, slots, params), matrix_pointer(d.b, d.in_dtype, slots, params),
              d.output >= 0 ? slots[d.output]->data : nullptr};
      for (int o : d.epilogue.outputs) alloc(o);
      for (const Source& src : d.epilogue.inputs) ptrs.push_back(base_pointer(src, slots, params));
      for (int o : d.epilogue.outputs) ptrs.push_back(slots[o]->data);
    }
    if (p.launches[i]) p.launches[i]->run(ptrs);
    for (int r : step.release) slots[r].reset();
  }
  std::vector<NodeRef> out;
  for (const OutputView& ov : s.outputs) {
    StorageRef st;
    int64_t offset = ov.offset;
    switch (ov.src.kind) {
      case Source::Kind::Storage: st = ov.src.storage; break;
      case Source::Kind::Slot: st = slots[ov.src.index]; break;
      case Source::Kind::Param:
        st = params.at(ov.src.index).storage;
        offset += params[ov.src.index].offset;
        break;
      case Source::Kind::Product: ARRAYC_INTERNAL_CHECK(false, "an output reads a product's scratch memory");
    }
    out.push_back(make_buffer(st, ov.dtype, ov.shape, offset, ov.strides));
  }
  return out;
}

}  // namespace arrayc::detail
