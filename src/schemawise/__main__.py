from schemawise.cli import app

app(prog_name="schemawise")
