echo "SystemTap process.mark: an SDT probe with a semaphore, set while the module runs"
. "$(dirname "$0")/lib.bash"
stap_run stap_mark_semaphore "$T 50"
expect "script's counts" "marks=50 sum=1225" "$STAP_OUT"
# Every call saw the semaphore set.
expect "target's output" "calls=50 sum=8875 semaphore_armed=50" "$CMD_OUT"
