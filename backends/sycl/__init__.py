"""sycl backend (being written)."""
