"""cuda backend (being written)."""
