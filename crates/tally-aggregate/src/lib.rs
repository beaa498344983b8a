//! Trinity-style metric aggregation: key suffixes, run/task/step levels, eval statistics. Pure numerics, no I/O.
