"""Reports: report, leaderboard, budget, power and the analyses (crossover, frontier, selection bias)."""
