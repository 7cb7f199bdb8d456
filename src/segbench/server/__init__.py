"""The hosted evaluation: teams upload predictions for a hidden split, workers score them with the
engine, boards rank them (docs/server.md). A layer above the workflow and below the commands:
it calls the steps and stages that exist and is reached from `segbench server ...`."""
