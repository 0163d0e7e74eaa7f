// Deprecated include path, kept for one release: this header moved to <tapegrad/kernels/vmath.h>.
#pragma once
#pragma message( \
    "<tapegrad/ops/detail/vmath.h> is deprecated: include <tapegrad/kernels/vmath.h> (or <tapegrad/tapegrad.h>)")
#include "kernels/vmath.h"
