"""Test doubles shared by the tests: a local Gemini-compatible server."""
