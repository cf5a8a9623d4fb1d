//! session-tests: the Cucumber suite and golden tests live under `tests/`; this library is empty.
