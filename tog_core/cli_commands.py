"""Sub-commands beyond `inspect` (query, bench, export) register themselves here."""


# ---- export: python -m tog_core export TRACE.json --format html|md|json --out FILE (tog_core/export.py) ----
def _register_export() -> None:
    from . import cli
    from .export import add_export_parser, cmd_export  # cheap: pyvis is imported only when a picture is built

    if "export" not in cli.COMMANDS:
        cli.EXTRA_PARSERS.append(add_export_parser)
        cli.COMMANDS["export"] = cmd_export


_register_export()
# ---- end export ----


# ---- bench: python -m tog_core bench kgqa DATA_DIR [...] (tog_core/bench.py) ----
def _register_bench() -> None:
    from . import cli
    from .bench import add_bench_parser, cmd_bench  # cheap: the engine is imported when a run starts

    if "bench" not in cli.COMMANDS:
        cli.EXTRA_PARSERS.append(add_bench_parser)
        cli.COMMANDS["bench"] = cmd_bench


_register_bench()
# ---- end bench ----
