"""Tests of the tensor package."""
