"""Stand-in for timm (see ../../sitecustomize.py)."""
