"""Reading sample logs and reducing them to per-problem statistics (sample table, readers, engines)."""
