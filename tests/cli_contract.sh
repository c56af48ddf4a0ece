#!/usr/bin/env bash
# The CLI's contract, from the outside: exit codes and one-line errors that name file and line.
# usage: cli_contract.sh BITGATE SOURCE_DIR
set -u
bg=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect.sh"

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
# Replaying from --out's own files: an output over a given input is refused before the run (one
# line, the file kept); --save-inputs over its own given input writes the same bytes.
mkdir -p "$tmp/replay"
"$bg" run --family add --variant v1 --shape "n=2 d=8" --save-inputs --out "$tmp/replay" >/dev/null
cp "$tmp/replay/y.npy" "$tmp/y.kept"
expect_one_line 2 "replay/y.npy: is the input .*replay/y.npy itself" -- "$bg" run --family add --variant v1 --shape "n=2 d=8" \
    --input "a=$tmp/replay/y.npy" --out "$tmp/replay"
cmp -s "$tmp/replay/y.npy" "$tmp/y.kept" && passes=$((passes + 1)) || { echo "FAIL: run replaced its input y.npy"; fails=$((fails + 1)); }
expect 0 "output y" -- "$bg" run --family add --variant v1 --shape "n=2 d=8" --input "a=$tmp/replay/a.npy" --save-inputs --out "$tmp/replay"

# reports
expect 0 '0 failed' -- "$bg" check --host-only --family quantize_q8_0 --catalog boundaries --json "$tmp/r.json" --junit "$tmp/r.xml"
grep -q '"failed": 0' "$tmp/r.json" && grep -q '<testsuites name="bitgate check"' "$tmp/r.xml" && passes=$((passes + 1)) \
    || { echo "FAIL: json/junit reports"; fails=$((fails + 1)); }

expect 2 'expected I/N' -- "$bg" check --host-only --shard 3/2
# The watchdog's limit: a negative or non-numeric one is bad input; 0 (never) and a number run.
expect 2 "--case-timeout: -1 is not a number of seconds" -- "$bg" check --host-only --family quantize_q8_0 --case-timeout -1
expect 2 "case-timeout" -- "$bg" check --host-only --family quantize_q8_0 --case-timeout soon
expect 2 "--case-timeout: -5 is not a number of seconds" -- "$bg" prop --host-only --family quantize_q8_0 --count 1 --case-timeout -5
expect 0 '0 failed' -- "$bg" check --host-only --family quantize_q8_0 --catalog boundaries --case-timeout 0
expect 0 '0 failed' -- "$bg" check --host-only --family quantize_q8_0 --shard 1/3
expect 2 '' -- "$bg" check --no-such-flag


# Selections that name nothing are bad input; a selection of zero cases fails unless allowed.
expect 2 "--variant v9: no such variant in the selected families \(known: v1\)" -- "$bg" check --host-only --family quantize_q8_0 --variant v9
expect 2 '--catalog nosuch: no such catalog .*known: .*regressions' -- "$bg" check --host-only --catalog nosuch
expect 2 '--catalog nosuch: no such catalog' -- "$bg" golden check --catalog nosuch
expect 2 "--profile nosuch: unknown profile for quantize_q8_0" -- "$bg" run --family quantize_q8_0 --variant v1 --shape k=896 --profile nosuch --out "$tmp"
expect 2 '--variant nosuch: no such variant' -- "$bg" prop --host-only --family quantize_q8_0 --variant nosuch --count 3
# A family named beside --variant that has none of them is bad input (naming it and running none of
# it would pass in silence); without --family, the families that have none are named as not
# searched and the summary counts those searched: add, bias and rope have an `inplace` variant.
expect_one_line 2 "--family quantize_q8_0: none of its variants \(v1\) is among --variant inplace" -- \
    "$bg" prop --host-only --family add quantize_q8_0 --variant inplace --count 2
expect_one_line 2 "--family quantize_q8_0: none of its variants \(v1\) is among --variant inplace" -- \
    "$bg" check --host-only --family add quantize_q8_0 --variant inplace
expect_one_line 2 "--family quantize_q8_0: none of its variants \(v1\) is among --variant inplace" -- \
    "$bg" golden check --family add,quantize_q8_0 --variant inplace
expect 0 'prop quantize_q8_0: no variant of it selected by --variant' -- "$bg" prop --host-only --variant inplace --count 2
expect 0 'bitgate prop: 6 generated cases over 3 families: all held' -- "$bg" prop --host-only --variant inplace --count 2
# With no mutant linked (bitgate itself), --mutants says so before judging the names.
expect_one_line 2 "--mutants: no mutant variants are linked into this executable" -- \
    "$bg" check --host-only --mutants --family attention --variant m_non_causal
expect_one_line 2 "--mutants: no mutant variants are linked into this executable" -- \
    "$bg" prop --host-only --mutants --count 3
expect_one_line 2 "--mutants excludes --append" -- "$bg" prop --host-only --mutants --append --count 3
expect 1 'the selection has no cases' -- "$bg" check --host-only --family quantize_q8_0 --filter nomatch
expect 0 '0 cases' -- "$bg" check --host-only --family quantize_q8_0 --filter nomatch --allow-empty
expect 2 'not a regular expression' -- "$bg" check --host-only --filter '('

# Seeds: every advertised seed is usable; a seed with no golden line is its own, non-failing state.
expect 0 '[1-9][0-9]* ok, 0 failed, 0 skipped, [1-9][0-9]* without a golden line' -- "$bg" check --host-only --family quantize_q8_0 --catalog boundaries --seeds 1-2
expect 0 'without a golden line' -- "$bg" check --host-only --family quantize_q8_0 --catalog boundaries --seeds 0
expect 1 'golden_missing' -- "$bg" check --host-only --family quantize_q8_0 --catalog boundaries --seeds 1-2 --require-golden
expect 0 'without a golden line' -- timeout 20 "$bg" check --host-only --family quantize_q8_0 --catalog boundaries --seeds 18446744073709551615-18446744073709551615
expect 2 'more than 10000 seeds' -- "$bg" check --host-only --seeds 1-10001
expect 2 "seed '1x' is not an integer" -- "$bg" check --host-only --seeds 1x
root
expect 0 'lines added' -- env -u CI "$bg" golden regen --family quantize_q8_0 --seeds 2 --root "$tmp/root"
expect 0 ' 0 failed' -- "$bg" check --host-only --family quantize_q8_0 --catalog boundaries --seeds 1-2 --require-golden --root "$tmp/root"
expect 0 ' 0 failed' -- "$bg" golden check --family quantize_q8_0 --root "$tmp/root"
expect 0 ' 0 failed' -- "$bg" golden check --family quantize_q8_0 --seeds 2 --require-golden --root "$tmp/root"
expect 0 '0 lines added, 0 changed, 0 removed' -- env -u CI "$bg" golden regen --family quantize_q8_0 --root "$tmp/root"

# a stale line is named in the same spelling as every case
root
echo "quantize_q8_0 v1 k=4064 seed=1 profile=zeros y=0123456789abcdef0123456789abcdef" >>"$tmp/root/golden/quantize_q8_0.golden"
expect 1 'FAIL +host +quantize_q8_0/v1 k=4064 seed=1 profile=zeros  golden_mismatch  \(stale line' -- "$bg" golden check --family quantize_q8_0 --root "$tmp/root"
# a line at a seed the catalog does not name is checked with its catalog case
root
echo "quantize_q8_0 v1 k=32 seed=99 profile=zeros y=0123456789abcdef0123456789abcdef" >>"$tmp/root/golden/quantize_q8_0.golden"
expect 1 'FAIL +host +quantize_q8_0/v1 k=32 seed=99 profile=zeros  golden_mismatch' -- "$bg" golden check --family quantize_q8_0 --root "$tmp/root"
expect 0 '0 lines added, 1 changed, 0 removed' -- env -u CI "$bg" golden regen --family quantize_q8_0 --root "$tmp/root"
expect 0 ' 0 failed' -- "$bg" golden check --family quantize_q8_0 --root "$tmp/root"

# Regeneration is deliberate: refused under any CI value, --dry-run writes nothing, no reports.
root
expect 2 'refuses to run under CI=1' -- env CI=1 "$bg" golden regen --family quantize_q8_0 --root "$tmp/root"
expect 2 'refuses to run under CI=yes' -- env CI=yes "$bg" golden regen --family quantize_q8_0 --root "$tmp/root"
expect 2 '--json and --junit do not apply' -- env -u CI "$bg" golden regen --family quantize_q8_0 --json "$tmp/g.json" --root "$tmp/root"
sed -i '7d' "$tmp/root/golden/quantize_q8_0.golden"
cp "$tmp/root/golden/quantize_q8_0.golden" "$tmp/before.golden"
expect 0 'dry-run \(nothing written\): 1 lines added' -- env -u CI "$bg" golden regen --family quantize_q8_0 --dry-run --root "$tmp/root"
cmp -s "$tmp/before.golden" "$tmp/root/golden/quantize_q8_0.golden" && passes=$((passes + 1)) || { echo "FAIL: --dry-run wrote"; fails=$((fails + 1)); }
# after a failure: every failure recapped at the end, in the one case-id spelling
out=$("$bg" golden check --family quantize_q8_0 --root "$tmp/root" 2>&1)
[[ $(tail -2 <<<"$out" | head -1) == "1 failed:" ]] && grep -qE '^  FAILED host   quantize_q8_0/v1 k=896 seed=1 profile=normal  golden_missing$' <<<"$out" \
    && passes=$((passes + 1)) || { echo "FAIL: no recap at the end: $(tail -3 <<<"$out")"; fails=$((fails + 1)); }
out=$("$bg" golden check --family quantize_q8_0 --root "$tmp/root" --quiet 2>&1)
grep -q '^OK' <<<"$out" && { echo "FAIL: --quiet printed passing cases"; fails=$((fails + 1)); } || passes=$((passes + 1))
out=$("$bg" check --host-only --family quantize_q8_0 --root "$tmp/root" --failures-only 2>&1)
[[ $(grep -c '^OK' <<<"$out") -eq 0 && $(grep -c '^FAIL ' <<<"$out") -eq 1 ]] && passes=$((passes + 1)) \
    || { echo "FAIL: --failures-only: $(head -3 <<<"$out")"; fails=$((fails + 1)); }

# Reports: paths checked before the run, write errors are errors, the JSON says what ran.
expect 2 '--json /nonexistent/r.json: cannot open for writing' -- "$bg" check --host-only --family quantize_q8_0 --json /nonexistent/r.json
expect 2 '/dev/full: write failed: No space left on device' -- "$bg" check --host-only --family quantize_q8_0 --catalog boundaries --json /dev/full
expect 2 '/dev/full: write failed: No space left on device' -- "$bg" golden check --family quantize_q8_0 --junit /dev/full
"$bg" check --host-only --family quantize_q8_0 --catalog boundaries --json "$tmp/v.json" >/dev/null
python3 - "$tmp/v.json" <<'PY' && passes=$((passes + 1)) || { echo "FAIL: JSON report fields"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["format"] == 2 and j["bitgate"] and j["build_commit"] and j["device"] == "none", j
assert j["argv"][1:3] == ["check", "--host-only"], j["argv"]
r = j["results"][0]
assert r["shape"].startswith("k=") and r["seed"] == 1 and r["profile"] and r["case"].startswith("quantize_q8_0/v1 "), r
PY
expect 0 "^bitgate [0-9.]+ \(commit [0-9a-f]{12}|unknown\)" -- "$bg" --version

# Sharding: golden check shards, the summary names the shard, bad shard specs are bad input.
expect 0 'bitgate golden check shard 1/2: [1-9][0-9]* cases' -- "$bg" golden check --family quantize_q8_0 --shard 1/2
expect 0 'bitgate check shard 0/3: ' -- env GTEST_SHARD_INDEX=0 GTEST_TOTAL_SHARDS=3 GTEST_SHARD_STATUS_FILE="$tmp/shard.status" "$bg" check --host-only --family quantize_q8_0
[[ -e "$tmp/shard.status" ]] && passes=$((passes + 1)) || { echo "FAIL: GTEST_SHARD_STATUS_FILE not touched"; fails=$((fails + 1)); }
expect 2 'expected I/N' -- "$bg" check --host-only --shard 1/2x
expect 2 'expected I/N' -- "$bg" golden check --shard 0/1/2
expect 2 'GTEST_SHARD_INDEX=abc' -- env GTEST_SHARD_INDEX=abc GTEST_TOTAL_SHARDS=2 "$bg" check --host-only
expect 2 'go together' -- env GTEST_TOTAL_SHARDS=2 "$bg" check --host-only

# ci/device: a failing, timed-out or planted step fails the gate (stand-in executables, no GPU).
mkdir -p "$tmp/fakebin"
printf '#!/usr/bin/env bash\n[[ "$1 $2" == "list families" ]] && { echo "toy: a stand-in"; exit 0; }\necho "lint: 3 kernels in 1 files, 0 findings"\necho "a later line"\nsleep "${FAKE_SLEEP:-0}"\nexit "${FAKE_RC:-0}"\n' >"$tmp/fakebin/bitgate"
chmod +x "$tmp/fakebin/bitgate"
expect 0 'ci/device: every step passed' -- env STEPS=lint "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
# The table names each step's own verdict line beside its row (the log's summary, not its last line).
expect 0 '^lint +rc=0 +expected=0 +[0-9]+ s +ok +lint: 3 kernels in 1 files, 0 findings$' -- env STEPS=lint "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
expect 1 'ci/device: FAILED: lint \(exit 1, expected 0\)' -- env STEPS=lint FAKE_RC=1 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
expect 1 'ci/device: FAILED: planted \(exit 1' -- env STEPS=lint PLANT_FAIL=1 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
expect 1 'ci/device: FAILED: lint \(timed out' -- env STEPS=lint FAKE_SLEEP=5 STEP_TIMEOUT=1 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
expect 1 'ci/device: FAILED: lint \(timed out' -- env STEPS=lint FAKE_SLEEP=5 BUDGET=1 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
# The tests step: a filter that selects nothing, or a device test that skips, fails it.
printf '#!/usr/bin/env bash\necho "[==========] ${FAKE_RAN:-3} tests from 2 test suites ran. (5 ms total)"\n[[ -n ${FAKE_SKIP:-} ]] && echo "[  SKIPPED ] 1 test, listed below:"\nexit 0\n' >"$tmp/fakebin/bitgate_tests"
chmod +x "$tmp/fakebin/bitgate_tests"
expect 0 'ci/device: every step passed' -- env STEPS=tests "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
expect 1 'ci/device: FAILED: tests \(exit 1' -- env STEPS=tests FAKE_RAN=0 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
expect 1 'ci/device: FAILED: tests \(exit 1' -- env STEPS=tests FAKE_SKIP=1 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"

# ci/device: the race step runs racecheck as the shards do over the mutant with a planted hazard
# and expects its exit 9; a racecheck that finds none fails the gate.
printf '#!/usr/bin/env bash\necho "$*" >>"%s/sanitizer-args"\n[[ " $* " == *" m_no_wait "* ]] && exit "${FAKE_RACE_RC:-9}"\necho "========= ERROR SUMMARY: 0 errors"\n' "$tmp" >"$tmp/fakebin/compute-sanitizer"
chmod +x "$tmp/fakebin/compute-sanitizer"
rm -f "$tmp/sanitizer-args"
expect 0 'ci/device: every step passed' -- env PATH="$tmp/fakebin:$PATH" STEPS="racecheck race" SANITIZER_SHARDS=1 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
expect 0 '^--tool racecheck --error-exitcode 9 --print-limit 20 .* check --device .*--shard 0/1$' -- cat "$tmp/sanitizer-args"
expect 0 '^--tool racecheck --error-exitcode 9 --print-limit 5 .*/bitgate-mutants check --mutants --device --family mmq_q8_0 --variant m_no_wait ' -- cat "$tmp/sanitizer-args"
expect 1 'ci/device: FAILED: race \(exit 0, expected 9\)' -- env PATH="$tmp/fakebin:$PATH" STEPS=race FAKE_RACE_RC=0 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
# ci/device: the prop-mutants step runs prop --mutants on the device; its summary stands in the
# table, and a mutant the search misses fails the gate.
printf '#!/usr/bin/env bash\necho "$*" >"%s/mutants-args"\necho "bitgate prop --mutants: 3 mutants searched: 3 caught, 0 missed, 0 with another class"\nexit "${FAKE_PM_RC:-0}"\n' "$tmp" >"$tmp/fakebin/bitgate-mutants"
chmod +x "$tmp/fakebin/bitgate-mutants"
expect 0 '^prop-mutants +rc=0 +expected=0 +[0-9]+ s +ok +bitgate prop --mutants: 3 mutants searched: 3 caught' -- env STEPS=prop-mutants "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
expect 0 '^prop --mutants --device --count 100 --seed [0-9]+$' -- cat "$tmp/mutants-args"
expect 1 'ci/device: FAILED: prop-mutants \(exit 1, expected 0\)' -- env STEPS=prop-mutants FAKE_PM_RC=1 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
# A step name the gate does not know, or a selection of none, is bad input, not a green gate.
expect_one_line 2 "ci/device: unknown step 'rac' in STEPS" -- env STEPS="lint rac" "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
expect_one_line 2 'ci/device: STEPS selects no step' -- env STEPS=" " "$src/ci/device" "$tmp/fakebin" "$tmp/dev"

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
# An output never replaces an input: refused before the run, one line, the input intact.
cp "$tmp/a.spkl" "$tmp/keep.spkl"
expect_one_line 2 "a.spkl: is the input .*a.spkl itself" -- "$bg" spkl diff "$tmp/a.spkl" "$tmp/b.spkl" --json "$tmp/./a.spkl"
expect_one_line 2 "a.spkl: is the input .*a.spkl itself" -- "$bg" spkl kld "$tmp/b.spkl" "$tmp/a.spkl" --json "$tmp/a.spkl"
expect_one_line 2 "a.spkl: is the input .*a.spkl itself" -- "$bg" spkl info "$tmp/a.spkl" --json "$tmp/a.spkl"
expect_one_line 2 "--json and --plot name the same file" -- "$bg" spkl diff "$tmp/a.spkl" "$tmp/b.spkl" --json "$tmp/d.out" \
    --plot "$tmp/./d.out"
expect 0 "/dev/null: \(7, 1000\)" -- "$bg" spkl to-npy "$tmp/a.spkl" /dev/null --targets /dev/null  # a device takes both
expect_one_line 2 "a.spkl: is the input .*a.spkl itself" -- "$bg" spkl to-npy "$tmp/a.spkl" "$tmp/x.npy" --targets "$tmp/a.spkl"
expect_one_line 2 "the output and --targets name the same file" -- "$bg" spkl to-npy "$tmp/a.spkl" "$tmp/x.npy" --targets "$tmp/./x.npy"
cmp -s "$tmp/a.spkl" "$tmp/keep.spkl" && passes=$((passes + 1)) || { echo "FAIL: a.spkl changed"; fails=$((fails + 1)); }
# A llama.cpp KLD file (n_ctx 4, vocab 3, one chunk: one scored row) and its token stream.
printf '_logits_\x04\0\0\0\x03\0\0\0\x01\0\0\0\0\0\0\0\x01\0\0\0\x02\0\0\0\0\0\0\0\0\0\x80\x3f\0\0\x80\xbf\x01\0\x02\0\x03\0\0\0' >"$tmp/k.kld"
cp "$tmp/k.kld" "$tmp/k.kept"
expect 0 "1 rows x 3 vocab" -- "$bg" spkl from-llama-kld "$tmp/k.kld" "$tmp/k.spkl"
expect_one_line 2 "k.kld: is the input .*k.kld itself" -- "$bg" spkl from-llama-kld "$tmp/k.kld" "$tmp/k2.spkl" --tokens "$tmp/k.kld"
expect_one_line 2 "the output and --tokens name the same file" -- "$bg" spkl from-llama-kld "$tmp/k.kld" "$tmp/k2.spkl" --tokens "$tmp/k2.spkl"
cmp -s "$tmp/k.kld" "$tmp/k.kept" && passes=$((passes + 1)) || { echo "FAIL: k.kld changed"; fails=$((fails + 1)); }
# An array of no rows may name any vocabulary: converted without a row's buffer (16 GB here).
hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4000000000), }"
printf '\x93NUMPY\x01\x00\x76\x00%s%*s\n' "$hdr" $((117 - ${#hdr})) '' >"$tmp/wide.npy"
# The bound: 2 GB of address space; under AddressSanitizer (whose shadow memory needs far more
# address space) the same bound as its largest allocation. ASan's entry point is in the binary's
# symbols whether it is linked dynamically (g++) or statically (clang).
if grep -qa __asan_init "$bg"; then
    expect 0 "0 rows x 4000000000 vocab, f16" -- env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=2000" \
        "$bg" spkl from-npy "$tmp/wide.npy" "$tmp/wide.spkl" --dtype f16
else
    expect 0 "0 rows x 4000000000 vocab, f16" -- bash -c "ulimit -v 2000000; '$bg' spkl from-npy '$tmp/wide.npy' '$tmp/wide.spkl' --dtype f16"
fi
root
cp "$tmp/root/shapes/add.shapes" "$tmp/add.shapes.kept"
expect_one_line 2 "--json .*add.shapes: is the input" -- "$bg" check --host-only --family add --root "$tmp/root" \
    --json "$tmp/root/shapes/add.shapes"
cmp -s "$tmp/root/shapes/add.shapes" "$tmp/add.shapes.kept" && passes=$((passes + 1)) || { echo "FAIL: add.shapes changed"; fails=$((fails + 1)); }
expect_one_line 2 "--json and --junit name the same file" -- "$bg" check --host-only --family add --root "$tmp/root" \
    --json "$tmp/r.json" --junit "$tmp/./r.json"
"$bg" check --host-only --family add --root "$tmp/root" --shard 0/2 --quiet --json "$tmp/s0.json" >/dev/null
cp "$tmp/s0.json" "$tmp/s0.kept"
expect_one_line 2 "--json .*s0.json: is the input" -- "$bg" report merge "$tmp/s0.json" --json "$tmp/s0.json"
cmp -s "$tmp/s0.json" "$tmp/s0.kept" && passes=$((passes + 1)) || { echo "FAIL: s0.json changed"; fails=$((fails + 1)); }

# synth's noise keeps every logit finite: NaN, negative and huge amplitudes are refused, nothing written.
for noise in nan -0.5 1e39 1000.5; do
    expect_one_line 2 "spkl synth: --noise .*: expected an amplitude from 0 to 1000" -- \
        "$bg" spkl synth "$tmp/n.spkl" --vocab 10 --rows 2 --noise "$noise"
done
[[ ! -e $tmp/n.spkl ]] && passes=$((passes + 1)) || { echo "FAIL: synth wrote $tmp/n.spkl with a refused --noise"; fails=$((fails + 1)); }
expect 0 '2 rows x 10 vocab, f16' -- "$bg" spkl synth "$tmp/n.spkl" --vocab 10 --rows 2 --noise 1000 --dtype f16

# bench's own arguments are bad input before the run (and before the question of a GPU).
expect_one_line 2 "--min-iters 0: expected 1 to 2000" -- "$bg" bench --min-iters 0
expect_one_line 2 "--min-iters 2001: expected 1 to 2000" -- "$bg" bench --min-iters 2001
expect_one_line 2 "--compute-peak: unknown family 'nope'" -- "$bg" bench --compute-peak nope=5 --plot "$tmp/b.svg"
expect_one_line 2 "--compute-peak mmq_q8_0: not among the --family selection" -- \
    "$bg" bench --family rope --compute-peak mmq_q8_0=5 --plot "$tmp/b.svg"
root
expect_one_line 2 "--json and --plot name the same file" -- "$bg" bench --root "$tmp/root" --json "$tmp/b.out" --plot "$tmp/./b.out"
expect_one_line 2 "add.shapes: is the input" -- "$bg" bench --root "$tmp/root" --json "$tmp/root/shapes/add.shapes"
# A selection that would time nothing is bad input too, on any machine: a run that timed nothing
# would print an empty table and exit 0.
expect_one_line 2 "--variant nosuch: no such variant in the selected families \(known: decode, prefill\)" -- \
    "$bg" bench --family attention --variant nosuch
expect_one_line 2 "--family rope: none of its variants \(v1, inplace\) is among --variant decode" -- \
    "$bg" bench --family attention,rope --variant decode
sed -i -E '/^[^#]/s/[[:space:]]bench([[:space:]]|$)/\1/' "$tmp/root/shapes/attention.shapes"
expect_one_line 2 "bench --family attention: family attention has no catalog line marked bench .*root/shapes/attention.shapes" -- \
    "$bg" bench --family attention --root "$tmp/root"
expect_one_line 2 "bench --variant decode: variant decode has no kernel timed on a catalog line marked bench" -- \
    "$bg" bench --variant decode --root "$tmp/root"
sed -i -E '/^[^#]/s/[[:space:]]bench([[:space:]]|$)/\1/' "$tmp/root/shapes/"*.shapes
expect_one_line 2 "bench: no catalog line marked bench in .*root/shapes" -- "$bg" bench --root "$tmp/root"
root

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

# bench/peer-llama.sh without a source tree or a GPU: the catalog shapes it times, and its case
# file written against a stand-in ggml.h whose numbering is arbitrary (so the file must carry it).
peer=$src/bench/peer-llama.sh
expect 0 '^proj_q8_0 q8_0 4096 14336 1 n=4096:k=14336:g=1$' -- "$peer" --cases
expect 0 '^mmq_q8_0 q8_0 18944 3584 3325 N=18944:K=3584:n=3325$' -- "$peer" --cases
[[ $("$peer" --cases | grep -c ' q8_0 96 7168 1 ') -eq 1 ]] && passes=$((passes + 1)) || { echo "FAIL: peer-llama: 96 x 7168 listed twice"; fails=$((fails + 1)); }
expect 0 '^attention f16 32768 28 4 128 L=32768:n_head=28:n_kv_head=4:head_dim=128$' -- "$peer" --cases
[[ $("$peer" --cases | grep -c '^attention f16 3325 ') -eq 0 ]] && passes=$((passes + 1)) || { echo "FAIL: peer-llama: a prefill line listed as decode"; fails=$((fails + 1)); }
mkdir -p "$tmp/ggml/include"
printf 'enum ggml_type { GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 3, GGML_TYPE_Q8_0 = 8 };\nenum ggml_op { GGML_OP_NONE = 0, GGML_OP_MUL_MAT = 29, GGML_OP_FLASH_ATTN_EXT = 61 };\nenum ggml_prec { GGML_PREC_DEFAULT = 0, GGML_PREC_F32 = 7 };\n' >"$tmp/ggml/include/ggml.h"
if command -v "${CC:-cc}" >/dev/null; then
    "$peer" --test-file "$tmp/ggml" "$tmp/cases.txt" >/dev/null 2>&1
    expect 0 '^29 0 12288 1 1 1 0 2 8 7168 12288 1 1 0 0 0 0 0 7168 1 1 1 0 0 0 0 bitgate:proj_q8_0:n=12288:k=7168:g=1$' -- cat "$tmp/cases.txt"
    expect 0 '^29 0 3584 512 1 1 0 2 8 3584 3584 1 1 0 0 0 0 0 3584 512 1 1 0 0 0 0 bitgate:mmq_q8_0:N=3584:K=3584:n=512$' -- cat "$tmp/cases.txt"
    expect 0 '^29 0 4096 1 1 1 0 2 0 4096 4096 1 1 0 0 0 0 0 4096 1 1 1 0 0 0 0 bitgate:proj_f32:n=4096:k=4096$' -- cat "$tmp/cases.txt"
    # The scale is the f32 1/sqrt(head_dim) as bits: sqrt(2)/16 = 0x3db504f3 at 128, 1/8 = 0x3e000000 at 64.
    expect 0 '^61 0 128 28 1 1 4 1035273459 0 0 7 4 0 128 1 28 1 0 0 0 0 3 128 32768 4 1 0 0 0 0 3 128 32768 4 1 0 0 0 0 3 32768 1 1 1 0 0 0 0 bitgate:attention:L=32768:n_head=28:n_kv_head=4:head_dim=128$' -- cat "$tmp/cases.txt"
    expect 0 '^61 0 64 14 1 1 4 1040187392 0 0 7 4 0 64 1 14 1 0 0 0 0 3 64 32768 2 1 0 0 0 0 3 64 32768 2 1 0 0 0 0 3 32768 1 1 1 0 0 0 0 bitgate:attention:L=32768:n_head=14:n_kv_head=2:head_dim=64$' -- cat "$tmp/cases.txt"
fi
expect 2 'peer-llama: .*/none: no such directory' -- "$peer" "$tmp/none"
# --run parses a test-backend-ops it did not build: a stand-in printing the two layouts seen (the
# result on the case's line, or on the next line after a CUDA-graph message) and an unsupported case.
cat >"$tmp/tbo" <<'TBO'
#!/usr/bin/env bash
printf '  MUL_MAT(name=bitgate:proj_q8_0:n=96:k=7168:g=1,type=f32): ggml_backend_cuda_graph_compute: CUDA graph warmup complete\n'
printf '             245760 runs -     4.09 us/run -      742 kB/run -  173.07 GB/s\n'
printf '  MUL_MAT(name=bitgate:mmq_q8_0:N=896:K=4864:n=3325,type=f32):  5499 runs -   186.46 us/run -    79334 kB/run -  405.76 GB/s\n'
printf '  MUL_MAT(name=bitgate:proj_f32:n=96:k=7168,type=f32): not supported [CUDA0]\n'
printf '  FLASH_ATTN_EXT(name=bitgate:attention:L=32768:n_head=28:n_kv_head=4:head_dim=128,type=f32):     1491 runs -    41.37 us/run -    65552 kB/run - 1511.25 GB/s\n'
TBO
chmod +x "$tmp/tbo"
printf '29 0 96 1 1 1 0 2 8 7168 96 1 1 0 0 0 0 0 7168 1 1 1 0 0 0 0 bitgate:proj_q8_0:n=96:k=7168:g=1\n' >"$tmp/run.cases"
expect 0 '^proj_q8_0:n=96:k=7168:g=1 +245760 runs - +4.09 us/run' -- "$peer" --run "$tmp/tbo" "$tmp/run.cases"
expect 0 '^mmq_q8_0:N=896:K=4864:n=3325 +5499 runs - +186.46 us/run' -- "$peer" --run "$tmp/tbo" "$tmp/run.cases"
expect 0 '^proj_f32:n=96:k=7168 +not supported$' -- "$peer" --run "$tmp/tbo" "$tmp/run.cases"
expect 0 '^attention:L=32768:n_head=28:n_kv_head=4:head_dim=128 +1491 runs - +41.37 us/run' -- "$peer" --run "$tmp/tbo" "$tmp/run.cases"
expect 2 'no bitgate case' -- "$peer" --run "$tmp/tbo" /dev/null
expect 2 'not an executable file' -- "$peer" --run "$tmp/none" "$tmp/run.cases"
expect 2 'not a ggml or llama.cpp source tree' -- "$peer" "$tmp/ptx"
expect 2 'usage' -- "$peer" --test-file "$tmp/ggml"

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
