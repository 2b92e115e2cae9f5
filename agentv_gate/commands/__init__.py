"""One module per subcommand, each with `execute(args) -> int`; `cli.py` imports the one it runs.

Commands are the only code below `cli.py` that reads argparse's Namespace: they turn it into plain
values for the layers below, and raise `UsageError` / `ConfigError` / `ReportError` for `cli.main`
to turn into exit 2.
"""
