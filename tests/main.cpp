// Catch2 v2 main for the tapegrad test suite (one executable, tests registered per file).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
