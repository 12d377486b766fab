#!/usr/bin/env python3
"""A float32 simulation of the one-row LayerNorm statistics' sums (projection.cuh:
AddShiftedVector's tree within each 16-byte vector, the lane's vectors in order, the
warp's butterfly, StatsFromShiftedSums), for float32 rows of K = 768 (4 elements a
vector), with the shift at the row's first element (the kernel) and at 0 (sums around
0, for comparison). It prints rstd's error and a 64-column projection's error (max
|out - exact| / max |exact|, FusedLinearTest's measure) against float64 arithmetic.
FMA contraction is not modelled. Run: python3 stats_precision_sim.py (no packages).
Its output, 2026-12-04, is stats_precision_sim.txt."""
import struct, random, math
def f(x): return struct.unpack('f', struct.pack('f', x))[0]
def stats(x, shift_first):
    K=len(x); kVec=4; lanes=32
    shift = x[0] if shift_first else 0.0
    sums=[0.0]*lanes; sqs=[0.0]*lanes
    for l in range(lanes):
        s=0.0; q=0.0
        k=l*kVec
        while k<K:
            d=[f(x[k+i]-shift) for i in range(kVec)]
            qq=[f(di*di) for di in d]
            w=kVec//2
            while w>0:
                for i in range(w):
                    d[i]=f(d[i]+d[i+w]); qq[i]=f(qq[i]+qq[i+w])
                w//=2
            s=f(s+d[0]); q=f(q+qq[0])
            k+=lanes*kVec
        sums[l]=s; sqs[l]=q
    off=16
    while off>0:
        sums=[f(sums[l]+sums[l^off]) for l in range(lanes)]
        sqs=[f(sqs[l]+sqs[l^off]) for l in range(lanes)]
        off//=2
    m=f(sums[0]/K); mean=f(shift+m); var=max(f(f(sqs[0]/K)-f(m*m)),0.0)
    rstd=f(1/math.sqrt(f(var+1e-5)))
    return mean, rstd
def run(name, x, w_rows=64):
    K=len(x)
    mu=sum(x)/K; var=sum((v-mu)**2 for v in x)/K; r=1/math.sqrt(var+1e-5)
    yref=[(v-mu)*r for v in x]
    random.seed(1)
    W=[[random.gauss(0,1)/math.sqrt(K) for _ in range(K)] for _ in range(w_rows)]
    ref=[sum(a*b for a,b in zip(row,yref)) for row in W]
    for sf in (True, False):
        mean,rstd=stats(x,sf)
        y=[f(f(v-mean)*rstd) for v in x]
        out=[sum(a*b for a,b in zip(row,y)) for row in W]
        err=max(abs(a-b) for a,b in zip(out,ref))/max(abs(b) for b in ref)
        print(f"{name:28s} shift={'x0' if sf else '0 '}  rstd rel err {abs(rstd-r)/r:.2e}  output rel err {err:.2e}")
random.seed(0)
K=768
run("x*3+5", [f(random.gauss(0,1)*3+5) for _ in range(K)])
run("x+30", [f(random.gauss(0,1)+30) for _ in range(K)])
run("x+100", [f(random.gauss(0,1)+100) for _ in range(K)])
o=[f(random.gauss(0,1)*0.1) for _ in range(K)]; o[0]=1000.0
run("outlier first", o)
