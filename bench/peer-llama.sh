#!/usr/bin/env bash
# llama.cpp's own timing of the matrix products and decode attention in our bench catalogs, on
# the same card, for bench/RESULTS.md's comparisons (its header says how the figures differ).
#
#   bench/peer-llama.sh GGML_DIR     build test-backend-ops with CUDA from GGML_DIR (a ggml or a
#                                    llama.cpp source tree the user supplies; it is never part of
#                                    this repository: keep it in the git-ignored .peer/), run
#                                    `test-backend-ops perf -o MUL_MAT,FLASH_ATTN_EXT` on our
#                                    catalog shapes and print one line per shape
#   bench/peer-llama.sh --cases      print the shapes only (no source tree needed)
#   bench/peer-llama.sh --test-file GGML_DIR FILE
#                                    write the test-backend-ops case file only (no build, no GPU)
#   bench/peer-llama.sh --run TEST_BACKEND_OPS FILE
#                                    run a test-backend-ops built elsewhere (for a GPU machine
#                                    without the source tree or the time to build it) on a case
#                                    file that --test-file wrote, and print one line per shape
#
# The shapes: proj_q8_0 (n x k, Q8_0 weights, 1 token: llama.cpp's MMVQ path), proj_f32 (f32
# weights, 1 token) and mmq_q8_0 (N x K, n tokens: the MMQ path) lines marked `bench`. Each is a
# MUL_MAT of weights [m rows][k] and an f32 activation [tokens][k], as llama.cpp runs it.
# And attention's decode lines marked `bench` (n_q = 1): a FLASH_ATTN_EXT of one f32 query row
# per head over F16 K and V of L positions per kv head, with an F16 mask row (finite values: no
# key skipped), scale 1/sqrt(head_dim), GGML_PREC_F32 as llama.cpp's graphs ask of it.
#
# Cases reach test-backend-ops through its --test-file option (generic ops, one per line). Its
# numbering of ops and types is read from GGML_DIR's own ggml.h by a small probe compiled there,
# so the file matches the tree's version. A tree without --test-file runs only its built-in
# perf cases; of ours those hold 4096 x 14336 at 1 and 512 tokens.
#
# Environment: PEER_BUILD (build directory, default .peer/build-ggml), CUDA_ARCH (default 90),
# JOBS (default: the processor count), PEER_BACKEND (default CUDA0), CC (probe compiler, default cc).
# A source tree small enough to carry to a GPU machine: `git -C CLONE archive HEAD | tar -x -C
# .peer/ggml` (a ggml tree is about 22 MiB without its history).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "peer-llama: $*" >&2; exit 2; }

# bench_lines FAMILY FORMAT: for every line of shapes/FAMILY.shapes marked `bench`, FORMAT (awk
# statements) runs with v[key] = value for the line's key=value fields and fam = FAMILY.
bench_lines() {
    [[ -r "$root/shapes/$1.shapes" ]] || die "$root/shapes/$1.shapes: cannot read"
    awk -v fam="$1" '
        { sub(/#.*/, "") }
        {
            bench = 0; delete v
            for (i = 1; i <= NF; ++i) {
                if ($i == "bench") bench = 1
                else if (split($i, kv, "=") == 2) v[kv[1]] = kv[2]
            }
            if (!bench) next
            '"$2"'
        }' "$root/shapes/$1.shapes"
}

# family type m k tokens label, one line per catalog bench line of the three families.
cases() {
    bench_lines proj_q8_0 'printf "%s q8_0 %s %s 1 n=%s:k=%s:g=%s\n", fam, v["n"], v["k"], v["n"], v["k"], v["g"]' &&
        bench_lines proj_f32 'printf "%s f32 %s %s 1 n=%s:k=%s\n", fam, v["n"], v["k"], v["n"], v["k"]' &&
        bench_lines mmq_q8_0 'printf "%s q8_0 %s %s %s N=%s:K=%s:n=%s\n", fam, v["N"], v["K"], v["n"], v["N"], v["K"], v["n"]'
}

# One product per distinct (type, m, k, tokens): a g=4 line times the same product as g=1.
unique_cases() { cases | awk '!seen[$2" "$3" "$4" "$5]++'; }

# L n_head n_kv_head head_dim label, one line per distinct decode (n_q = 1) bench line of attention.
attn_cases() {
    bench_lines attention 'if (v["n_q"] == 1) printf "%s %s %s %s L=%s:n_head=%s:n_kv_head=%s:head_dim=%s\n", v["L"], v["n_head"], v["n_kv_head"], v["head_dim"], v["L"], v["n_head"], v["n_kv_head"], v["head_dim"]' |
        awk '!seen[$1" "$2" "$3" "$4]++'
}

include_dir() {
    local d
    for d in "$1/ggml/include" "$1/include"; do
        [[ -f "$d/ggml.h" ]] && { echo "$d"; return; }
    done
    die "$1: no ggml/include/ggml.h or include/ggml.h (not a ggml or llama.cpp source tree)"
}

# "MUL_MAT F32 Q8_0 FLASH_ATTN_EXT F16 PREC_F32" as the tree numbers them, then for each head_dim
# given, the bits of the f32 1/sqrt(head_dim) (the op reads its scale as an f32 parameter).
enum_values() {
    local inc probe out=""
    inc=$(include_dir "$1")
    shift
    probe=$(mktemp -d)
    cat >"$probe/probe.c" <<'C'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ggml.h"
int main(int argc, char** argv) {
    printf("%d %d %d %d %d %d", (int)GGML_OP_MUL_MAT, (int)GGML_TYPE_F32, (int)GGML_TYPE_Q8_0,
           (int)GGML_OP_FLASH_ATTN_EXT, (int)GGML_TYPE_F16, (int)GGML_PREC_F32);
    for (int i = 1; i < argc; ++i) {
        const float scale = 1.0f / sqrtf((float)atoi(argv[i]));
        int bits;
        memcpy(&bits, &scale, sizeof bits);
        printf(" %d", bits);
    }
    printf("\n");
    return 0;
}
C
    if "${CC:-cc}" -I"$inc" -o "$probe/probe" "$probe/probe.c" -lm >"$probe/log" 2>&1; then out=$("$probe/probe" "$@"); fi
    [[ -n $out ]] || { cat "$probe/log" >&2; rm -rf "$probe"; die "$inc/ggml.h: the enum probe did not compile"; }
    rm -rf "$probe"
    echo "$out"
}

# test-backend-ops --test-file lines: op, out type, out ne[4], 0 op params, 2 sources (type,
# ne[4], nb[4] = 0: contiguous), name. Weights ne = {k, m}, activation ne = {k, tokens}.
# FLASH_ATTN_EXT lines: out ne = {head_dim, n_head, 1, 1}; 4 op params (scale bits, max_bias 0,
# logit_softcap 0, precision); 4 sources: q f32 {head_dim, 1, n_head, 1}, K and V f16 {head_dim,
# L, n_kv_head, 1} (a kv head's rows contiguous, as in bitgate's cache), mask f16 {L, 1, 1, 1}.
write_test_file() {
    local vals all attn op f32 q8 fa f16 prec s64 s128 scale family type m k tokens label ta L nh nkv d
    all=$(unique_cases)
    attn=$(attn_cases)
    vals=$(enum_values "$1" 64 128)
    read -r op f32 q8 fa f16 prec s64 s128 <<<"$vals"
    {
        while read -r family type m k tokens label; do
            ta=$f32
            [[ $type == q8_0 ]] && ta=$q8
            echo "$op $f32 $m $tokens 1 1 0 2 $ta $k $m 1 1 0 0 0 0 $f32 $k $tokens 1 1 0 0 0 0 bitgate:$family:$label"
        done <<<"$all"
        while read -r L nh nkv d label; do
            [[ -n $L ]] || continue
            case $d in 64) scale=$s64 ;; 128) scale=$s128 ;; *) die "attention head_dim $d: no scale for it" ;; esac
            echo "$fa $f32 $d $nh 1 1 4 $scale 0 0 $prec 4 $f32 $d 1 $nh 1 0 0 0 0 $f16 $d $L $nkv 1 0 0 0 0 $f16 $d $L $nkv 1 0 0 0 0 $f16 $L 1 1 1 0 0 0 0 bitgate:attention:$label"
        done <<<"$attn"
    } >"$2" || die "$2: cannot write"
}

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
backend=${PEER_BACKEND:-CUDA0}
strip_colors() { sed 's/\x1b\[[0-9;]*m//g'; }

# run_cases TBO FILE LOG: the perf run over a case file, one line per shape.
run_cases() {
    echo "== llama.cpp test-backend-ops perf -o MUL_MAT,FLASH_ATTN_EXT -b $backend"
    echo "   (back-to-back: many runs of one op in one ggml graph; weights and caches not rotated;"
    echo "    us/run of q8_0 with 1 token includes its activation quantize to q8_1; its 'GB/s' is
    GiB/s; a g=4 line times one matrix of the group: the group is four such products)"
    { "$1" perf -o MUL_MAT,FLASH_ATTN_EXT -b "$backend" --test-file "$2" 2>&1 ||
        echo "peer-llama: test-backend-ops exited with an error (log: $3)" >&2; } |
        strip_colors | tee "$3" |
        awk '
            # The case name opens a line; its result ("N runs - T us/run - ...") ends that line
            # or a later one (ggml d99724f prints it on the next line, and its CUDA-graph
            # messages may land in between).
            /name=bitgate:/ {
                match($0, /name=bitgate:[^,]*/)
                tag = substr($0, RSTART + 13, RLENGTH - 13)
            }
            tag != "" && /[0-9]+ runs - / {
                match($0, /[0-9]+ runs - .*/)
                printf "%-40s %s\n", tag, substr($0, RSTART, RLENGTH)
                tag = ""
            }
            tag != "" && /not supported/ { printf "%-40s not supported\n", tag; tag = "" }'
}

case "${1:-}" in
    --cases) all=$(unique_cases); attn=$(attn_cases); echo "$all"; sed 's/^/attention f16 /' <<<"$attn"; exit 0 ;;
    --test-file) [[ $# -eq 3 ]] || die "usage: $0 --test-file GGML_DIR FILE"; write_test_file "$2" "$3"; exit 0 ;;
    --run)
        [[ $# -eq 3 ]] || die "usage: $0 --run TEST_BACKEND_OPS FILE"
        [[ -f $2 && -x $2 ]] || die "$2: not an executable file"
        [[ -r $3 ]] || die "$3: cannot read"
        grep -q 'bitgate:' "$3" || die "$3: no bitgate case (write it with --test-file)"
        run_cases "$2" "$3" "${TMPDIR:-/tmp}/peer-llama-perf.log"
        exit 0
        ;;
    -h | --help) usage; exit 0 ;;
    "") usage >&2; exit 2 ;;
    -*) die "$1: unknown option (see --help)" ;;
esac
[[ $# -eq 1 ]] || die "one source tree expected (see --help)"

src=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such directory"
include_dir "$src" >/dev/null
build=${PEER_BUILD:-$root/.peer/build-ggml}
jobs=${JOBS:-$(nproc)}

mkdir -p "$build" || die "$build: cannot create"
# CUDA graphs on, as llama.cpp builds them; its flash-attention kernels on (the decode attention
# lines; they are most of the build time: 22 minutes on 2 cores here); NCCL off (a library the
# GPU machine may lack).
echo "== build test-backend-ops (CUDA, sm_${CUDA_ARCH:-90}) from $src into $build"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DGGML_NATIVE=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DGGML_CUDA_GRAPHS=ON -DGGML_CUDA_FA=ON -DGGML_CUDA_NCCL=OFF \
    -DGGML_BUILD_TESTS=ON -DLLAMA_BUILD_TESTS=ON -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_CURL=OFF >"$build/bitgate-configure.log" 2>&1 ||
    { tail -20 "$build/bitgate-configure.log"; die "cmake configure failed (log: $build/bitgate-configure.log)"; }
cmake --build "$build" --target test-backend-ops -j "$jobs" >"$build/bitgate-build.log" 2>&1 ||
    { tail -30 "$build/bitgate-build.log"; die "build failed (log: $build/bitgate-build.log)"; }
tbo=$(find "$build" -name test-backend-ops -type f -perm -u+x | head -1)
[[ -n $tbo ]] || die "$build: no test-backend-ops after the build"
echo "binary: $tbo"

help=$("$tbo" --help 2>&1 || true)  # its usage exits 1
if grep -q -- --test-file <<<"$help"; then
    file=$build/bitgate-peer.cases
    write_test_file "$src" "$file"
    run_cases "$tbo" "$file" "$build/perf.log"
else
    echo "   (this tree has no --test-file: its built-in perf cases only)"
fi
# The built-in cases that match a catalog shape (4096 x 14336 at 1 and 512 tokens), selected with
# -p where the tree has it (without it every type's MUL_MAT would run, minutes of them).
if grep -q -- '-p <params regex>' <<<"$help"; then
    { "$tbo" perf -o MUL_MAT -b "$backend" -p 'type_a=(q8_0|f32),type_b=f32,m=4096,n=(1|512),k=14336,' 2>&1 || true; } |
        strip_colors | grep -E 'MUL_MAT\(type_a=(q8_0|f32),type_b=f32,m=4096,n=(1|512),k=14336,' || true
fi
