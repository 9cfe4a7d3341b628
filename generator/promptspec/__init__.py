"""promptspec: see every variant of an assembled agent prompt, and what each piece costs."""

__version__ = "0.1.0"
