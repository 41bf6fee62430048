echo "SystemTap process.function(\"*\"): every function of a program, each call counted"
. "$(dirname "$0")/lib.bash"
stap_run stap_function_wildcard "$T 7"
# Every function of target's symbol table, the C runtime's too, and the
# inlined atol() of main: each called once, but target_add and target_str.
want="__do_global_dtors_aux=1 _fini=1 _init=1 _start=1 atol=1 deregister_tm_clones=1"
want="$want frame_dummy=1 main=1 register_tm_clones=1 target_add=7 target_str=7"
expect "calls by function" "$want" "$(echo "$STAP_OUT" | paste -sd' ')"
expect "target's output" "calls=7 sum=791 semaphore_armed=0" "$CMD_OUT"
