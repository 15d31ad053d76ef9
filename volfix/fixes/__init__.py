"""Fixes planned as data, then rendered: where a region goes (`regions`, `planner`), old version
gates a region holds (`gates`), the edits of each fix (`expressions`, `imports`, `render`), the
clean-up of what a fix leaves (`cleanup`, `layout`) and text edits as ruff applies them
(`edits`)."""
