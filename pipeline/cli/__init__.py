"""The command line, ``python -m pipeline build|list|info|evaluate|export|compare``: a thin shell over the stages."""
