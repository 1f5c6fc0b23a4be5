"""Rendering: text, Markdown, CSV and JSON formatting, the HTML leaderboard, plots."""
