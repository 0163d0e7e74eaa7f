// Deprecated include path, kept for one release: this header moved to <tapegrad/nn/module.h>.
#pragma once
#pragma message( \
    "<tapegrad/ops/nn/module.h> is deprecated: include <tapegrad/nn/module.h> (or <tapegrad/tapegrad.h>)")
#include "nn/module.h"
