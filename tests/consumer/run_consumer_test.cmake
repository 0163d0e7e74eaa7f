# Installs tapegrad into a scratch prefix, then configures, builds and runs a consumer project
# (tests/consumer/CMakeLists.txt: the README's training loop, examples/custom_op.cpp, a user's
# own op, and copies of the programs' sources train_attention.cpp, train_simple.cpp and
# finetune_instruct.cpp with its headers) that uses find_package(tapegrad).
include(${CMAKE_CURRENT_LIST_DIR}/consumer_project.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
tapegrad_install_into(${BINARY_DIR} ${WORK_DIR}/prefix)
# The README's loop, cut out from between its markers, is the consumer's main.
file(READ ${SOURCE_DIR}/README.md readme)
string(REGEX MATCH "<!-- readme-loop-begin -->[^`]*```cpp\n(.*)```[^`]*<!-- readme-loop-end -->" _ "${readme}")
if(NOT CMAKE_MATCH_1)
  message(FATAL_ERROR "README.md has no training loop between the readme-loop markers")
endif()
file(WRITE ${WORK_DIR}/src/main.cpp "${CMAKE_MATCH_1}")
file(COPY ${SOURCE_DIR}/tests/consumer/CMakeLists.txt ${SOURCE_DIR}/examples/custom_op.cpp
     ${SOURCE_DIR}/tests/consumer/dist_consumer.cpp
     ${SOURCE_DIR}/tests/consumer/colliding_headers_consumer.cpp
     ${SOURCE_DIR}/apps/train_attention.cpp ${SOURCE_DIR}/apps/train_simple.cpp
     ${SOURCE_DIR}/apps/finetune_instruct.cpp ${SOURCE_DIR}/apps/finetune_common.h
     ${SOURCE_DIR}/apps/common.h
     DESTINATION ${WORK_DIR}/src)
# A user header for every header tapegrad installs, under the same relative name (nn/layers.h,
# tapegrad.h, ...), each an error if tapegrad's own code ever reads it; the two the consumer
# includes itself define a macro instead.
file(GLOB_RECURSE installed RELATIVE ${WORK_DIR}/prefix/include/tapegrad
     ${WORK_DIR}/prefix/include/tapegrad/*.h)
list(LENGTH installed n_installed)
if(n_installed LESS 40)
  message(FATAL_ERROR "only ${n_installed} headers installed")
endif()
foreach(header ${installed})
  string(MAKE_C_IDENTIFIER "USER_${header}" macro)
  string(TOUPPER ${macro} macro)
  if(header STREQUAL "graph/tensor.h" OR header STREQUAL "nn/layers.h")
    file(WRITE ${WORK_DIR}/src/user_include/${header} "#pragma once\n#define ${macro} 1\n")
  else()
    file(WRITE ${WORK_DIR}/src/user_include/${header}
         "#error the user's own ${header} was included in place of tapegrad's\n")
  endif()
endforeach()
tapegrad_build_consumer(${WORK_DIR}/src ${WORK_DIR}/build ${WORK_DIR}/prefix "the consumer")
execute_process(COMMAND ${WORK_DIR}/build/consumer OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(rc)
  message(FATAL_ERROR "the consumer failed")
endif()
if(NOT out MATCHES "final loss")
  message(FATAL_ERROR "the consumer did not print its final loss")
endif()
execute_process(COMMAND ${WORK_DIR}/build/custom_op OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(rc)
  message(FATAL_ERROR "the custom op example failed (its gradcheck or its drawing)")
endif()
execute_process(COMMAND ${WORK_DIR}/build/colliding_headers_consumer OUTPUT_VARIABLE out
                RESULT_VARIABLE rc)
message("${out}")
if(rc OR NOT out MATCHES "colliding headers consumer: [0-9]+ parameters, user headers 1 1")
  message(FATAL_ERROR "the consumer with headers named like tapegrad's failed")
endif()
# The programs' sources built out of the tree (when the package has tapegrad::cli): each runs.
if(EXISTS ${WORK_DIR}/build/train_attention)
  execute_process(COMMAND ${WORK_DIR}/build/train_attention --model sa_v1 --steps 3
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 60)
  message("${out}${err}")
  if(rc OR NOT out MATCHES "SelfAttention_v1 \\(float32\\): loss [0-9.]+ -> [0-9.]+ after 3 steps")
    message(FATAL_ERROR "the copied train_attention.cpp failed (${rc})")
  endif()
  string(REPEAT "Every effort moves you, said the painter, and smiled at the canvas.\n" 40 text)
  file(WRITE ${WORK_DIR}/text.txt "${text}")
  execute_process(COMMAND ${WORK_DIR}/build/train_simple --data ${WORK_DIR}/text.txt --epochs 2
                          --context-length 16 --emb-dim 16 --n-heads 2 --n-layers 1
                          --batch-size 4 --eval-iter 1 --sample-tokens 5
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 120)
  message("${out}${err}")
  if(rc OR NOT out MATCHES "Ep 1 \\(Step 000000\\): Train loss [0-9.]+, Val loss [0-9.]+"
     OR NOT out MATCHES "Training completed in")
    message(FATAL_ERROR "the copied train_simple.cpp failed (${rc})")
  endif()
  execute_process(COMMAND ${WORK_DIR}/build/finetune_instruct --help
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc TIMEOUT 60)
  if(rc OR NOT out MATCHES "--kjv")
    message(FATAL_ERROR "the copied finetune_instruct.cpp does not answer --help (${rc})")
  endif()
  message("copied examples: train_attention, train_simple, finetune_instruct built and ran")
elseif(TAPEGRAD_EXPECT_CLI)
  message(FATAL_ERROR "the package has no tapegrad::cli: the copied examples were not built")
endif()
# Built only when the package has tapegrad::dist (tapegrad found MPI). Open MPI keeps what
# MPI_Init allocates past MPI_Finalize, which LeakSanitizer would report in the sanitizer build
# (the distributed tests run with the same setting).
if(EXISTS ${WORK_DIR}/build/dist_consumer)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
                          ${WORK_DIR}/build/dist_consumer OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc TIMEOUT 60)
  message("${out}${err}")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "dist consumer: rank 0 of 1, ok")
    message(FATAL_ERROR "the data-parallel consumer failed (${rc})")
  endif()
endif()
