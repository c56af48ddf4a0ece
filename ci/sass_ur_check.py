#!/usr/bin/env python3
"""The SASS check of the device gate (ci/sass-check): reads `cuobjdump -sass` output and, for every
function, names each instruction that reads a uniform register (URn) that no instruction of the
function writes. nvcc 13.0 has compiled cp.async copies that way four times (kernels/cp_async.cuh):
they take their L2 policy from `desc[UR1]`, which nothing sets, and run as an illegal instruction,
or not, by what the register holds. A kernel change can bring it back anywhere, so the gate reads
every function of every binary.

usage: ci/sass_ur_check.py [FILE]   (cuobjdump -sass output; stdin without FILE)
exit:  0 none found, 1 some found (each named, one line), 2 no function in the input"""
import re, sys
NODEST = ('ST', 'STG', 'STS', 'STL', 'LDGSTS', 'RED', 'BAR', 'BRA', 'BRX', 'EXIT', 'RET', 'CALL', 'WARPSYNC',
          'BSSY', 'BSYNC', 'DEPBAR', 'LDGDEPBAR', 'MEMBAR', 'ERRBAR', 'CCTL', 'NOP', 'UTMASTG', 'UBLKCP',
          'UTMALDG', 'UTMAPF', 'SYNCS', 'ACQBULK', 'FENCE', 'YIELD', 'PREEXIT', 'ELECT', 'STAS', 'UCGABAR_ARV',
          'UCGABAR_WAIT', 'WARPGROUP', 'BPT', 'KILL', 'NANOSLEEP', 'CGAERRBAR', 'JMP', 'JMX', 'BREAK', 'CONT')
# The uniform registers an operand list names; desc[URn] is a 64-bit pair (URn, URn+1), and so is
# the destination of a .64 or .WIDE instruction.
def regs(text):
    out = set()
    for m in re.finditer(r'(desc\[)?\bUR(\d+)\b', text):
        n = int(m.group(2)); out.add(n)
        if m.group(1): out.add(n + 1)
    return out
def check(lines):
    funcs, cur = [], None
    for l in lines:
        m = re.search(r'Function : (\S+)', l)
        if m:
            cur = (m.group(1), []); funcs.append(cur); continue
        m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', l)
        if m and cur: cur[1].append((m.group(1), m.group(2)))
    bad = []
    for name, ins in funcs:
        written, reads = set(), []
        for addr, t in ins:
            body = re.sub(r'^@!?U?P[T\d]+\s+', '', t)
            parts = body.split(None, 1)
            op = parts[0]; args = parts[1] if len(parts) > 1 else ''
            ops = [a.strip() for a in args.split(',')]
            base = op.split('.')[0]
            if base in NODEST or not ops or not ops[0]:
                reads.append((addr, t, regs(args)))
                continue
            d = re.match(r'UR(\d+)$', ops[0])
            if d:
                n = int(d.group(1)); written.add(n)
                if '.64' in op or 'WIDE' in op: written.add(n + 1)
            reads.append((addr, t, regs(','.join(ops[1:]))))
        for addr, t, rs in reads:
            missing = sorted(r for r in rs if r not in written)
            if missing: bad.append((name, addr, t, missing))
    return funcs, bad
if __name__ == '__main__':
    funcs, bad = check(open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin)
    for name, addr, t, missing in bad[:40]:
        print(f'{name} /*{addr}*/ {t}: reads UR{",UR".join(map(str, missing))}, which nothing in the function writes')
    print(f'sass: {len(funcs)} functions, {len(bad)} instructions reading an unwritten uniform register')
    if not funcs:
        print('sass: no function in the input (is it cuobjdump -sass output?)', file=sys.stderr)
        sys.exit(2)
    sys.exit(1 if bad else 0)
