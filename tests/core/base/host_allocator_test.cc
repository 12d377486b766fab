#include "core/base/host_allocator.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

namespace tandem {
namespace {

// Blocks glibc serves with their own mmap (mallinfo2's hblks).
size_t MappedBlocks() { return mallinfo2().hblks; }

TEST(HostAllocatorTest, KeepsStepSizedBlocksInTheHeap) {
  KeepFreedHostMemory();
  // A CPU step's logits for 8 rows of a 50,257-token vocabulary: 1.6 MB.
  // glibc's default (a 128 KiB threshold) would mmap it.
  const size_t before = MappedBlocks();
  void* logits = std::malloc(8 * 50257 * sizeof(float));
  ASSERT_NE(logits, nullptr);
  std::memset(logits, 1, 8 * 50257 * sizeof(float));
  EXPECT_EQ(MappedBlocks(), before) << "a 1.6 MB block was mmapped";
  // Freed, it stays in the heap for the next step (not trimmed).
  std::free(logits);
  EXPECT_GE(mallinfo2().fordblks, 8 * 50257 * sizeof(float));
  // Blocks above 32 MiB (weights, KV slots) are still mapped on their own.
  void* large = std::malloc(64 << 20);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(MappedBlocks(), before + 1);
  std::free(large);
}

}  // namespace
}  // namespace tandem
