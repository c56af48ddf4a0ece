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

# info --json: never over the model it describes (one line, the file intact), and a file's
# strings that are not UTF-8 become U+FFFD in the JSON instead of an internal error.
cp "$f" "$tmp/self.gguf"
expect_one_line 2 "self.gguf: is the input .*self.gguf itself" -- "$bg" model info "$tmp/self.gguf" --json "$tmp/./self.gguf"
cmp -s "$f" "$tmp/self.gguf" && passes=$((passes + 1)) || { echo "FAIL: info --json changed its input"; fails=$((fails + 1)); }
perl -pe 's/bitgate synthetic tiny/\xffitgate synthetic tiny/' <"$f" >"$tmp/latin.gguf"
expect 0 'itgate synthetic tiny' -- "$bg" model info "$tmp/latin.gguf" --json "$tmp/latin.json"
expect 0 "\"value\": \"$(printf '\xef\xbf\xbd')itgate synthetic tiny\"" -- cat "$tmp/latin.json"

# A valid qwen2 file the forward cannot run: refused before the run in one line naming the file
# (the metadata values edited in place: u32 is type 4, f32 type 6). 8 heads over 256 dims are
# head_dim 32, which attention does not take; rms eps 1e-5 is not the rms_norm family's 1e-6.
perl -0777 -pe 's/(head_count\x04\0\0\0)\x04\0\0\0/${1}\x08\0\0\0/; s/(head_count_kv\x04\0\0\0)\x02\0\0\0/${1}\x04\0\0\0/' \
    <"$f" >"$tmp/hd32.gguf"
expect 0 'heads +: 8 \(kv heads 4, head_dim 32\)' -- "$bg" model info "$tmp/hd32.gguf"
expect_one_line 2 "hd32.gguf: head_dim 32 \(attention takes 64 or 128\)" -- "$bg" model predict "$tmp/hd32.gguf" --prompt 2
expect_one_line 2 "hd32.gguf: head_dim 32" -- "$bg" model run "$tmp/hd32.gguf" --host --prompt 2
perl -0777 -pe 's/(layer_norm_rms_epsilon\x06\0\0\0)..../${1}\xac\xc5\x27\x37/s' <"$f" >"$tmp/eps.gguf"
expect_one_line 2 "eps.gguf: rms eps 9.99999975e-06 \(the rms_norm family has 1e-6 only\)" -- \
    "$bg" model predict "$tmp/eps.gguf" --prompt 2

# A run's logits never replace the model or the token file it reads.
cp "$f" "$tmp/m.gguf"; echo "1 2 3 4" >"$tmp/tk.txt"
expect_one_line 2 "m.gguf: is the input .*m.gguf itself" -- "$bg" model run "$tmp/m.gguf" --host --prompt 2 --out "$tmp/./m.gguf"
expect_one_line 2 "tk.txt: is the input .*tk.txt itself" -- "$bg" model predict "$tmp/m.gguf" --prompt 2 --tokens "$tmp/tk.txt" \
    --out "$tmp/tk.txt"
expect_one_line 2 "m.gguf: is the input .*m.gguf itself" -- "$bg" model ab "$tmp/m.gguf" --host --prompt 2 --out-b "$tmp/m.gguf"
cmp -s "$f" "$tmp/m.gguf" && passes=$((passes + 1)) || { echo "FAIL: m.gguf changed"; fails=$((fails + 1)); }

# A token file's errors name it, in one line, before the run.
echo "1 2 3" >"$tmp/few.txt"; echo "1 5000 3 4" >"$tmp/wide.txt"
expect_one_line 2 "few.txt: 3 ids, --prompt \+ --decode need 4" -- "$bg" model run --synthetic tiny --host --prompt 2 --decode 2 --tokens "$tmp/few.txt"
expect_one_line 2 "wide.txt: token 1: id 5000 is outside \[0, 1024\)" -- "$bg" model predict --synthetic tiny --prompt 2 --tokens "$tmp/wide.txt"

# Run arguments: checked against the model before anything is sized from them (one line, exit 2,
# never an allocation that fails); the tiny preset's context is 512.
run=("$bg" model run --synthetic tiny --seed 1 --host)
expect_one_line 2 "--prompt 9223372036854775807 \+ --decode 0 exceeds the model's context 512" -- "${run[@]}" --prompt 9223372036854775807
expect_one_line 2 "--prompt 4 \+ --decode 9223372036854775807 exceeds" -- "${run[@]}" --prompt 4 --decode 9223372036854775807
expect_one_line 2 "--prompt 400 \+ --decode 113 exceeds the model's context 512" -- "${run[@]}" --prompt 400 --decode 113
expect_one_line 2 "--prompt -5: must be at least 1" -- "${run[@]}" --prompt -5
expect_one_line 2 "--decode -1: must not be negative" -- "${run[@]}" --prompt 2 --decode -1
expect_one_line 2 "--sm-count -3: must be positive" -- "${run[@]}" --prompt 2 --sm-count -3
expect_one_line 2 "--expect-md5 'xyz': not an md5" -- "${run[@]}" --prompt 2 --expect-md5 xyz
expect_one_line 2 "unknown path 'nosuch' \(baseline, fast, reference\)" -- "${run[@]}" --prompt 2 --path nosuch
expect_one_line 2 "--device and --host exclude each other" -- "${run[@]}" --prompt 2 --device
# Without a GPU, --device (and the device bench) is exit 3 in one line, before the weights are made
# (the model's line would come after them: the 7B preset is 8 GB of synthesis), yet after the
# arguments are judged against the model's dimensions.
if [[ -z "$(nvidia-smi -L 2>/dev/null)" ]]; then
    expect_one_line 3 "a GPU is required" -- "$bg" model run --synthetic qwen2-7b --prompt 2 --device
    expect_one_line 3 "a GPU is required" -- "$bg" model ab --synthetic qwen2-7b --prompt 2 --device
    expect_one_line 3 "a GPU is required" -- "$bg" model bench --synthetic qwen2-7b
    expect_one_line 2 "--prompt 40000 \+ --decode 0 exceeds the model's context 32768" -- \
        "$bg" model run --synthetic qwen2-7b --prompt 40000 --device
fi
expect_one_line 2 "--prompt 513 \+ --decode 0 exceeds" -- "$bg" model predict --synthetic tiny --seed 1 --prompt 513
# The md5 as md5sum prints it, in either case: the run's own md5 upper-cased passes, another fails.
md5=$("${run[@]}" --prompt 2 | awk '/logits \(/ {print $1}')
expect 0 "^$md5  logits" -- "${run[@]}" --prompt 2 --expect-md5 "${md5^^}"
expect 1 "FAIL: md5 $md5, expected 0123456789abcdef0123456789abcdef" -- "${run[@]}" --prompt 2 --expect-md5 0123456789ABCDEF0123456789abcdef
# The host models' instructions change the time, never the md5: every path this CPU has prints the
# scalar definition's md5 (a prompt past one 64-token tile, so the prefill GEMM's panels and token
# tiles both have ragged ends); a path it lacks, or an unknown name, is one line and exit 2.
md5=$("${run[@]}" --prompt 70 --decode 3 --host-path scalar | awk '/logits \(/ {print $1}')
for hp in fastest avx2 avx512_vnni; do
    if "${run[@]}" --prompt 1 --host-path "$hp" >/dev/null 2>&1; then
        expect 0 "^$md5  logits" -- "${run[@]}" --prompt 70 --decode 3 --host-path "$hp"
    else
        expect_one_line 2 "--host-path $hp: this CPU does not have it" -- "${run[@]}" --prompt 2 --host-path "$hp"
    fi
done
expect_one_line 2 "--host-path 'neon': unknown \(fastest, scalar, avx2, avx512_vnni\)" -- "$bg" model predict --synthetic tiny --host-path neon
# ab with one file for both outputs would compare the second run with itself.
expect_one_line 2 "--out-a and --out-b name the same file" -- "$bg" model ab --synthetic tiny --seed 1 --host --prompt 2 \
    --out-a "$tmp/s.spkl" --out-b "$tmp/./s.spkl"
[[ ! -e $tmp/s.spkl ]] && passes=$((passes + 1)) || { echo "FAIL: ab wrote $tmp/s.spkl before refusing"; fails=$((fails + 1)); }
# bench's arguments are bad input before the question of a GPU comes up.
expect_one_line 2 "path reference runs on the host only" -- "$bg" model bench --synthetic tiny --path reference
expect_one_line 2 "--sm-count -1: must be positive" -- "$bg" model bench --synthetic tiny --sm-count -1
expect_one_line 2 "--context 512 need at most 512 positions" -- "$bg" model bench --synthetic tiny --prefill 4 --context 512

echo "model_cli: $passes passed, $fails failed"
[[ $fails -eq 0 ]]
