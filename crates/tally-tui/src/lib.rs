//! The live terminal panel: pure state and rendering, one module that touches the terminal.
