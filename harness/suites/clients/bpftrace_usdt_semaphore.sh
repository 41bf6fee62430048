echo "bpftrace usdt: an SDT probe with a semaphore fires every time, the semaphore armed"
. "$(dirname "$0")/lib.bash"
need bpftrace
out=$(bpftrace -e "usdt:$T:demo:tick { @c = count(); }" -c "$T 50" 2>&1)
n=$(echo "$out" | sed -n 's/^@c: \([0-9]*\)$/\1/p')
armed=$(echo "$out" | sed -n 's/.*semaphore_armed=\([0-9]*\).*/\1/p')
expect "usdt hits" 50 "$n"
expect "calls that saw the semaphore armed" 50 "$armed"
