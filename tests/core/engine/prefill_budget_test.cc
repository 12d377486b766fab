#include "core/engine/prefill_budget.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

// A device whose prefill costs a + b * tokens seconds and whose decode part
// costs d: feeding the budget's own choices back converges to the tokens
// whose prefill takes stall_ratio * d, i.e. (stall_ratio * d - a) / b.
int32_t Converge(PrefillBudget& budget, double a, double b, double d, int steps = 40) {
  for (int i = 0; i < steps; ++i) {
    const int32_t tokens = budget.tokens();
    budget.Observe(tokens, a + b * tokens, d);
  }
  return budget.tokens();
}

TEST(PrefillBudgetTest, StartsAtTheFloor) {
  EXPECT_EQ(PrefillBudget(32, 2048, 1.0).tokens(), 32);
  EXPECT_EQ(PrefillBudget(4096, 2048, 1.0).tokens(), 2048);  // the cap wins
}

TEST(PrefillBudgetTest, ConvergesToTheTokensThatCostTheAllowedStall) {
  // GPU-like: 0.1 ms fixed, 0.8 us per token, decode 0.45 ms, ratio 1:
  // (0.45 - 0.1) / 0.0008 = 437.5 tokens.
  PrefillBudget gpu(32, 2048, 1.0);
  EXPECT_NEAR(Converge(gpu, 1e-4, 8e-7, 4.5e-4), 437, 3);
  // Half the ratio: (0.225 - 0.1) / 0.0008 = 156.
  PrefillBudget strict(32, 2048, 0.5);
  EXPECT_NEAR(Converge(strict, 1e-4, 8e-7, 4.5e-4), 156, 3);
}

TEST(PrefillBudgetTest, ClampsToTheCapAndTheFloor) {
  PrefillBudget cheap(32, 512, 1.0);
  EXPECT_EQ(Converge(cheap, 0, 1e-9, 1e-3), 512);
  // The fixed cost alone exceeds the allowed stall: the floor keeps
  // prompts moving.
  PrefillBudget slow(32, 512, 1.0);
  EXPECT_EQ(Converge(slow, 2e-3, 1e-6, 1e-3), 32);
}

TEST(PrefillBudgetTest, FollowsACostThatGrowsWithTheContext) {
  // A long prompt's later chunks attend to more positions: the cost per
  // token doubles, the budget halves.
  PrefillBudget budget(16, 4096, 1.0);
  const int32_t early = Converge(budget, 0, 1e-5, 1e-2);
  const int32_t late = Converge(budget, 0, 2e-5, 1e-2);
  EXPECT_NEAR(early, 1000, 2);
  EXPECT_NEAR(late, 500, 2);
}

TEST(PrefillBudgetTest, IgnoresStepsWithoutBothParts) {
  PrefillBudget budget(32, 2048, 1.0);
  budget.Observe(0, 1e-3, 1e-3);
  budget.Observe(100, 0, 1e-3);
  budget.Observe(100, 1e-3, 0);
  EXPECT_EQ(budget.tokens(), 32);
}

}  // namespace
}  // namespace tandem
