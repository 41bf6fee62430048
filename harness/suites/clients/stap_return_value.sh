echo "SystemTap .return: every return of a function and its \$return"
. "$(dirname "$0")/lib.bash"
stap_run stap_return_value "$T 100"
# target_add(i, 2i) returns 3i: 3 * (0 + ... + 99).
expect "script's counts" "returns=100 sum=14850" "$STAP_OUT"
expect "target's output" "calls=100 sum=25250 semaphore_armed=0" "$CMD_OUT"
