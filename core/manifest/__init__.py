"""The app manifest: model, loader and check."""
