"""Sample data: the sample table, the readers that build it, per-problem views and tokenizers, and
the engines that reduce sample logs to per-problem statistics."""
