"""kpass adapters."""
