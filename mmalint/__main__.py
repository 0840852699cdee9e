from mmalint.cli import run

run()
