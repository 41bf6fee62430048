echo "SystemTap: a function of a shared library, on entry and return"
. "$(dirname "$0")/lib.bash"
stap_run stap_shared_library "$W scale 200"
# lib_scale(x) = 3x + 1 for x = 0..199.
expect "script's counts" "calls=200 sum_x=19900 sum_ret=59900" "$STAP_OUT"
expect "workload's output" "scale n=200 sum=59900" "$CMD_OUT"
