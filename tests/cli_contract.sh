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
expect 0 'bitgate golden check: [0-9]+ cases .* 0 failed' -- "$bg" golden check --root "$tmp/root"
# a changed digest is a failure naming the line, not an error
sed -i '7s/ y=\(.\)/ y=f/; 7s/ y=ff/ y=0f/' "$tmp/root/golden/quantize_q8_0.golden"
expect 1 'golden_mismatch' -- "$bg" golden check --root "$tmp/root"
expect 2 'refuses to run under CI=true' -- env CI=true "$bg" golden regen --root "$tmp/root"
expect 0 'lines added' -- env -u CI "$bg" golden regen --root "$tmp/root"
expect 0 '0 failed' -- "$bg" golden check --root "$tmp/root"

expect 2 'expected I/N' -- "$bg" check --host-only --shard 3/2
expect 0 '0 failed' -- "$bg" check --host-only --family quantize_q8_0 --shard 1/3
expect 2 '' -- "$bg" check --no-such-flag

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

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
