// The whole public API of arrayc.
#pragma once
#include "arrayc/array.h"
#include "arrayc/device.h"
#include "arrayc/dtype.h"
#include "arrayc/error.h"
#include "arrayc/format.h"
#include "arrayc/inspect.h"
#include "arrayc/jit.h"
#include "arrayc/ops.h"
#include "arrayc/products.h"
