"""hip backend (being written)."""
