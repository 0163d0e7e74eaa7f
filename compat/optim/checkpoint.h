// Deprecated include path, kept for one release: this header moved to <tapegrad/io/checkpoint.h>.
#pragma once
#pragma message( \
    "<tapegrad/optim/checkpoint.h> is deprecated: include <tapegrad/io/checkpoint.h> (or <tapegrad/tapegrad.h>)")
#include "io/checkpoint.h"
