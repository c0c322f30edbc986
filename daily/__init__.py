"""The nightly job (FORMAT §9): derive the day's seed, build the board, reveal the seed later."""
