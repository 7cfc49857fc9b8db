"""Command-line options shared by the commands that play a trained network.

Numpy-free and import-light: the parity CLI imports it too.
"""


def add_sampling_flags(
    parser,
    greedy_help: str = "greedy actions: argmax of the masked logits (the default)",
    sample_help: str = "sample actions from the masked policy distribution",
) -> None:
    """--deterministic (the default) / --sample, read back as `args.sample`."""
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--deterministic", dest="sample", action="store_false", help=greedy_help)
    choice.add_argument("--sample", dest="sample", action="store_true", help=sample_help)
    parser.set_defaults(sample=False)  # store_false alone would default to True
