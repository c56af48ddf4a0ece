#!/usr/bin/env bash
# `bitgate model` from the outside: a synthetic file described, and every bad GGUF file (wrong
# magic or version, truncated anywhere, another architecture, missing) refused with exit 2 and one
# line naming the file, never a crash.
# usage: model_cli.sh BITGATE
set -u
bg=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect.sh"

f=$tmp/tiny.gguf
expect 0 'wrote' -- "$bg" model synth --preset tiny --seed 1 --out "$f"
expect 0 'architecture : qwen2' -- "$bg" model info "$f"
expect 0 'blk.1.ffn_down.weight +Q8_0 +\{512, 256\} +139264 bytes' -- "$bg" model info "$f"
expect 0 'totals +: 27 tensors' -- "$bg" model info "$f"
size=$(stat -c %s "$f")

expect_one_line 2 "unknown preset 'huge'" -- "$bg" model synth --preset huge --seed 1 --out "$tmp/x.gguf"
expect_one_line 2 "$tmp/none.gguf: cannot open" -- "$bg" model info "$tmp/none.gguf"
: >"$tmp/empty.gguf"
expect_one_line 2 "empty.gguf: empty file" -- "$bg" model info "$tmp/empty.gguf"

cp "$f" "$tmp/magic.gguf"; printf 'XXUF' | dd of="$tmp/magic.gguf" bs=1 seek=0 conv=notrunc status=none
expect_one_line 2 "magic.gguf: not a GGUF file \(bad magic\)" -- "$bg" model info "$tmp/magic.gguf"
cp "$f" "$tmp/version.gguf"; printf '\x02' | dd of="$tmp/version.gguf" bs=1 seek=4 conv=notrunc status=none
expect_one_line 2 "version.gguf: unsupported GGUF version 2" -- "$bg" model info "$tmp/version.gguf"

# Another architecture: every "qwen2" in the file (the architecture, the keys) becomes "llama".
perl -pe 's/qwen2/llama/g' <"$f" >"$tmp/llama.gguf"
expect_one_line 2 "llama.gguf: unsupported architecture 'llama' \(supported: qwen2\)" -- "$bg" model info "$tmp/llama.gguf"
expect 0 'gguf +: version 3' -- "$bg" model info --raw "$tmp/llama.gguf"

# Truncations: every byte of the header region, then points through the tensor data.
for n in $(seq 1 200) 1000 5000 20000 50000 $((size / 2)) $((size - 300000)) $((size - 100)); do
    head -c "$n" "$f" >"$tmp/cut.gguf"
    expect_one_line 2 "cut.gguf: " -- "$bg" model info "$tmp/cut.gguf"
done

echo "model_cli: $passes passed, $fails failed"
[[ $fails -eq 0 ]]
