#!/usr/bin/env bash
# The CLI's contract, from the outside: exit codes and one-line errors that name file and line.
# usage: cli_contract.sh BITGATE SOURCE_DIR
set -u
bg=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0

# expect CODE PATTERN -- command...: exit code CODE and stderr+stdout matching PATTERN.
expect() {
    local code=$1 pattern=$2; shift 3
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [[ $rc -ne $code ]] || ! grep -qE -- "$pattern" <<<"$out"; then
        echo "FAIL: $* -> exit $rc (want $code), output:"; echo "$out" | head -5
        fails=$((fails + 1))
    else
        passes=$((passes + 1))
    fi
}

root() {  # a scratch copy of shapes/ and golden/ to break
    rm -rf "$tmp/root"; mkdir -p "$tmp/root"
    cp -r "$src/shapes" "$src/golden" "$tmp/root/"
}

root
expect 0 'quantize_q8_0' -- "$bg" list families
expect 0 'claims' -- "$bg" list claims
expect 2 "unknown family 'nope'" -- "$bg" check --host-only --family nope
expect 2 "unknown family 'nope'" -- "$bg" golden check --family nope

echo "k=33" >>"$tmp/root/shapes/quantize_q8_0.shapes"
n=$(wc -l <"$tmp/root/shapes/quantize_q8_0.shapes")
expect 2 "quantize_q8_0.shapes:$n: impossible shape k=33" -- "$bg" check --host-only --root "$tmp/root"
# exactly one line of error
out=$("$bg" check --host-only --root "$tmp/root" 2>&1 >/dev/null)
[[ $(wc -l <<<"$out") -eq 1 ]] && passes=$((passes + 1)) || { echo "FAIL: error is not one line: $out"; fails=$((fails + 1)); }

root
sed -i '7s/ y=[0-9a-f]*/ y=zz/' "$tmp/root/golden/quantize_q8_0.golden"
expect 2 'quantize_q8_0.golden:7: digest of y' -- "$bg" golden check --root "$tmp/root"
root
head -c 300 "$src/golden/quantize_q8_0.golden" >"$tmp/root/golden/quantize_q8_0.golden"
expect 2 'quantize_q8_0.golden:[0-9]+:' -- "$bg" check --host-only --root "$tmp/root"

root
expect 0 'bitgate golden check: [0-9]+ cases .* 0 failed' -- "$bg" golden check --family quantize_q8_0 --root "$tmp/root"
# a changed digest is a failure naming the line, not an error
sed -i '7s/ y=\(.\)/ y=f/; 7s/ y=ff/ y=0f/' "$tmp/root/golden/quantize_q8_0.golden"
expect 1 'golden_mismatch' -- "$bg" golden check --family quantize_q8_0 --root "$tmp/root"
expect 2 'refuses to run under CI=true' -- env CI=true "$bg" golden regen --root "$tmp/root"
expect 0 'lines added' -- env -u CI "$bg" golden regen --family quantize_q8_0 --root "$tmp/root"
expect 0 '0 failed' -- "$bg" golden check --family quantize_q8_0 --root "$tmp/root"

# run: the model's output digest for a catalog case is the golden line's digest
want=$(grep -E '^quantize_q8_0 v1 k=896 seed=1 profile=uniform ' "$src/golden/quantize_q8_0.golden" | sed 's/.* y=//')
expect 0 "y=?.*$want|xxh3-128 $want" -- "$bg" run --family quantize_q8_0 --variant v1 --shape k=896 --out "$tmp"
[[ -s "$tmp/y.npy" ]] && passes=$((passes + 1)) || { echo "FAIL: run wrote no y.npy"; fails=$((fails + 1)); }
expect 2 "no input 'w'" -- "$bg" run --family quantize_q8_0 --variant v1 --shape k=896 --input w=/dev/null --out "$tmp"
expect 2 'impossible shape' -- "$bg" run --family quantize_q8_0 --variant v1 --shape k=33 --out "$tmp"

# reports
expect 0 '0 failed' -- "$bg" check --host-only --family quantize_q8_0 --catalog boundaries --json "$tmp/r.json" --junit "$tmp/r.xml"
grep -q '"failed": 0' "$tmp/r.json" && grep -q '<testsuites name="bitgate check"' "$tmp/r.xml" && passes=$((passes + 1)) \
    || { echo "FAIL: json/junit reports"; fails=$((fails + 1)); }

expect 2 'expected I/N' -- "$bg" check --host-only --shard 3/2
expect 0 '0 failed' -- "$bg" check --host-only --family quantize_q8_0 --shard 1/3
expect 2 '' -- "$bg" check --no-such-flag

# spkl: md5 as md5sum prints it, exit 1 on a requested condition, exit 2 with one line on bad files
"$bg" spkl synth "$tmp/a.spkl" --vocab 1000 --rows 7 --targets >/dev/null
"$bg" spkl synth "$tmp/b.spkl" --vocab 1000 --rows 7 --targets --noise 0.1 >/dev/null
expect 0 "^$(md5sum "$tmp/a.spkl" | cut -c1-32)  $tmp/a.spkl" -- "$bg" spkl diff "$tmp/a.spkl" "$tmp/b.spkl"
expect 0 'Mean    KLD: 0 ' -- "$bg" spkl diff "$tmp/a.spkl" "$tmp/a.spkl" --require-identical --max-mean-kld 0
expect 1 'FAIL: the files are not identical' -- "$bg" spkl diff "$tmp/a.spkl" "$tmp/b.spkl" --require-identical
expect 1 'FAIL: mean KLD' -- "$bg" spkl kld "$tmp/a.spkl" "$tmp/b.spkl" --max-mean-kld 1e-9
expect 0 'digest       : ok' -- "$bg" spkl info "$tmp/a.spkl"
head -c 5000 "$tmp/a.spkl" >"$tmp/cut.spkl"
expect 2 "error: $tmp/cut.spkl: truncated" -- "$bg" spkl diff "$tmp/a.spkl" "$tmp/cut.spkl"
out=$("$bg" spkl diff "$tmp/a.spkl" "$tmp/cut.spkl" 2>&1 >/dev/null)
[[ $(wc -l <<<"$out") -eq 1 ]] && passes=$((passes + 1)) || { echo "FAIL: error is not one line: $out"; fails=$((fails + 1)); }
cp "$tmp/a.spkl" "$tmp/flip.spkl"
printf '\x55' | dd of="$tmp/flip.spkl" bs=1 seek=2000 conv=notrunc status=none
expect 2 "error: $tmp/flip.spkl: digest mismatch" -- "$bg" spkl info "$tmp/flip.spkl"
expect 2 "error: $tmp/flip.spkl: digest mismatch" -- "$bg" spkl diff "$tmp/a.spkl" "$tmp/flip.spkl"
"$bg" spkl synth "$tmp/c.spkl" --vocab 1001 --rows 7 >/dev/null
expect 2 'vocabulary sizes differ \(1000 vs 1001\)' -- "$bg" spkl diff "$tmp/a.spkl" "$tmp/c.spkl"

if "$bg" list families >/dev/null 2>&1 && [[ -z "$(nvidia-smi -L 2>/dev/null)" ]]; then
    expect 3 'a GPU is required' -- "$bg" check --device --family quantize_q8_0
    expect 3 'a GPU is required' -- "$bg" bench
fi

# The PTX lint: findings fail (1), a missing PTX directory is bad input (2). Hand-written PTX, so
# this holds in the host-only build too.
mkdir -p "$tmp/ptx"
printf '.visible .entry k(.param .u64 p)\n{\n\tadd.rn.f32 %%f3, %%f1, %%f2;\n\tret;\n}\n' >"$tmp/ptx/ok.ptx"
printf '.visible .entry bad(.param .u64 p)\n{\n\tex2.approx.ftz.f32 %%f2, %%f1;\n\tret;\n}\n' >"$tmp/bad.ptx"
expect 0 'lint: 1 kernels in 1 files, 0 findings' -- "$bg" lint --ptx "$tmp/ptx"
expect 1 'FAIL lint bad .*bad.ptx:3: ex2.approx.ftz.f32 %f2, %f1  \(approximation, flush-to-zero\)' -- "$bg" lint --ptx "$tmp/ptx" "$tmp/bad.ptx"
expect 2 'no PTX here \(built without CUDA\?\)' -- "$bg" lint --ptx "$tmp/none"

# Index inputs out of range are bad input, rejected before any table is read: an embed id past the
# last row (id 4 of a 4-row table) and a rope position past the proven table (32768).
printf '\x00\x00\x00\x00\x04\x00\x00\x00' >"$tmp/ids.bin"
expect 2 'ids: token 1: id 4 is outside \[0, 4\)' -- "$bg" run --family embed --variant q8_0 --shape "n=2 d=32 vocab=4 type=2" --input "ids=$tmp/ids.bin" --out "$tmp"
printf '\x00\x80\x00\x00' >"$tmp/pos.bin"
expect 2 'pos: token 0: position 32768 is outside \[0, 32767\]' -- "$bg" run --family rope --variant v1 --shape "n=1 heads=1 head_dim=4 base=10000" --input "pos=$tmp/pos.bin" --out "$tmp"

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
