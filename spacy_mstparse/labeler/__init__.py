"""Second-stage dependency labeler."""
