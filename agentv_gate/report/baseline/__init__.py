"""The baseline feature, in one direction: `stats` (and the guard's `sequential` test) -> `compare`
(pair base and head rows, label each case) -> `paired` (the statistical reading over trials) -> `gate`
(the verdict and the exit code) -> `render` (what the reports show). Each imports only those before
it, which tests/test_layers.py pins; `commands/` reads the options and files and calls in."""
