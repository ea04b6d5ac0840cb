from judge.cli import app

app(prog_name="tpuzzle")
