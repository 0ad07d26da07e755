"""Adminium's console entry point and process launcher."""
