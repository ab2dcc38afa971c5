// The whole public API of arrayc.
#pragma once
#include "arrayc/array.h"
#include "arrayc/bounds.h"  // issue 26: bounded memory and compile time
#include "arrayc/device.h"
#include "arrayc/distributed.h"
#include "arrayc/dtype.h"
#include "arrayc/error.h"
#include "arrayc/format.h"
#include "arrayc/indexing.h"
#include "arrayc/inspect.h"
#include "arrayc/interop.h"  // issue 28: .npy, host memory
#include "arrayc/jit.h"
#include "arrayc/math.h"
#include "arrayc/matmul_precision.h"  // issue 29: TF32 products, opt-in
#include "arrayc/ops.h"
#include "arrayc/transforms.h"
#include "arrayc/reduce_ops.h"  // issue 28: reductions, scans, sorts, creation
#include "arrayc/products.h"
#include "arrayc/row_chains.h"
#include "arrayc/numpy_extra.h"  // issue 28: more of numpy's namespace (coverage)
