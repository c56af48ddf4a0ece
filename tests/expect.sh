# The shell tests' shared checks (sourced by cli_contract.sh, model_cli.sh, sharding.sh). Each
# check counts into passes or fails and prints what failed; a script ends with
#   echo "NAME: $passes passed, $fails failed"; [[ $fails -eq 0 ]]
fails=0 passes=0

# expect CODE PATTERN -- command...: exit CODE, and stdout+stderr matching PATTERN.
expect() {
    local code=$1 pattern=$2; shift 3
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [[ $rc -ne $code ]] || ! grep -qE -- "$pattern" <<<"$out"; then
        echo "FAIL: $* -> exit $rc (want $code, output matching '$pattern'), output:"; echo "$out" | head -5
        fails=$((fails + 1))
    else
        passes=$((passes + 1))
    fi
}

# expect_one_line CODE PATTERN -- command...: as expect, and the output is exactly one line.
expect_one_line() {
    local code=$1 pattern=$2; shift 3
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [[ $rc -ne $code ]] || ! grep -qE -- "$pattern" <<<"$out" || [[ $(wc -l <<<"$out") -ne 1 ]]; then
        echo "FAIL: $* -> exit $rc (want $code, one line matching '$pattern'), output:"; echo "$out" | head -5
        fails=$((fails + 1))
    else
        passes=$((passes + 1))
    fi
}
