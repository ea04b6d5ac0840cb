from judge.cli.app import app

app(prog_name="tpuzzle")
