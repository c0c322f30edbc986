"""Library remote: pull/push the tile library to S3/R2 or a local directory (FORMAT §11)."""
