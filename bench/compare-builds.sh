#!/usr/bin/env bash
# Times several builds of bitgate against each other on one GPU: `bitgate bench` over each build in
# turn, ROUNDS times (interleaved, so that a drift of the card's clock or memory shows in every
# build alike), then one table per timing (back to back, isolated): each bench row's us a call, the
# lowest and highest over the rounds, per build, and the read ceiling of each round. How main's
# kernels were weighed against a candidate in bench/RESULTS.md (2026-12-07, tenth, and after).
#
# usage: bench/compare-builds.sh [-r ROUNDS] [-o OUTDIR] NAME=BINDIR... [-- bench options...]
#        e.g. bench/compare-builds.sh -r 3 main=build-main cand=build -- --family attention --variant decode
#        (BINDIR holds a bitgate; bench options, e.g. --root DIR for a catalog with more bench lines,
#        go to every run). The JSON of every run is kept in OUTDIR (default: a temporary folder).
# exit:  0, 1 when a run fails, 2 on bad usage.
set -euo pipefail
rounds=3 outdir=
while getopts "r:o:" opt; do
    case $opt in
        r) rounds=$OPTARG ;;
        o) outdir=$OPTARG ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
builds=()
while (($#)) && [[ $1 != -- ]]; do builds+=("$1"); shift; done
(($#)) && shift
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare-builds: -r takes a count, not '$rounds'" >&2; exit 2; }
((${#builds[@]})) || { echo "compare-builds: no NAME=BINDIR given (usage: see the top of $0)" >&2; exit 2; }
for b in "${builds[@]}"; do
    [[ $b == *=* && -x ${b#*=}/bitgate ]] || { echo "compare-builds: '$b' is not NAME=BINDIR with an executable BINDIR/bitgate" >&2; exit 2; }
done
[[ -n $outdir ]] || outdir=$(mktemp -d)
mkdir -p "$outdir"
for ((i = 1; i <= rounds; i++)); do
    for b in "${builds[@]}"; do
        name=${b%%=*} dir=${b#*=}
        echo "compare-builds: round $i, $name" >&2
        "$dir/bitgate" bench "$@" --json "$outdir/$name.$i.json" >"$outdir/$name.$i.txt" 2>&1 ||
            { echo "compare-builds: $name, round $i failed:" >&2; tail -5 "$outdir/$name.$i.txt" >&2; exit 1; }
    done
done
python3 - "$outdir" "$rounds" "${builds[@]%%=*}" <<'PY'
import json, sys
outdir, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
runs = {n: [json.load(open(f"{outdir}/{n}.{i}.json")) for i in range(1, rounds + 1)] for n in names}
first = runs[names[0]][0]
print(f"device: {first['device']}; {rounds} rounds of {', '.join(names)} in turn")
for n in names:
    print(f"read ceiling, {n}: " + ", ".join(f"{r['read_ceiling_gbps']:.0f}" for r in runs[n]) + " GB/s")
for timing in ("back_to_back", "isolated"):
    print(f"\n{timing.replace('_', ' ')}, us a call (lowest-highest over the rounds):")
    print(f"{'family':<12} {'variant':<10} {'shape':<50} " + " ".join(f"{n:>17}" for n in names))
    for k, row in enumerate(first["rows"]):
        cells = []
        for n in names:
            us = [r["rows"][k][timing].get("median_us") for r in runs[n]
                  if k < len(r["rows"]) and r["rows"][k]["shape"] == row["shape"] and r["rows"][k][timing].get("available")]
            cells.append(f"{f'{min(us):.2f}-{max(us):.2f}':>17}" if us else f"{'n/a':>17}")
        print(f"{row['family']:<12} {row['variant']:<10} {row['shape'][:50]:<50} " + " ".join(cells))
PY
