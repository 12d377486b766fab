#include "core/engine/prefill_budget.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace tandem {
namespace {

// A device whose steps take max(host, GPU time), decoding in `decode` and
// prefilling in a + b * tokens. After one decode-only step (the reference
// period max(host, decode)), every step is mixed; feeding the budget's own
// choices back converges to the tokens whose mixed step takes (1 + ratio)
// times the reference: ((1 + ratio) * reference - decode - a) / b.
// The budget is told a (the runner's measured fixed cost) or not (0).
int32_t Converge(PrefillBudget& budget, double host, double decode, double a, double b,
                 int steps = 40) {
  budget.Observe(0, 0, decode, std::max(host, decode));
  for (int i = 0; i < steps; ++i) {
    const int32_t tokens = budget.tokens();
    const double prefill = a + b * tokens;
    budget.Observe(tokens, prefill, decode, std::max(host, decode + prefill));
  }
  return budget.tokens();
}

TEST(PrefillBudgetTest, StartsAtTheFloor) {
  EXPECT_EQ(PrefillBudget(32, 2048, 1.0).tokens(), 32);
  EXPECT_EQ(PrefillBudget(4096, 2048, 1.0).tokens(), 2048);  // the cap wins
}

TEST(PrefillBudgetTest, ConvergesToTheTokensThatMakeAMixedStepTheAllowedMultiple) {
  // A host-bound GPU: steps every 0.86 ms, 0.4 ms of it decoding; prefill
  // 0.45 ms fixed plus 0.8 us per token: (1.72 - 0.4 - 0.45) / 0.0008 = 1087.
  PrefillBudget gpu(32, 2048, 1.0, 4.5e-4);
  EXPECT_NEAR(Converge(gpu, 8.6e-4, 4e-4, 4.5e-4, 8e-7), 1087, 3);
  // Half the ratio: (1.29 - 0.4 - 0.45) / 0.0008 = 550 (a / b is 562).
  PrefillBudget strict(32, 2048, 0.5, 4.5e-4);
  EXPECT_NEAR(Converge(strict, 8.6e-4, 4e-4, 4.5e-4, 8e-7), 562, 3);
  // GPU-bound (in-process): the reference is the decode itself, 1 ms:
  // (2 - 1 - 0.2) / 0.001 = 800.
  PrefillBudget bound(32, 2048, 1.0, 2e-4);
  EXPECT_NEAR(Converge(bound, 0, 1e-3, 2e-4, 1e-6), 800, 3);
  // Not told the fixed cost, it takes it for work per token; the fixed
  // point is the same (each step's cost per token includes a / tokens).
  PrefillBudget unaware(32, 2048, 1.0);
  EXPECT_NEAR(Converge(unaware, 0, 1e-3, 2e-4, 1e-6), 800, 3);
}

TEST(PrefillBudgetTest, ClampsToTheCapAndTheFloor) {
  PrefillBudget cheap(32, 512, 1.0);
  EXPECT_EQ(Converge(cheap, 1e-3, 1e-3, 0, 1e-9), 512);
  // The fixed cost alone exceeds the allowance and is worth few tokens:
  // the floor keeps prompts moving.
  PrefillBudget slow(32, 512, 1.0, 2e-3);
  EXPECT_EQ(Converge(slow, 1e-3, 1e-3, 2e-3, 1e-4), 32);
}

TEST(PrefillBudgetTest, GrowsAtMostTwofoldPerStep) {
  PrefillBudget budget(32, 4096, 1.0);
  budget.Observe(0, 0, 1e-3, 1e-2);
  budget.Observe(32, 1e-6, 1e-3, 1e-2);
  EXPECT_EQ(budget.tokens(), 64);
  budget.Observe(64, 2e-6, 1e-3, 1e-2);
  EXPECT_EQ(budget.tokens(), 128);
}

TEST(PrefillBudgetTest, AChunkIsNeverSmallerThanWhatTheFixedCostIsWorth) {
  // GPU-bound with a large fixed cost: 1 ms decode, prefill 0.5 ms + 1 us
  // per token. The allowance (2 - 1 - 0.5 ms) fits 500 tokens; a / b = 500
  // too. With 0.8 ms fixed, the allowance fits 200, but a chunk's work
  // should at least match its fixed cost: 800.
  PrefillBudget budget(32, 4096, 1.0, 5e-4);
  EXPECT_NEAR(Converge(budget, 0, 1e-3, 5e-4, 1e-6), 500, 10);
  PrefillBudget heavy(32, 4096, 1.0, 8e-4);
  EXPECT_NEAR(Converge(heavy, 0, 1e-3, 8e-4, 1e-6), 800, 10);
}

TEST(PrefillBudgetTest, ABurstAtAnIdleEngineGrowsTheBudget) {
  // No decode-only step yet: the mixed steps' own period is the reference,
  // so the budget doubles up to the cap.
  PrefillBudget budget(32, 2048, 1.0);
  for (int i = 0; i < 10; ++i) {
    const int32_t tokens = budget.tokens();
    budget.Observe(tokens, 2e-4 + 1e-6 * tokens, 4e-4, 6e-4 + 1e-6 * tokens);
  }
  EXPECT_EQ(budget.tokens(), 2048);
}

TEST(PrefillBudgetTest, AfterARestartABurstGrowsTheBudgetAgain) {
  // A reference learned from one stream (0.3 ms) would hold a burst's
  // chunks to what its fixed cost is worth (a / b = 500 tokens: the fixed
  // cost alone exceeds the allowance); after the engine was idle it is
  // forgotten and the burst's chunks grow to the cap.
  PrefillBudget budget(32, 2048, 1.0, 5e-4);
  budget.Observe(0, 0, 3e-4, 3e-4);
  for (int i = 0; i < 20; ++i) {
    const int32_t tokens = budget.tokens();
    budget.Observe(tokens, 5e-4 + 1e-6 * tokens, 4e-4, 9e-4 + 1e-6 * tokens);
  }
  EXPECT_NEAR(budget.tokens(), 500, 3);
  budget.Restart();
  for (int i = 0; i < 10; ++i) {
    const int32_t tokens = budget.tokens();
    budget.Observe(tokens, 5e-4 + 1e-6 * tokens, 4e-4, 9e-4 + 1e-6 * tokens);
  }
  EXPECT_EQ(budget.tokens(), 2048);
}

TEST(PrefillBudgetTest, FollowsACostThatGrowsWithTheContext) {
  // A long prompt's later chunks attend to more positions: the cost per
  // token doubles, the budget halves.
  PrefillBudget budget(16, 4096, 1.0);
  const int32_t early = Converge(budget, 1e-2, 1e-2, 0, 1e-5);
  const int32_t late = Converge(budget, 1e-2, 1e-2, 0, 2e-5);
  EXPECT_NEAR(early, 1000, 2);
  EXPECT_NEAR(late, 500, 2);
}

TEST(PrefillBudgetTest, IgnoresEmptyObservations) {
  PrefillBudget budget(32, 2048, 1.0);
  budget.Observe(0, 0, 1e-3, 2e-3);
  budget.Observe(100, 0, 1e-3, 2e-3);
  budget.Observe(100, 1e-3, 1e-3, 0);
  EXPECT_EQ(budget.tokens(), 32);
}

}  // namespace
}  // namespace tandem
