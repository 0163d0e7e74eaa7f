# A 2-process train_gpt job with dropout on, stopped after 3 steps and resumed to 6, must write a
# loss.csv byte-identical to the uninterrupted 6-step job: every rank's dropout stream (not only
# rank 0's) and the data position come back from rank 0's checkpoint. Step 3 is an evaluation
# step of both runs (--eval-freq 2: steps 1, 3, 5 and the last), so the stopped run draws from
# the data generator exactly what the uninterrupted one does. Needs TRAIN_GPT, MPIEXEC, WORK.
file(REMOVE_RECURSE ${WORK})
set(common --data /usr/share/common-licenses/GPL-3 --preset tiny --drop-rate 0.1 --eval-freq 2
           --eval-iter 1 --checkpoint-every 0 --context-length 16 --emb-dim 16 --n-heads 2
           --n-layers 1 --batch-size 2 --threads 1 --no-plot --sample-tokens 4)
function(job what)
  execute_process(COMMAND ${MPIEXEC} -np 2 --oversubscribe ${TRAIN_GPT} ${common} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  message("${what}:\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
endfunction()
job("uninterrupted, 6 steps" --steps 6 --out ${WORK}/whole)
job("stopped after 3 steps" --steps 3 --out ${WORK}/parts)
job("resumed to 6 steps" --steps 6 --resume --out ${WORK}/parts)
file(READ ${WORK}/whole/loss.csv whole)
file(READ ${WORK}/parts/loss.csv parts)
if(NOT whole STREQUAL parts)
  message(FATAL_ERROR "the resumed job's loss.csv differs from the uninterrupted one:\n"
                      "uninterrupted:\n${whole}\nstopped + resumed:\n${parts}")
endif()
string(REGEX MATCHALL "\n[0-9]+," rows "${whole}")
list(LENGTH rows n)
if(n LESS 4)
  message(FATAL_ERROR "loss.csv has ${n} evaluations, expected 4 (steps 1, 3, 5, 6)")
endif()
