// Deprecated include path, kept for one release: this header moved to
// <tapegrad/kernels/softmax_rows.h>.
#pragma once
#pragma message( \
    "<tapegrad/ops/detail/softmax_rows.h> is deprecated: include <tapegrad/kernels/softmax_rows.h> (or <tapegrad/tapegrad.h>)")
#include "kernels/softmax_rows.h"
