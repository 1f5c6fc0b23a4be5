"""kpass adapter entry module (filled in by the adapter work)."""
