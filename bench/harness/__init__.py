"""Vireo benchmark harness: builds the peer apps, runs load against them, reports."""
