// Deprecated include path, kept for one release: this header moved to <tapegrad/train/training.h>.
#pragma once
#pragma message( \
    "<tapegrad/text/training.h> is deprecated: include <tapegrad/train/training.h> (or <tapegrad/tapegrad.h>)")
#include "train/training.h"
