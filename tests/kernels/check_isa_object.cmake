# Checks one compiled variant of a kernel built once per instruction-set level
# (tapegrad_isa_variants in CMakeLists.txt): its disassembly holds no instruction above its level
# (a CPU of that level must be able to run every instruction in it), and every symbol it defines
# for the linker lies in its level's namespace (kernels/cpu/isa_level.h: an inline function or
# template emitted outside it could replace another level's copy at link time).
# cmake -DOBJDUMP=... -DNM=... -DOBJECT=... -DLEVEL=baseline|avx2|avx512 [-DARCH=aarch64] -P this.
execute_process(COMMAND ${OBJDUMP} -d --no-show-raw-insn ${OBJECT}
                OUTPUT_VARIABLE listing RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} -d ${OBJECT} failed (${status})")
endif()
# Instructions the level must not have, and registers it must use (so the object is the variant
# meant).
if(ARCH MATCHES "^(aarch64|arm64)$" AND LEVEL STREQUAL "baseline")
  # armv8-a: no SVE (z and p registers); NEON's vector arithmetic on floats or doubles, or on
  # integer lanes.
  set(forbidden "[\t ,{]z[0-9]+\\.[bhsdq]|[\t ,]p[0-9]+/[zm]")
  set(required "\tf[a-z]+\tv[0-9]+\\.(4s|2d)|\t(eor|and|ushr|shl)\tv[0-9]+\\.(16b|4s)")
elseif(LEVEL STREQUAL "baseline")
  set(forbidden "\tv[a-z0-9]+ |%ymm|%zmm")  # any VEX or EVEX instruction
  # SSE arithmetic on floats or doubles, or on integer lanes (the generator's loops).
  set(required "\t(mul|add)[sp][sd] |\tp(xor|and|add[dq]) [^\n]*%xmm")
elseif(LEVEL STREQUAL "avx2")
  # ZMM, the opmask registers and registers 16-31 exist only in EVEX encodings (AVX-512).
  set(forbidden "%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])|\\{")
  set(required "\tv[a-z0-9]+ [^\n]*%ymm")
elseif(LEVEL STREQUAL "avx512")
  set(forbidden "^$")  # nothing above AVX-512 F/BW/DQ/VL is expected; checked by the flags
  set(required "\tv[a-z0-9]+ [^\n]*%zmm")
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

# The symbols it defines with external linkage (global or weak: upper-case types, and GCC's
# unique globals).
if(NM)
  execute_process(COMMAND ${NM} --defined-only -C ${OBJECT}
                  OUTPUT_VARIABLE symbols RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${NM} ${OBJECT} failed (${status})")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  set(outside "")
  set(inside 0)
  foreach(line ${lines})
    if(NOT line MATCHES "^[0-9a-f]* +[A-Zu] (.*)$")
      continue()
    endif()
    set(name "${CMAKE_MATCH_1}")
    if(name MATCHES "(^|::)[a-z_]+_${LEVEL}::")
      math(EXPR inside "${inside} + 1")
    else()
      list(APPEND outside "${name}")
    endif()
  endforeach()
  if(outside)
    list(LENGTH outside count)
    list(GET outside 0 first)
    message(FATAL_ERROR "${OBJECT}: ${count} symbols outside the ${LEVEL} namespace, the first: "
                        "${first}")
  endif()
  if(inside EQUAL 0)
    message(FATAL_ERROR "${OBJECT}: no symbol in a namespace ending in _${LEVEL}")
  endif()
endif()
message(STATUS "${OBJECT}: only ${LEVEL} instructions, every symbol in its level's namespace")
