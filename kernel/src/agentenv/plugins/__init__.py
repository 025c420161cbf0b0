"""Plugin discovery, compatibility checks and loading."""
