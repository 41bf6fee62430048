echo "bpftrace uretprobe: sees every return value"
. "$(dirname "$0")/lib.bash"
need bpftrace
out=$(bpftrace -e "uretprobe:$T:target_add { @s = sum(retval); @c = count(); }" -c "$T 100" 2>&1)
s=$(echo "$out" | sed -n 's/^@s: \([0-9]*\)$/\1/p')
c=$(echo "$out" | sed -n 's/^@c: \([0-9]*\)$/\1/p')
expect "returns counted" 100 "$c"
# sum of 3i for i < 100
expect "sum of return values" 14850 "$s"
