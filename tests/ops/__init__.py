"""Tests of the ops package."""
