#!/usr/bin/env bash
# ci/sass_ur_check.py, the device gate's SASS step, on excerpts of the decode split kernel's SASS
# (tests/sass_fixtures): clean where every uniform register a copy reads is written first (the
# 64-bit `desc[UR6]` pair by `ULDC.64 UR6`), each faulty copy named where a build read
# `[R+UR0]` and `desc[UR1]` that nothing wrote, and no verdict at all on input with no function.
# usage: tests/sass_check.sh SRCDIR
src=$1
. "$src/tests/expect.sh"
check=(python3 "$src/ci/sass_ur_check.py")
fx=$src/tests/sass_fixtures
expect 0 '^sass: 1 functions, 0 instructions' -- "${check[@]}" "$fx/good.sass"
expect 1 '/\*3d90\*/ LDGSTS.* reads UR0,UR1' -- "${check[@]}" "$fx/bad.sass"
expect 1 '^sass: 2 functions, 2 instructions' -- "${check[@]}" "$fx/bad.sass"
expect 2 'no function in the input' -- "${check[@]}" /dev/null
echo "sass_check: $passes passed, $fails failed"; [[ $fails -eq 0 ]]
