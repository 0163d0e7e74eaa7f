// Deprecated include path, kept for one release: this header moved to <tapegrad/kernels/gemm.h>.
#pragma once
#pragma message( \
    "<tapegrad/ops/detail/gemm.h> is deprecated: include <tapegrad/kernels/gemm.h> (or <tapegrad/tapegrad.h>)")
#include "kernels/gemm.h"
