#!/usr/bin/env bash
# Sharding and workers from the outside: --workers gives the unsharded run's verdicts, shard
# reports merge back into it, bad shard variables and bad merges are one-line errors (exit 2).
# usage: sharding.sh BITGATE SOURCE_DIR
set -u
bg=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect.sh"
export BITGATE_ROOT=$src
unset GTEST_SHARD_INDEX GTEST_TOTAL_SHARDS SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX CI

# one_line_error CODE PATTERN -- command...: that exit code and exactly one line on stderr.
one_line_error() {
    local code=$1 pattern=$2; shift 3
    local err rc
    err=$("$@" 2>&1 >/dev/null); rc=$?
    if [[ $rc -ne $code || $(wc -l <<<"$err") -ne 1 ]] || ! grep -qE -- "$pattern" <<<"$err"; then
        echo "FAIL: $* -> exit $rc (want $code), stderr:"; echo "$err" | head -5
        fails=$((fails + 1))
    else
        passes=$((passes + 1))
    fi
}
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Same cases, same order, same verdicts (timings aside), same counts.
same_run() {
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda j: [(r["where"], r["case"], r["verdict"], r["passed"]) for r in j["results"]]
assert key(a) == key(b), "case lists differ: %d vs %d cases" % (len(a["results"]), len(b["results"]))
for k in ("total", "ok", "failed", "skipped", "no_golden", "host", "device"):
    assert a["summary"][k] == b["summary"][k], k
assert a["summary"]["total"] > 0
PY
}

fams=quantize_q8_0,add,bias
summary_of() { grep -E '^bitgate ' <<<"$1" | sed 's/ in [0-9.]* s$//'; }

# --workers 3: the unsharded run's verdicts, one summary line like the unsharded one.
one=$("$bg" check --host-only --family $fams --json "$tmp/one.json" 2>&1)
three=$("$bg" check --host-only --family $fams --workers 3 --json "$tmp/three.json" --junit "$tmp/three.xml" 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok || bad "check --workers 3 exit $rc: $(tail -3 <<<"$three")"
same_run "$tmp/one.json" "$tmp/three.json" && ok || bad "check --workers 3 differs from the unsharded check"
[[ "$(summary_of "$one")" == "$(summary_of "$three")" && $(grep -c '^bitgate ' <<<"$three") -eq 1 ]] && ok \
    || bad "summary lines differ: '$(summary_of "$one")' vs '$(summary_of "$three")'"
[[ "$(grep -E '^(OK|FAIL|SKIP)' <<<"$one")" == "$(grep -E '^(OK|FAIL|SKIP)' <<<"$three")" ]] && ok || bad "per-case lines differ under --workers 3"
grep -q '<testsuites name="bitgate check"' "$tmp/three.xml" && ok || bad "no JUnit report from --workers"
grep -qE '^workers: 3: worker 0 shard 0/3, worker 1 shard 1/3, worker 2 shard 2/3$' <<<"$three" && ok || bad "no workers line: $(head -3 <<<"$three")"

# More workers than case groups: the empty workers are no failure.
expect 0 '^bitgate check: [1-9][0-9]* cases .* 0 failed' -- "$bg" check --host-only --family quantize_q8_0 --catalog regressions --workers 9 --allow-empty
# Nested: shard 1/2 over 2 workers is shards 1/4 and 3/4, and reports as shard 1/2.
"$bg" check --host-only --family $fams --shard 1/2 --json "$tmp/s1.json" >/dev/null
expect 0 '^bitgate check shard 1/2: ' -- "$bg" check --host-only --family $fams --shard 1/2 --workers 2 --json "$tmp/s1w.json"
same_run "$tmp/s1.json" "$tmp/s1w.json" && ok || bad "shard 1/2 over 2 workers differs from shard 1/2"

# golden check over workers: the unsharded run's cases, stale lines included (reported once).
rm -rf "$tmp/root"; mkdir -p "$tmp/root"; cp -r "$src/shapes" "$src/golden" "$tmp/root/"
echo "quantize_q8_0 v1 k=4064 seed=1 profile=zeros y=0123456789abcdef0123456789abcdef" >>"$tmp/root/golden/quantize_q8_0.golden"
"$bg" golden check --family quantize_q8_0 --root "$tmp/root" --json "$tmp/g1.json" >/dev/null
expect 1 'bitgate golden check: [0-9]+ cases .* 1 failed' -- "$bg" golden check --family quantize_q8_0 --root "$tmp/root" --workers 4 --json "$tmp/g4.json"
same_run "$tmp/g1.json" "$tmp/g4.json" && ok || bad "golden check --workers 4 differs from golden check"

# A worker that ends with bad input: its log's end shown under its name, no merged report, its exit code.
rm -rf "$tmp/bad"; mkdir -p "$tmp/bad"; cp -r "$src/shapes" "$src/golden" "$tmp/bad/"
sed -i '7s/ y=[0-9a-f]*/ y=zz/' "$tmp/bad/golden/quantize_q8_0.golden"
out=$("$bg" check --host-only --family quantize_q8_0 --root "$tmp/bad" --workers 2 2>&1); rc=$?
[[ $rc -eq 2 ]] && grep -qE '^worker 1, shard 1/2: exit 2 after' <<<"$out" \
    && grep -qE '^\[worker 1\] bitgate: error: .*quantize_q8_0.golden:7: digest of y' <<<"$out" \
    && grep -qE '^bitgate check: no merged report: a worker ended with exit 2' <<<"$out" && ok || bad "a failing worker: exit $rc: $out"

# report merge: N shards are the unsharded run, case for case; the exit code is the run's verdict.
for n in 1 2 5; do
    files=()
    for ((i = 0; i < n; i++)); do
        "$bg" check --host-only --family $fams --shard $i/$n --json "$tmp/p$i-$n.json" >/dev/null
        files+=("$tmp/p$i-$n.json")
    done
    expect 0 "^bitgate check: [0-9]+ cases" -- "$bg" report merge "${files[@]}" --json "$tmp/m$n.json" --junit "$tmp/m$n.xml"
    same_run "$tmp/one.json" "$tmp/m$n.json" && ok || bad "report merge of $n shards differs from the unsharded run"
done
p=$tmp/p
one_line_error 2 "report merge: shard 1/5 missing \(given: $p""0-5.json 0/5, " -- "$bg" report merge "$p"0-5.json "$p"2-5.json "$p"3-5.json "$p"4-5.json
one_line_error 2 "$p""2-5.json: shard 2/5 again" -- "$bg" report merge "$p"0-5.json "$p"1-5.json "$p"2-5.json "$p"2-5.json "$p"3-5.json "$p"4-5.json
one_line_error 2 "$p""1-2.json: shard 1/2, but $p""0-5.json is shard 0/5" -- "$bg" report merge "$p"0-5.json "$p"1-2.json
"$bg" check --host-only --family add --shard 1/2 --json "$tmp/add1.json" >/dev/null
one_line_error 2 "$tmp/add1.json: selection .*--family add, but .* has .*--family $fams" -- "$bg" report merge "$p"0-2.json "$tmp/add1.json"
"$bg" golden check --family $fams --shard 1/2 --json "$tmp/gold1.json" >/dev/null
one_line_error 2 "$tmp/gold1.json: verb golden check, but" -- "$bg" report merge "$p"0-2.json "$tmp/gold1.json"
printf '{"format": 2,' >"$tmp/cut.json"
one_line_error 2 "$tmp/cut.json: not a JSON report" -- "$bg" report merge "$tmp/cut.json"
one_line_error 2 "/nonexistent.json: cannot open the report" -- "$bg" report merge /nonexistent.json
sed 's/"verdict": "ok"/"verdict": "value_mismatch"/' "$p"0-1.json >"$tmp/edited.json"
one_line_error 2 "$tmp/edited.json: results\[0\].passed: says true but verdict value_mismatch means failed" -- "$bg" report merge "$tmp/edited.json"

# --shard auto from Slurm, Kubernetes and gtest variables; bad values are one line, exit 2.
s=$("$bg" check --host-only --family $fams --shard 1/4 2>&1 | grep '^bitgate ' | sed 's/ in [0-9.]* s$//')
slurm=$(env SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MAX=4 "$bg" check --host-only --family $fams --shard auto 2>&1 | grep '^bitgate ' | sed 's/ in [0-9.]* s$//')
[[ "$slurm" == "$s" && "$s" == "bitgate check shard 1/4: "* ]] && ok || bad "Slurm task 2 of 1-4 is not shard 1/4: '$slurm' vs '$s'"
k8s=$(env JOB_COMPLETION_INDEX=1 BITGATE_SHARD_COUNT=4 "$bg" check --host-only --family $fams --shard auto 2>&1 | grep '^bitgate ' | sed 's/ in [0-9.]* s$//')
[[ "$k8s" == "$s" ]] && ok || bad "Kubernetes index 1 of 4 is not shard 1/4: '$k8s' vs '$s'"
expect 0 '^bitgate check shard 1/4: ' -- env GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=4 GTEST_SHARD_STATUS_FILE="$tmp/status" "$bg" check --host-only --family $fams --shard auto
[[ -e "$tmp/status" ]] && ok || bad "GTEST_SHARD_STATUS_FILE not touched under --shard auto"
one_line_error 2 'SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=4: not task MIN' -- env SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=4 "$bg" check --host-only --shard auto
one_line_error 2 'SLURM_ARRAY_TASK_ID=x.*expected whole numbers' -- env SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=4 "$bg" check --host-only --shard auto
one_line_error 2 'must be set with it' -- env SLURM_ARRAY_TASK_ID=1 "$bg" check --host-only --shard auto
one_line_error 2 'JOB_COMPLETION_INDEX=1 is set but BITGATE_SHARD_COUNT is not' -- env JOB_COMPLETION_INDEX=1 "$bg" check --host-only --shard auto
one_line_error 2 'JOB_COMPLETION_INDEX=4 BITGATE_SHARD_COUNT=4: expected 0 <= index < count' -- env JOB_COMPLETION_INDEX=4 BITGATE_SHARD_COUNT=4 "$bg" golden check --shard auto
one_line_error 2 'GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=x: expected 0 <= index < total' -- env GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=x "$bg" check --host-only --shard auto
one_line_error 2 '--shard auto: none of SLURM_ARRAY_TASK_ID' -- "$bg" check --host-only --shard auto
one_line_error 2 '--shard 4/4: expected I/N' -- "$bg" check --host-only --shard 4/4

# --gpus: a usage error naming why in a build without CUDA; bad counts are bad input everywhere.
if "$bg" list gpus | grep -q 'built without CUDA'; then
    one_line_error 2 '--gpus all: bitgate was built without CUDA.*--workers N spreads over processes' -- "$bg" check --gpus all
    one_line_error 2 '--gpus 2: bitgate was built without CUDA' -- "$bg" check --device --gpus 2
    one_line_error 2 '--gpus all: bitgate was built without CUDA' -- "$bg" prop --gpus all --count 4
    one_line_error 2 '--gpus all: bitgate was built without CUDA' -- "$bg" golden check --gpus all
elif ! "$bg" list gpus | grep -q '^0 GPUs'; then
    one_line_error 2 '--gpus 4096: only [0-9]+ GPUs? (is|are) visible' -- "$bg" check --gpus 4096
fi
one_line_error 2 '--gpus 0: expected all or a number' -- "$bg" check --gpus 0
one_line_error 2 '--workers 2 with --gpus 3: fewer workers than the 3 GPUs' -- "$bg" check --gpus 3 --workers 2
one_line_error 2 '--workers 0: expected 1 to 1024' -- "$bg" check --gpus 2 --workers 0
one_line_error 2 '--workers 0: expected 1 to 1024' -- "$bg" check --host-only --workers 0
one_line_error 2 'golden regen rewrites whole files in one process' -- env -u CI "$bg" golden regen --workers 2 --root "$tmp/root"
one_line_error 2 '--append and --gpus/--workers exclude each other' -- "$bg" prop --host-only --workers 2 --count 4 --append --root "$tmp/root"

# prop over workers: the count shared, each worker its own seed, one summary line.
out=$("$bg" prop --host-only --family add --count 7 --seed 11 --workers 3 2>&1); rc=$?
[[ $rc -eq 0 ]] && grep -qE '^prop: seed 11, 7 cases per family over 3 workers: worker 0 --seed 11 --count 3, worker 1 --seed 12 --count 2, worker 2 --seed 13 --count 2$' <<<"$out" \
    && grep -qE '^\[worker 2\] prop add: 2 generated cases held' <<<"$out" \
    && [[ $(grep -c '^bitgate prop' <<<"$out") -eq 1 ]] && grep -qE '^bitgate prop: 7 generated cases over 1 families: all held$' <<<"$out" \
    && ok || bad "prop --workers 3: exit $rc: $out"

# ci/device: GPUS (default all) reaches the check, big, nonfinite and mutants steps with WORKERS (6)
# workers a GPU, and prop (one process a family, one worker a GPU); the table names the count
# (stand-in executables, no GPU).
mkdir -p "$tmp/fakebin"
cat >"$tmp/fakebin/bitgate" <<FAKE
#!/usr/bin/env bash
case "\$1 \$2" in
    "list families") echo "toy: a stand-in" ;;
    "list gpus") echo "2 GPUs visible"; echo "  0: a"; echo "  1: b" ;;
    *) echo "\$*" >>"$tmp/fakebin/args"; exit "\${FAKE_RC:-0}" ;;
esac
FAKE
chmod +x "$tmp/fakebin/bitgate"; cp "$tmp/fakebin/bitgate" "$tmp/fakebin/bitgate-mutants"
expect 0 '^gpus +2 \(GPUS=all' -- env STEPS="check big nonfinite prop mutants" "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
[[ $(grep -c -- '--gpus all --workers 12' "$tmp/fakebin/args") -eq 4 ]] && grep -q '^check --device --gpus all --workers 12 --family toy --json' "$tmp/fakebin/args" \
    && grep -q '^check --device --gpus all --workers 12 --family toy --catalog nonfinite$' "$tmp/fakebin/args" \
    && grep -q '^prop --device --gpus all --family toy' "$tmp/fakebin/args" && ok || bad "ci/device steps without --gpus all --workers 12: $(cat "$tmp/fakebin/args")"
# check and mutants run as a phase of their own, before the other steps start (the gate's three
# phases): the first two calls are theirs, in either order.
[[ $(head -n 2 "$tmp/fakebin/args" | grep -cE '^check (--mutants )?--device --gpus all --workers 12( --family toy --json .*)?$') -eq 2 ]] \
    && ok || bad "ci/device: check and mutants did not run first, alone: $(cat "$tmp/fakebin/args")"
rm -f "$tmp/fakebin/args"
expect 0 '^gpus +1 \(GPUS=1' -- env GPUS=1 STEPS="check mutants" "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
[[ $(grep -cE -- '--gpus 1 --workers 6( |$)' "$tmp/fakebin/args") -eq 2 ]] && ok || bad "GPUS=1 not passed on with 6 workers: $(cat "$tmp/fakebin/args")"
rm -f "$tmp/fakebin/args"
expect 0 '^gpus +2 \(GPUS=all' -- env WORKERS=1 STEPS="check" "$src/ci/device" "$tmp/fakebin" "$tmp/dev"
grep -q '^check --device --gpus all --family toy --json' "$tmp/fakebin/args" && ok || bad "WORKERS=1: not one worker a GPU: $(cat "$tmp/fakebin/args")"
expect 1 'ci/device: FAILED: check' -- env GPUS=1 STEPS=check FAKE_RC=1 "$src/ci/device" "$tmp/fakebin" "$tmp/dev"

# The mutant gate over workers is judged on the merged run: a shard that never meets a case
# catching some mutant does not fail the run (each worker alone would say ESCAPED), and over a
# catalog too small to catch every mutant, workers exit as the single process does.
mut=$(dirname "$bg")/bitgate-mutants
if [[ -x $mut ]]; then
    expect 0 '^mutant CAUGHT +quantize_q8_0/m_model_rintf' -- "$mut" check --mutants --host-only --family quantize_q8_0 --workers 8
    single=$("$mut" check --mutants --host-only --family quantize_q8_0 --catalog regressions 2>&1); src_rc=$?
    spread=$("$mut" check --mutants --host-only --family quantize_q8_0 --catalog regressions --workers 4 2>&1); spread_rc=$?
    [[ $src_rc -eq $spread_rc ]] && ok || bad "mutant gate: one process exit $src_rc, 4 workers exit $spread_rc"
else
    bad "bitgate-mutants not found beside $bg"
fi

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
