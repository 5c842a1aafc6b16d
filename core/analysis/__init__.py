"""Analyses over one or more results stores: rates and fast_p per category x method x backend x
hardware, the category-aware difficulty GLM, cross-hardware speedup variance and cross-backend
portability. Everything is computed from stored rows; nothing is re-run."""

from .dataset import ResultSet, load_results
from .difficulty import DifficultyAnalysis, difficulty_analysis
from .rates import FAST_P, attempt_table, rates_table
from .variance import cross_backend, cross_hardware

__all__ = ["ResultSet", "load_results", "DifficultyAnalysis", "difficulty_analysis", "FAST_P",
           "attempt_table", "rates_table", "cross_backend", "cross_hardware"]
