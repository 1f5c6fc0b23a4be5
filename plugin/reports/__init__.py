"""Reports built from a sample table: report and comparison, leaderboard, token budgets, power."""
