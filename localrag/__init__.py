"""localrag: an offline assistant over a person's own files.

Nothing heavy is imported here: `localrag --help` must answer in well under a second.
"""

__version__ = "0.1.0"
