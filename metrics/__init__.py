"""kpass metric core."""
