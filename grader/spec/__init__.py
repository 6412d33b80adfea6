"""Exercise specs: pydantic models and the YAML loader that reports file and line."""
