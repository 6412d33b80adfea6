"""Exercise specs: their records, their validation with pydantic, and the YAML loader that reports file and line."""
