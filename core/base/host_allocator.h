// How the process's heap (glibc malloc) treats LibTorch's CPU tensors.
#ifndef TANDEM_CORE_BASE_HOST_ALLOCATOR_H_
#define TANDEM_CORE_BASE_HOST_ALLOCATOR_H_

namespace tandem {

// Keeps freed blocks of up to 32 MiB in the heap for reuse instead of
// returning them to the kernel. By default glibc serves blocks above its
// (adaptive, initially 128 KiB) mmap threshold with a fresh mmap and unmaps
// them on free, so every CPU decode step's logits [B, V] and attention
// temporaries were new pages: page faults took ~35 % of the server's time
// and a tiny model's decode step ran 12.7 ms instead of 2.5 ms (8 slots,
// 2 cores, 2026-12-01). Call once at start-up, before the model loads; a
// no-op where the C library is not glibc.
void KeepFreedHostMemory();

}  // namespace tandem

#endif  // TANDEM_CORE_BASE_HOST_ALLOCATOR_H_
