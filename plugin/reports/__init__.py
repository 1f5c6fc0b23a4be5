"""Reports built from a sample table: report and comparison, leaderboard, token budgets, power, and
the analyses (crossover, equal-compute frontier, selection bias)."""
