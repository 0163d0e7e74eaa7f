# tapegrad-train-gpt --shard-optimizer (ZeRO stage 1) under mpirun -np 2, every step clipped by
# norm (--clip 0.05): stopped after 3 steps and resumed to 6, it writes the loss.csv and the
# checkpoint, byte for byte, of the unsharded uninterrupted 6-step job (the same weights, the
# exchange overlapped with backward in both, the clipping norm clip_grad_norm_'s bits; its state
# gathered on rank 0 in AdamW's format). Resuming with 3 processes is refused, naming the file,
# and leaves the checkpoint as it was. Needs TRAIN_GPT, MPIEXEC, WORK.
file(REMOVE_RECURSE ${WORK})
set(common --data /usr/share/common-licenses/GPL-3 --preset tiny --drop-rate 0.1 --eval-freq 2
           --eval-iter 1 --checkpoint-every 0 --context-length 16 --emb-dim 16 --n-heads 2
           --n-layers 1 --batch-size 2 --threads 1 --no-plot --sample-tokens 4 --clip 0.05)
function(job what ranks expect)
  execute_process(COMMAND ${MPIEXEC} -np ${ranks} --oversubscribe ${TRAIN_GPT} ${common} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  message("${what}:\n${out}${err}")
  set(out "${out}" PARENT_SCOPE)
  if(expect STREQUAL "ok" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
  if(NOT expect STREQUAL "ok")
    if(rc EQUAL 0)
      message(FATAL_ERROR "${what} succeeded; expected an error")
    endif()
    string(FIND "${err}" "${expect}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${what}: the error does not say \"${expect}\"")
    endif()
  endif()
endfunction()
job("unsharded, 6 steps" 2 ok --steps 6 --out ${WORK}/whole)
job("sharded, stopped after 3 steps" 2 ok --steps 3 --shard-optimizer --out ${WORK}/parts)
string(FIND "${out}" "AdamW's state sharded (ZeRO stage 1)" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the sharded job does not say it shards")
endif()
job("sharded, resumed to 6 steps" 2 ok --steps 6 --resume --shard-optimizer --out ${WORK}/parts)
foreach(file loss.csv checkpoint.safetensors)
  file(SHA256 ${WORK}/whole/${file} whole)
  file(SHA256 ${WORK}/parts/${file} parts)
  if(NOT whole STREQUAL parts)
    message(FATAL_ERROR "the sharded, resumed job's ${file} differs from the unsharded one's")
  endif()
endforeach()
file(SHA256 ${WORK}/parts/checkpoint.safetensors before)
job("sharded, resumed on 3 processes" 3 "a checkpoint of another configuration" --steps 8 --resume
    --shard-optimizer --out ${WORK}/parts)
file(SHA256 ${WORK}/parts/checkpoint.safetensors after)
if(NOT before STREQUAL after)
  message(FATAL_ERROR "the refused resume changed the checkpoint")
endif()
