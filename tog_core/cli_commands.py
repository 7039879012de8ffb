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
