# tapegrad-dist-bench runs alone and under mpirun -np 2 (a short gpt-tiny run each), rank 0 alone
# prints its figures, and a bad option is refused naming it. Needs BENCH, MPIEXEC.
execute_process(COMMAND ${BENCH} --workload gpt-tiny --steps 2 --warmup 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "1 process x 1 thread.*tokens/s")
  message(FATAL_ERROR "the 1-process run failed (${rc}) or printed no tokens/s")
endif()
execute_process(COMMAND ${MPIEXEC} -np 2 --oversubscribe ${BENCH} --workload gpt-tiny --steps 2
                        --warmup 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "2 processes x 1 thread.*8 rows per process.*all-reduced in 1 bucket.*tokens/s.*all-reduce median")
  message(FATAL_ERROR "the 2-process run failed (${rc}) or its report is incomplete")
endif()
string(REGEX MATCHALL "tapegrad-dist-bench: gpt-tiny" heads "${out}")
list(LENGTH heads n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "the report was printed ${n} times: only rank 0 prints")
endif()
execute_process(COMMAND ${BENCH} --workload nope RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 60)
if(rc EQUAL 0 OR NOT err MATCHES "--workload")
  message(FATAL_ERROR "--workload nope was not refused naming the option (${rc}): ${err}")
endif()
