"""Sample data: the sample table, the readers that build it, per-problem views and tokenizers."""
