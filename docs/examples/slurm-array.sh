#!/usr/bin/env bash
# The device gate's check as a Slurm job array: one task per shard, each on one GPU, then one job
# that merges the shards' reports into the report of the whole run.
#   sbatch docs/examples/slurm-array.sh            (from the source tree, on a shared filesystem)
# The array may start anywhere (--array=1-8 works as well as 0-7): `--shard auto` counts from
# SLURM_ARRAY_TASK_MIN. Every task must run the same binary with the same arguments.
#SBATCH --job-name=bitgate-check
#SBATCH --array=0-7
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=8
#SBATCH --time=00:30:00
#SBATCH --output=reports/%x-%A_%a.log
set -euo pipefail
mkdir -p reports
export BITGATE_ROOT=$PWD
exec build/bitgate check --device --shard auto --json "reports/check-${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}.json"

# After the array (a dependent job, or by hand):
#   sbatch --dependency=afterany:$ARRAY_JOB_ID --wrap \
#     'build/bitgate report merge reports/check-$ARRAY_JOB_ID-*.json --json reports/check.json --junit reports/check.xml'
# report merge exits 0 when every case held, 1 when one failed, 2 when a shard is missing, twice
# or from another build or selection (the message names the file).
