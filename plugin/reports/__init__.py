"""Reports: the report, leaderboard, budget and power analyses, and the notes they share."""
