echo "bpftrace uprobe: counts every call exactly"
. "$(dirname "$0")/lib.bash"
need bpftrace
out=$(bpftrace -e "uprobe:$T:target_add { @c = count(); }" -c "$T 777" 2>&1)
n=$(echo "$out" | sed -n 's/^@c: \([0-9]*\)$/\1/p')
expect "bpftrace count over 777 calls" 777 "$n"
