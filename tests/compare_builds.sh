#!/usr/bin/env bash
# bench/compare-builds.sh without a GPU: two stand-in builds whose `bitgate bench --json` writes
# rows with known times (build a: 10 us in round 1, 12 in round 2; build b: 7 and 6), so the table
# must show 10.00-12.00 and 6.00-7.00 on the row, in the builds' order; and its usage errors.
# usage: tests/compare_builds.sh SRCDIR
src=$1
. "$src/tests/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for b in a b; do
    mkdir -p "$tmp/$b"
    cat >"$tmp/$b/bitgate" <<STUB
#!/usr/bin/env bash
# stand-in: bench ... --json FILE; the round is counted in a file beside it
n=\$(( \$(cat "$tmp/$b/count" 2>/dev/null || echo 0) + 1 )); echo \$n >"$tmp/$b/count"
while ((\$#)); do [[ \$1 == --json ]] && json=\$2; shift; done
case "$b.\$n" in a.1) us=10 ;; a.2) us=12 ;; b.1) us=7 ;; b.2) us=6 ;; esac
printf '{"device":"stand-in","read_ceiling_gbps":100,"rows":[{"family":"fam","variant":"v","shape":"n=1","back_to_back":{"available":true,"median_us":%s},"isolated":{"available":false}}]}' "\$us" >"\$json"
STUB
    chmod +x "$tmp/$b/bitgate"
done
expect 0 'fam +v +n=1 +10.00-12.00 +6.00-7.00$' -- "$src/bench/compare-builds.sh" -r 2 -o "$tmp/out" a="$tmp/a" b="$tmp/b" -- --family fam
expect 2 'no NAME=BINDIR' -- "$src/bench/compare-builds.sh" -r 2
expect 2 'not NAME=BINDIR' -- "$src/bench/compare-builds.sh" a="$tmp/none"
expect 2 'takes a count' -- "$src/bench/compare-builds.sh" -r x a="$tmp/a"
echo "compare_builds: $passes passed, $fails failed"; [[ $fails -eq 0 ]]
