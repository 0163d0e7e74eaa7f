# Checks one compiled variant of the small-product kernel (kernels/gemm/gemm_small_isa.cpp) uses
# no instruction above its level, by its disassembly: a CPU of that level must be able to run
# every instruction in it. cmake -DOBJDUMP=... -DOBJECT=... -DLEVEL=baseline|avx2|avx512 -P this.
execute_process(COMMAND ${OBJDUMP} -d --no-show-raw-insn ${OBJECT}
                OUTPUT_VARIABLE listing RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} -d ${OBJECT} failed (${status})")
endif()
# Instructions the level must not have, and one it must (so the object is the variant meant).
if(LEVEL STREQUAL "baseline")
  set(forbidden "\tv[a-z0-9]+ |%ymm|%zmm")  # any VEX or EVEX instruction
  set(required "\tmulps ")
elseif(LEVEL STREQUAL "avx2")
  # ZMM, the opmask registers and registers 16-31 exist only in EVEX encodings (AVX-512).
  set(forbidden "%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])|\\{")
  set(required "\tvfmadd[0-9a-z]+ [^\n]*%ymm")
elseif(LEVEL STREQUAL "avx512")
  set(forbidden "^$")  # nothing above AVX-512 F/BW/DQ/VL is expected; checked by the flags
  set(required "\tvfmadd[0-9a-z]+ [^\n]*%zmm")
else()
  message(FATAL_ERROR "LEVEL: baseline, avx2 or avx512")
endif()
string(REGEX MATCHALL "[^\n]*(${forbidden})[^\n]*" found "${listing}")
if(found AND NOT LEVEL STREQUAL "avx512")
  list(LENGTH found count)
  list(GET found 0 first)
  message(FATAL_ERROR "${OBJECT}: ${count} instructions above ${LEVEL}, the first: ${first}")
endif()
if(NOT listing MATCHES "${required}")
  message(FATAL_ERROR "${OBJECT}: no instruction matching '${required}': not the ${LEVEL} variant?")
endif()
message(STATUS "${OBJECT}: only ${LEVEL} instructions")
