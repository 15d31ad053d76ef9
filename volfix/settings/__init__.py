"""What the user configures: the resolved `Config` (`config`), `[tool.volfix]` and `volfix.toml`
(`config_file`), the nearest configuration of each file (`nearest`), per-line suppression
comments (`suppression`) and baselines (`baseline`)."""
