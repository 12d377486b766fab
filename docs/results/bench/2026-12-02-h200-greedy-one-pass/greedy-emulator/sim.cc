// Host emulation of GreedyTokensKernel with prepared-greedy-hard-rows.diff
// applied (slices, thread strides, warp xor-shuffles, block and cluster
// merges, ex2.approx.ftz, the explicit FMAs), checked against torch.argmax /
// log_softmax semantics computed in double: 3,000 random rows (ties, NaN,
// +/-inf, -inf runs, ramps, x100 scales, misalignment, 1-8 blocks, 4 or 8
// elements a vector) and rows of huge logits (1e6 .. 3e38, -FLT_MAX masks).
// A review aid, not a test of the GPU: g++ -O2 -std=c++17 -ffp-contract=off
// sim.cc -o sim && ./sim (2026-12-02: 0/3000 and 0/45 mismatches; the same
// emulation of the committed kernel, 0868299, matched the 3,000 random rows
// and missed 38 of the 45 huge-logit rows: wrong or NaN log-probabilities
// from |logits| ~1e7 on, the tokens right).
#include <algorithm>
// Host emulation of GreedyTokensKernel (fp32 elements, kVec=4 or bf16-like kVec=8 via param).
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#include <initializer_list>
const float L = 1.4426950408889634f;
const int kNo = INT_MAX, T = 512, AHEAD = 4;
int FUSEPART = 0;
float ex2(float x){ float y = exp2f(x); if (std::fpclassify(y)==FP_SUBNORMAL) y=0; if (std::fpclassify(x)==FP_SUBNORMAL) y=1; return y; }
bool Beats(float v,int i,float b,int bi){ if(i==kNo) return false; if(bi==kNo) return true; bool vn=v!=v, bn=b!=b; if(vn!=bn) return vn; if(vn||v==b) return i<bi; return v>b; }
struct Part { float best; int index; float sum;
  float SumAt(float nb) const { return best==-INFINITY?0.f: sum*ex2((best-nb)*L); }
  void Merge(const Part& o){ Part w=*this; if(Beats(o.best,o.index,best,index)) w=o; w.sum=SumAt(w.best)+o.SumAt(w.best); *this=w; } };
struct TG { float best=-INFINITY; int index=kNo; float shift=-FLT_MAX, sum=0;
  void Add(const float* v,int n){ float top=best*L; if(top>shift+8.f){ sum*=ex2(shift-top); shift=top;} for(int e=0;e<n;++e) sum+=ex2(std::fma(v[e],L,-shift)); }
  void Visit(const float* v,int n,int first){ for(int e=0;e<n;++e){ bool g=v[e]>best; best=g?v[e]:best; index=g?first+e:index;} Add(v,n);}
  void VisitScalar(float v,int i){ if(v==v && v!=-INFINITY && Beats(v,i,best,index)){best=v;index=i;} Add(&v,1);}
};
struct Result{ int token; float lp; };
Result Kernel(const std::vector<float>& row,int misaligned,int kVec,int blocks){
  int vocab=row.size(); int lead=std::min(vocab,(kVec-misaligned)%kVec); int vectors=(vocab-lead)/kVec; int tail=lead+vectors*kVec;
  int per=(vectors+blocks-1)/blocks; std::vector<Part> parts;
  for(int split=0;split<blocks;++split){
    int begin=std::min(vectors,split*per), end=std::min(vectors,begin+per); int scalars=split==0?lead+(vocab-tail):0;
    auto sidx=[&](int i){return i<lead?i:tail+(i-lead);};
    std::vector<Part> tp(T);
    for(int t=0;t<T;++t){
      TG g;
      auto each=[&](auto&& vec, auto&& sc){ for(int j=begin+t;j<end;j+=T){ vec(&row[lead+j*kVec], lead+j*kVec);} for(int i=t;i<scalars;i+=T) sc(row[sidx(i)],sidx(i)); };
      each([&](const float* v,int f){g.Visit(v,kVec,f);},[&](float v,int i){g.VisitScalar(v,i);});
      Part p{g.best,g.index,g.sum};
      bool done=false;
      if(g.sum!=g.sum){ p={-INFINITY,kNo,g.sum}; auto vis=[&](float v,int i){ if(Beats(v,i,p.best,p.index)){p.best=v;p.index=i;}};
        each([&](const float* v,int f){for(int e=0;e<kVec;++e) vis(v[e],f+e);}, vis);
        if(p.best!=p.best || p.best==INFINITY) done=true; }
      else if(g.best==-INFINITY){ p={g.best,g.index,0.f}; done=true; }
      else p.sum=g.sum*ex2(std::fma(-g.best,L,g.shift));
      if(!done && !(p.sum>=0.5f && p.sum<=FLT_MAX)){ float top=p.best; p.sum=0; auto add=[&](float v,int){ p.sum+=std::exp(v-top);};
          each([&](const float* v,int f){for(int e=0;e<kVec;++e) add(v[e],f+e);}, add); }
      tp[t]=p;
    }
    for(int w=0;w<T/32;++w) for(int off=16;off>0;off>>=1){ std::vector<Part> nx(32); for(int l=0;l<32;++l){ Part m=tp[w*32+l]; m.Merge(tp[w*32+(l^off)]); nx[l]=m;} for(int l=0;l<32;++l) tp[w*32+l]=nx[l]; }
    Part m=tp[0]; for(int w=1;w<T/32;++w) m.Merge(tp[w*32]); parts.push_back(m);
  }
  Part r=parts[0]; for(int i=1;i<blocks;++i) r.Merge(parts[i]);
  return {r.index==kNo?0:r.index, r.best-r.best-logf(r.sum)};
}
Result Ref(const std::vector<float>& x){ // torch semantics
  int bi=0; for(int i=1;i<(int)x.size();++i){ float v=x[i],b=x[bi]; if(b!=b) break; if(v!=v || v>b) bi=i; }
  double mx=-INFINITY; bool nan=false; for(float v:x){ if(v!=v) nan=true; else if(v>mx) mx=v; }
  if(nan) return {bi,NAN};
  double s=0; for(float v:x) s+=std::exp((double)v-mx);
  return {bi,(float)((double)x[bi]-mx-std::log(s))};
}
int main(int argc,char**argv){
  std::mt19937 rng(1); std::normal_distribution<float> n01; int bad=0, tests=0;
  auto check=[&](const std::vector<float>& x,int mis,int kVec,int blocks,const char* what){
    Result a=Kernel(x,mis,kVec,blocks), b=Ref(x); ++tests;
    bool ok = a.token==b.token && ((a.lp!=a.lp && b.lp!=b.lp) || std::fabs(a.lp-b.lp)<=1e-5+1e-5*std::fabs(b.lp));
    if(!ok && bad++<25) printf("MISMATCH %s x0=%g vocab=%zu mis=%d kVec=%d blocks=%d: tok %d vs %d, lp %.8g vs %.8g\n",what,x[0],x.size(),mis,kVec,blocks,a.token,b.token,a.lp,b.lp);
  };
  std::uniform_int_distribution<int> ui(0,1<<30);
  for(int it=0; it<3000; ++it){
    int kVec = it%2?4:8; int vocab = (it%7==0)? 1+ui(rng)%40 : (it%7==1? 1+ui(rng)%3000 : 20000+ui(rng)%31000);
    int mis=ui(rng)%kVec, blocks=1<<(ui(rng)%4);
    std::vector<float> x(vocab); float scale = (it%5==0)? 100.f : 1.f; for(auto& v:x) v=std::round(n01(rng)*scale*4)/4; // quantized -> ties
    int kind=ui(rng)%8;
    if(kind==1){ for(int k=0;k<3;++k) x[ui(rng)%vocab]=NAN; }
    if(kind==2){ for(int k=0;k<3;++k) x[ui(rng)%vocab]=INFINITY; }
    if(kind==3){ int a=ui(rng)%vocab,b=ui(rng)%vocab; if(a>b) std::swap(a,b); for(int i=a;i<=b;++i) x[i]=-INFINITY; }
    if(kind==4){ for(auto& v:x) v=-INFINITY; }
    if(kind==5){ float m=*std::max_element(x.begin(),x.end()); x[ui(rng)%std::min(vocab,8)]=m; x[vocab-1-ui(rng)%std::min(vocab,8)]=m; }
    if(kind==6){ for(int i=0;i<vocab;++i) x[i]= (float)i*0.01f*scale; } // ramp: shift must rise
    if(kind==7){ for(int i=0;i<vocab;++i) x[i]= 1000.f - (float)i*0.05f; }
    check(x,mis,kVec,blocks,"rand");
  }
  printf("random: %d/%d mismatches\n",bad,tests);
  bad=0; tests=0;
  for(float big: {1e6f, 1e7f, 2e7f, 1e8f, 5e8f, 1e9f, 1.6e9f, 2e9f, 3e9f, 1e10f, -1e10f, -2.3e38f, -FLT_MAX, 3e38f}){
    for(int vocab: {1, 5, 50257}) { std::vector<float> x(vocab); for(auto& v:x) v=big+n01(rng)*std::fabs(big)*1e-7f; check(x,0,4,8,"big"); }
  }
  { std::vector<float> x(50257); for(auto& v:x) v=n01(rng); for(int i=0;i<30000;++i) x[i]=-FLT_MAX; check(x,1,4,8,"masked -FLT_MAX"); check(x,1,8,8,"masked -FLT_MAX bf16-like"); check(x,1,4,1,"masked 1 block");}
  printf("big: %d/%d mismatches\n",bad,tests);
}
