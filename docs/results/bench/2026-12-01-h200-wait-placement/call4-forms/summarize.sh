#!/usr/bin/env bash
# per function: instruction index of the first ACQBULK, loads (LDG/LDGSTS/CCTL prefetch) before and after it
for c in .sass/*.cubin; do
  /usr/local/cuda/bin/cuobjdump -sass "$c" > "${c%.cubin}.sass"
  awk -v file="$(basename $c .cubin)" '
    function flush() { if (name != "") printf "%s %s acq@%s of %d  before=%d after=%d  pf_before=%d\n", file, name, acq, n, lb, la, pb }
    /Function :/ { flush(); name=$3; sub(/_ZN6tandem[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_/, "", name); acq="-"; n=0; lb=0; la=0; pb=0; seen=0; next }
    /\/\*[0-9a-f]+\*\// && /;/ { n++ }
    /ACQBULK/ && !seen { acq=n; seen=1 }
    /LDG|LDGSTS/ { if (seen) la++; else lb++ }
    /CCTL.*PF|PREFETCH/ { if (!seen) pb++ }
    END { flush() }' "${c%.cubin}.sass"
done
