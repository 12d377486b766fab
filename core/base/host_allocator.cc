#include "core/base/host_allocator.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tandem {

void KeepFreedHostMemory() {
#if defined(__GLIBC__)
  // 32 MiB is the largest mmap threshold glibc accepts on 64-bit; larger
  // blocks (weights, KV slots) stay mmapped. Setting it also turns off the
  // threshold's adaptation. Freed memory at the heap's top is returned only
  // above 512 MiB.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace tandem
